// Goal: once a fetch of the retained log before a snapshot has ended, the snapshot this replica
// stores (and would send as a leader) names where its log starts now. The image it installed names
// where its leader's log started then; a fetch that gives up (no replica holds that log any more) or
// takes the log from a later start (retention removed the beginning meanwhile) leaves this replica's
// log starting later. Leading with the old image, it sent a follower behind it a start that no
// replica held: the follower fetched the entries after what it applied from each replica, got none,
// and was sent the snapshot again, for good (host simulation seed 136, Liveness: a damaged replica
// at commit 34 against 41 after healing).
// Method: one follower fed Raft messages by hand (src/testing/hand-fed-follower.ts). It applies
// entries 4..5 (offsets 0 and 1); the leader's snapshot at 9 (next offset 6) says its log starts at
// entry 7, offset 3, so the follower installs it without the log and fetches entries 7..9. Then the
// stored image's start must equal the replica's own log start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '../log/index.js';
import type { Entry, Snapshot } from '../raft/index.js';
import { decodeImage, encodeImage } from './partition-replica.js';
import type { AppendForwarder } from './partition-replicas.js';
import { batchEntry, followerNowMs as t0, handFedFollower, msg, until } from '../testing/hand-fed-follower.js';

/** Other replicas serve `log` (entries from `oldestIndex` on, the first at offset `oldestOffset`). */
function replicasHolding(log: readonly Entry[], oldestOffset: number): AppendForwarder {
  return {
    forwardAppend: () => Promise.reject(new Error('not used')),
    fetchLog: (_to, req) =>
      (async function* () {
        yield { entries: log.filter((e) => e.index >= req.fromIndex && e.index <= req.toIndex) };
      })(),
    bounds: () => Promise.resolve({ oldest: oldestOffset, newest: 5, epoch: 2, leader: 2 }),
  };
}

async function storedStartAfterFetch(forwarder: AppendForwarder, done: string): Promise<{ stored: readonly [number, number] | undefined; actual: readonly [number, number]; oldest: number }> {
  const f = handFedFollower(new MemoryKv());
  f.replicas.setForwarder(forwarder);
  try {
    const r = (await f.replicas.ensure(7, 0))!;
    const h = f.handler();
    h.receive(msg({ type: 'app', from: 2, term: 2, logTerm: 1, index: 3, entries: [batchEntry(4, 2, t0 + 4), batchEntry(5, 2, t0 + 5)], commit: 5 }));
    await until('entry 5 applied', () => r.applied === 5);
    const snapshot: Snapshot = { metadata: { index: 9, term: 2, confState: { voters: [1, 2, 3], learners: [] } }, data: encodeImage({ applied: 9, next: 6, oldest: 3, recent: [], start: [7, 3] }) };
    h.receive(msg({ type: 'snap', from: 2, term: 2, snapshot }));
    await until('the snapshot installed', () => r.applied === 9);
    await until(done, () => r.pendingHistory === undefined && r.historyFrom === undefined && !r.group.raw.incomplete);
    const actual = await r.logStart();
    // The snapshot is taken again in writes of its own: give them time.
    const end = Date.now() + 2000;
    let stored = decodeImage(r.group.store.storage.snapshot().data).start;
    while (stored?.[0] !== actual[0] && Date.now() < end) {
      await new Promise((res) => setTimeout(res, 5));
      stored = decodeImage(r.group.store.storage.snapshot().data).start;
    }
    assert.deepEqual(f.fatal, []);
    return { stored, actual, oldest: r.bounds().oldest };
  } finally {
    await f.close();
  }
}

test('a replica that gave up fetching the log before its snapshot stores a snapshot naming its log from the snapshot on', async () => {
  // No replica holds entries 7..9 any more (their retention removed them).
  const { stored, actual, oldest } = await storedStartAfterFetch(replicasHolding([], 6), 'the fetch given up');
  assert.equal(oldest, 6, 'it reads from the snapshot on');
  assert.deepEqual(actual, [10, 6]);
  assert.deepEqual(stored, actual, `the stored snapshot names entry ${stored?.[0]}, offset ${stored?.[1]}; the log starts at entry ${actual[0]}, offset ${actual[1]}`);
});

test('a replica that fetched the log before its snapshot from a later start stores a snapshot naming that start', async () => {
  // The other replicas' retention removed entry 7 (offset 3): they hold entries 8 and 9 (offsets 4, 5).
  const { stored, actual, oldest } = await storedStartAfterFetch(replicasHolding([batchEntry(8, 2, t0 + 8), batchEntry(9, 2, t0 + 9)], 4), 'the fetch ended');
  assert.equal(oldest, 4, 'it reads from where the others held the log');
  assert.deepEqual(actual, [8, 4]);
  assert.deepEqual(stored, actual, `the stored snapshot names entry ${stored?.[0]}, offset ${stored?.[1]}; the log starts at entry ${actual[0]}, offset ${actual[1]}`);
});
