// Goal: a node whose data directory was wiped joins the metadata group back as a NEW member
// (core/member-id.ts; docs/metadata-raft.md, "A wiped directory is a new member"): it starts empty and
// undamaged under another member id, registers, and the leader replaces the node's former member by
// it one configuration change at a time (learner, removal of the former member, promotion); the group
// keeps committing throughout and, afterwards, with the new member in its quorums. Messages for the
// former member are dropped on the node, and messages from it are not counted by the leader.
// Method: the production RaftMetadataGroup on its node host over MemoryKv with a NodeDisk each, three
// nodes wired by an in-memory network that routes by node, the production MetadataMemberReplacer
// run on a timer on every node, and the production registration loop on the wiped node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { incarnationOfMember, nodeOfMember } from '../core/member-id.js';
import { MemoryCell, MemoryKv } from '../log/index.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { EventType } from '../metadata/types.js';
import { makeMessage, type NodeId } from '../raft/index.js';
import type { TransportHandler } from '../transport/index.js';
import { closeMember, fastMemberTimings, hostOf, openMember, startMember, type MemberTransport, until } from '../testing/metadata-member.js';
import { registerDisk } from './disk-registration.js';
import type { RaftMetadataGroup } from './metadata-group.js';
import { MetadataMemberReplacer } from './metadata-members.js';
import { diskTokenOf, NodeDisk } from './node-disk.js';
import { metadataGroupId } from './metadata-restore.js';
import { RaftLogStore } from './raft-log-store.js';

const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Proposes through `via` until the command commits, retrying what the group answers as unavailable
 * (no leader yet, or a write that did not commit in time) as a client would; a retry of a create that
 * an earlier attempt already committed is refused as existing, which counts as committed here.
 */
async function commitEventually(via: RaftMetadataGroup, cmd: MetadataCommand, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  let tries = 0;
  for (;;) {
    tries++;
    try {
      const r = await via.propose(cmd);
      assert.ok(r.ok || tries > 1, `the first attempt was refused: ${JSON.stringify(r)}`);
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== 'unavailable' || Date.now() > deadline) throw e;
    }
  }
}

function create(name: string): MetadataCommand {
  const et = { name, owning_application: 'app', category: 'undefined', enrichment_strategies: [], partition_strategy: 'random', compatibility_mode: 'forward', schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: '2026-01-01T00:00:00Z' }, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' } as unknown as EventType;
  return { op: 'event_type.create', eventType: et, partitionCount: 1 };
}

/** Routes by node, as the gRPC transport does; a node can be cut off (nothing in or out). */
class Net {
  readonly handlers = new Map<NodeId, TransportHandler>();
  readonly down = new Set<NodeId>();
  transportFor(from: NodeId): MemberTransport {
    return {
      send: (groups) => {
        for (const m of groups.flatMap((g) => g.messages)) {
          const to = nodeOfMember(m.to);
          setImmediate(() => {
            if (!this.down.has(from) && !this.down.has(to)) this.handlers.get(to)?.receive(m);
          });
        }
      },
      forward: async (to, req) => {
        const h = this.handlers.get(to);
        if (h === undefined || this.down.has(to) || this.down.has(from)) return { status: 'unavailable', detail: 'unreachable' };
        return h.propose({ from, command: req.command, flowId: req.flowId, deadlineMs: req.deadlineMs });
      },
      reachable: (id) => !this.down.has(nodeOfMember(id)),
    };
  }
  join(g: RaftMetadataGroup): void {
    this.handlers.set(g.self, g.transportHandler());
    startMember(g, this.transportFor(g.self));
  }
}

async function openNode(self: NodeId, kv: MemoryKv, disk: NodeDisk, founders: NodeId[]): Promise<RaftMetadataGroup> {
  return openMember({
    self,
    member: disk.metadataMember,
    newMember: () => disk.newMetadataMember(),
    disk,
    incarnation: `inc-${self}-${Math.random()}`,
    kv,
    founders,
    directory: [1, 2, 3].map((id) => ({ id })),
    ...fastMemberTimings,
    logger,
  });
}

