// Goal: a directory whose metadata group holds no state and does not found it takes a new member id
// only when it holds no partition raft state either (partition-state-held.ts): with partition records
// (in its KV, or a storage directory beside it) it keeps its member id and starts the metadata group
// empty and damaged, so its partition records stay under the id they were written under.
// A directory that made its new member id before and found no loss since gets that id again: its
// partition records are its own, and it goes on as the undamaged new member it was.
// Method: partitionStateHeld over a MemoryKv and a temporary directory; the production metadata
// group opened on a NodeDisk that lost its raft state (a missing marker), with and without a
// partition record in its KV; orphanedByNewMember on a directory that joined as a new member. lost-metadata-state.cluster.test.ts shows the whole case on real nodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { MemoryCell, MemoryKv } from '../log/index.js';
import { closeMember, fastMemberTimings, openMember } from '../testing/metadata-member.js';
import { NodeDisk } from './node-disk.js';
import { orphanedByNewMember, partitionStateHeld } from './partition-state-held.js';
import { groupStart } from './raft-keys.js';

const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

const putRecord = (kv: MemoryKv, group: number) => kv.write((b) => b.put(Buffer.concat([groupStart(group), Buffer.from([0x01])]), Buffer.from('x')), { durable: true });

test('partition raft state is a record of any group but the metadata group, or a storage directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-held-'));
  try {
    const storages = join(dir, 'storages');
    const kv = new MemoryKv();
    await putRecord(kv, 0);
    assert.equal(await partitionStateHeld(kv, storages), undefined, 'the metadata group\'s records are not partition state');
    await putRecord(kv, 7);
    assert.equal(await partitionStateHeld(kv, storages), 'raft records of partition group 7');
    mkdirSync(join(storages, 'cold'), { recursive: true });
    assert.equal(await partitionStateHeld(new MemoryKv(), storages), 'partition logs of the storages cold');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function restart(partitionRecord: boolean): Promise<{ member: number; damaged: boolean; made: number }> {
  const kv = new MemoryKv();
  const first = await NodeDisk.open({ kv, cell: new MemoryCell(), self: 3, newId: () => 'disk-3', logger: quiet });
  await first.setCluster('cluster', [1, 2, 3].map((id) => ({ id, diskId: `disk-${id}` })));
  if (partitionRecord) await putRecord(kv, 5);
  // A fresh marker: the node finds a loss (the marker is gone), and its metadata group holds nothing.
  const disk = await NodeDisk.open({ kv, cell: new MemoryCell(), self: 3, newId: () => 'unused', logger: quiet });
  assert.ok(disk.identity.lostRaftState !== undefined);
  let made = 0;
  const g = await openMember({
    self: 3,
    member: disk.metadataMember,
    newMember: async () => {
      made++;
      return disk.newMetadataMember();
    },
    partitionState: () => partitionStateHeld(kv, join(tmpdir(), 'brook-no-such-dir')),
    disk,
    incarnation: 'inc',
    kv,
    founders: [1, 2, 3],
    directory: [1, 2, 3].map((id) => ({ id })),
    ...fastMemberTimings,
    logger,
  });
  try {
    return { member: g.member, damaged: g.view().metadata.raft_damaged, made };
  } finally {
    await closeMember(g);
  }
}

test('a node that lost its metadata raft state keeps its member id when it holds partition records, and takes a new one when it holds none', async () => {
  const kept = await restart(true);
  assert.deepEqual(kept, { member: 3, damaged: true, made: 0 }, 'with partition records: the same member, empty and damaged');
  const fresh = await restart(false);
  assert.equal(fresh.made, 1);
  assert.notEqual(fresh.member, 3, 'without: a new member');
  assert.equal(fresh.member % 2 ** 31, 3);
  assert.equal(fresh.damaged, false);
});

test('a directory that made its new member id and lost nothing since orphans nothing: it gets the same id, undamaged', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 3, newId: () => 'disk-3-after-wipe', logger: quiet });
  await disk.setCluster('cluster', []);
  assert.equal(disk.wouldMakeMetadataMember, true);
  const member = await disk.newMetadataMember();
  await putRecord(kv, 5);
  // Restarted before anything was written to its metadata group (its partition replicas opened meanwhile).
  const again = await NodeDisk.open({ kv, cell, self: 3, newId: () => 'unused', logger: quiet });
  assert.equal(again.wouldMakeMetadataMember, false);
  assert.equal(await orphanedByNewMember(again, kv, undefined), undefined);
  assert.equal(await again.newMetadataMember(), member);
  // A loss found since: a new id would be made, and would orphan the partition records.
  const lost = await NodeDisk.open({ kv, cell: new MemoryCell(), self: 3, newId: () => 'unused', logger: quiet });
  assert.equal(await orphanedByNewMember(lost, kv, undefined), 'raft records of partition group 5');
});
