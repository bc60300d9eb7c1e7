/**
 * Goal: idle groups quiesce on the node host and wake safely (docs/replication.md, "Idle groups
 * quiesce"): an idle group sends no heartbeats and its followers start no election; a proposal wakes it;
 * a leader that dies while its group is quiesced is replaced within the election bound, because the
 * followers' hosts no longer hear its node (no message, no ping) and wake them; a follower's leftover
 * proposals still fail at their deadline while it is quiesced.
 * Method: three RaftNodeHosts with one group each (MemoryKv), real timers with 10 ms ticks and an
 * election timeout of 10 ticks, joined by an in-memory transport that carries group messages and pings
 * and can cut a node off. Controls that the tests can fail: the same idle group without quiescence
 * keeps heartbeating; without the liveness wake (livenessMs beyond the test) no leader replaces the
 * dead one; without expiry of a quiesced follower's proposals (the bug the host simulation found,
 * seed 34) the leftover proposal never settles.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryKv } from '../../log/index.js';
import type { Message, NodeId } from '../../raft/index.js';
import { systemClock } from '../system.js';
import { RaftLogStore } from '../raft-log-store.js';
import { RaftNodeHost, systemTicks, type GroupTransport } from './node-host.js';
import { ProposalFailedError, RaftGroup } from './raft-group.js';

const tickMs = 10;
const electionTicks = 10;
const electionMs = tickMs * electionTicks;
const groupId = 5;
const ids: NodeId[] = [1, 2, 3];

interface Member {
  readonly id: NodeId;
  readonly host: RaftNodeHost;
  readonly group: RaftGroup<string>;
  /** The process incarnation its pings name ('' for none, as a transport that carries none). */
  readonly incarnation: string;
}

class Net {
  readonly members = new Map<NodeId, Member>();
  readonly cut = new Set<NodeId>();
  /** Group messages delivered, by type. */
  readonly delivered: Message[] = [];

  transport(self: NodeId): GroupTransport {
    const deliverable = (to: NodeId) => !this.cut.has(self) && !this.cut.has(to) && this.members.has(to);
    return {
      send: (groups) => {
        for (const { group, messages } of groups) {
          for (const m of messages) {
            if (!deliverable(m.to)) continue;
            setImmediate(() => {
              if (!deliverable(m.to)) return;
              this.delivered.push(m);
              this.members.get(m.to)!.host.receive(group, m);
            });
          }
        }
      },
      ping: () => {
        for (const to of ids) {
          if (to === self || !deliverable(to)) continue;
          setImmediate(() => {
            if (deliverable(to)) this.members.get(to)!.host.heard(self, this.members.get(self)?.incarnation ?? '');
          });
        }
      },
    };
  }

  leader(): Member | undefined {
    return [...this.members.values()].find((m) => !this.cut.has(m.id) && m.group.isLeader());
  }
}

async function cluster(opts: { quiescence?: boolean; livenessMs?: number; timeoutMs?: number; incarnations?: boolean } = {}): Promise<Net> {
  const net = new Net();
  for (const id of ids) {
    const kv = new MemoryKv();
    const store = await RaftLogStore.open(kv, groupId);
    await store.bootstrap(ids);
    const group = new RaftGroup<string>({ id: groupId, self: id, store, conf: { voters: ids, learners: [] }, applied: 3, electionTicks, heartbeatTicks: 1, random: { int: (n) => Math.floor(Math.random() * n) } });
    group.setApplier({ apply: (e) => Buffer.from(e.data).toString(), applied: () => undefined, restore: () => undefined });
    const host = new RaftNodeHost({
      self: id,
      kv,
      tickMs,
      clock: systemClock,
      ticks: systemTicks,
      logger: pino({ level: 'silent' }),
      ...(opts.quiescence === undefined ? {} : { quiescence: opts.quiescence }),
      livenessMs: opts.livenessMs ?? electionMs,
      onFatal: (err) => assert.fail(`node ${id} stopped: ${String(err)}`),
    });
    net.members.set(id, { id, host, group, incarnation: opts.incarnations === false ? '' : `n${id}.1` });
  }
  for (const m of net.members.values()) {
    m.host.start(net.transport(m.id));
    m.host.add(m.group as RaftGroup<unknown>);
  }
  net.members.get(1)!.group.raw.campaign();
  net.members.get(1)!.host.kick(groupId);
  await until('a leader', 3000, () => net.leader() !== undefined);
  return net;
}

/**
 * Node `id` restarts at once (well within the liveness timeout) and lost its raft state with its disk:
 * its member starts empty and damaged, so it neither campaigns nor votes (raft-log-store.ts startEmpty).
 */
