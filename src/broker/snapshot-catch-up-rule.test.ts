// Goal: a follower sent a snapshot lets its group take it when it holds the snapshot's last entry,
// lacks nothing, the snapshot is from an older term, or it cannot fetch; takes it without the log and
// fetches the history afterwards when the leader's retention removed what it lacks; fetches the
// entries first otherwise. The history fetch backs off per round over the replicas, up to 5 s.
// Method: the pure rules on chosen arrivals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { historyRetryMs, snapshotPath, type SnapshotArrival } from './snapshot-catch-up-rule.js';

const behind: SnapshotArrival = { applied: 10, snapshotIndex: 50, snapshotTerm: 3, termAtSnapshotIndex: undefined, messageTerm: 3, groupTerm: 3, canFetch: true, leaderLogStart: 1 };

test('a follower behind its leader fetches the entries it lacks before the snapshot', () => {
  assert.equal(snapshotPath(behind), 'fetchFirst');
  assert.equal(snapshotPath({ ...behind, leaderLogStart: undefined }), 'fetchFirst', 'an image without a log start');
  assert.equal(snapshotPath({ ...behind, leaderLogStart: 11 }), 'fetchFirst', 'the leader still holds the next entry it lacks');
});

test('the group takes the snapshot itself when nothing is to be fetched, or nothing can be', () => {
  assert.equal(snapshotPath({ ...behind, applied: 50 }), 'group', 'applied up to it');
  assert.equal(snapshotPath({ ...behind, termAtSnapshotIndex: 3 }), 'group', 'its log holds the last entry (Log Matching)');
  assert.equal(snapshotPath({ ...behind, termAtSnapshotIndex: 2 }), 'fetchFirst', 'an entry of another term there is no match');
  assert.equal(snapshotPath({ ...behind, messageTerm: 2 }), 'group', 'from a leader of an older term: the group drops it');
  assert.equal(snapshotPath({ ...behind, canFetch: false }), 'group', 'no transport to fetch with');
});

test('past the leader\'s retained log the snapshot is taken first and the history fetched after', () => {
  assert.equal(snapshotPath({ ...behind, leaderLogStart: 12 }), 'withoutLog');
  assert.equal(snapshotPath({ ...behind, applied: 50, leaderLogStart: 60 }), 'group', 'nothing lacking');
});

test('history fetch retries back off per round over the replicas, up to 5 s', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((a) => historyRetryMs(a, 3)), [200, 200, 200, 400, 400, 400, 800]);
  assert.equal(historyRetryMs(1000, 2), 5000);
  assert.equal(historyRetryMs(3, 0), 1600, 'no replica counts as one');
});
