// Goal: partition groups on the node host take part in the lost-tail check (issue 9): each turn's one
// write carries one raft write sequence number whatever the number of groups in it, the marker follows
// the durable turns, and a lost tail of the write-ahead log marks the partition groups damaged.
// Method: one node (PartitionReplicas on a RaftNodeHost: testing/one-node-replicas.ts) over MemoryKv with a NodeDisk and MemoryCell;
// appends to eight partitions at once; the disk is rolled back to an earlier image (copyDurable) to
// stand for RocksDB dropping the end of its WAL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryCell, MemoryKv } from '../log/index.js';
import { NodeDisk } from './node-disk.js';
import { oneNodeReplicas } from '../testing/one-node-replicas.js';
import { RaftLogStore } from './raft-log-store.js';
import { writeSeqKey } from './raft-keys.js';
import { decodeU64Record } from './raft-records.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

const groupOf = (p: number): number => 1000 + p;
const node = (kv: MemoryKv, disk: NodeDisk, replicaSet: number[] = [1]) => oneNodeReplicas(kv, { disk, replicaSet, groupOf: (_topic, p) => groupOf(p) });

async function storedSeq(kv: MemoryKv): Promise<number> {
  const raw = await kv.get(writeSeqKey);
  return raw === null ? 0 : decodeU64Record('writeSeq', writeSeqKey, raw);
}

test('partition writes are numbered once per turn; a lost tail marks the partition groups damaged', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId: () => 'disk-1', logger: quiet });
  const n = await node(kv, disk);
  for (let p = 0; p < 8; p++) await n.replicas.ensure(7, p);
  const event = (k: number) => [Buffer.from(`{"k":${k}}`)];
  const writesBefore = kv.stats.writes;
  const seqBefore = await storedSeq(kv);
  const res = await n.replicas.append(Array.from({ length: 8 }, (_, p) => ({ topic: 7, partition: p, events: event(p) })));
  assert.ok(res.every((r) => r.ok));
  const writes = kv.stats.writes - writesBefore;
  assert.equal((await storedSeq(kv)) - seqBefore, writes, `one number per write (${writes} writes for 8 partitions), not per group`);
  const before = kv.copyDurable();
  for (let k = 0; k < 3; k++) assert.ok((await n.replicas.append([{ topic: 7, partition: 0, events: event(100 + k) }]))[0]!.ok);
  await disk.flush();
  await n.close();
  // The end of the write-ahead log is lost: the node comes back with the earlier image.
  const disk2 = await NodeDisk.open({ kv: before, cell, self: 1, newId: () => 'disk-2', logger: quiet });
  assert.match(disk2.lostTail ?? '', /was durable before/);
  for (let p = 0; p < 8; p++) {
    const s = await RaftLogStore.open(before, groupOf(p), { keepCompacted: true, disk: disk2 });
    assert.match(s.damage?.reason ?? '', /end of its write-ahead log was lost/, `partition ${p}`);
  }
});

test('a node that lost raft state does not found a group it holds no state for: the replica starts empty and damaged', async () => {
  // Partition 0's replica is opened before the image is taken, partition 1's after: the lost tail takes
  // every record of group 1 (and in the second case the identity too), which then looks like a group
  // never hosted here. Founding it afresh (term 1, no vote) could vote twice in a term and elect a
  // leader that lacks a committed entry (host simulation, seed 1193).
  for (const lose of ['group', 'everything'] as const) {
    const cell = new MemoryCell();
    const kv = new MemoryKv();
    const empty = kv.copyDurable();
    const disk = await NodeDisk.open({ kv, cell, self: 1, newId: () => 'disk-1', logger: quiet });
    const n = await node(kv, disk, [1, 2, 3]);
    await n.replicas.ensure(7, 0);
    const before = lose === 'group' ? kv.copyDurable() : empty;
    await n.replicas.ensure(7, 1);
    await disk.flush();
    await n.close();
    const disk2 = await NodeDisk.open({ kv: before, cell, self: 1, newId: () => 'disk-2', logger: quiet });
    assert.notEqual(disk2.identity.lostRaftState, undefined, lose);
    const m = await node(before, disk2, [1, 2, 3]);
    for (const p of lose === 'group' ? [0, 1] : [0, 1, 2]) {
      const r = (await m.replicas.ensure(7, p))!;
      assert.notEqual(r.group.store.damage, undefined, `${lose}: partition ${p} is damaged`);
      assert.notEqual(r.group.raw.status().damaged, null, `${lose}: partition ${p}: the core knows`);
      assert.equal(r.group.store.storage.lastIndex(), lose === 'group' && p === 0 ? 3 : 0, `${lose}: partition ${p} was not founded again`);
    }
    await m.close();
  }
});
