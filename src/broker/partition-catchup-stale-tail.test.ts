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
import type { Entry, Snapshot } from '../raft/index.js';
import { MemoryKv, type KvBatch } from '../log/index.js';
import { recordOps } from '../log/kv.js';
import { encodeImage } from './partition-replica.js';
import type { Offset } from '../core/offset.js';
import { groupKey, kindSnapshot } from './raft-keys.js';
import { batchEntry, followerGroup, handFedFollower, msg, servingLog, until } from '../testing/hand-fed-follower.js';

/** Holds the write that stores a snapshot of the group until release(). */
class HeldSnapshotKv extends MemoryKv {
  #release: (() => void) | undefined;
  held = false;
  override async write(fill: (b: KvBatch) => void, opts: { durable: boolean }): Promise<void> {
    // fill runs once (it may have effects), recorded; the recorded ops are then written.
    const ops = recordOps(fill);
    const snapKey = groupKey(followerGroup, kindSnapshot);
    if (ops.some((op) => op.kind === 'put' && op.key.equals(snapKey))) {
      this.held = true;
      await new Promise<void>((r) => (this.#release = r));
    }
    return super.write((b) => {
      for (const op of ops) {
        if (op.kind === 'put') b.put(op.key, op.value);
        else if (op.kind === 'del') b.del(op.key);
        else b.delRange(op.start, op.end);
      }
    }, opts);
  }
  release(): void {
    this.#release?.();
  }
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
const empty = (index: number, term: number): Entry => ({ index, term, type: 'normal', data: new Uint8Array() });

test('a read between log shipping and the snapshot install serves the fetched entries, not a stale uncommitted tail at their indices', async () => {
  const kv = new HeldSnapshotKv();
  const { replicas, fatal, handler, close } = handFedFollower(kv);
  // Node 2's log: entries 4..6 of term 3, one event each (offsets 0..2), committed and compacted.
  replicas.setForwarder(servingLog([batchEntry(4, 3), batchEntry(5, 3), batchEntry(6, 3)]));
  try {
    const r = (await replicas.ensure(7, 0))!;
    const h = handler();
    assert.equal(r.applied, 3, 'the founding configuration');
    // Node 3 leads term 2 and appends 4..6, which never commit.
    h.receive(msg({ type: 'app', from: 3, term: 2, logTerm: 1, index: 3, entries: [empty(4, 2), empty(5, 2), empty(6, 2)], commit: 3 }));
    await until('the stale tail stored', () => r.group.store.storage.lastIndex() === 6);
    await settle(20);
    // Node 2 leads term 3 and sends its snapshot at 6: the follower's entry 6 is of term 2, so it
    // fetches 4..6 and applies them; the install's write is held.
    const snapshot: Snapshot = { metadata: { index: 6, term: 3, confState: { voters: [1, 2, 3], learners: [] } }, data: encodeImage({ applied: 6, next: 3, oldest: 0, recent: [] }) };
    h.receive(msg({ type: 'snap', from: 2, term: 3, snapshot }));
    await until('the fetched entries applied, the install held', () => (r.applied === 6 && kv.held) || fatal.length > 0);
    const during = await r.read(-1 as Offset, 10, 1 << 20).then(
      (evs) => evs.map((e) => [e.offset, e.bytes.toString()]),
      (err: Error) => err,
    );
    kv.release();
    assert.ok(!(during instanceof Error), `a read before the install failed: ${during instanceof Error ? during.message : ''}`);
    assert.deepEqual(during, [[0, '{"i":4}'], [1, '{"i":5}'], [2, '{"i":6}']]);
    await until('the snapshot installed', () => r.group.store.storage.snapshot().metadata.index === 6 || fatal.length > 0);
    assert.deepEqual(fatal, []);
    const after = await r.read(-1 as Offset, 10, 1 << 20);
    assert.deepEqual(after.map((e) => [e.offset, e.bytes.toString()]), [[0, '{"i":4}'], [1, '{"i":5}'], [2, '{"i":6}']]);
  } finally {
    kv.release();
    await close();
  }
});