/** Node `id`'s directory is wiped: a new disk id, and it opens the group again (founders unknown, cluster known). */
async function wipedNode(id: NodeId): Promise<{ group: RaftMetadataGroup; disk: NodeDisk }> {
  const kv = new MemoryKv();
  const disk = await NodeDisk.open({ kv, cell: new MemoryCell(), self: id, newId: () => `disk-${id}-after-wipe`, logger: quiet });
  await disk.setCluster('cluster', []);
  return { group: await openNode(id, kv, disk, []), disk };
}

/** The production registration loop of a wiped node's directory (disk-registration.ts), until `stopped`. */
function register(id: NodeId, g: RaftMetadataGroup, disk: NodeDisk, stopped: () => boolean): void {
  void registerDisk({
    node: id,
    token: () => diskTokenOf(disk.identity),
    member: () => disk.identity.metadataMember,
    foundingDisk: () => false,
    registered: () => g.state.disk(id),
    propose: (cmd) => g.propose(cmd),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    stopped,
    retryMs: 20,
    logger: quiet,
  });
}

/** Nodes 1, 2 and 3 found the group, each on a MemoryKv of its own, joined to `net`. */
async function foundThree(net: Net): Promise<{ ids: NodeId[]; groups: Map<NodeId, RaftMetadataGroup>; kvs: Map<NodeId, MemoryKv> }> {
  const ids = [1, 2, 3];
  const groups = new Map<NodeId, RaftMetadataGroup>();
  const kvs = new Map<NodeId, MemoryKv>();
  const founders = ids.map((id) => ({ id, diskId: `disk-${id}` }));
  for (const id of ids) {
    const kv = new MemoryKv();
    kvs.set(id, kv);
    const disk = await NodeDisk.open({ kv, cell: new MemoryCell(), self: id, newId: () => `disk-${id}`, logger: quiet });
    await disk.setCluster('cluster', founders);
    groups.set(id, await openNode(id, kv, disk, ids));
  }
  for (const g of groups.values()) net.join(g);
  return { ids, groups, kvs };
}

/** Every node runs a replacer every 10 ms, as main.ts does (only the leader's acts); returns the timer. */
function runReplacers(groups: Map<NodeId, RaftMetadataGroup>): NodeJS.Timeout {
  const replacers = new Map<RaftMetadataGroup, MetadataMemberReplacer>();
  return setInterval(() => {
    for (const g of groups.values()) {
      if (!replacers.has(g)) replacers.set(g, new MetadataMemberReplacer(g, logger));
      replacers.get(g)!.round();
    }
  }, 10);
}

/** Node 3's directory is wiped: its member closes and leaves the network, and it opens again on an empty disk (not joined yet). */
async function wipeNode3(net: Net, groups: Map<NodeId, RaftMetadataGroup>): Promise<{ group: RaftMetadataGroup; disk: NodeDisk }> {
  await closeMember(groups.get(3)!);
  net.handlers.delete(3);
  return wipedNode(3);
}

