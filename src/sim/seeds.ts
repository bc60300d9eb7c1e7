/** Which seeds a simulation test runs: SEED=<n> for one, SEEDS=<n> (from SEED_FROM, default 1) for many. */
export function seedsFromEnv(defaultCount: number): number[] {
  const one = process.env['SEED'];
  if (one !== undefined && one !== '') return [Number(one)];
  const n = Number(process.env['SEEDS'] ?? String(defaultCount));
  const from = Number(process.env['SEED_FROM'] ?? '1');
  if (!Number.isSafeInteger(n) || n <= 0 || !Number.isSafeInteger(from) || from < 0) throw new Error(`bad SEEDS=${process.env['SEEDS']} SEED_FROM=${process.env['SEED_FROM']}`);
  return Array.from({ length: n }, (_, i) => from + i);
}

/**
 * Whether the host simulation runs subscription consumers and cursor tools (host-subscriptions.ts):
 * on unless SIM_SUBSCRIPTIONS=0. They were off by default until the Liveness seeds they showed were
 * understood (docs/testing.md: two were the simulator's timers under a slow clock, one a bug of the
 * hub, one of the checker).
 */
export function simSubscriptionsFromEnv(): boolean {
  return process.env['SIM_SUBSCRIPTIONS'] !== '0';
}

/**
 * Whether the host simulation's nodes apply retention during chaos: on unless SIM_RETENTION=0. It was
 * off by default after seed 20 (docs/testing.md, "Retention seed 20") until 2,000 seeds with it on
 * had passed on the fixed code.
 */
export function simRetentionFromEnv(): boolean {
  return process.env['SIM_RETENTION'] !== '0';
}
