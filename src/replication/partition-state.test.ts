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
  for (let i = 0; i < dedupWindow + 10; i++) s.applyBatch(i + 1, `id-${i}`, 1);
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

test('a seal ends the log: later batches are not stored, a retried request id still gets its offsets, the same seal answers the same start', () => {
  const s = new PartitionState();
  s.applyBatch(1, 'r1', 2);
  assert.deepEqual(s.applySeal(2, 'T', 0), { kind: 'seal', timeline: 'T', next: 2 });
  assert.deepEqual(s.applyBatch(3, 'r2', 3), { kind: 'sealed', timeline: 'T' }, 'a batch after the seal takes no offsets');
  assert.deepEqual(s.applyBatch(4, 'r1', 2), { kind: 'duplicate', first: 0, last: 1 }, 'a retry of a batch stored before the seal is answered with its offsets');
  assert.deepEqual(s.applyBatch(5, '', 1), { kind: 'sealed', timeline: 'T' });
  assert.deepEqual(s.applySeal(6, 'T', 0), { kind: 'seal', timeline: 'T', next: 2 }, 'idempotent');
  assert.deepEqual(s.applySeal(7, 'U', 0), { kind: 'sealRefused', sealedFor: 'T' }, 'another switch cannot seal it again');
  assert.equal(s.applyBase(8, 10), false, 'a sealed log takes no base');
  assert.equal(s.newest, 1);
  assert.equal(s.applied, 8);
  // The seal is part of the image: a replica restored from it refuses batches alike.
  const restored = new PartitionState(s.image());
  assert.equal(restored.sealed, 'T');
  assert.deepEqual(restored.applyBatch(9, 'r3', 1), { kind: 'sealed', timeline: 'T' });
  assert.deepEqual(restored.applySeal(10, 'T', 0), { kind: 'seal', timeline: 'T', next: 2 });
});

test('sealing a log that never took an event answers its timeline start (the floor); a written log ignores the floor', () => {
  const empty = new PartitionState();
  assert.deepEqual(empty.applySeal(1, 'T', 40), { kind: 'seal', timeline: 'T', next: 40 });
  assert.deepEqual([empty.oldest, empty.newest], [40, 39]);
  const based = new PartitionState();
  based.applyBase(1, 40);
  based.applyBatch(2, '', 5);
  assert.deepEqual(based.applySeal(3, 'T', 40), { kind: 'seal', timeline: 'T', next: 45 });
  const open = new PartitionState();
  assert.equal(open.sealed, undefined);
  assert.equal(open.image().sealed, undefined, 'an open log\'s image has no seal field (older images decode alike)');
});

test('property: replicas applying the same log agree on every outcome, whatever the no-ops, duplicates and seals; nothing is stored after a seal', () => {
  const entry = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('batch' as const), id: fc.constantFrom('', 'a', 'b', 'c', 'd'), count: fc.integer({ min: 1, max: 5 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('other' as const) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('seal' as const), timeline: fc.constantFrom('T', 'U') }) },
  );
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 60 }), fc.integer({ min: 0, max: 60 }), (log, cut) => {
      const apply = (st: PartitionState, e: (typeof log)[number], i: number) =>
        e.kind === 'batch' ? st.applyBatch(i + 1, e.id, e.count) : e.kind === 'seal' ? st.applySeal(i + 1, e.timeline, 0) : (st.applyOther(i + 1), undefined);
      // One replica applies the log straight; the other restores from an image taken at `cut`.
      const a = new PartitionState();
      const outA = log.map((e, i) => apply(a, e, i));
      let b = new PartitionState();
      const outB = log.map((e, i) => {
        if (i === Math.min(cut, log.length)) b = new PartitionState(b.image());
        return apply(b, e, i);
      });
      assert.deepEqual(outB, outA);
      // Offsets handed out are dense: appended batches tile [0, newest]; none after the first seal,
      // and every seal of the same timeline answers the same start.
      let next = 0;
      let sealedAt: { timeline: string; next: number } | undefined;
      for (const o of outA) {
        if (o?.kind === 'appended') {
          assert.equal(sealedAt, undefined, 'a batch stored after a seal');
          assert.equal(o.first, next);
          next = o.last + 1;
        }
        if (o?.kind === 'seal') {
          sealedAt ??= { timeline: o.timeline, next: o.next };
          assert.deepEqual({ timeline: o.timeline, next: o.next }, sealedAt);
        }
        if (o?.kind === 'sealRefused') assert.equal(o.sealedFor, sealedAt?.timeline);
        if (o?.kind === 'sealed') assert.equal(o.timeline, sealedAt?.timeline);
      }
      if (sealedAt !== undefined) assert.equal(sealedAt.next, next);
      assert.equal(a.newest, next - 1);
    }),
  );
});

// A replica fetching the log before its snapshot from where another replica's retention moved its
// start applies it without the window the log had there. A retry whose first attempt lies before that
// start was a duplicate where it was applied first; applied as new, it took offsets the others never
// gave, and the fetched log did not add up to the snapshot (host simulation, seed 32 with retention:
// 'the fetched log reaches offset 47 by index 25, past the snapshot's last offset 44').
test('a state applying the log from a later start, told the ids a later window remembers, gives every batch the outcome of the whole log', () => {
  const s = new PartitionState();
  s.applyBatch(1, 'r1', 2);
  s.applyBatch(2, 'r2', 1);
  const from = new PartitionState({ applied: 2, next: 3, oldest: 3, recent: [] }, new Map([['r1', [0, 1]], ['r3', [3, 5]]]));
  assert.deepEqual(from.applyBatch(3, 'r1', 2), { kind: 'duplicate', first: 0, last: 1 }, 'a retry of a batch before the start');
  assert.deepEqual(from.applyBatch(4, 'r3', 3), { kind: 'appended', first: 3, last: 5 }, 'the first application of an id the later window holds');
  assert.deepEqual(from.applyBatch(5, 'r3', 3), { kind: 'duplicate', first: 3, last: 5 });
  const entry = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('batch' as const), id: fc.constantFrom('', 'a', 'b', 'c', 'd', 'e'), count: fc.integer({ min: 1, max: 5 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('other' as const) }) },
  );
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 60 }), fc.integer({ min: 0, max: 60 }), (log, at) => {
      const cut = Math.min(at, log.length);
      const apply = (st: PartitionState, e: (typeof log)[number], i: number) => (e.kind === 'batch' ? st.applyBatch(i + 1, e.id, e.count) : (st.applyOther(i + 1), undefined));
      const whole = new PartitionState();
      const outWhole = log.map((e, i) => apply(whole, e, i));
      const atCut = new PartitionState();
      log.slice(0, cut).forEach((e, i) => apply(atCut, e, i));
      const later = new Map(whole.image().recent.map(([id, first, last]) => [id, [first, last] as const]));
      const part = new PartitionState({ applied: cut, next: atCut.newest + 1, oldest: atCut.newest + 1, recent: [] }, later);
      const outPart = log.slice(cut).map((e, i) => apply(part, e, cut + i));
      assert.deepEqual(outPart, outWhole.slice(cut));
    }),
  );
});
