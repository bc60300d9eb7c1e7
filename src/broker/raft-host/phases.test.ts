/**
 * Goal: the host reports the phases of its commit path (node-host.ts HostPhase: wait, write,
 * followerAck, ackApply) with the time each took, which is what bench:cluster reads to say where the
 * latency of a publish goes (docs/benchmarks.md).
 * Method: three RaftNodeHosts with one group (MemoryKv whose durable writes take 25 ms, an in-memory
 * transport), a leader elected, then ten proposals one after the other. Every phase must be reported;
 * a write and a follower's acknowledgement (which waits for the follower's write) take the 25 ms
 * (median); the wait for a turn and the leader's wait from an acknowledgement to the apply less than one
 * write plus slack, also across an idle gap after which an acknowledgement that committed nothing
 * must not count. Removing any of the host's reports fails the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryKv, type KvBatch } from '../../log/index.js';
import type { NodeId } from '../../raft/index.js';
import { systemClock } from '../system.js';
import { RaftLogStore } from '../raft-log-store.js';
import { RaftNodeHost, systemTicks, type GroupTransport, type HostPhase } from './node-host.js';
import { RaftGroup } from './raft-group.js';

const writeMs = 25;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const groupId = 7;
const ids: NodeId[] = [1, 2, 3];

/** A KV whose durable writes take writeMs (an fsync of a slow disk). */
class SlowKv extends MemoryKv {
  override async write(fill: (b: KvBatch) => void, opts: { durable: boolean }): Promise<void> {
    if (opts.durable) await new Promise((r) => setTimeout(r, writeMs));
    return super.write(fill, opts);
  }
}

test('the host reports each phase of the commit path with the time it took', async () => {
  const phases = new Map<NodeId, { phase: HostPhase; ms: number }[]>();
  const hosts = new Map<NodeId, RaftNodeHost>();
  const groups = new Map<NodeId, RaftGroup<string>>();
  const transport = (self: NodeId): GroupTransport => ({
    send: (gs) => {
      for (const { group, messages } of gs) for (const m of messages) setImmediate(() => hosts.get(m.to)?.receive(group, m));
      void self;
    },
  });
  for (const id of ids) {
    const kv = new SlowKv();
    const store = await RaftLogStore.open(kv, groupId);
    await store.bootstrap(ids);
    const group = new RaftGroup<string>({ id: groupId, self: id, store, conf: { voters: ids, learners: [] }, applied: 3, electionTicks: 10, heartbeatTicks: 1, random: { int: (n) => Math.floor(Math.random() * n) } });
    group.setApplier({ apply: (e) => Buffer.from(e.data).toString(), applied: () => undefined, restore: () => undefined });
    phases.set(id, []);
    const host = new RaftNodeHost({
      self: id,
      kv,
      tickMs: 20,
      clock: systemClock,
      ticks: systemTicks,
      logger: pino({ level: 'silent' }),
      quiescence: false,
      onPhase: (phase, ms) => phases.get(id)!.push({ phase, ms }),
      onFatal: (err) => assert.fail(`node ${id} stopped: ${String(err)}`),
    });
    hosts.set(id, host);
    groups.set(id, group);
  }
  try {
    for (const id of ids) {
      hosts.get(id)!.start(transport(id));
      hosts.get(id)!.add(groups.get(id)! as RaftGroup<unknown>);
    }
    groups.get(1)!.raw.campaign();
    hosts.get(1)!.kick(groupId);
    const t0 = Date.now();
    while (!groups.get(1)!.isLeader()) {
      assert.ok(Date.now() - t0 < 5000, 'node 1 leads within 5 s');
      await new Promise((r) => setTimeout(r, 5));
    }
    for (const id of ids) phases.get(id)!.length = 0;
    for (let k = 0; k < 10; k++) {
      await groups.get(1)!.propose(Buffer.from(`e${k}`), systemClock.monotonicMs() + 5000);
      // An idle gap: the acknowledgement of the second follower, which commits nothing, must not be
      // counted as waiting until the next proposal is applied.
      if (k === 4) await new Promise((r) => setTimeout(r, 300));
    }
    const of = (id: NodeId, p: HostPhase) => phases.get(id)!.filter((x) => x.phase === p).map((x) => x.ms);
    const leaderWrites = of(1, 'write');
    assert.ok(leaderWrites.length >= 10, `the leader wrote each proposal (${leaderWrites.length} writes reported)`);
    assert.ok(median(leaderWrites) >= writeMs - 2, `a durable write takes the disk's ${writeMs} ms: ${leaderWrites}`);
    assert.ok(of(1, 'wait').length >= 10, 'the leader waited for a turn for each proposal');
    assert.ok(Math.max(...of(1, 'wait')) < writeMs * 2 + 50, `a proposal waits at most about a write for its turn: ${of(1, 'wait')}`);
    const acks = [...of(2, 'followerAck'), ...of(3, 'followerAck')];
    assert.ok(acks.length >= 10, `the followers acknowledged the entries (${acks.length})`);
    // The median: entries that arrive while a write for earlier ones is in flight are timed from the
    // next arrival after it (a diagnostic's approximation, not a bound on each).
    assert.ok(median(acks) >= writeMs - 2, `a follower acknowledges after its own write: ${acks}`);
    const applies = of(1, 'ackApply');
    assert.ok(applies.length >= 10, `the leader applied after the acknowledgements (${applies.length})`);
    assert.ok(Math.max(...applies) < writeMs * 2 + 50, `from an acknowledgement to the apply at most about a write: ${applies}`);
  } finally {
    for (const h of hosts.values()) await h.close();
  }
});
