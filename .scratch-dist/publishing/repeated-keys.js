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
/** Keys held by every object inside `value` (itself included); iterative, so any depth is fine. */
export function keyCount(value) {
    let n = 0;
    const stack = [value];
    while (stack.length > 0) {
        const v = stack.pop();
        if (typeof v !== 'object' || v === null)
            continue;
        if (Array.isArray(v)) {
            for (const x of v)
                if (typeof x === 'object' && x !== null)
                    stack.push(x);
            continue;
        }
        for (const k in v) {
            n++;
            const x = v[k];
            if (typeof x === 'object' && x !== null)
                stack.push(x);
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
export function firstRepeatedKey(element) {
    // Per open container: the keys seen (objects only) and the path segment leading to it.
    const stack = [];
    let pendingKey;
    let expectKey = false;
    const pointer = () => '#' + stack.slice(1).map((s) => '/' + s.segment).join('');
    for (let i = 0; i < element.length; i++) {
        const c = element[i];
        if (c === quote) {
            const start = i;
            for (i++; i < element.length && element[i] !== quote; i++)
                if (element[i] === backslash)
                    i++;
            const top = stack[stack.length - 1];
            if (expectKey && top?.keys !== undefined) {
                const key = JSON.parse(Buffer.from(element.subarray(start, i + 1)).toString('utf8'));
                if (top.keys.has(key))
                    return `${pointer()}: ${JSON.stringify(key)}`;
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
        }
        else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
            stack.pop();
        }
        else if (c === 0x2c /* , */) {
            const top = stack[stack.length - 1];
            if (top === undefined)
                continue;
            if (top.keys !== undefined)
                expectKey = true;
            else
                top.index++;
        }
    }
    return undefined;
}
//# sourceMappingURL=repeated-keys.js.map