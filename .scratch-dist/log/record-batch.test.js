/**
 * Goal: a record batch decodes to exactly what was encoded, and any damage is detected, never served.
 * Method: fast-check round trips over random events; flipping any single byte, truncating, appending a
 * byte or decoding under a different key offset must throw BatchFormatError.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BatchFormatError, decodeRecordBatch, encodeRecordBatch, readBatchHeader } from './record-batch.js';
const events = fc.array(fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)), { minLength: 1, maxLength: 20 });
const first = fc.oneof(fc.constantFrom(0, 2 ** 32 - 1, 2 ** 40), fc.integer({ min: 0, max: 2 ** 50 }));
const time = fc.integer({ min: 0, max: 2 ** 45 });
test('round trip', () => {
    fc.assert(fc.property(events, first, time, (evs, f, t) => {
        const v = encodeRecordBatch(f, t, evs);
        const d = decodeRecordBatch(v, f + evs.length - 1);
        assert.equal(d.first, f);
        assert.equal(d.count, evs.length);
        assert.equal(d.appendTimeMs, t);
        assert.deepEqual(d.events.map((e) => Buffer.from(e)), evs);
        assert.deepEqual(readBatchHeader(v), { first: f, count: evs.length, appendTimeMs: t });
    }));
});
test('any flipped byte is detected', () => {
    fc.assert(fc.property(events, first, time, fc.nat(), fc.integer({ min: 1, max: 255 }), (evs, f, t, pos, mask) => {
        const v = encodeRecordBatch(f, t, evs);
        const i = pos % v.length;
        v[i] = v[i] ^ mask;
        assert.throws(() => decodeRecordBatch(v, f + evs.length - 1), BatchFormatError);
    }), { numRuns: 1000 });
});
test('truncation, extension and a wrong key are detected', () => {
    const evs = [Buffer.from('{"a":1}'), Buffer.from('{"b":2}')];
    const v = encodeRecordBatch(10, 1000, evs);
    assert.throws(() => decodeRecordBatch(v.subarray(0, v.length - 1), 11), BatchFormatError);
    assert.throws(() => decodeRecordBatch(v.subarray(0, 10), 11), BatchFormatError);
    assert.throws(() => decodeRecordBatch(Buffer.concat([v, Buffer.from([0])]), 11), BatchFormatError);
    assert.throws(() => decodeRecordBatch(v, 12), /key says 12/);
    assert.deepEqual(decodeRecordBatch(v, 11).events.map(String), ['{"a":1}', '{"b":2}']);
});
//# sourceMappingURL=record-batch.test.js.map