// Goal: retention on a follower never fails because a snapshot from its leader was installed while it
// ran. Retention first drops the batches it removes from the group's memory (a compaction: a snapshot
// of the replica's state at its applied index); that compaction waits for the node's rows to be
// written, and a snapshot installed meanwhile had already compacted memory past the applied index
// it took: 'term of 4: compacted up to 9' (host simulation, once it applied retention). Method: one
// follower (PartitionReplicas on a RaftNodeHost, placement of three) fed Raft messages by hand: it
// applies 4..6, a retention pass starts, and the leader's snapshot at 9 (whose log starts after
// what the follower holds) arrives in the same moment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '../log/index.js';
import { applyEntries4to6, followerNowMs as t0, handFedFollower, snapshotPastRetainedLog, until } from '../testing/hand-fed-follower.js';

test('a snapshot installed while retention compacts a follower\'s memory does not fail the retention pass', async () => {
  const { host, replicas, fatal, handler, close } = handFedFollower(new MemoryKv());
  replicas.setForwarder({
    forwardAppend: () => Promise.reject(new Error('not used')),
    // The leader's log before its snapshot is not needed here (the history fetch may fail).
    fetchLog: () => (async function* () {
      yield* [];
      throw new Error('unreachable');
    })(),
  });
  try {
    const r = (await replicas.ensure(7, 0))!;
    const h = handler();
    assert.equal(r.applied, 3, 'the founding configuration');
    await applyEntries4to6({ handler, fatal }, r);
    assert.deepEqual(fatal, []);
    // Retention removes the batches of 4 and 5; the leader's snapshot at 9, whose retained log starts
    // at entry 8 (offset 4), arrives while it runs (snapshotPastRetainedLog).
    // It arrives when the compaction waits for the node's rows to be written (the next turn, which
    // installs the snapshot too).
    await host.flushRows();
    const flushRows = host.flushRows.bind(host);
    let armed = true;
    host.flushRows = () => {
      if (armed) h.receive(snapshotPastRetainedLog);
      armed = false;
      return flushRows();
    };
    assert.equal(await replicas.applyRetention(7, 0, t0 + 6), 2);
    assert.equal(armed, false, 'the compaction waited for the rows');
    await until('the snapshot installed', () => r.applied === 9 || fatal.length > 0);
    assert.deepEqual(fatal, []);
    assert.equal(r.group.store.storage.firstIndex(), 10);
    assert.equal(r.bounds().newest, 5);
  } finally {
    await close();
  }
});
