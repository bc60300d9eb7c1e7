// Goal: the rule of when a partition drops applied entries from memory, and how far: nothing within
// its bounds; all but a quarter of the entry bound past it; past a bound in bytes, down to what the
// log keeps within half of it; never past what a follower lacks while the leader may keep it, and
// past it once the tail is far over its bounds. Method: the pure functions on chosen inputs, and a
// property that the answer never passes the applied index and never names what memory already dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compactionTarget, memoryBytesMax, shareOfBudget, tailBytesToKeep, type CompactionInput } from './memory-compaction-rule.js';

const MiB = 1024 * 1024;
const base: CompactionInput = { firstIndex: 1, lastIndex: 100, applied: 100, maxEntries: 1024, keepBytes: undefined, tailBytes: MiB, indexKeeping: () => 0, followerMatches: undefined };

test('within both bounds nothing leaves memory', () => {
  assert.equal(compactionTarget(base), undefined);
  assert.equal(tailBytesToKeep(memoryBytesMax - 1, undefined), undefined);
});

test('past the entry bound all but a quarter of it stay', () => {
  assert.equal(compactionTarget({ ...base, firstIndex: 1, lastIndex: 1100, applied: 1100 }), 1100 - 256);
  // Unapplied entries stay: the quarter is counted back from the applied index.
  assert.equal(compactionTarget({ ...base, firstIndex: 1, lastIndex: 1100, applied: 1050 }), 1050 - 256);
});

test('past a bound in bytes the oldest go until what stays is within half of it', () => {
  assert.equal(tailBytesToKeep(memoryBytesMax, undefined), memoryBytesMax / 2);
  // Over the node's budget the partition's share counts, whatever its own tail.
  assert.equal(tailBytesToKeep(1, 8 * MiB), 4 * MiB);
  assert.equal(shareOfBudget(64 * MiB, 4), 16 * MiB);
  assert.equal(shareOfBudget(64 * MiB, 0), 64 * MiB);
  const asked: number[] = [];
  const to = compactionTarget({ ...base, keepBytes: 8 * MiB, indexKeeping: (b) => (asked.push(b), 60) });
  assert.deepEqual(asked, [8 * MiB]);
  assert.equal(to, 60);
  // The byte rule only moves the cut later than the entry rule would.
  assert.equal(compactionTarget({ ...base, lastIndex: 1100, applied: 1100, keepBytes: MiB, indexKeeping: () => 10 }), 1100 - 256);
});

test('a leader keeps what a follower lacks, until the tail is far over its bounds', () => {
  const over = { ...base, firstIndex: 1, lastIndex: 1100, applied: 1100 };
  assert.equal(compactionTarget({ ...over, followerMatches: [1100, 900] }), 844);
  assert.equal(compactionTarget({ ...over, followerMatches: [1100, 500] }), 500);
  // A follower that holds nothing of the memory log yet: nothing goes.
  assert.equal(compactionTarget({ ...over, followerMatches: [0] }), undefined);
  // Sixteen times the entry bound, or eight times the byte bound: the follower is shipped the log.
  assert.equal(compactionTarget({ ...over, lastIndex: 16 * 1024 + 1, applied: 16 * 1024 + 1, followerMatches: [5] }), 16 * 1024 + 1 - 256);
  assert.equal(compactionTarget({ ...over, tailBytes: 8 * memoryBytesMax, followerMatches: [5] }), 1100 - 256);
});

test('property: the cut is within the applied entries held in memory', () => {
  fc.assert(
    fc.property(fc.nat(5000), fc.nat(5000), fc.nat(5000), fc.integer({ min: 4, max: 2048 }), fc.option(fc.nat(64 * MiB), { nil: undefined }), fc.option(fc.array(fc.nat(10_000), { maxLength: 4 }), { nil: undefined }), (first, len, unapplied, max, keepBytes, matches) => {
      const lastIndex = first + len;
      const applied = Math.max(first - 1, lastIndex - unapplied);
      const to = compactionTarget({ firstIndex: first, lastIndex, applied, maxEntries: max, keepBytes, tailBytes: 0, indexKeeping: (b) => Math.max(first - 1, applied - Math.floor(b / MiB)), followerMatches: matches?.map((m) => Math.min(m, lastIndex)) });
      if (to === undefined) return;
      assert.ok(to >= first, `cut ${to} before the memory log's start ${first}`);
      assert.ok(to <= applied, `cut ${to} past applied ${applied}`);
      for (const m of matches ?? []) if (len < 16 * max) assert.ok(to <= Math.min(m, lastIndex));
    }),
  );
});
