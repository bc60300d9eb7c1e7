// Goal: a replica that log shipping put ahead of its Raft group stays consistent until the group
// catches up. A follower told to install a snapshot fetches the entries after what it applied, stores
// and applies them itself (partition-history-fetch.ts, catchUp), and only then steps the snapshot into its
// group. The snapshot's install is the node's next write; when the KV refuses it (a full disk) the
// group restarts from its disk (RaftGroup.reset) without the snapshot, and the replica has applied
// entries (and written their index rows) its group has not. Until a leader sends the snapshot again,
// (1) a snapshot this node takes itself (memory compaction, the one retention takes after it cuts)
// must not pair the group's applied index with the replica's newer state, and (2) a leader that sends
// those entries as appends instead must not have them applied twice ('partition entry 5 applied
// after 7' stopped the node). Found through host simulation seed 2187 (retention cut at such a row and
// asked for a memory compaction beyond the group's applied index).
// Method: one node (PartitionReplicas on a RaftNodeHost, placement of three) fed Raft messages by hand;
// a KV that refuses the writes storing the group's snapshot with KvWriteError, as RocksKv reports
// ENOSPC (testing/snapshot-refusing-kv.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KvWriteError } from '../log/index.js';
import { SnapshotRefusingKv } from '../testing/snapshot-refusing-kv.js';
import type { Offset } from '../core/offset.js';
import { groupKey, kindSnapshot } from './raft-keys.js';
import { decodeImage } from './partition-replica.js';
import { batchEntry, followerGroup, followerNowMs, handFedFollower, msg, openFollowerReplica, servingLog, settle, snapshotOfEntriesTo, until } from '../testing/hand-fed-follower.js';

const snapshotKey = groupKey(followerGroup, kindSnapshot);

test('a snapshot install the disk refused after log shipping: no snapshot pairs the group\'s applied index with the replica\'s state, and entries sent again as appends are applied once', async () => {
  const kv = new SnapshotRefusingKv(snapshotKey);
  const { host, replicas, fatal, handler, close } = handFedFollower(kv);
  // Node 2 leads term 2: entries 4..7 of term 2 (one event each, offsets 0..3); node 3 leads term 3
  // after them with entry 8, and still holds 5..7 in memory.
  const log = [batchEntry(4, 2), batchEntry(5, 2), batchEntry(6, 2), batchEntry(7, 2), batchEntry(8, 3)];
  replicas.setForwarder(servingLog(log));
  try {
    const { r, h } = await openFollowerReplica({ replicas, handler });
    // The group takes entry 4 from node 2 and applies it.
    h.receive(msg({ type: 'app', from: 2, term: 2, logTerm: 1, index: 3, entries: [log[0]!], commit: 4 }));
    await until('entry 4 applied', () => r.group.applied === 4 || fatal.length > 0);
    await settle(20);
    // Node 2 compacted 5..7 and sends its snapshot at 7; the disk is full when its install is written.
    kv.refusal = new KvWriteError(new Error('IO error: No space left on device'));
    h.receive(snapshotOfEntriesTo(7, 2));
    await until('the install refused', () => kv.refused > 0 || fatal.length > 0);
    kv.refusal = undefined;
    await settle(30);
    assert.deepEqual(fatal, []);
    assert.equal(r.applied, 7, 'log shipping applied 5..7');
    assert.equal(r.group.applied, 4, 'the group did not take the snapshot');

    // The rows of what was applied are written (the node's next write: at the latest its next tick).
    await host.flushRows();
    // Retention meanwhile (every event expired) waits. Had it cut (at rows the group applied), it would
    // take the partition snapshot again after it: a snapshot stored at the group's applied index must
    // hold the state as of that index, not the replica's newer one (a leader sending it, or a restart
    // from it, would give entries 5..7 their offsets a second time). Nor does any other compaction
    // take one meanwhile.
    assert.equal(await replicas.applyRetention(7, 0, followerNowMs + 1), 0, 'retention waits while the replica is ahead of its group');
    await settle(20);
    assert.deepEqual(fatal, []);
    const stored = r.group.store.storage.snapshot();
    if (stored.data.byteLength > 0) assert.equal(decodeImage(stored.data).applied, stored.metadata.index, `the snapshot stored at ${stored.metadata.index} holds the state as of ${decodeImage(stored.data).applied}`);

    // Node 3 leads term 3 and sends 5..8 as appends (it still holds them): each is applied once.
    h.receive(msg({ type: 'app', from: 3, term: 3, logTerm: 2, index: 4, entries: log.slice(1), commit: 8 }));
    await until('entry 8 applied', () => r.group.applied === 8 || fatal.length > 0);
    assert.deepEqual(fatal, []);
    assert.equal(r.applied, 8);
    const events = await r.read(0 as Offset, 10, 1 << 20);
    assert.deepEqual(events.map((e) => [e.offset, e.bytes.toString()]), [[1, '{"i":5}'], [2, '{"i":6}'], [3, '{"i":7}'], [4, '{"i":8}']]);
    // The group is where the replica is: retention cuts again, and the snapshot taken after it is the
    // state at its index.
    assert.equal(await replicas.applyRetention(7, 0, followerNowMs + 1), 4);
    const taken = r.group.store.storage.snapshot();
    assert.equal(taken.metadata.index, 8);
    assert.equal(decodeImage(taken.data).applied, 8);
    assert.deepEqual(fatal, []);
  } finally {
    await close();
  }
});
