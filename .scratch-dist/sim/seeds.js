/** Which seeds a simulation test runs: SEED=<n> for one, SEEDS=<n> (from SEED_FROM, default 1) for many. */
export function seedsFromEnv(defaultCount) {
    const one = process.env['SEED'];
    if (one !== undefined && one !== '')
        return [Number(one)];
    const n = Number(process.env['SEEDS'] ?? String(defaultCount));
    const from = Number(process.env['SEED_FROM'] ?? '1');
    if (!Number.isSafeInteger(n) || n <= 0 || !Number.isSafeInteger(from) || from < 0)
        throw new Error(`bad SEEDS=${process.env['SEEDS']} SEED_FROM=${process.env['SEED_FROM']}`);
    return Array.from({ length: n }, (_, i) => from + i);
}
//# sourceMappingURL=seeds.js.map