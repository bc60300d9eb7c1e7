import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dedupWindow, PartitionState } from './partition-state.js';
test('offsets are dense and assigned in apply order; entries without events take none', () => {
    const s = new PartitionState();
    assert.deepEqual(s.applyBatch(1, 'a', 3), { kind: 'appended', first: 0, last: 2 });
    s.applyOther(2); // a new leader's no-op
    s.applyOther(3); // a configuration change
    assert.deepEqual(s.applyBatch(4, '', 2), { kind: 'appended', first: 3, last: 4 });
    assert.equal(s.newest, 4);
    assert.equal(s.applied, 4);
});
test('a retried request id is answered with the offsets of its first application, once', () => {
    const s = new PartitionState();
    s.applyBatch(1, 'r1', 2);
    s.applyBatch(2, 'r2', 1);
    assert.deepEqual(s.applyBatch(3, 'r1', 2), { kind: 'duplicate', first: 0, last: 1 });
    assert.equal(s.newest, 2, 'the duplicate took no offsets');
    // An empty id is never de-duplicated.
    s.applyBatch(4, '', 1);
    assert.deepEqual(s.applyBatch(5, '', 1), { kind: 'appended', first: 4, last: 4 });
});
test('the de-duplication window is bounded and travels in the image', () => {
    const s = new PartitionState();
    for (let i = 0; i < dedupWindow + 10; i++)
        s.applyBatch(i + 1, `id-${i}`, 1);
    const img = s.image();
    assert.equal(img.recent.length, dedupWindow);
    const restored = new PartitionState(img);
    // The oldest ids fell out of the window; the newest are still refused after a restore.
    assert.equal(restored.applyBatch(img.applied + 1, 'id-0', 1).kind, 'appended');
    assert.equal(restored.applyBatch(img.applied + 2, `id-${dedupWindow + 9}`, 1).kind, 'duplicate');
});
test('entries must be applied in order, each exactly once', () => {
    const s = new PartitionState();
    s.applyBatch(1, '', 1);
    assert.throws(() => s.applyBatch(1, '', 1), /applied after 1/);
    assert.throws(() => s.applyOther(3), /applied after 1/);
});
test('a base is taken only by an empty log, and retention moves only the oldest offset', () => {
    const s = new PartitionState();
    assert.equal(s.applyBase(1, 100), true);
    assert.deepEqual(s.applyBatch(2, '', 2), { kind: 'appended', first: 100, last: 101 });
    assert.equal(s.applyBase(3, 500), false, 'a written log keeps its offsets');
    assert.equal(s.newest, 101);
    s.truncateBefore(101);
    assert.equal(s.oldest, 101);
    s.truncateBefore(50);
    assert.equal(s.oldest, 101, 'retention never moves back');
    assert.throws(() => s.truncateBefore(200), /beyond next/);
});
test('property: replicas applying the same log agree on every batch offset, whatever the no-ops and duplicates', () => {
    const entry = fc.oneof(fc.record({ kind: fc.constant('batch'), id: fc.constantFrom('', 'a', 'b', 'c', 'd'), count: fc.integer({ min: 1, max: 5 }) }), fc.record({ kind: fc.constant('other') }));
    fc.assert(fc.property(fc.array(entry, { maxLength: 60 }), fc.integer({ min: 0, max: 60 }), (log, cut) => {
        // One replica applies the log straight; the other restores from an image taken at `cut`.
        const a = new PartitionState();
        const outA = log.map((e, i) => (e.kind === 'batch' ? a.applyBatch(i + 1, e.id, e.count) : (a.applyOther(i + 1), undefined)));
        let b = new PartitionState();
        const outB = log.map((e, i) => {
            if (i === Math.min(cut, log.length))
                b = new PartitionState(b.image());
            return e.kind === 'batch' ? b.applyBatch(i + 1, e.id, e.count) : (b.applyOther(i + 1), undefined);
        });
        assert.deepEqual(outB, outA);
        // Offsets handed out are dense: appended batches tile [0, newest].
        let next = 0;
        for (const o of outA) {
            if (o?.kind !== 'appended')
                continue;
            assert.equal(o.first, next);
            next = o.last + 1;
        }
        assert.equal(a.newest, next - 1);
    }));
});
//# sourceMappingURL=partition-state.test.js.map