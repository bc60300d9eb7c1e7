// Goal: the batcher follows the low-level stream rules of interface.md: batch_limit flushes at once,
// batch_flush_timeout flushes per partition (keep-alive when empty), stream_limit bounds the events of
// the stream, stream_timeout flushes pending events and ends, stream_keep_alive_limit ends the stream.
// Method: examples on a virtual clock, plus a fast-check model check: whatever the offers and clock
// steps, every offered event is emitted exactly once, in order per partition, and no batch exceeds
// batch_limit or the stream limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { StreamBatcher } from './batcher.js';
import { toOffset } from '../core/offset.js';
const params = (p) => ({
    batchLimit: 1, batchFlushTimeoutMs: 30_000, streamLimit: 0, streamTimeoutMs: 0, streamKeepAliveLimit: 0, ...p,
});
const evs = (from, n) => Array.from({ length: n }, (_, i) => ({ offset: toOffset(from + i), bytes: Buffer.from(String(from + i)) }));
test('a full batch flushes at once', () => {
    const b = new StreamBatcher(params({ batchLimit: 3 }), [{ partition: '0', after: toOffset(-1) }], 0);
    b.offer('0', evs(0, 3));
    const r = b.poll(1);
    assert.equal(r.batches.length, 1);
    assert.equal(r.batches[0].cursor, 2);
    assert.equal(r.batches[0].events.length, 3);
});
test('a partial batch waits for the flush timeout, then flushes; an empty partition sends a keep-alive', () => {
    const b = new StreamBatcher(params({ batchLimit: 10, batchFlushTimeoutMs: 1000 }), [
        { partition: '0', after: toOffset(4) },
        { partition: '1', after: toOffset(-1) },
    ], 0);
    b.offer('0', evs(5, 2));
    const early = b.poll(999);
    assert.equal(early.batches.length, 0);
    assert.equal(early.wakeAtMs, 1000);
    const due = b.poll(1000);
    assert.deepEqual(due.batches.map((x) => [x.partition, x.cursor, x.events.length]), [['0', 6, 2], ['1', -1, 0]]);
});
test('stream_limit cuts the last batch and ends the stream', () => {
    const b = new StreamBatcher(params({ batchLimit: 3, streamLimit: 5 }), [{ partition: '0', after: toOffset(-1) }], 0);
    b.offer('0', evs(0, b.capacity('0')));
    assert.equal(b.poll(0).batches.length, 1);
    assert.equal(b.capacity('0'), 2);
    b.offer('0', evs(3, 2));
    const r = b.poll(0);
    assert.equal(r.batches[0].events.length, 2);
    assert.equal(r.done, true);
    assert.equal(b.capacity('0'), 0);
});
test('stream_timeout flushes pending events and ends', () => {
    const b = new StreamBatcher(params({ batchLimit: 100, batchFlushTimeoutMs: 10_000, streamTimeoutMs: 20_000 }), [{ partition: '0', after: toOffset(-1) }], 0);
    b.offer('0', evs(0, 4));
    assert.equal(b.poll(10_000).batches[0].events.length, 4);
    b.offer('0', evs(4, 1));
    const r = b.poll(20_000);
    assert.equal(r.done, true);
    assert.deepEqual(r.batches.map((x) => x.events.length), [1]);
});
test('stream_keep_alive_limit ends the stream when every partition sent that many keep-alives in a row', () => {
    const b = new StreamBatcher(params({ batchFlushTimeoutMs: 1000, streamKeepAliveLimit: 2 }), [
        { partition: '0', after: toOffset(-1) },
        { partition: '1', after: toOffset(-1) },
    ], 0);
    assert.equal(b.poll(1000).done, false);
    b.offer('1', evs(0, 1));
    assert.equal(b.poll(1000).batches.length, 1); // partition 1's event flushes at once (limit 1)
    assert.equal(b.poll(2000).done, false); // partition 0 has 2 keep-alives, partition 1 only 1
    assert.equal(b.poll(3000).done, true);
});
test('model: every offered event is emitted once, in order, within limits', () => {
    const action = fc.oneof(fc.record({ kind: fc.constant('offer'), partition: fc.integer({ min: 0, max: 2 }), n: fc.integer({ min: 0, max: 7 }) }), fc.record({ kind: fc.constant('tick'), ms: fc.integer({ min: 0, max: 1500 }) }));
    fc.assert(fc.property(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 30 }), fc.array(action, { maxLength: 60 }), (batchLimit, streamLimitRaw, actions) => {
        const streamLimit = streamLimitRaw === 0 ? 0 : Math.max(streamLimitRaw, batchLimit);
        const parts = ['0', '1', '2'];
        const b = new StreamBatcher(params({ batchLimit, batchFlushTimeoutMs: 1000, streamLimit }), parts.map((p) => ({ partition: p, after: toOffset(-1) })), 0);
        const next = [0, 0, 0];
        const emitted = [[], [], []];
        let now = 0;
        let total = 0;
        const drain = (r) => {
            for (const x of r.batches) {
                assert.ok(x.events.length <= batchLimit);
                const p = Number(x.partition);
                for (const e of x.events)
                    emitted[p].push(e.offset);
                total += x.events.length;
                if (x.events.length > 0)
                    assert.equal(x.cursor, x.events[x.events.length - 1].offset);
            }
        };
        for (const a of actions) {
            if (a.kind === 'offer') {
                const n = Math.min(a.n, b.capacity(String(a.partition)));
                b.offer(String(a.partition), evs(next[a.partition], n));
                next[a.partition] += n;
            }
            else
                now += a.ms;
            drain(b.poll(now));
        }
        drain(b.poll(now + 1000));
        if (streamLimit > 0)
            assert.ok(total <= streamLimit);
        for (let p = 0; p < 3; p++)
            assert.deepEqual(emitted[p], Array.from({ length: next[p] }, (_, i) => i));
    }));
});
// Subscription streams change their partitions while running.
test('a partition added later is batched from its own start; a removed one drops its unsent buffer from the stream limit', () => {
    const b = new StreamBatcher(params({ batchLimit: 10, batchFlushTimeoutMs: 1000, streamLimit: 10 }), [], 0);
    assert.equal(b.poll(5000).batches.length, 0, 'no partitions, no keep-alives');
    b.addPartition('a', toOffset(-1), 100);
    b.offer('a', evs(0, 4));
    assert.equal(b.buffered, 4);
    assert.equal(b.capacity('a'), 6);
    b.removePartition('a');
    assert.equal(b.buffered, 0);
    b.addPartition('b', toOffset(9), 200);
    assert.equal(b.capacity('b'), 10, 'the dropped events no longer count toward stream_limit');
    assert.throws(() => b.addPartition('b', toOffset(0), 200));
    assert.throws(() => b.capacity('a'));
});
test('poll with flushAll sends partial buffers at once (the uncommitted window is full)', () => {
    const b = new StreamBatcher(params({ batchLimit: 10, batchFlushTimeoutMs: 30_000 }), [
        { partition: '0', after: toOffset(-1) },
        { partition: '1', after: toOffset(-1) },
    ], 0);
    b.offer('0', evs(0, 3));
    assert.equal(b.poll(1).batches.length, 0);
    const r = b.poll(2, true);
    assert.deepEqual(r.batches.map((x) => [x.partition, x.events.length]), [['0', 3]], 'only non-empty buffers flush; no early keep-alive');
});
test('stream_keep_alive_limit does not end a stream that has no partitions', () => {
    const b = new StreamBatcher(params({ batchFlushTimeoutMs: 10, streamKeepAliveLimit: 1 }), [], 0);
    assert.equal(b.poll(100).done, false);
    b.addPartition('0', toOffset(-1), 100);
    assert.equal(b.poll(110).done, true);
});
//# sourceMappingURL=batcher.test.js.map