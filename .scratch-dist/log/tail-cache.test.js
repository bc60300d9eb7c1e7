// Goal: the tail cache serves exactly the events that were added, never a byte of another batch, under
// any mix of partitions, batch sizes, arena wrap-arounds, retention and dropped runs; what it serves is
// a copy that later adds cannot change; it stays within its budget; its newest batch is always served
// when it fits. Method: fast-check runs random operations against a model (per partition, the list of
// events added); after every operation everything the cache serves is checked against it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeRecordBatch } from './record-batch.js';
import { TailCache, newTailRun } from './tail-cache.js';
function batch(first, events) {
    return encodeRecordBatch(first, 1_700_000_000_000, events);
}
const eventBytes = (p, offset, size) => Buffer.from(`p${p}o${offset}:`.padEnd(size, String.fromCharCode(97 + (offset % 26))));
/** Reads everything the cache serves from `from` on. */
function readAll(cache, run, from) {
    const out = [];
    const ok = cache.read(run, from, (offset, bytes) => out.push({ offset, bytes }), () => false);
    return ok ? out : null;
}
const op = fc.oneof({ weight: 6, arbitrary: fc.record({ kind: fc.constant('add'), p: fc.integer({ min: 0, max: 2 }), events: fc.array(fc.integer({ min: 12, max: 300 }), { minLength: 1, maxLength: 6 }) }) }, { weight: 3, arbitrary: fc.record({ kind: fc.constant('read'), p: fc.integer({ min: 0, max: 2 }), back: fc.integer({ min: 0, max: 40 }) }) }, { weight: 1, arbitrary: fc.record({ kind: fc.constant('retain'), p: fc.integer({ min: 0, max: 2 }), n: fc.integer({ min: 1, max: 10 }) }) }, { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop'), p: fc.integer({ min: 0, max: 2 }) }) });
test('reads serve exactly what was added, contiguous up to the newest batch, within the budget, under random operations', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 6000 }), fc.array(op, { minLength: 1, maxLength: 120 }), (budget, ops) => {
        const cache = new TailCache(budget);
        const runs = [newTailRun(), newTailRun(), newTailRun()];
        const next = [0, 0, 0]; // next offset per partition
        const oldest = [0, 0, 0]; // retention low-water mark per partition
        const batchEnds = [[], [], []]; // last offsets of the batches added, per partition
        const added = new Map(); // `${p}/${offset}` -> bytes
        const held = []; // events read earlier, checked never to change
        for (const o of ops) {
            if (o.kind === 'add') {
                const first = next[o.p];
                const events = o.events.map((size, i) => eventBytes(o.p, first + i, size));
                events.forEach((e, i) => added.set(`${o.p}/${first + i}`, e));
                const value = batch(first, events);
                cache.add(runs[o.p], first, value, events.length);
                next[o.p] = first + events.length;
                batchEnds[o.p].push(first + events.length - 1);
                // The newest batch is served whenever it fits in the budget.
                if (value.length <= budget) {
                    const got = readAll(cache, runs[o.p], first);
                    assert.ok(got !== null, 'the batch just added is served');
                    assert.equal(got.length, events.length);
                }
                else {
                    assert.equal(readAll(cache, runs[o.p], first), null, 'a batch larger than the cache is not served');
                }
            }
            else if (o.kind === 'read') {
                // Keep a few events read now, to check at the end that later adds did not change them.
                const got = readAll(cache, runs[o.p], Math.max(oldest[o.p], next[o.p] - 1 - o.back));
                for (const e of (got ?? []).slice(0, 3))
                    held.push({ bytes: e.bytes, copy: Buffer.from(e.bytes) });
            }
            else if (o.kind === 'retain') {
                // Retention removes whole batches: up to the end of the n-th oldest batch not yet removed.
                const ends = batchEnds[o.p].filter((e) => e >= oldest[o.p]);
                if (ends.length === 0)
                    continue;
                const upTo = ends[Math.min(o.n, ends.length) - 1];
                cache.dropUpTo(runs[o.p], upTo);
                oldest[o.p] = Math.max(oldest[o.p], upTo + 1);
                assert.equal(readAll(cache, runs[o.p], upTo), null, 'removed offsets are not served');
            }
            else {
                cache.dropRun(runs[o.p]);
                assert.equal(readAll(cache, runs[o.p], Math.max(0, next[o.p] - 1)), null, 'a dropped run serves nothing');
            }
            assert.ok(cache.bytes >= 0 && cache.bytes <= budget, `bytes ${cache.bytes} within ${budget}`);
            // After every operation, every partition: from the oldest offset the cache serves to the newest,
            // every event in order, byte for byte.
            for (let p = 0; p < runs.length; p++) {
                let from = oldest[p];
                while (from < next[p] && readAll(cache, runs[p], from) === null)
                    from++;
                if (from === next[p])
                    continue;
                const got = readAll(cache, runs[p], from);
                assert.deepEqual(got.map((e) => e.offset), Array.from({ length: next[p] - from }, (_, i) => from + i));
                for (const e of got)
                    assert.ok(e.bytes.equals(added.get(`${p}/${e.offset}`)), `p${p} offset ${e.offset}`);
            }
        }
        for (const h of held)
            assert.ok(h.bytes.equals(h.copy), 'an event read earlier was changed by later adds');
    }), { numRuns: 300 });
});
test('a run stays contiguous: adding out of order is refused', () => {
    const cache = new TailCache(10_000);
    const run = newTailRun();
    cache.add(run, 0, batch(0, [Buffer.from('a')]), 1);
    assert.throws(() => cache.add(run, 5, batch(5, [Buffer.from('b')]), 1), /gap/);
});
test('many small batches grow the entry columns without losing any', () => {
    const cache = new TailCache(4 * 1024 * 1024);
    const run = newTailRun();
    for (let o = 0; o < 5000; o++)
        cache.add(run, o, batch(o, [eventBytes(0, o, 20)]), 1);
    const got = readAll(cache, run, 0);
    assert.ok(got !== null);
    assert.equal(got.length, 5000);
    for (const e of got)
        assert.ok(e.bytes.equals(eventBytes(0, e.offset, 20)));
});
test('a budget of 0 caches nothing', () => {
    const cache = new TailCache(0);
    const run = newTailRun();
    cache.add(run, 0, batch(0, [Buffer.from('a')]), 1);
    assert.equal(readAll(cache, run, 0), null);
    assert.equal(cache.bytes, 0);
});
//# sourceMappingURL=tail-cache.test.js.map