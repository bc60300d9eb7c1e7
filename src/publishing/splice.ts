/**
 * Stores events as the producer wrote them, not re-serialized: each top-level element of the submitted
 * array is copied with the whitespace outside strings removed (a stored event must fit on one stream
 * line), and the enrichment fields are inserted at the end of its top-level "metadata" object. So
 * numbers keep every digit (JSON.parse would round integers beyond 2^53), strings keep their escapes,
 * and key order is the producer's. PURE.
 *
 * An element is spliced only when its "metadata" key appears exactly once, written plainly, at the top
 * level of the element; otherwise ('unspliceable') the caller stores the re-serialized object instead
 * (same meaning). An element nested deeper than eventNestingDepthMax is 'too_deep': consumers' parsers
 * (often recursive) could not read it, so the caller refuses it. The body is valid JSON (JSON.parse accepted it first), and UTF-8
 * continuation bytes (>= 0x80) never collide with the ASCII structural characters scanned for.
 */

import { eventNestingDepthMax } from '../core/limits.js';

export type SplicedElement = Buffer | 'unspliceable' | 'too_deep';

const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const comma = 0x2c;
const colon = 0x3a;
const metadataKey = Buffer.from('"metadata"');

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Splits a JSON array body into its compacted top-level elements. `adds[i]` is the text to insert at
 * the end of element i's metadata object (e.g. `"event_type":"x","version":"1.0.0"`), or undefined to
 * insert nothing. Returns one Buffer per element (views into one allocation), 'unspliceable' for an
 * element whose metadata is absent, repeated, escaped or not an object, 'too_deep' past the depth limit.
 * `members`, when given, receives per element the number of object members written in it (at any
 * depth): more than its parsed value holds means a key is repeated in some object.
 */
export function spliceElements(body: Uint8Array, adds: readonly (string | undefined)[], depthMax = eventNestingDepthMax, members?: number[]): SplicedElement[] {
  // The added text is written straight into the output: a Buffer per element's text would come from
  // Node's pool, whose 8 KB slabs are ArrayBuffers too (a quarter of a copy of the entries per publish).
  let extra = 0;
  for (const a of adds) if (a !== undefined && a !== '') extra += Buffer.byteLength(a) + 1;
  const buf = Buffer.allocUnsafe(body.length + extra);
  const out: SplicedElement[] = [];
  const n = body.length;
  let w = 0;
  let i = 0;
  while (i < n && body[i] !== openBracket) i++;
  i++;
  for (;;) {
    while (i < n && isSpace(body[i]!)) i++;
    if (i >= n || body[i] === closeBracket) break;
    const add = adds[out.length];
    const r = spliceOne(body, i, add === '' ? undefined : add, buf, w, depthMax);
    members?.push(r.members);
    out.push(r.tooDeep ? 'too_deep' : r.ok ? buf.subarray(w, r.w) : 'unspliceable');
    w = r.w;
    i = r.end;
    while (i < n && isSpace(body[i]!)) i++;
    if (body[i] === comma) i++;
  }
  return out;
}

/** Copies one element starting at `from` into `buf` at `w0` (compacted, with `add` inserted). */
function spliceOne(body: Uint8Array, from: number, add: string | undefined, buf: Buffer, w0: number, depthMax: number): { ok: boolean; tooDeep: boolean; w: number; end: number; members: number } {
  const n = body.length;
  let w = w0;
  let depth = 0;
  let inString = false;
  // State for finding the top-level "metadata" object.
  let metadataSeen = 0;
  let afterMetadataKey = false; // saw the key at depth 1, waiting for its value
  let metadataDepth = -1; // 2 while inside the metadata object
  let metadataEmpty = true;
  let inserted = false;
  let tooDeep = false;
  // Object members as written: every colon outside strings is one.
  let members = 0;
  let i = from;
  for (; i < n; i++) {
    const c = body[i]!;
    if (inString) {
      buf[w++] = c;
      if (c === backslash) buf[w++] = body[++i]!;
      else if (c === quote) {
        inString = false;
        if (depth === 0) {
          // A top-level string element (not an object) ends here.
          i++;
          break;
        }
      }
      continue;
    }
    if (isSpace(c)) continue;
    if (c === quote) {
      if (depth === 1 && metadataDepth < 0 && matchesAt(body, i, metadataKey) && nextNonSpace(body, i + metadataKey.length) === colon) {
        metadataSeen++;
        afterMetadataKey = true;
      }
      if (metadataDepth === depth) metadataEmpty = false;
      inString = true;
      buf[w++] = c;
      continue;
    }
    if (c === openBrace || c === openBracket) {
      if (metadataDepth === depth) metadataEmpty = false;
      depth++;
      if (depth > depthMax) tooDeep = true;
      if (afterMetadataKey && depth === 2 && c === openBrace) metadataDepth = 2;
      afterMetadataKey = false;
      buf[w++] = c;
      continue;
    }
    if (c === closeBrace || c === closeBracket) {
      if (depth === metadataDepth && c === closeBrace) {
        if (add !== undefined && !inserted) {
          if (!metadataEmpty) buf[w++] = comma;
          w += buf.write(add, w);
          inserted = true;
        }
        metadataDepth = -1;
      }
      depth--;
      buf[w++] = c;
      if (depth === 0) {
        i++;
        break;
      }
      continue;
    }
    if (c === colon) members++;
    else if (c !== comma) {
      // A scalar token (number, true, false, null): for the key's value this means metadata is not an object.
      afterMetadataKey = false;
      if (metadataDepth === depth) metadataEmpty = false;
    }
    buf[w++] = c;
    if (depth === 0) {
      // A top-level scalar element (not an object): copy it to its end.
      while (i + 1 < n && !isSpace(body[i + 1]!) && body[i + 1] !== comma && body[i + 1] !== closeBracket) buf[w++] = body[++i]!;
      i++;
      break;
    }
  }
  const ok = add === undefined ? metadataSeen <= 1 : metadataSeen === 1 && inserted;
  return { ok, tooDeep, w, end: i, members };
}

function matchesAt(body: Uint8Array, at: number, word: Buffer): boolean {
  if (at + word.length > body.length) return false;
  for (let k = 0; k < word.length; k++) if (body[at + k] !== word[k]) return false;
  return true;
}

function nextNonSpace(body: Uint8Array, at: number): number {
  while (at < body.length && isSpace(body[at]!)) at++;
  return body[at] ?? -1;
}
