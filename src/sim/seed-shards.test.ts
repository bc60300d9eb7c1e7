import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shareSeeds } from './seed-shards.js';

test('seeds are shared in order, at most perChild each, and over every job when the list is short', () => {
  const seeds = Array.from({ length: 40 }, (_, i) => i + 1);
  assert.deepEqual(shareSeeds(seeds, 2, 50).map((s) => s.length), [20, 20]);
  assert.deepEqual(shareSeeds(seeds, 1, 50).map((s) => s.length), [40]);
  assert.deepEqual(shareSeeds(seeds, 2, 15).map((s) => s.length), [15, 15, 10]);
  assert.deepEqual(shareSeeds(seeds, 3, 50).flat(), seeds);
  assert.deepEqual(shareSeeds([7], 4, 50), [[7]]);
  assert.deepEqual(shareSeeds([], 2, 50), []);
});
