// Goal: the metadata group host with a damaged member (issue 9): a member restarted on a log with a
// corrupt entry, or started empty without founding, shows `raft_damaged` in its view with what was
// found, is repaired by the leader and shows it no longer; a single-node cluster whose log is damaged
// refuses to start, saying what was found and what to do, since nobody could repair it.
// Method: RaftMetadataGroup on its node host over MemoryKv, three members wired by an in-memory transport; damage made
// by flipping a bit of a stored entry (MemoryKv.rawPut) while the member is down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { MemoryCell, MemoryKv } from '../log/index.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { EventType } from '../metadata/types.js';
import type { NodeId } from '../raft/index.js';
import type { TransportHandler } from '../transport/index.js';
import type { RaftMetadataGroup } from './metadata-group.js';
import { closeMember, fastMemberTimings, openMember, startMember, type MemberTransport, until } from '../testing/metadata-member.js';
import { NodeDisk } from './node-disk.js';
import { entryKey } from './raft-keys.js';

const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

function create(name: string): MetadataCommand {
  const et = { name, owning_application: 'app', category: 'undefined', enrichment_strategies: [], partition_strategy: 'random', compatibility_mode: 'forward', schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: '2026-01-01T00:00:00Z' }, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' } as unknown as EventType;
  return { op: 'event_type.create', eventType: et, partitionCount: 1 };
}

function open(kv: MemoryKv, self: NodeId, founders: NodeId[], members: NodeId[], disk?: NodeDisk): Promise<RaftMetadataGroup> {
  return openMember({
    ...(disk === undefined ? {} : { disk }),
    self,
    incarnation: `inc-${self}-${Math.random()}`,
    kv,
    founders,
    directory: members.map((id) => ({ id })),
    ...fastMemberTimings,
    logger,
  });
}

class Net {
  readonly handlers = new Map<NodeId, TransportHandler>();
  transportFor(): MemberTransport {
    return {
      send: (groups) => {
        for (const m of groups.flatMap((g) => g.messages)) setImmediate(() => this.handlers.get(m.to)?.receive(m));
      },
      forward: async (to, req) => this.handlers.get(to)!.propose({ from: 0, command: req.command, flowId: req.flowId, deadlineMs: req.deadlineMs }),
      reachable: () => true,
    };
  }
  join(g: RaftMetadataGroup): void {
    this.handlers.set(g.self, g.transportHandler());
    startMember(g, this.transportFor());
  }
}

function flipEntry(kv: MemoryKv, index: number): Promise<void> {
  return kv.get(entryKey(0, index)).then((v) => {
    assert.ok(v !== null, `entry ${index} is stored`);
    const bad = Buffer.from(v);
    bad[bad.length - 1]! ^= 0x01;
    kv.rawPut(entryKey(0, index), bad);
  });
}

test('a single-node cluster with a damaged log refuses to start and says why and what to do', async () => {
  const kv = new MemoryKv();
  const g = await open(kv, 1, [1], [1]);
  startMember(g, undefined);
  for (const n of ['a', 'b', 'c']) assert.equal((await g.propose(create(n))).ok, true);
  await closeMember(g);
  await flipEntry(kv, 3);
  await assert.rejects(open(kv, 1, [1], [1]), (err: Error) => {
    assert.match(err.message, /the metadata raft log of this single-node cluster is damaged: .*CRC32C mismatch/);
    assert.match(err.message, /Restore the data directory from a backup/);
    return true;
  });
});
test('a single-node cluster with a damaged log starts when the operator accepts the loss: it leads above its term ceiling with what it held, and the next start is normal', async () => {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId: () => 'disk-1', logger: quiet });
  const g = await open(kv, 1, [1], [1], disk);
  startMember(g, undefined);
  for (const n of ['a', 'b', 'c']) assert.equal((await g.propose(create(n))).ok, true);
  const termBefore = g.view().metadata.term;
  await closeMember(g);
  await disk.flush();
  // The newest entry is corrupt: the log is cut before it, and the member is damaged.
  const lastIndex = g.view().metadata.last_index;
  await flipEntry(kv, lastIndex);
  const disk2 = await NodeDisk.open({ kv, cell, self: 1, newId: () => 'disk-1', logger: quiet });
  await assert.rejects(openMember({ disk: disk2, self: 1, incarnation: 'x', kv, founders: [1], directory: [{ id: 1 }], ...fastMemberTimings, logger }), /BROOK_ACCEPT_METADATA_LOSS=true/);
  const ceiling = disk2.termCeiling;
  const accepted = await openMember({ disk: disk2, self: 1, incarnation: 'y', kv, founders: [1], directory: [{ id: 1 }], ...fastMemberTimings, logger, acceptLoss: true });
  startMember(accepted, undefined);
  await until('the member leads', 5000, () => accepted.isLeader());
  const v = accepted.view();
  assert.equal(v.metadata.raft_damaged, false);
  assert.ok(v.metadata.term > Math.max(ceiling, termBefore), `leads at term ${v.metadata.term}, above the ceiling ${ceiling} and its term before (${termBefore})`);
  assert.deepEqual([...accepted.state.eventTypes()].map((r) => r.eventType.name).sort(), ['a', 'b'], 'it keeps what it held; the command of the cut entry is gone');
  assert.equal((await accepted.propose(create('d'))).ok, true, 'it takes writes');
  await closeMember(accepted);
  await disk2.flush();
  const again = await open(kv, 1, [1], [1], await NodeDisk.open({ kv, cell, self: 1, newId: () => 'disk-1', logger: quiet }));
  startMember(again, undefined);
  await until('the member leads after a normal start', 5000, () => again.isLeader());
  assert.deepEqual([...again.state.eventTypes()].map((r) => r.eventType.name).sort(), ['a', 'b', 'd']);
  await closeMember(again);
});


