// Goal: a repair (and a damage found while running) reaches the disk even when the Ready that says
// so writes nothing else. The node host wrote a turn only when some Ready had entries, a snapshot or
// a hard state, so a Ready saying only `repaired` cleared the member's damage in memory and never
// removed the mark from disk: after a restart the member was damaged again, and the simulator, which
// had seen it repaired, let another member of its group lose data too; the group could never elect
// again (host simulation, seed 285 of 2000: Liveness). A Ready saying only `damaged` was not written
// either, so a restart forgot a damage found while running, and the member could vote.
// Method: one node (PartitionReplicas on a RaftNodeHost, placement of three) fed Raft messages by hand;
// the damage mark is put on its disk while it is down, as NodeDisk does after a lost WAL tail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '../log/index.js';
import { encodeBatchEntry } from '../log/partition-entry.js';
import { groupKey, kindDamage } from './raft-keys.js';
import { encodeDamageRecord } from './raft-records.js';
import { followerGroup as group, followerNowMs, handFedFollower, msg, until } from '../testing/hand-fed-follower.js';

const damageKey = groupKey(group, kindDamage);

async function node(kv: MemoryKv) {
  const f = handFedFollower(kv, { onFatal: (err) => assert.fail(String(err)) });
  const r = (await f.replicas.ensure(7, 0))!;
  return { r, h: f.handler(), close: f.close };
}

test('a repair that writes nothing else removes the damage mark from disk', async () => {
  const kv = new MemoryKv();
  const a = await node(kv);
  // Node 2 wins term 2 with node 1's vote and appends entry 4.
  a.h.receive(msg({ type: 'vote', from: 2, term: 2, logTerm: 1, index: 3 }));
  a.h.receive(msg({ type: 'app', from: 2, term: 2, logTerm: 1, index: 3, entries: [{ index: 4, term: 2, type: 'normal', data: encodeBatchEntry(followerNowMs, 'r4', [Buffer.from('{}')]) }], commit: 4 }));
  await until('entry 4 applied', () => a.r.applied === 4);
  await a.close();
  // Down, the node is found to have lost raft writes: its group is marked damaged.
  await kv.write((b) => b.put(damageKey, encodeDamageRecord(damageKey, { term: 2, index: 4, reason: 'test: a lost tail' })), { durable: true });
  const b = await node(kv);
  assert.notEqual(b.r.group.raw.status().damaged, null);
  // The leader's next append matches its log up to its commit: repaired, and nothing else changes.
  b.h.receive(msg({ type: 'app', from: 2, term: 2, logTerm: 2, index: 4, commit: 4 }));
  await until('the repair', () => b.r.group.store.damage === undefined);
  await b.close();
  assert.equal(await kv.get(damageKey), null, 'the damage mark is still on disk');
  const c = await node(kv);
  assert.equal(c.r.group.raw.status().damaged, null, 'damaged again after a restart');
  await c.close();
});

test('a damage found while running that writes nothing else is on disk before the Ready is done', async () => {
  const kv = new MemoryKv();
  const a = await node(kv);
  a.h.receive(msg({ type: 'vote', from: 2, term: 2, logTerm: 1, index: 3 }));
  await until('the vote stored', () => a.r.group.store.storage.hardState().vote === 2);
  // The leader names a commit index beyond this member's log: it counts entries the member lost.
  a.h.receive(msg({ type: 'heartbeat', from: 2, term: 2, commit: 9 }));
  await until('the damage found', () => a.r.group.store.damage !== undefined);
  await a.close();
  assert.notEqual(await kv.get(damageKey), null, 'the damage mark is not on disk');
  const b = await node(kv);
  assert.notEqual(b.r.group.raw.status().damaged, null, 'a restart forgot the damage');
  await b.close();
});