async function restartDamaged(net: Net, id: NodeId, incarnation: string): Promise<Member> {
  await net.members.get(id)!.host.close();
  const kv = new MemoryKv();
  const store = await RaftLogStore.open(kv, groupId);
  await store.startEmpty([], 'the test wiped its disk');
  const group = new RaftGroup<string>({ id: groupId, self: id, store, conf: { voters: ids, learners: [] }, applied: 0, electionTicks, heartbeatTicks: 1, random: { int: (n) => Math.floor(Math.random() * n) } });
  group.setApplier({ apply: (e) => Buffer.from(e.data).toString(), applied: () => undefined, restore: () => undefined });
  const host = new RaftNodeHost({ self: id, kv, tickMs, clock: systemClock, ticks: systemTicks, logger: pino({ level: 'silent' }), livenessMs: electionMs, onFatal: (err) => assert.fail(`node ${id} stopped: ${String(err)}`) });
  const m: Member = { id, host, group, incarnation };
  net.members.set(id, m);
  host.start(net.transport(id));
  host.add(group as RaftGroup<unknown>);
  return m;
}

async function close(net: Net): Promise<void> {
  for (const m of net.members.values()) await m.host.close();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ms: number, ok: () => boolean): Promise<number> {
  const started = Date.now();
  while (!ok()) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(2);
  }
  return Date.now() - started;
}

/** Waits until no group message has been delivered for a few ticks (at most a second). */
async function settled(net: Net): Promise<void> {
  const started = Date.now();
  for (let seen = -1; seen !== net.delivered.length && Date.now() - started < 1000; ) {
    seen = net.delivered.length;
    await sleep(3 * tickMs);
  }
}

const allQuiesced = (net: Net) => [...net.members.values()].every((m) => m.group.raw.quiesced);

test('an idle group stops heartbeating and its followers start no election; without quiescence it heartbeats on', async () => {
  // The liveness wake is not under test here (the next test has it): with 10 ms ticks, a loaded
  // machine that stalls the event loop past an election timeout would delay pings, wake a follower
  // for a leader that only seemed silent, and count its campaign as an idle group's traffic.
  const net = await cluster({ livenessMs: 60_000 });
  try {
    const leader = net.leader()!;
    await leader.group.propose(Buffer.from('a'), systemClock.monotonicMs() + 2000);
    await until('every member quiesced', 3000, () => allQuiesced(net));
    // The followers' last answers may still be on their way (each is sent after its follower's write,
    // which a loaded machine delays): they are not traffic of an idle group.
    await settled(net);
    const term = leader.group.term;
    const before = net.delivered.length;
    await sleep(10 * electionMs);
    assert.deepEqual(net.delivered.slice(before).map((m) => m.type), [], 'no group message while quiesced');
    for (const m of net.members.values()) assert.equal(m.group.raw.status().term, term, `node ${m.id} is still in term ${term}`);
    assert.equal(net.leader(), leader);

    // A proposal wakes the group and commits at once.
    const t0 = Date.now();
    const r = await leader.group.propose(Buffer.from('b'), systemClock.monotonicMs() + 2000);
    assert.equal(r.outcome, 'b');
    assert.ok(Date.now() - t0 < electionMs, `committed ${Date.now() - t0} ms after the proposal`);
    await until('quiesced again', 3000, () => allQuiesced(net));
  } finally {
    await close(net);
  }
  // Control: the same idle group with quiescence off goes on heartbeating.
  const loud = await cluster({ quiescence: false });
  try {
    await loud.leader()!.group.propose(Buffer.from('a'), systemClock.monotonicMs() + 2000);
    await sleep(3 * electionMs);
    const before = loud.delivered.length;
    await sleep(3 * electionMs);
    assert.ok(loud.delivered.slice(before).filter((m) => m.type === 'heartbeat').length > 10, 'heartbeats flow without quiescence');
    assert.ok(!allQuiesced(loud));
  } finally {
    await close(loud);
  }
});

