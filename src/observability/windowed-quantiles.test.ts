// Goal: the JSON timers' quantiles (windowed-quantiles.ts) are within half a bucket of the exact
// nearest-rank quantile of the values in the window, and values leave the window as it slides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { WindowedQuantiles } from './windowed-quantiles.js';

const exact = (values: number[], q: number): number => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(1, Math.ceil(q * s.length)) - 1]!;
};

test('every quantile is within half a bucket (0.5 %) of the exact nearest-rank quantile of the window', () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 0.001, max: 100_000, noNaN: true }), { minLength: 1, maxLength: 300 }),
      fc.constantFrom(0.5, 0.75, 0.95, 0.99, 0.999, 1),
      (values, q) => {
        const w = new WindowedQuantiles({ maxAgeMs: 600_000, ageBuckets: 5, min: 0.001, max: 1e6 }, () => 0);
        for (const v of values) w.observe(v);
        const want = exact(values, q);
        const got = w.quantile(q);
        assert.ok(Math.abs(got - want) <= want * 0.0051, `q ${q}: got ${got}, exact ${want}`);
      },
    ),
  );
});

test('zero is its own bucket; values past max count as max; an empty window answers NaN', () => {
  const w = new WindowedQuantiles({ maxAgeMs: 1000, ageBuckets: 2, min: 0.001, max: 1000 }, () => 0);
  assert.ok(Number.isNaN(w.quantile(0.5)));
  w.observe(0);
  w.observe(0);
  w.observe(5e6);
  assert.equal(w.quantile(0.5), 0);
  assert.ok(Math.abs(w.quantile(1) - 1000) <= 1000 * 0.0051);
  assert.equal(w.count, 3);
  assert.equal(w.sum, 5e6);
});

test('values leave the window once every slot they could be in has passed; count and sum stay totals', () => {
  let now = 0;
  const w = new WindowedQuantiles({ maxAgeMs: 600, ageBuckets: 3, min: 0.001, max: 1e6 }, () => now);
  w.observe(100);
  now = 250; // second slot
  w.observe(10);
  assert.ok(Math.abs(w.quantile(1) - 100) < 1, 'both in the window');
  now = 599; // third slot: the first still in
  assert.ok(Math.abs(w.quantile(1) - 100) < 1);
  now = 600; // the first slot is reused: 100 has aged out, 10 is in
  assert.ok(Math.abs(w.quantile(1) - 10) < 0.1, `got ${w.quantile(1)}`);
  now = 5000; // far past: everything aged out
  assert.ok(Number.isNaN(w.quantile(0.5)));
  w.observe(1);
  assert.ok(Math.abs(w.quantile(0.5) - 1) < 0.01);
  assert.equal(w.count, 3);
  assert.equal(w.sum, 111);
});

test('quantiles of several q at once agree with each asked alone', () => {
  const w = new WindowedQuantiles({ maxAgeMs: 600_000, ageBuckets: 5, min: 0.001, max: 1e6 }, () => 0);
  for (let i = 1; i <= 1000; i++) w.observe(i);
  const qs = [0.5, 0.75, 0.95, 0.99, 0.999];
  assert.deepEqual(w.quantiles(qs), qs.map((q) => w.quantile(q)));
  assert.ok(Math.abs(w.quantile(0.99) - 990) <= 990 * 0.0051);
});

test('bad options are refused', () => {
  assert.throws(() => new WindowedQuantiles({ maxAgeMs: 1, ageBuckets: 1, min: 1, max: 1 }, () => 0), RangeError);
  assert.throws(() => new WindowedQuantiles({ maxAgeMs: 1, ageBuckets: 1, min: 1, max: 2, ratio: 1 }, () => 0), RangeError);
});
