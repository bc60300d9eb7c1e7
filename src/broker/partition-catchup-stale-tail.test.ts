// Goal: a follower whose log holds an uncommitted tail of an older term at the indices log shipping
// fetches never serves those stale entries for the offsets the fetched ones gave. Log shipping
// (partition-history-fetch.ts, catchUp) stores and applies the leader's entries itself, and the
// group's memory tail keeps the follower's own entries at those indices until the leader's snapshot is
// installed, in the node's next write. A read in between took the entry from the memory tail: the
// stale one ('raft entry 4: entry holds no events' for an older leader's empty entry, or another
// batch's events), and the replica refused every read for good. Found by the host simulation (seed 60
// of 1-100 once the nemesis drew lostMetadata: a follower with entries 5..8 of term 6 sent the
// snapshot 8@7).
// Method: one node fed Raft messages by hand (src/testing/hand-fed-follower.ts): node 3, leader of
// term 2, appends entries 4..6 (empty, uncommitted); node 2, leader of term 3, committed its own 4..6
// (one event each) and sends the snapshot 6@3; the write that installs the snapshot is held while a
// read asks for the events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Entry } from '../raft/index.js';
import { groupKey, kindSnapshot } from './raft-keys.js';
import { batchEntry, followerGroup, handFedFollower, msg, openFollowerReplica, readPairs, servingLog, settle, snapshotOfEntriesTo, until } from '../testing/hand-fed-follower.js';
import { RecordingKv } from '../testing/recording-kv.js';

const empty = (index: number, term: number): Entry => ({ index, term, type: 'normal', data: new Uint8Array() });

test('a read between log shipping and the snapshot install serves the fetched entries, not a stale uncommitted tail at their indices', async () => {
  // The write that stores the group's snapshot waits until released.
  const kv = new RecordingKv();
  const snapKey = groupKey(followerGroup, kindSnapshot);
  kv.holdWhen((ops) => ops.some((op) => op.kind === 'put' && op.key.equals(snapKey)));
  const f = handFedFollower(kv);
  const { replicas, fatal, close } = f;
  // Node 2's log: entries 4..6 of term 3, one event each (offsets 0..2), committed and compacted.
  replicas.setForwarder(servingLog([batchEntry(4, 3), batchEntry(5, 3), batchEntry(6, 3)]));
  try {
    const { r, h } = await openFollowerReplica(f);
    // Node 3 leads term 2 and appends 4..6, which never commit.
    h.receive(msg({ type: 'app', from: 3, term: 2, logTerm: 1, index: 3, entries: [empty(4, 2), empty(5, 2), empty(6, 2)], commit: 3 }));
    await until('the stale tail stored', () => r.group.store.storage.lastIndex() === 6);
    await settle(20);
    // Node 2 leads term 3 and sends its snapshot at 6: the follower's entry 6 is of term 2, so it
    // fetches 4..6 and applies them; the install's write is held.
    h.receive(snapshotOfEntriesTo(6, 3));
    await until('the fetched entries applied, the install held', () => (r.applied === 6 && kv.held) || fatal.length > 0);
    const during = await readPairs(r).catch((err: Error) => err);
    kv.release();
    assert.ok(!(during instanceof Error), `a read before the install failed: ${during instanceof Error ? during.message : ''}`);
    assert.deepEqual(during, [[0, '{"i":4}'], [1, '{"i":5}'], [2, '{"i":6}']]);
    await until('the snapshot installed', () => r.group.store.storage.snapshot().metadata.index === 6 || fatal.length > 0);
    assert.deepEqual(fatal, []);
    assert.deepEqual(await readPairs(r), [[0, '{"i":4}'], [1, '{"i":5}'], [2, '{"i":6}']]);
  } finally {
    kv.release();
    await close();
  }
});
