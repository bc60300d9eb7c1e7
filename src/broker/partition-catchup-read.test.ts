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
import type { Snapshot } from '../raft/index.js';
import { encodeImage } from './partition-replica.js';
import type { Offset } from '../core/offset.js';
import { HeldWritesKv } from '../testing/held-writes-kv.js';
import { batchEntry, handFedFollower, msg, servingLog, until } from '../testing/hand-fed-follower.js';

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('entries fetched for a snapshot are readable only once stored: a read while the node\'s write waits finds no missing entry', async () => {
  const kv = new HeldWritesKv();
  const { replicas, fatal, handler, close } = handFedFollower(kv);
  // Node 2 leads term 2 and holds entries 4..6 (one event each, offsets 0..2), then compacted them.
  const log = [batchEntry(4, 2), batchEntry(5, 2), batchEntry(6, 2)];
  replicas.setForwarder(servingLog(log));
  try {
    const r = (await replicas.ensure(7, 0))!;
    const h = handler();
    assert.equal(r.applied, 3, 'the founding configuration');
    h.receive(msg({ type: 'heartbeat', from: 2, term: 2, commit: 3 }));
    await until('term 2', () => r.group.term === 2);
    await settle(20);
    // The node's writes wait (a slow fsync) while the leader's snapshot arrives: log shipping fetches
    // 4..6 and applies them.
    kv.hold();
    const snapshot: Snapshot = { metadata: { index: 6, term: 2, confState: { voters: [1, 2, 3], learners: [] } }, data: encodeImage({ applied: 6, next: 3, oldest: 0, recent: [] }) };
    h.receive(msg({ type: 'snap', from: 2, term: 2, snapshot }));
    await settle(30);
    // A read meanwhile: nothing yet (not applied), or the events; never a missing entry.
    const during = await r.read(-1 as Offset, 10, 1 << 20).then(
      (evs) => evs.map((e) => e.offset),
      (err: Error) => err,
    );
    kv.release();
    assert.ok(!(during instanceof Error) || during.name !== 'CorruptBatchError', `a read while the write waited failed: ${during instanceof Error ? during.message : ''}`);
    await until('entry 6 applied', () => r.applied === 6 || fatal.length > 0);
    assert.deepEqual(fatal, []);
    const after = await r.read(-1 as Offset, 10, 1 << 20);
    assert.deepEqual(after.map((e) => [e.offset, e.bytes.toString()]), [[0, '{"i":4}'], [1, '{"i":5}'], [2, '{"i":6}']]);
  } finally {
    kv.release();
    await close();
  }
});
