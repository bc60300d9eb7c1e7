// Goal: a fetch of the retained log before a snapshot gives up once every replica that can still hold
// that log has answered without it, also when the placement lists a former member of a node (its data
// directory was wiped since, and the node runs another member). That node answers that it does not
// host the group, which a fetch otherwise takes for a replica restarting and waits out: the replica
// stayed incomplete for good, so a move adding it was never promoted, and the replacement of the
// former member, which waits for a move in flight, never came (host simulation seeds 7 and 9 of 20,
// once the simulation ran the partition member replacement).
// Method: one follower fed Raft messages by hand (src/testing/hand-fed-follower.ts), placed with
// members 1, 2 and 3, member 3 taken for a former one. It applies entries 4..6; the leader's snapshot at
// 9 says its retained log starts at entry 8 (offset 4), so the follower installs it without the log
// and fetches entries 8..9 (applyEntries4to6, snapshotPastRetainedLog). Node 2 answers with no entries
// (its retention removed them), node 3 that it does not host the group.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '../log/index.js';
import { TransportError } from '../transport/index.js';
import type { AppendForwarder } from './partition-replicas.js';
import { applyEntries4to6, handFedFollower, snapshotPastRetainedLog, until } from '../testing/hand-fed-follower.js';

const fetchedFrom: number[] = [];
const noneHoldIt: AppendForwarder = {
  forwardAppend: () => Promise.reject(new Error('not used')),
  fetchLog: (to, req) => {
    fetchedFrom.push(to);
    return (async function* () {
      if (to === 3) throw new TransportError('unavailable', `group ${req.group} is not hosted on this node`);
      yield* [];
    })();
  },
};

test('a fetch of the retained log before a snapshot does not wait for the node of a former member', async () => {
  const f = handFedFollower(new MemoryKv(), { formerMember: (m) => m === 3 });
  f.replicas.setForwarder(noneHoldIt);
  try {
    const r = (await f.replicas.ensure(7, 0))!;
    await applyEntries4to6(f, r);
    f.handler().receive(snapshotPastRetainedLog);
    await until('the snapshot installed', () => r.applied === 9);
    await until('the fetch given up (no replica holds that log)', () => r.pendingHistory === undefined && r.historyFrom === undefined);
    assert.ok(!fetchedFrom.includes(3), `asked the former member's node: ${fetchedFrom.join(',')}`);
    assert.equal(r.bounds().oldest, 6, 'it reads from the snapshot on');
    assert.deepEqual(f.fatal, []);
  } finally {
    await f.close();
  }
});
