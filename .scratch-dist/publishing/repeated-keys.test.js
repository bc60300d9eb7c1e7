// Goal (issue 10): repeated keys are found exactly. For any JSON text the splicer's member count equals
// the parsed value's key count when no object repeats a key, and exceeds it when one does, wherever the
// repetition is (nested, escaped, in arrays); the scanner then names the first repeated key.
// Method: fast-check over JSON values serialized with random whitespace, with and without one key of
// one object written twice; examples for the scanner's pointers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { spliceElements } from './splice.js';
import { firstRepeatedKey, keyCount } from './repeated-keys.js';
function members(text) {
    const out = [];
    spliceElements(Buffer.from(`[${text}]`), [undefined], 10_000, out);
    assert.equal(out.length, 1);
    return out[0];
}
test('examples: counts, and the first repeated key named by a pointer', () => {
    for (const [text, repeated] of [
        ['{}', undefined],
        ['{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}', undefined],
        ['{"a":":","b":"\\"a\\":1,"}', undefined],
        ['{"a":1,"a":2}', '#: "a"'],
        ['{"a":1,"\\u0061":2}', '#: "a"'],
        ['{"x":{"y":[1,{"k":1,"k":1}]}}', '#/x/y/1: "k"'],
        ['{"m":{"e":1},"n":[[{"z":0}],{"q":1,"r":{"s":1,"s":1}}]}', '#/n/1/r: "s"'],
    ]) {
        const parsed = JSON.parse(text);
        assert.equal(members(text) !== keyCount(parsed), repeated !== undefined, text);
        assert.equal(firstRepeatedKey(Buffer.from(text)), repeated, text);
    }
});
/** JSON text of `v` with random spaces between tokens, and optionally one key of one object repeated. */
function write(v, space, repeat) {
    if (Array.isArray(v))
        return `[${space()}${v.map((x) => write(x, space, repeat)).join(`${space()},${space()}`)}${space()}]`;
    if (typeof v === 'object' && v !== null) {
        const entries = Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}${space()}:${space()}${write(x, space, repeat)}`);
        if (repeat !== undefined && entries.length > 0 && repeat.left-- === 0)
            entries.push(entries[0]);
        return `{${space()}${entries.join(`${space()},${space()}`)}${space()}}`;
    }
    return JSON.stringify(v);
}
test('property: members equal keys exactly when no key repeats; one repetition anywhere is found and named', () => {
    fc.assert(fc.property(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 4 })), fc.nat(20), fc.array(fc.constantFrom('', ' ', '\n', '\t'), { minLength: 1 }), (value, at, spaces) => {
        let s = 0;
        const space = () => spaces[s++ % spaces.length];
        const clean = write(value, space, undefined);
        assert.equal(members(clean), keyCount(JSON.parse(clean)));
        assert.equal(firstRepeatedKey(Buffer.from(clean)), undefined);
        const repeat = { left: at };
        const dirty = write(value, space, repeat);
        if (repeat.left >= 0)
            return; // fewer non-empty objects than `at`: nothing was repeated
        assert.ok(members(dirty) > keyCount(JSON.parse(dirty)), dirty);
        assert.notEqual(firstRepeatedKey(Buffer.from(dirty)), undefined, dirty);
    }), { numRuns: 2000, seed: 10 });
});
//# sourceMappingURL=repeated-keys.test.js.map