test('a wiped node rejoins as a new member that replaces its former one; the former member counts for nothing', async () => {
  const net = new Net();
  const { groups } = await foundThree(net);
  let stopped = false;
  const timer = runReplacers(groups);
  const leaderOf = () => [...groups.values()].find((g) => g.isLeader());
  try {
    await until('a leader', 3000, () => leaderOf() !== undefined);
    // The wiped node must not lead: elections happen among the others.
    let leader = leaderOf()!;
    if (leader.self === 3) {
      assert.ok(leader.transferLeadership(1));
      await until('node 1 to lead', 3000, () => groups.get(1)!.isLeader());
      leader = groups.get(1)!;
    }
    for (const n of ['w1', 'w2', 'w3']) assert.equal((await leader.propose(create(n))).ok, true);

    // Node 3's directory is wiped: a new disk id, and it joins (founders unknown, cluster known).
    const { group: fresh, disk: disk3 } = await wipeNode3(net, groups);
    const member = fresh.member;
    assert.notEqual(member, 3, 'the wiped directory took its node id as member id again');
    assert.equal(nodeOfMember(member), 3);
    assert.ok(incarnationOfMember(member) > 0);
    assert.equal(disk3.identity.metadataMember, member, 'the new member id is recorded in the node identity');
    assert.equal(fresh.view().metadata.raft_damaged, false, 'a new member has nothing to be repaired');
    groups.set(3, fresh);
    net.join(fresh);

    // Before its registration, the leader sends nothing to it and it holds nothing.
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(fresh.view().metadata.last_index, 0);
    assert.deepEqual(leader.view().metadata.members.map((m) => m.id), [1, 2, 3]);

    // A message for the former member reaches node 3 and is dropped there (a vote request in a far
    // higher term would otherwise move the new member's term).
    hostOf(fresh).receive(0, makeMessage({ type: 'vote', from: 1, to: 3, term: 999, index: 99, logTerm: 99 }));
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(fresh.view().metadata.term < 999, 'a message for the former member was taken by the new one');

    register(3, fresh, disk3, () => stopped);
    const conf = () => leaderOf()?.view().metadata.members ?? [];
    await until('the replacement: voters 1, 2 and the new member', 8000, () => {
      const c = conf();
      return c.length === 3 && c.every((m) => m.suffrage === 'voter') && c.some((m) => m.id === member) && !c.some((m) => m.id === 3);
    });
    await until('the new member to apply the log', 3000, () => fresh.state.eventType('w3') !== undefined);
    assert.equal(fresh.view().metadata.raft_damaged, false);
    await until('the new member to apply its promotion', 3000, () => fresh.view().members.find((m) => m.id === 3)?.suffrage === 'voter');
    assert.equal(fresh.view().metadata.member, member);

    // The group keeps committing, and with node 2 cut off its quorum needs the new member.
    leader = leaderOf()!;
    const other = leader.self === 1 ? 2 : 1;
    net.down.add(other);
    assert.equal((await leader.propose(create('with-new-member'))).ok, true);
    await until('the new member to apply it', 3000, () => fresh.state.eventType('with-new-member') !== undefined);

    // With the new member cut off too, an acknowledgement from the former member commits nothing.
    net.down.add(3);
    const before = leader.view().metadata.commit_index;
    // Its outcome is unknown (the leader steps down once it hears from no quorum): not waited for.
    void leader.propose(create('never')).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    const last = leader.view().metadata.last_index;
    assert.ok(last > before);
    hostOf(leader).receive(0, makeMessage({ type: 'appResp', from: 3, to: leader.member, term: leader.view().metadata.term, index: last }));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(leader.view().metadata.commit_index, before, 'an acknowledgement from the removed member committed an entry');
    net.down.clear();
    // Healed, the group commits again (through whichever member leads now). The leader stepped down
    // while it heard from no quorum, so the first proposal may meet an election under way: it is
    // retried as a client would (a run under load failed here with 'did not commit in time').
    await commitEventually(fresh, create('after'));
    await until('node 1 to apply it', 3000, () => groups.get(1)!.state.eventType('after') !== undefined);
  } finally {
    stopped = true;
    clearInterval(timer);
    await Promise.all([...groups.values()].map(closeMember));
  }
});

