/**
 * Offsets and their wire form.
 *
 * Inside Brook an event's position in a partition is a dense, non-negative integer (`Offset`); a
 * cursor names the last event already consumed, so "before the first event of the partition" is
 * offset -1. JavaScript numbers are exact up to 2^53, far beyond what a partition can hold, so
 * offsets are numbers (cheaper than bigint on the hot path) and are asserted to be safe integers.
 *
 * On the wire (compatibility.md) an offset is `001-<timeline order, 4 hex>-<offset, 18 digits>`,
 * fixed width so offsets of one timeline compare as strings; `BEGIN` (any case) is accepted as input
 * and means "before the oldest available event".
 */
export type Offset = number & { readonly __brand: 'Offset' };

/** The position before any event: what an exclusive cursor holds to read from the start. */
export const beforeFirst = -1 as Offset;

export function toOffset(n: number): Offset {
  if (!Number.isSafeInteger(n) || n < -1) throw new RangeError(`invalid offset ${n}`);
  return n as Offset;
}

/** A decoded cursor offset: either the symbolic BEGIN or a concrete position on a timeline. */
export type CursorPosition =
  | { readonly kind: 'begin' }
  | { readonly kind: 'at'; readonly timeline: number; readonly offset: Offset };

const wireRe = /^001-([0-9a-f]{4})-([0-9]{18})$/;
export const offsetDigits = 18;
const maxDigitsValue = 999_999_999_999_999_999;

/** Parses a cursor offset from the wire; returns undefined if it is not a Brook offset. */
export function parseOffset(text: string): CursorPosition | undefined {
  if (text.length === 5 && text.toUpperCase() === 'BEGIN') return { kind: 'begin' };
  const m = wireRe.exec(text);
  if (m === null) return undefined;
  const timeline = parseInt(m[1]!, 16);
  const value = Number(m[2]!);
  if (!Number.isSafeInteger(value) || timeline === 0) return undefined;
  return { kind: 'at', timeline, offset: value as Offset };
}

/** Formats a concrete offset (>= 0) of a timeline for the wire. */
export function formatOffset(timeline: number, offset: Offset): string {
  if (offset < 0) throw new RangeError(`offset ${offset} has no wire form; use BEGIN`);
  if (offset > maxDigitsValue) throw new RangeError(`offset ${offset} too large`);
  return `001-${timeline.toString(16).padStart(4, '0')}-${String(offset).padStart(offsetDigits, '0')}`;
}

/** Formats an exclusive cursor position: -1 (before everything) is BEGIN. */
export function formatCursor(timeline: number, after: Offset): string {
  return after < 0 ? 'BEGIN' : formatOffset(timeline, after);
}
