// Goal: GroupIdSet and GroupTimes behave as the Set<number> and Map<number, number> they replace in
// the node host (group-slots.ts), iteration while ids come and go included, and a turn-by-turn churn
// of them runs no full collection. Method: random operations on both side by side, with adds and
// deletes during iterations, compared after each step; then 300,000 add/iterate/delete rounds after
// a full collection, counting full collections (v8.GCProfiler; a Set in its place: several).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GCProfiler, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { GroupIdSet, GroupTimes } from './group-slots.js';

/** A small deterministic generator (the test must replay the same way). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

test('GroupIdSet iterates as a Set does, with ids added and deleted during the iteration', () => {
  for (let seed = 1; seed <= 50; seed++) {
    const r = rng(seed);
    const want = new Set<number>();
    const got = new GroupIdSet();
    const id = (): number => Math.floor(r() * 12);
    for (let step = 0; step < 400; step++) {
      const op = r();
      if (op < 0.4) {
        const x = id();
        want.add(x);
        got.add(x);
      } else if (op < 0.6) {
        const x = id();
        want.delete(x);
        got.delete(x);
      } else if (op < 0.65) {
        const x = id();
        want.delete(x);
        got.forget(x);
      } else {
        // An iteration that deletes what it visits and sometimes adds or deletes others, as a turn does.
        const plan: number[] = [];
        for (let k = 0; k < 6; k++) plan.push(r());
        const run = (s: { add(x: number): void; delete(x: number): void; [Symbol.iterator](): Iterator<number> }): number[] => {
          const seen: number[] = [];
          let k = 0;
          for (const x of s as Iterable<number>) {
            seen.push(x);
            if (seen.length > 40) break;
            const p = plan[k++ % plan.length]!;
            if (p < 0.7) s.delete(x);
            if (p > 0.5) s.add((x * 7 + k) % 12);
            if (p > 0.85) s.delete((x + 3) % 12);
          }
          return seen;
        };
        assert.deepEqual(run(got), run(want), `seed ${seed} step ${step}`);
      }
      assert.equal(got.size, want.size, `seed ${seed} step ${step}`);
      assert.deepEqual([...got], [...want], `seed ${seed} step ${step}`);
      for (let x = 0; x < 12; x++) assert.equal(got.has(x), want.has(x));
    }
  }
});

test('GroupTimes holds a time per id as a Map does', () => {
  const t = new GroupTimes();
  assert.equal(t.get(3), undefined);
  assert.equal(t.has(3), false);
  t.set(3, 0);
  assert.equal(t.get(3), 0);
  assert.equal(t.has(3), true);
  t.set(3, 12.5);
  assert.equal(t.get(3), 12.5);
  t.delete(3);
  assert.equal(t.get(3), undefined);
  t.set(4, 1);
  t.forget(4);
  assert.equal(t.has(4), false);
});

test('a turn-by-turn churn of group ids and times runs no full collection', () => {
  const dirty = new GroupIdSet();
  const since = new GroupTimes();
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  const profiler = new GCProfiler();
  profiler.start();
  let visited = 0;
  for (let turn = 0; turn < 300_000; turn++) {
    const a = turn % 8;
    dirty.add(a);
    dirty.add((a + 3) % 8);
    since.set(a, turn);
    for (const id of dirty) {
      dirty.delete(id);
      since.delete(id);
      visited++;
    }
  }
  const full = profiler.stop().statistics.filter((s) => s.gcType === 'MarkSweepCompact').length;
  assert.equal(visited, 600_000);
  // A Set<number> and a Map<number, number> in their places: 4 (checked).
  assert.equal(full, 0, `${full} full collections`);
});
