/** The position before any event: what an exclusive cursor holds to read from the start. */
export const beforeFirst = -1;
export function toOffset(n) {
    if (!Number.isSafeInteger(n) || n < -1)
        throw new RangeError(`invalid offset ${n}`);
    return n;
}
const wireRe = /^001-([0-9a-f]{4})-([0-9]{18})$/;
export const offsetDigits = 18;
const maxDigitsValue = 999_999_999_999_999_999;
/** Parses a cursor offset from the wire; returns undefined if it is not a Brook offset. */
export function parseOffset(text) {
    if (text.length === 5 && text.toUpperCase() === 'BEGIN')
        return { kind: 'begin' };
    const m = wireRe.exec(text);
    if (m === null)
        return undefined;
    const timeline = parseInt(m[1], 16);
    const value = Number(m[2]);
    if (!Number.isSafeInteger(value) || timeline === 0)
        return undefined;
    return { kind: 'at', timeline, offset: value };
}
/** Formats a concrete offset (>= 0) of a timeline for the wire. */
export function formatOffset(timeline, offset) {
    if (offset < 0)
        throw new RangeError(`offset ${offset} has no wire form; use BEGIN`);
    if (offset > maxDigitsValue)
        throw new RangeError(`offset ${offset} too large`);
    return `001-${timeline.toString(16).padStart(4, '0')}-${String(offset).padStart(offsetDigits, '0')}`;
}
/** Formats an exclusive cursor position: -1 (before everything) is BEGIN. */
export function formatCursor(timeline, after) {
    return after < 0 ? 'BEGIN' : formatOffset(timeline, after);
}
//# sourceMappingURL=offset.js.map