/** Output for people (aligned tables) and for scripts (--json: the API's JSON as it came). */
/** An aligned table with a header row; numbers are right-aligned. */
export function table(headers, rows) {
    const text = rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))));
    const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
    const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
    const line = (cells) => cells
        .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
        .join('  ')
        .trimEnd();
    return [line(headers.map((h) => h.toUpperCase())), ...text.map(line)].join('\n') + '\n';
}
/** "key: value" lines, aligned. */
export function fields(pairs) {
    const w = Math.max(...pairs.map(([k]) => k.length));
    return pairs.map(([k, v]) => `${(k + ':').padEnd(w + 1)} ${v === null || v === undefined ? '-' : String(v)}`).join('\n') + '\n';
}
export function json(value) {
    return JSON.stringify(value, null, 2) + '\n';
}
//# sourceMappingURL=format.js.map