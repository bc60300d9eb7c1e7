/**
 * Goal: the byte order of encoded keys is the numeric order of (topic, partition, offset), so RocksDB's
 * iteration order is the log order, and the range helpers contain exactly their keys.
 * Method: fast-check over random tuples, comparing Buffer.compare with tuple comparison; round trips.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { afterPrefix, batchKey, decodeBatchKey, partitionBatchRange, topicRange, prefixBatch, u32Max, } from './keys.js';
const tuple = fc.tuple(fc.oneof(fc.constantFrom(0, 1, 255, 256, u32Max), fc.integer({ min: 0, max: u32Max })), fc.oneof(fc.constantFrom(0, 1, u32Max), fc.integer({ min: 0, max: u32Max })), fc.oneof(fc.constantFrom(0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })));
function cmp(a, b) {
    for (let i = 0; i < a.length; i++)
        if (a[i] !== b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}
test('encoded key order equals numeric tuple order', () => {
    fc.assert(fc.property(tuple, tuple, (a, b) => {
        assert.equal(Math.sign(Buffer.compare(batchKey(...a), batchKey(...b))), cmp(a, b));
    }), { numRuns: 2000 });
});
test('batch keys round-trip and fall inside their partition and topic ranges', () => {
    fc.assert(fc.property(tuple, ([t, p, o]) => {
        const k = batchKey(t, p, o);
        assert.deepEqual(decodeBatchKey(k), { topic: t, partition: p, lastOffset: o });
        const pr = partitionBatchRange(t, p);
        assert.ok(Buffer.compare(pr.gte, k) <= 0 && Buffer.compare(k, pr.lt) < 0);
        const tr = topicRange(prefixBatch, t);
        assert.ok(Buffer.compare(tr.gte, k) <= 0 && Buffer.compare(k, tr.lt) < 0);
        if (p < u32Max)
            assert.ok(Buffer.compare(batchKey(t, p + 1, 0), pr.lt) >= 0);
    }));
});
test('afterPrefix carries over 0xff bytes', () => {
    assert.deepEqual(afterPrefix(Buffer.from([0x10, 0x00, 0xff, 0xff])), Buffer.from([0x10, 0x01]));
    assert.throws(() => afterPrefix(Buffer.from([0xff])));
});
test('invalid components are refused', () => {
    assert.throws(() => batchKey(-1, 0, 0));
    assert.throws(() => batchKey(0, u32Max + 1, 0));
    assert.throws(() => batchKey(0, 0, -1));
    assert.throws(() => batchKey(0, 0, 2 ** 53));
});
//# sourceMappingURL=keys.test.js.map