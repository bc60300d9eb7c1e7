/**
 * Events with a repeated key (`{"a":1,"a":2}`) are refused (422 at validating). JSON.parse keeps the
 * last value, so the schema checked that one, while the event is stored as the producer wrote it
 * (splice.ts): consumers whose parsers keep the first value would read a value nobody validated. The
 * original service's parser refused such events too. PURE.
 *
 * Finding them costs one walk over each parsed event: the splicer counts the object members written
 * in an element (each colon outside strings), `keyCount` the keys its parsed value holds; fewer keys
 * than members means a key was repeated. Only then is the element scanned again to name the key.
 */

/**
 * The containers still to visit, shared by every call: keyCount runs on every published event, and a
 * fresh stack per event was most of what this check allocated (it never re-enters: nothing here awaits
 * or calls back). Emptied by each call, so it holds no event after it returns.
 */
const pending: object[] = [];

/** Keys held by every object inside `value` (itself included); iterative, so any depth is fine. */
export function keyCount(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let n = 0;
  pending.push(value);
  while (pending.length > 0) {
    const v = pending.pop()!;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x === 'object' && x !== null) pending.push(x);
      }
      continue;
    }
    for (const k in v) {
      n++;
      const x = (v as Record<string, unknown>)[k];
      if (typeof x === 'object' && x !== null) pending.push(x);
    }
  }
  return n;
}

const quote = 0x22;
const backslash = 0x5c;

/**
 * The first key repeated within one object of `element` (valid JSON text), as a JSON pointer to the
 * object and the key, e.g. `#/metadata: "eid"`; undefined when no key repeats.
 */
export function firstRepeatedKey(element: Uint8Array): string | undefined {
  // Per open container: the keys seen (objects only) and the path segment leading to it.
  const stack: { keys: Set<string> | undefined; segment: string; index: number }[] = [];
  let pendingKey: string | undefined;
  let expectKey = false;
  const pointer = () => '#' + stack.slice(1).map((s) => '/' + s.segment).join('');
  for (let i = 0; i < element.length; i++) {
    const c = element[i]!;
    if (c === quote) {
      const start = i;
      for (i++; i < element.length && element[i] !== quote; i++) if (element[i] === backslash) i++;
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys !== undefined) {
        const key = JSON.parse(Buffer.from(element.subarray(start, i + 1)).toString('utf8')) as string;
        if (top.keys.has(key)) return `${pointer()}: ${JSON.stringify(key)}`;
        top.keys.add(key);
        pendingKey = key;
        expectKey = false;
      }
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = stack[stack.length - 1];
      const segment = parent === undefined ? '' : parent.keys !== undefined ? (pendingKey ?? '') : String(parent.index);
      stack.push({ keys: c === 0x7b ? new Set() : undefined, segment, index: 0 });
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top === undefined) continue;
      if (top.keys !== undefined) expectKey = true;
      else top.index++;
    }
  }
  return undefined;
}
