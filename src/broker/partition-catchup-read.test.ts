// Goal: log shipping never makes an event readable before its entry is stored. A follower told to
// install a snapshot fetches the entries it lacks and applies them itself (partition-history-fetch.ts,
// catchUp). Those entries are in no Raft log memory tail; if they were only queued for the node's
// next write while applying them already made their offsets readable, a read in between (the node's
// write in flight behind a slow fsync) found the index row but not its entry: CorruptBatchError
// 'raft entry 38 of the batch 67..67 is missing', and the replica refused every read for good.
// Found by the host simulation (seed 20 with retention, fsync spikes up to 150 ms).
// Method: one node (PartitionReplicas on a RaftNodeHost, placement of three) fed Raft messages by hand,
// a forwarder that serves the log from a list of entries, and a KV whose writes can be held.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeldWritesKv } from '../testing/held-writes-kv.js';
import { batchEntry, handFedFollower, msg, openFollowerReplica, readPairs, servingLog, settle, snapshotOfEntriesTo, until } from '../testing/hand-fed-follower.js';

test('entries fetched for a snapshot are readable only once stored: a read while the node\'s write waits finds no missing entry', async () => {
  const kv = new HeldWritesKv();
  const f = handFedFollower(kv);
  const { replicas, fatal, close } = f;
  // Node 2 leads term 2 and holds entries 4..6 (one event each, offsets 0..2), then compacted them.
  const log = [batchEntry(4, 2), batchEntry(5, 2), batchEntry(6, 2)];
  replicas.setForwarder(servingLog(log));
  try {
    const { r, h } = await openFollowerReplica(f);
    h.receive(msg({ type: 'heartbeat', from: 2, term: 2, commit: 3 }));
    await until('term 2', () => r.group.term === 2);
    await settle(20);
    // The node's writes wait (a slow fsync) while the leader's snapshot arrives: log shipping fetches
    // 4..6 and applies them.
    kv.hold();
    h.receive(snapshotOfEntriesTo(6, 2));
    await settle(30);
    // A read meanwhile: nothing yet (not applied), or the events; never a missing entry.
    const during = await readPairs(r).catch((err: Error) => err);
    kv.release();
    assert.ok(!(during instanceof Error) || during.name !== 'CorruptBatchError', `a read while the write waited failed: ${during instanceof Error ? during.message : ''}`);
    await until('entry 6 applied', () => r.applied === 6 || fatal.length > 0);
    assert.deepEqual(fatal, []);
    assert.deepEqual(await readPairs(r), [[0, '{"i":4}'], [1, '{"i":5}'], [2, '{"i":6}']]);
  } finally {
    kv.release();
    await close();
  }
});
