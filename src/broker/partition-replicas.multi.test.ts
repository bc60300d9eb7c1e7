// Goal: partition groups across three nodes in one process, through the same code the broker runs
// (RaftNodeHost, PartitionReplicas) over in-memory KVs and an in-memory network that can cut a node
// off: forwarded publishes, identical replicas, leadership handed back to the preferred leader, and a
// follower that lagged behind its leader's memory tail catching up by log shipping.
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryKv, PartitionSealedError } from '../log/index.js';
import type { Offset } from '../core/offset.js';
import type { NodeId } from '../raft/index.js';
import type { GroupHandler } from '../transport/index.js';
import { PartitionReplicas } from './partition-replicas.js';
import { RaftNodeHost, systemTicks } from './raft-host/node-host.js';

const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
let seed = 1;
const random = { next: () => ((seed = (seed * 16807) % 2147483647) / 2147483647), int: (n: number) => Math.floor(random.next() * n), uuid: () => randomUUID() };

interface SimNode {
  id: NodeId;
  host: RaftNodeHost;
  replicas: PartitionReplicas;
  handlers: Map<number, GroupHandler>;
}

/** Three nodes; `down` holds the ids cut off from everyone (messages to and from them are dropped). */
async function cluster(memoryEntries = 1024, ids: NodeId[] = [1, 2, 3]) {
  const down = new Set<NodeId>();
  const nodes = new Map<NodeId, SimNode>();
  const placement = (topic: number, partition: number) => ({ group: 100 + topic * 8 + partition, replicas: [1, 2, 3] });
  const linked = (a: NodeId, b: NodeId) => !down.has(a) && !down.has(b);
  for (const id of ids) {
    const kv = new MemoryKv();
    const handlers = new Map<number, GroupHandler>();
    const host = new RaftNodeHost({ self: id, kv, tickMs: 10, clock, ticks: systemTicks, logger: logger.child({ node: id }), onFatal: (err) => assert.fail(String(err)) });
    const replicas = new PartitionReplicas({
      self: id,
      kv,
      host,
      placement,
      clock,
      random,
      logger: logger.child({ node: id }),
      electionTicks: 10,
      heartbeatTicks: 1,
      appendTimeoutMs: 3000,
      memoryEntries,
      groups: { register: (g, h) => handlers.set(g, h), unregister: (g) => handlers.delete(g) },
    });
    replicas.setForwarder({
      forwardAppend: async (to, req) => {
        if (!linked(id, to)) return { status: 'unavailable', detail: 'unreachable' };
        const h = nodes.get(to)!.handlers.get(req.group);
        return h?.append === undefined ? { status: 'notLeader', leaderHint: 0, epoch: 0 } : h.append(id, req);
      },
      fetchLog: (to, req, signal) => {
        const h = nodes.get(to)!.handlers.get(req.group);
        if (!linked(id, to) || h?.fetchLog === undefined) throw new Error('unreachable');
        return h.fetchLog(id, req, signal ?? new AbortController().signal);
      },
      read: (to, req, signal) => {
        const h = nodes.get(to)!.handlers.get(req.group);
        if (!linked(id, to) || h?.read === undefined) throw new Error('unreachable');
        return h.read(id, req, signal ?? new AbortController().signal);
      },
      bounds: async (to, req) => {
        const h = nodes.get(to)!.handlers.get(req.group);
        if (!linked(id, to) || h?.bounds === undefined) throw new Error('unreachable');
        return h.bounds(id, req);
      },
      forwardControl: async (to, req) => {
        if (!linked(id, to)) return { status: 'unavailable', detail: 'unreachable' };
        const h = nodes.get(to)!.handlers.get(req.group);
        return h?.control === undefined ? { status: 'notLeader', leaderHint: 0, epoch: 0 } : h.control(id, req);
      },
    });
    host.start({
      send: (groups) => {
        for (const { group, messages } of groups) {
          for (const m of messages) {
            setImmediate(() => {
              if (linked(m.from, m.to)) nodes.get(m.to)?.handlers.get(group)?.receive(m);
            });
          }
        }
      },
    });
    nodes.set(id, { id, host, replicas, handlers });
  }
  return {
    nodes,
    down,
    node: (id: NodeId) => nodes.get(id)!,
    async close() {
      for (const n of nodes.values()) {
        await n.replicas.close();
        await n.host.close();
      }
    },
  };
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ev = (s: string) => Buffer.from(JSON.stringify({ s }));

async function readAll(r: PartitionReplicas, partition: number): Promise<string[]> {
  const out: string[] = [];
  let after = -1;
  for (;;) {
    const got = await r.read(1, partition, after as Offset, 500, 1 << 20);
    if (got.length === 0) return out;
    for (const e of got) out.push((JSON.parse(e.bytes.toString()) as { s: string }).s);
    after = got[got.length - 1]!.offset;
  }
}

test('three nodes: a publish on any node is forwarded to the leader, acknowledged once, and every replica holds the same log', async () => {
  const c = await cluster();
  try {
    for (const n of c.nodes.values()) await n.replicas.ensure(1, 0);
    const leader = await until('a leader', () => [...c.nodes.values()].find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
    const sent: string[] = [];
    for (let i = 0; i < 30; i++) {
      const via = c.node(((i % 3) + 1) as NodeId);
      const [r] = await via.replicas.append([{ topic: 1, partition: 0, events: [ev(`e${i}a`), ev(`e${i}b`)] }]);
      assert.ok(r !== undefined && r.ok, `publish ${i} via node ${via.id}: ${r !== undefined && !r.ok ? r.error.message : ''}`);
      assert.equal(r.first, 2 * i, 'dense offsets in acknowledgement order');
      sent.push(`e${i}a`, `e${i}b`);
    }
    await until('every replica applied everything', () => [...c.nodes.values()].every((n) => n.replicas.bounds(1, 0).newest === 59));
    for (const n of c.nodes.values()) assert.deepEqual(await readAll(n.replicas, 0), sent, `node ${n.id} (leader ${leader.id})`);
  } finally {
    await c.close();
  }
});

test('leadership goes back to the preferred leader once it is caught up', async () => {
  const c = await cluster();
  try {
    c.down.add(1);
    for (const n of c.nodes.values()) await n.replicas.ensure(1, 0);
    const other = await until('a leader among 2 and 3', () => [2, 3].map((id) => c.node(id)).find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
    const [r] = await other.replicas.append([{ topic: 1, partition: 0, events: [ev('while-1-was-away')] }]);
    assert.ok(r?.ok);
    c.down.delete(1);
    await until('node 1 caught up', () => c.node(1).replicas.bounds(1, 0).newest === 0);
    await until('a transfer to node 1', () => other.replicas.balanceLeaders() > 0 || c.node(1).replicas.replica(1, 0)!.group.isLeader());
    await until('node 1 leads', () => c.node(1).replicas.replica(1, 0)!.group.isLeader());
    assert.equal(c.node(1).replicas.balanceLeaders(), 0, 'the preferred leader keeps its leadership');
  } finally {
    await c.close();
  }
});

test('a follower that fell behind the leader\'s memory tail fetches the log it lacks and converges', async () => {
  const c = await cluster(16);
  try {
    for (const n of c.nodes.values()) await n.replicas.ensure(1, 0);
    await until('a leader', () => [...c.nodes.values()].find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
    const leader = [...c.nodes.values()].find((n) => n.replicas.replica(1, 0)!.group.isLeader())!;
    const lagging = [...c.nodes.values()].find((n) => n !== leader)!;
    c.down.add(lagging.id);
    const sent: string[] = [];
    for (let i = 0; i < 400; i++) {
      const [r] = await leader.replicas.append([{ topic: 1, partition: 0, events: [ev(`x${i}`)] }]);
      assert.ok(r?.ok, `publish ${i}`);
      sent.push(`x${i}`);
    }
    const mem = leader.replicas.replica(1, 0)!.group.store.storage;
    assert.ok(mem.firstIndex() > 16, `the leader dropped the oldest entries from memory (first in memory: ${mem.firstIndex()})`);
    c.down.delete(lagging.id);
    await until('the lagging follower converged', () => lagging.replicas.bounds(1, 0).newest === 399, 15_000);
    assert.deepEqual(await readAll(lagging.replicas, 0), sent);
  } finally {
    await c.close();
  }
});

test('a node holding no replica publishes through the leader and reads, waits and learns bounds from a replica', async () => {
  const c = await cluster(1024, [1, 2, 3, 4]);
  try {
    for (const n of c.nodes.values()) await n.replicas.ensure(1, 0);
    assert.equal(c.node(4).replicas.replica(1, 0), undefined, 'node 4 is not a replica');
    await until('a leader', () => [1, 2, 3].map((id) => c.node(id)).find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
    const four = c.node(4).replicas;
    const [r] = await four.append([{ topic: 1, partition: 0, events: [ev('a'), ev('b')] }]);
    assert.ok(r !== undefined && r.ok, 'published through node 4');
    assert.deepEqual(await readAll(four, 0), ['a', 'b']);
    // A wait on node 4 ends when another node publishes.
    const ac = new AbortController();
    const waited = four.waitForEvents(1, 0, 1 as Offset, ac.signal);
    const [r2] = await c.node(2).replicas.append([{ topic: 1, partition: 0, events: [ev('c')] }]);
    assert.ok(r2?.ok);
    await waited;
    await until('node 4 learns the new bounds', () => four.bounds(1, 0).newest === 2);
    assert.deepEqual(await readAll(four, 0), ['a', 'b', 'c']);
    // With every replica cut off, node 4 answers a retriable error, not a wrong answer.
    for (const id of [1, 2, 3]) c.down.add(id);
    await assert.rejects(four.read(1, 0, -1 as Offset, 10, 1000), /no replica could be read/);
  } finally {
    await c.close();
  }
});

test('a seal sent from any node, replica or not, is applied once through the leader: every node learns the same start, later publishes are refused as sealed everywhere', async () => {
  const c = await cluster(1024, [1, 2, 3, 4]);
  try {
    for (const n of c.nodes.values()) await n.replicas.ensure(1, 0);
    await until('a leader', () => [1, 2, 3].map((id) => c.node(id)).find((n) => n.replicas.replica(1, 0)?.group.isLeader()));
    for (let i = 0; i < 6; i++) {
      const [r] = await c.node(((i % 4) + 1) as NodeId).replicas.append([{ topic: 1, partition: 0, events: [ev(`p${i}`)] }]);
      assert.ok(r?.ok, `publish ${i}`);
    }
    // From every node at once, the leader's follower and the non-replica included.
    const starts = await Promise.all([1, 2, 3, 4].map((id) => c.node(id).replicas.control(1, 0, { kind: 'seal', timeline: 'T', floor: 0 })));
    assert.deepEqual(starts, [6, 6, 6, 6]);
    for (const id of [1, 2, 3, 4]) {
      const [r] = await c.node(id).replicas.append([{ topic: 1, partition: 0, events: [ev(`late${id}`)] }]);
      assert.ok(r !== undefined && !r.ok && r.error instanceof PartitionSealedError, `node ${id}: ${JSON.stringify(r)}`);
    }
    await until('every replica applied the seal', () => [1, 2, 3].every((id) => c.node(id).replicas.replica(1, 0)!.sealed === 'T'));
    for (const id of [1, 2, 3]) assert.deepEqual(await readAll(c.node(id).replicas, 0), ['p0', 'p1', 'p2', 'p3', 'p4', 'p5']);
    // A seal for another switch is refused on every node.
    await assert.rejects(c.node(4).replicas.control(1, 0, { kind: 'seal', timeline: 'U', floor: 0 }), /sealed for timeline T/);
  } finally {
    await c.close();
  }
});