test('a leader that dies while its group is quiesced is replaced within the election bound; without the liveness wake it is not', async () => {
  // Bound: the liveness timeout (an election timeout) plus one randomized election timeout (up to
  // two), plus slack for a loaded machine.
  const boundMs = electionMs + 2 * electionMs + 300;
  const net = await cluster();
  try {
    await net.leader()!.group.propose(Buffer.from('a'), systemClock.monotonicMs() + 2000);
    await until('every member quiesced', 3000, () => allQuiesced(net));
    const dead = net.leader()!;
    net.cut.add(dead.id);
    const took = await until('a new leader', 5000, () => net.leader() !== undefined);
    assert.ok(took <= boundMs, `a new leader after ${took} ms (bound ${boundMs} ms)`);
    const next = net.leader()!;
    assert.notEqual(next.id, dead.id);
    assert.equal((await next.group.propose(Buffer.from('c'), systemClock.monotonicMs() + 2000)).outcome, 'c');
  } finally {
    await close(net);
  }
  // Control: followers that are never woken for a silent leader (liveness longer than the test) stay
  // quiesced, and nobody replaces it.
  const deaf = await cluster({ livenessMs: 60_000 });
  try {
    await deaf.leader()!.group.propose(Buffer.from('a'), systemClock.monotonicMs() + 2000);
    await until('every member quiesced', 3000, () => allQuiesced(deaf));
    deaf.cut.add(deaf.leader()!.id);
    await sleep(boundMs + 200);
    assert.equal(deaf.leader(), undefined, 'no new leader without the liveness wake');
  } finally {
    await close(deaf);
  }
});

test('a quiesced follower still fails, at their deadline, proposals it made while it led in an earlier term', async () => {
  const net = await cluster();
  try {
    const a = net.leader()!;
    await a.group.propose(Buffer.from('a'), systemClock.monotonicMs() + 2000);
    // A, cut off, takes proposals it cannot commit; the others elect a leader whose log replaces the
    // first (its own first entry goes there) and never reaches the index of the last.
    net.cut.add(a.id);
    const startedMs = Date.now();
    const deadlineMs = systemClock.monotonicMs() + 8 * electionMs;
    for (const text of ['lost1', 'lost2']) void a.group.propose(Buffer.from(text), deadlineMs).catch(() => undefined);
    const left = a.group.propose(Buffer.from('lost3'), deadlineMs);
    let settled = false;
    const outcome = left.then(
      () => 'committed',
      (e: unknown) => (e instanceof ProposalFailedError ? e.reason : String(e)),
    );
    void outcome.finally(() => (settled = true));
    await until('a new leader', 3000, () => net.leader() !== undefined);
    net.cut.delete(a.id);
    // A follows the new leader; its entry is replaced; the idle group quiesces, A with it.
    await until('A quiesced as a follower', 5000, () => allQuiesced(net) && !a.group.isLeader());
    assert.equal(settled, Date.now() - startedMs >= 8 * electionMs, 'the proposal is still waiting only until its deadline');
    await until('the leftover proposal settled', startedMs + 8 * electionMs - Date.now() + 5 * tickMs + 300, () => settled);
    assert.equal(await outcome, 'timeout');
  } finally {
    await close(net);
  }
});

test('a leader that restarts at once, damaged, while its group is quiesced is replaced: its new incarnation wakes the followers; without it nobody elects', async () => {
  const boundMs = 3 * electionMs + 300;
  const net = await cluster();
  try {
    await net.leader()!.group.propose(Buffer.from('a'), systemClock.monotonicMs() + 2000);
    await until('every member quiesced', 3000, () => allQuiesced(net));
    const old = net.leader()!;
    const restarted = await restartDamaged(net, old.id, `n${old.id}.2`);
    assert.ok(restarted.group.raw.status().damaged !== null, 'the restarted member is damaged: it cannot campaign');
    const took = await until('a new leader', 5000, () => net.leader() !== undefined);
    assert.ok(took <= boundMs, `a new leader after ${took} ms (bound ${boundMs} ms)`);
    const next = net.leader()!;
    assert.notEqual(next.id, old.id);
    assert.equal((await next.group.propose(Buffer.from('b'), systemClock.monotonicMs() + 2000)).outcome, 'b');
    // The restarted member follows the new leader and is repaired by it.
    await until('the restarted member repaired', 3000, () => restarted.group.raw.status().damaged === null);
  } finally {
    await close(net);
  }
  // Control: pings that name no incarnation keep the restarted node live in its followers' eyes; the
  // followers stay quiesced behind a leader that no longer leads, and nobody elects.
  const blind = await cluster({ incarnations: false });
  try {
    await blind.leader()!.group.propose(Buffer.from('a'), systemClock.monotonicMs() + 2000);
    await until('every member quiesced', 3000, () => allQuiesced(blind));
    await restartDamaged(blind, blind.leader()!.id, '');
    await sleep(boundMs + 200);
    assert.equal(blind.leader(), undefined, 'no new leader without the restart seen');
  } finally {
    await close(blind);
  }
});