test('a member restarted on a corrupt entry, and one started empty, show raft_damaged until the leader repairs them', async () => {
  const ids = [1, 2, 3];
  const kvs = new Map(ids.map((id) => [id, new MemoryKv()]));
  const net = new Net();
  const groups = new Map<NodeId, RaftMetadataGroup>();
  for (const id of ids) groups.set(id, await open(kvs.get(id)!, id, ids, ids));
  for (const g of groups.values()) net.join(g);
  try {
    await until('a leader', 3000, () => [...groups.values()].some((g) => g.isLeader()));
    const leader = [...groups.values()].find((g) => g.isLeader())!;
    for (const n of ['w1', 'w2', 'w3', 'w4']) assert.equal((await leader.propose(create(n))).ok, true);
    const victim = ids.find((id) => id !== leader.self)!;
    await until('the victim to apply everything', 3000, () => groups.get(victim)!.view().metadata.applied_index === leader.view().metadata.commit_index);
    assert.equal(groups.get(victim)!.view().metadata.raft_damaged, false);
    await closeMember(groups.get(victim)!);
    const kv = kvs.get(victim)!;
    await flipEntry(kv, 6);
    const damaged = await open(kv, victim, ids, ids);
    const v = damaged.view();
    assert.equal(v.metadata.raft_damaged, true);
    assert.match(v.metadata.raft_damage ?? '', /CRC32C mismatch.*the log is cut before index 6/);
    groups.set(victim, damaged);
    net.join(damaged);
    await until('the repair', 3000, () => !damaged.view().metadata.raft_damaged);
    assert.equal(damaged.view().metadata.raft_damage, null);
    // Repair is a fact of the log (it matches the leader's); applying the entries it got back follows.
    await until('the victim to apply what came back', 3000, () => damaged.state.eventType('w4') !== undefined);

    // The third member starts empty (its data directory wiped) and does not found: damaged, then repaired.
    const third = ids.find((id) => id !== leader.self && id !== victim)!;
    await closeMember(groups.get(third)!);
    const fresh = await open(new MemoryKv(), third, [], ids);
    assert.equal(fresh.view().metadata.raft_damaged, true);
    assert.match(fresh.view().metadata.raft_damage ?? '', /started with no metadata raft state/);
    groups.set(third, fresh);
    net.join(fresh);
    await until('the repair of the empty member', 3000, () => !fresh.view().metadata.raft_damaged);
    await until('the empty member to apply the log', 3000, () => fresh.state.eventType('w4') !== undefined);

    // The same member, named a founder, on a node that lost its raft state with the identity (the
    // marker names a durable write, the KV is empty): it may have voted and acknowledged in this group,
    // so it does not found it again (term 1, no vote) but starts empty and damaged.
    await closeMember(fresh);
    const cell = new MemoryCell();
    const before = await NodeDisk.open({ kv: new MemoryKv(), cell, self: third, newId: () => 'disk-a', logger: quiet });
    before.durable(before.stamp({ put: () => undefined, del: () => undefined, delRange: () => undefined }));
    await before.flush();
    const wipedKv = new MemoryKv();
    const disk = await NodeDisk.open({ kv: wipedKv, cell, self: third, newId: () => 'disk-b', logger: quiet });
    assert.notEqual(disk.identity.lostRaftState, undefined);
    const refounded = await open(wipedKv, third, ids, ids, disk);
    assert.equal(refounded.view().metadata.raft_damaged, true);
    assert.match(refounded.view().metadata.raft_damage ?? '', /started with no metadata raft state after losing raft writes/);
    groups.set(third, refounded);
    net.join(refounded);
    await until('the repair of the member that lost its raft state', 3000, () => !refounded.view().metadata.raft_damaged);
    await until('that member to apply the log', 3000, () => refounded.state.eventType('w4') !== undefined);
  } finally {
    await Promise.all([...groups.values()].map(closeMember));
  }
});