// A node whose disk lost the metadata group's records only keeps its member id (it holds partition
// records) and learns a term floor first, asking the cluster's nodes under their node ids. Once another
// node runs a new member, the id asked there (the node id) is a former member: in a group of three
// both others must answer, and nobody answered for it, so the member stayed damaged for good (host
// simulation seed 15 on f5faece). The new member answers in its place once the leader added it.
test('a member that lost its metadata records and kept its id learns its floor with a new member answering for its node\'s former one', async () => {
  const net = new Net();
  const { ids, groups } = await foundThree(net);
  let stopped = false;
  const timer = runReplacers(groups);
  const leaderOf = () => [...groups.values()].find((g) => g.isLeader());
  try {
    await until('a leader', 3000, () => leaderOf() !== undefined);
    await commitEventually(leaderOf()!, create('before'));
    // Node 3 is wiped and replaced by a new member: voters 1, 2 and 3.x.
    const { group: fresh, disk: disk3 } = await wipeNode3(net, groups);
    groups.set(3, fresh);
    net.join(fresh);
    register(3, fresh, disk3, () => stopped);
    await until('the replacement', 8000, () => {
      const c = leaderOf()?.view().metadata.members ?? [];
      return c.length === 3 && c.every((m) => m.suffrage === 'voter') && c.some((m) => m.id === fresh.member);
    });
    await until('the new member to apply its promotion', 3000, () => fresh.view().members.find((m) => m.id === 3)?.suffrage === 'voter');
    await commitEventually(leaderOf()!, create('replaced'));

    // A node other than the leader loses its metadata group's records (its marker tells it: the disk
    // lost raft writes), but holds partition records: it keeps member id `victim`, empty and damaged.
    const victim = [1, 2].find((id) => !groups.get(id)!.isLeader())!;
    await closeMember(groups.get(victim)!);
    net.handlers.delete(victim);
    const cell = new MemoryCell();
    const before = await NodeDisk.open({ kv: new MemoryKv(), cell, self: victim, newId: () => `disk-${victim}`, logger: quiet });
    before.durable(before.stamp({ put: () => undefined, del: () => undefined, delRange: () => undefined }));
    await before.flush();
    const lostKv = new MemoryKv();
    const disk = await NodeDisk.open({ kv: lostKv, cell, self: victim, newId: () => `disk-${victim}`, logger: quiet });
    assert.notEqual(disk.identity.lostRaftState, undefined);
    const damaged = await openMember({
      self: victim,
      member: disk.metadataMember,
      newMember: () => disk.newMetadataMember(),
      partitionState: () => Promise.resolve('raft records of partition group 7'),
      disk,
      incarnation: `inc-${victim}-again`,
      kv: lostKv,
      founders: ids,
      directory: ids.map((id) => ({ id })),
      ...fastMemberTimings,
      logger,
    });
    assert.equal(damaged.member, victim, 'it keeps its member id');
    assert.equal(damaged.view().metadata.raft_damaged, true);
    groups.set(victim, damaged);
    net.join(damaged);
    // It asks nodes 2 (or 1) and 3 under their node ids; node 3 answers with its new member.
    await until('the floor and the repair', 5000, () => !damaged.view().metadata.raft_damaged);
    await until('the repaired member to apply the log', 3000, () => damaged.state.eventType('replaced') !== undefined);
    await commitEventually(damaged, create('after'));
  } finally {
    stopped = true;
    clearInterval(timer);
    await Promise.all([...groups.values()].map(closeMember));
  }
});

test('a single node that lost its metadata raft state is not started as a new member nobody could add: it refuses to start', async () => {
  const kv = new MemoryKv();
  let made = 0;
  await assert.rejects(
    openMember({
      self: 1,
      newMember: async () => {
        made++;
        return 1 + 2 ** 31;
      },
      incarnation: 'inc',
      kv,
      founders: [],
      directory: [{ id: 1 }],
      ...fastMemberTimings,
      logger,
    }),
    /the metadata raft log of this single-node cluster is damaged/,
  );
  assert.equal(made, 0);
});

test('every metadata member stores the commit index it learnt: a restart takes the configuration of the last commit it knew', async () => {
  // The metadata group has no applied row: a member restarts from its stored commit index (or its
  // snapshot) and takes the configuration of that index. Host simulation seed 7109: with the commit
  // index not stored, every member forgot a committed promotion and the group could not elect.
  const net = new Net();
  const { groups, kvs } = await foundThree(net);
  try {
    await until('a leader', 3000, () => [...groups.values()].some((g) => g.isLeader()));
    const leader = [...groups.values()].find((g) => g.isLeader())!;
    for (const n of ['c1', 'c2', 'c3']) await commitEventually(leader, create(n));
    const commit = leader.view().metadata.commit_index;
    await until('every member to learn the commit index', 3000, () => [...groups.values()].every((g) => g.view().metadata.commit_index >= commit));
  } finally {
    await Promise.all([...groups.values()].map(closeMember));
  }
  const commit = Math.max(...[...groups.values()].map((g) => g.view().metadata.commit_index));
  for (const [id, kv] of kvs) {
    const stored = (await RaftLogStore.open(kv, metadataGroupId)).storage.hardState().commit;
    assert.ok(stored >= commit, `node ${id} stored commit index ${stored}, the group committed ${commit}`);
  }
});
