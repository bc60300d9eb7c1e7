// Goal: log shipping never leaves a partition replica ahead of its Raft group. A follower told to
// install a snapshot fetches the entries it lacks and applies them itself, then steps the snapshot
// into its group; if the group drops that snapshot (it comes from a leader of an older term than the
// group has seen), the replica would have applied entries its group has not, and the group applying
// them again later stops the node ('partition entry 4 applied after 6'). Found by the host
// simulation (a deposed leader's snapshot reaching a follower that had already heard of the next term).
// Method: one node (PartitionReplicas on a RaftNodeHost, placement of three) fed Raft messages by hand,
// with a forwarder that serves the log from a list of entries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '../log/index.js';
import { batchEntry, handFedFollower, msg, openFollowerReplica, servingLog, settle, snapshotOfEntriesTo, until } from '../testing/hand-fed-follower.js';

test('a snapshot from a leader of an older term is not caught up to: the replica stays where its group is', async () => {
  const f = handFedFollower(new MemoryKv());
  const { replicas, fatal, close } = f;
  // The leader of term 2 (node 2) holds entries 4..6 of term 2; node 3 leads term 3 after them.
  const log = [batchEntry(4, 2), batchEntry(5, 2), batchEntry(6, 2), batchEntry(7, 3)];
  const fetches = { n: 0 };
  replicas.setForwarder(servingLog(log, fetches));
  try {
    const { r, h } = await openFollowerReplica(f);
    // Node 3 leads term 3: the group follows it (nothing to append yet).
    h.receive(msg({ type: 'heartbeat', from: 3, term: 3, commit: 3 }));
    await until('term 3', () => r.group.term === 3);
    // A snapshot of node 2, leader of term 2, sent before it was deposed, arrives now.
    h.receive(snapshotOfEntriesTo(6, 2));
    await settle(20);
    assert.equal(r.applied, r.group.applied, `the replica applied ${r.applied}, its group ${r.group.applied}`);
    // The leader of term 3 appends 4..7 and commits them: every entry is applied once.
    h.receive(msg({ type: 'app', from: 3, term: 3, logTerm: 1, index: 3, entries: log, commit: 7 }));
    await until('entry 7 applied', () => r.applied === 7 || fatal.length > 0);
    assert.deepEqual(fatal, []);
    assert.equal(r.group.applied, 7);
    assert.equal(fetches.n, 0, 'nothing fetched for a snapshot the group drops');
  } finally {
    await close();
  }
});
