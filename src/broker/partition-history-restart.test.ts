// Goal: a replica stopped while it fetches the retained log before a snapshot it installed without
// that log fetches it again after its restart. The record of the fetch to do (0x17, written with the
// snapshot) is what tells it at start; a start that did not read it took the replica's log as
// complete and never fetched the events before the snapshot again (the history-mark-ignored mutant of
// src/sim/mutants/catalog.ts, which the host simulation catches in a few seeds only).
// Method: one follower fed Raft messages by hand (src/testing/hand-fed-follower.ts). It applies
// entries 4..6; the leader's snapshot at 9 says its retained log starts at entry 8 (offset 4), after
// what the follower holds, so the follower installs it without the log and fetches entries 8..9
// (applyEntries4to6, snapshotPastRetainedLog); the fetch never answers. The node stops and starts again on the same KV.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '../log/index.js';
import type { AppendForwarder } from './partition-replicas.js';
import { applyEntries4to6, handFedFollower, snapshotPastRetainedLog, until } from '../testing/hand-fed-follower.js';

/** A leader that never answers a fetch of its log (the node stops meanwhile). */
const silentLeader = (fetches: { n: number }): AppendForwarder => ({
  forwardAppend: () => Promise.reject(new Error('not used')),
  fetchLog: (_to, _req, signal) => {
    fetches.n++;
    return (async function* () {
      await new Promise<void>((_, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
      yield* [];
    })();
  },
});

test('a replica stopped while fetching the retained log before its snapshot fetches it again after its restart', async () => {
  const kv = new MemoryKv();
  const first = handFedFollower(kv);
  const fetches = { n: 0 };
  first.replicas.setForwarder(silentLeader(fetches));
  try {
    const r = (await first.replicas.ensure(7, 0))!;
    await applyEntries4to6(first, r);
    first.handler().receive(snapshotPastRetainedLog);
    await until('the snapshot installed and the fetch of the log before it begun', () => r.applied === 9 && r.pendingHistory !== undefined && fetches.n > 0);
    await first.host.flushRows();
    assert.deepEqual(first.fatal, []);
  } finally {
    await first.close();
  }
  const second = handFedFollower(kv);
  const again = { n: 0 };
  second.replicas.setForwarder(silentLeader(again));
  try {
    const r = (await second.replicas.ensure(7, 0))!;
    assert.equal(r.applied, 9, 'the snapshot survived the stop');
    assert.notEqual(r.pendingHistory, undefined, 'the restarted replica forgot the fetch it had to do');
    assert.equal(r.pendingHistory?.fromOffset, 4);
    await until('the fetch begun again', () => again.n > 0);
    assert.deepEqual(second.fatal, []);
  } finally {
    await second.close();
  }
});
