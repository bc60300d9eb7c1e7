// Goal: log shipping moves entries in chunks of at most the requested bytes (a single larger entry
// alone), contiguous from the requested index; the client refuses a chunk that skips, goes beyond the
// range, is larger than asked or carries impossible terms; the request's limits are clamped.
// Method: chunking against a naive model with fast-check; one hand-made violation per rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DecodeError } from './codec.js';
import { fromWireFetchLogRequest, fromWireLogChunk, toWireFetchLogRequest, toWireLogChunks } from './log-codec.js';
import { raftProto } from './proto.js';
import { logChunkBytesDefault, logChunkBytesMax, termMax } from './limits.js';
import { TransportError } from './types.js';
const entries = (from, sizes) => sizes.map((n, k) => ({ term: 2, index: from + k, type: 'normal', data: Buffer.alloc(n, 120) }));
const wire = (c, req, next) => toWireLogChunks(c, req, next).map((w) => raftProto().LogChunk.deserialize(raftProto().LogChunk.serialize(w)));
test('chunks hold at most maxBytes of entry data (a larger entry alone), contiguous, and decode to the entries sent', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 80 }), fc.integer({ min: 1, max: 5000 }), (sizes, maxBytes) => {
        const req = { group: 4, fromIndex: 10, toIndex: 10 + sizes.length - 1, maxBytes };
        const sent = entries(10, sizes);
        let next = 10;
        const got = wire({ entries: sent }, req, 10).flatMap((w) => {
            const c = fromWireLogChunk(w, req, next);
            const bytes = c.entries.reduce((n, e) => n + e.data.byteLength, 0);
            assert.ok(c.entries.length === 1 || bytes <= maxBytes, `${bytes} bytes in ${c.entries.length} entries`);
            next += c.entries.length;
            return c.entries;
        });
        assert.deepEqual(got.map((e) => [e.index, e.data.byteLength]), sent.map((e) => [e.index, e.data.byteLength]));
    }), { numRuns: 200 });
});
test('the client refuses chunks that skip, pass the range, exceed maxBytes or carry bad terms', () => {
    const req = { group: 4, fromIndex: 10, toIndex: 12, maxBytes: 100 };
    const [w] = wire({ entries: entries(10, [10, 10, 10]) }, req, 10);
    assert.equal(fromWireLogChunk(w, req, 10).entries.length, 3);
    assert.throws(() => fromWireLogChunk(w, req, 11), /expected 11/);
    assert.throws(() => fromWireLogChunk(w, { ...req, toIndex: 11 }, 10), /beyond/);
    assert.throws(() => fromWireLogChunk(w, { ...req, maxBytes: 20 }, 10), /more than/);
    assert.throws(() => fromWireLogChunk({ entries: [{ ...w.entries[0], term: String(termMax + 1) }] }, req, 10), /term/);
    assert.throws(() => fromWireLogChunk({ entries: [w.entries[0], { ...w.entries[1], term: '1' }] }, req, 10), /below the previous/);
    assert.throws(() => fromWireLogChunk({ entries: [] }, req, 10), DecodeError);
    // The server refuses a handler's out-of-order entries.
    assert.throws(() => toWireLogChunks({ entries: entries(11, [1]) }, req, 10), TransportError);
});
test('a fetch request: maxBytes 0 is the default, above the bound is clamped, a backwards range is refused', () => {
    const via = (r) => fromWireFetchLogRequest(raftProto().FetchLogRequest.deserialize(raftProto().FetchLogRequest.serialize(toWireFetchLogRequest(r))));
    assert.equal(via({ group: 0, fromIndex: 1, toIndex: 5, maxBytes: 0 }).maxBytes, logChunkBytesDefault);
    assert.equal(via({ group: 0, fromIndex: 1, toIndex: 5, maxBytes: 2 ** 31 }).maxBytes, logChunkBytesMax);
    assert.throws(() => via({ group: 0, fromIndex: 5, toIndex: 4, maxBytes: 0 }), DecodeError);
    assert.throws(() => via({ group: 0, fromIndex: 0, toIndex: 4, maxBytes: 0 }), DecodeError);
});
//# sourceMappingURL=log-codec.test.js.map