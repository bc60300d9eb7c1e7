// Goal: firstInvalidUtf8 finds the first byte that breaks UTF-8 (RFC 3629), agreeing with Node's isUtf8.
// Method: a property over random bytes (and valid text with a byte flipped): -1 exactly when Node says
// valid; otherwise everything before the offset is valid and the sequence starting there is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { firstInvalidUtf8 } from './utf8.js';
const bytes = fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.tuple(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.nat(), fc.integer({ min: 0, max: 255 })).map(([s, at, b]) => {
    const buf = Buffer.from(s);
    if (buf.length > 0)
        buf[at % buf.length] = b;
    return new Uint8Array(buf);
}));
test('property: -1 exactly for valid UTF-8; otherwise the prefix is valid and the rest is not', () => {
    fc.assert(fc.property(bytes, (b) => {
        const at = firstInvalidUtf8(b);
        assert.equal(at === -1, isUtf8(b));
        if (at >= 0) {
            assert.ok(isUtf8(b.subarray(0, at)));
            assert.equal(isUtf8(b.subarray(at)), false);
        }
    }), { numRuns: 5000, seed: 8 });
});
test('overlong forms, surrogates and code points above U+10FFFF are invalid', () => {
    for (const seq of [[0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0x80], [0xe2, 0x82]]) {
        assert.equal(firstInvalidUtf8(Uint8Array.from([0x61, ...seq])), 1, JSON.stringify(seq));
    }
    assert.equal(firstInvalidUtf8(Buffer.from('aé€😀')), -1);
});
//# sourceMappingURL=utf8.test.js.map