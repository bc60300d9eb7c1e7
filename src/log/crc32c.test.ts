/**
 * Goal: crc32c() computes CRC32C (Castagnoli) exactly, in one piece or in several.
 * Method: the RFC 3720 B.4 vectors (32 bytes of 0x00, 0xff, ascending, descending), the standard
 * "123456789" check value and two widely published strings; a property test compares the
 * slice-by-8 path against a bitwise reference on random data and random split points.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { crc32c, crc32cCombine, crc32cUncombine } from './crc32c.js';

function reference(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

test('known vectors', () => {
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32c(Buffer.alloc(0)), 0);
  assert.equal(crc32c(Buffer.alloc(32, 0)), 0x8a9136aa);
  assert.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43);
  assert.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => i))), 0x46dd794e);
  assert.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i))), 0x113fdb5c);
  assert.equal(crc32c(Buffer.from('a')), 0xc1d04330);
  assert.equal(crc32c(Buffer.from('The quick brown fox jumps over the lazy dog')), 0x22620404);
});

test('matches the bitwise reference, in one piece and split', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), (data, cut) => {
      const expected = reference(data);
      assert.equal(crc32c(data), expected);
      const at = data.length === 0 ? 0 : cut % (data.length + 1);
      assert.equal(crc32c(data, crc32c(data, 0, 0, at), at), expected);
    }),
    { numRuns: 500 },
  );
});

test('combining CRCs of parts gives the CRC of the whole, and removing a prefix gives the rest\'s', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
      const ab = new Uint8Array([...a, ...b]);
      assert.equal(crc32cCombine(crc32c(a), crc32c(b), b.length), reference(ab));
      assert.equal(crc32cUncombine(crc32c(ab), crc32c(a), b.length), reference(b));
    }),
    { numRuns: 300 },
  );
});

test('combining gives the same CRC whichever lengths came before (the remembered shifts)', () => {
  // Lengths that share a slot of the remembered shifts (equal low bits), in an order that replaces
  // each one before it comes again, next to repeats of one length.
  fc.assert(
    fc.property(fc.array(fc.constantFrom(0, 1, 5, 64, 69, 133, 1029, 4101, 65541), { minLength: 1, maxLength: 12 }), fc.uint8Array({ maxLength: 40 }), (lengths, a) => {
      for (const n of lengths) {
        const b = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
        assert.equal(crc32cCombine(crc32c(a), crc32c(b), n), reference(new Uint8Array([...a, ...b])));
      }
    }),
    { numRuns: 100 },
  );
});
