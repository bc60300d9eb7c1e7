// Goal: a timeline switch on a three-node cluster, begun on any node while producers publish through
// every node, loses, duplicates and reorders nothing: offsets stay dense across the boundary, every
// acknowledged batch is read exactly once at the offsets it was acknowledged with, on every node, and a
// reader following the log crosses into the new timeline; a switch whose node stops between its seals
// and its commit is finished by the others.
// Method: three nodes in one process running the broker's code (RaftNodeHost, PartitionReplicas per
// storage, StorageRouter, TimelineSwitcher) over in-memory KVs and network. Metadata is one command
// log that each node applies on its own, after a random delay (as followers of the metadata group
// lag), so nodes route by different views of the current timeline for a while. The producers publish
// until told to stop, so a wait that hangs ends the test (a watchdog, a bound on the batches published,
// a follower whose waits do not wait) with every node's state, rather than letting them fill memory.
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Offset } from '../core/offset.js';
import { MemoryKv } from '../log/index.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { MetadataStateMachine, type ApplyResult } from '../metadata/state-machine.js';
import { timelinesOf } from '../metadata/timelines.js';
import type { NodeId } from '../raft/index.js';
import type { GroupHandler } from '../transport/index.js';
import { storedEventType } from '../testing/metadata-fixtures.js';
import { PartitionReplicas, type AppendForwarder } from './partition-replicas.js';
import { RaftNodeHost, systemTicks } from './raft-host/node-host.js';
import { StorageRouter } from './storage-router.js';
import { TimelineSwitcher } from './timeline-switch.js';

const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
const random = { next: () => Math.random(), int: (n: number) => Math.floor(Math.random() * n), uuid: () => randomUUID() };
const ids: NodeId[] = [1, 2, 3];

interface Node {
  id: NodeId;
  sm: MetadataStateMachine;
  router: StorageRouter;
  switcher: TimelineSwitcher;
  handlers: Map<number, GroupHandler>;
  stores: Map<string, PartitionReplicas>;
  hosts: RaftNodeHost[];
}

async function cluster(opts: { stuckAfterMs?: number } = {}) {
  const nodes = new Map<NodeId, Node>();
  /** The metadata log; each node applies it in order, each command after a random delay. */
  const log: MetadataCommand[] = [];
  const results: ApplyResult[] = [];
  const leader = new MetadataStateMachine();
  const appliedWaiters = new Map<NodeId, Map<number, () => void>>();
  /** Nodes whose timeline.commit never gets proposed (a switcher that stops before its commit). */
  const hold = { commitFrom: new Set<NodeId>() };

  const forwarder = (self: NodeId): AppendForwarder => {
    const to = (n: NodeId, group: number) => nodes.get(n)!.handlers.get(group);
    return {
      forwardAppend: async (n, req) => to(n, req.group)?.append?.(self, req) ?? { status: 'notLeader', leaderHint: 0, epoch: 0 },
      forwardControl: async (n, req) => to(n, req.group)?.control?.(self, req) ?? { status: 'notLeader', leaderHint: 0, epoch: 0 },
      bounds: async (n, req) => {
        const h = to(n, req.group);
        if (h?.bounds === undefined) throw new Error('unreachable');
        return h.bounds(self, req);
      },
    };
  };

  for (const id of ids) {
    const sm = new MetadataStateMachine();
    const handlers = new Map<number, GroupHandler>();
    const stores = new Map<string, PartitionReplicas>();
    const hosts: RaftNodeHost[] = [];
    const placement = (topic: number, partition: number) => {
      const rec = [...sm.eventTypes()].find((r) => timelinesOf(r).some((t) => t.topic === topic));
      if (rec === undefined) return undefined;
      return { group: 100 + topic * 8 + partition, replicas: ids, start: timelinesOf(rec).find((t) => t.topic === topic)!.starts[partition] ?? 0 };
    };
    const open = (kv: MemoryKv) => {
      const host = new RaftNodeHost({ self: id, kv, tickMs: 10, clock, ticks: systemTicks, logger: logger.child({ node: id }), onFatal: (err) => assert.fail(String(err)) });
      hosts.push(host);
      const replicas = new PartitionReplicas({
        self: id, kv, host, placement, clock, random, logger: logger.child({ node: id }), electionTicks: 10, heartbeatTicks: 1, appendTimeoutMs: 5000,
        groups: { register: (g, h) => handlers.set(g, h), unregister: (g) => handlers.delete(g) },
      });
      replicas.setForwarder(forwarder(id));
      host.start({
        send: (groups) => {
          for (const { group, messages } of groups) for (const m of messages) setImmediate(() => nodes.get(m.to)?.handlers.get(group)?.receive(m));
        },
      });
      return replicas;
    };
    const main = open(new MemoryKv());
    stores.set('default', main);
    let switcher: TimelineSwitcher | undefined;
    const router = new StorageRouter(
      main,
      (topic) => [...sm.eventTypes()].find((r) => r.storage.topic === topic),
      async (sid) => {
        const s = open(new MemoryKv());
        stores.set(sid, s);
        return { store: s, close: () => s.close() };
      },
      { switchWaitMs: 8000, stuckAfterMs: opts.stuckAfterMs ?? 2000, onSwitchStuck: (t, tl) => switcher?.finishStuck(t, tl), monotonicMs: clock.monotonicMs },
    );
    switcher = new TimelineSwitcher({
      state: () => sm,
      propose: async (cmd) => {
        if (cmd.op === 'timeline.commit' && hold.commitFrom.has(id)) return new Promise<ApplyResult>(() => {});
        // Decided by the "leader" (one order for everyone), answered once this node applied it.
        const index = log.length + 1;
        log.push(cmd);
        results.push(leader.apply(index, cmd));
        for (const n of nodes.values()) schedule(n);
        await new Promise<void>((resolve) => {
          if (sm.appliedIndex >= index) resolve();
          else appliedWaiters.get(id)!.set(index, resolve);
        });
        return results[index - 1]!;
      },
      seal: (t, p, to, deadlineMs) => router.sealLog(t, p, to, deadlineMs),
      clock,
      logger: logger.child({ node: id }),
      sealTimeoutMs: 5000,
      staleAfterMs: 1000,
    });
    appliedWaiters.set(id, new Map());
    nodes.set(id, { id, sm, router, switcher, handlers, stores, hosts });
  }

  /** Applies the next commands of the log on node n, each after 0 to 30 ms. */
  const applying = new Set<NodeId>();
  function schedule(n: Node): void {
    if (applying.has(n.id) || n.sm.appliedIndex >= log.length) return;
    applying.add(n.id);
    setTimeout(() => {
      applying.delete(n.id);
      const index = n.sm.appliedIndex + 1;
      const cmd = log[index - 1]!;
      const r = n.sm.apply(index, cmd);
      assert.deepEqual(r, results[index - 1], 'every node applies the log alike');
      if (r.ok && cmd.op === 'timeline.prepare') void n.router.ensureStorage(cmd.storage_id);
      if (r.ok && (cmd.op === 'timeline.commit' || cmd.op === 'event_type.create')) {
        const rec = n.sm.eventType(cmd.op === 'timeline.commit' ? cmd.eventType : cmd.eventType.name)!;
        const t = timelinesOf(rec).at(-1)!;
        void (async () => {
          const store = await n.router.ensureStorage(t.storage_id);
          for (let p = 0; p < rec.storage.partitions.length; p++) await (store as PartitionReplicas).ensure(t.topic, p);
        })();
        if (cmd.op === 'timeline.commit') n.router.timelineChanged(rec.storage.topic);
      }
      appliedWaiters.get(n.id)!.get(index)?.();
      appliedWaiters.get(n.id)!.delete(index);
      schedule(n);
    }, Math.floor(Math.random() * 30));
  }

  return {
    nodes,
    hold,
    node: (id: NodeId) => nodes.get(id)!,
    /** Proposes through node `via` (metadata commands outside a switch). */
    propose: (via: NodeId, cmd: MetadataCommand) => {
      const index = log.length + 1;
      log.push(cmd);
      results.push(leader.apply(index, cmd));
      for (const n of nodes.values()) schedule(n);
      return new Promise<void>((resolve) => {
        const n = nodes.get(via)!;
        if (n.sm.appliedIndex >= index) resolve();
        else appliedWaiters.get(via)!.set(index, resolve);
      });
    },
    /** Each node's metadata and partition replicas, for a test that gives up waiting. */
    dump(): string {
      const lines = [`metadata log: ${log.length} commands`];
      for (const n of nodes.values()) {
        const rec = n.sm.eventType('orders');
        const tls = rec === undefined ? [] : timelinesOf(rec).map((t) => `${t.id}@${t.topic}${JSON.stringify(t.starts)}`);
        lines.push(`node ${n.id}: applied ${n.sm.appliedIndex}, timelines ${tls.join(' ')}, pending ${rec?.storage.pendingTimeline?.id ?? '-'}`);
        for (const [sid, store] of n.stores) {
          for (const topic of store.topics()) {
            for (let p = 0; p < (rec?.storage.partitions.length ?? 0); p++) {
              const r = store.replica(topic, p);
              if (r === undefined) continue;
              const b = r.bounds();
              lines.push(`  ${sid} topic ${topic}/${p}: leader ${r.group.leader} term ${r.group.term}${r.group.isLeader() ? ' (self)' : ''}, sealed ${r.sealed ?? '-'}, offsets ${b.oldest}..${b.newest}`);
            }
          }
        }
      }
      return lines.join('\n');
    },
    async settled(): Promise<void> {
      await until('every node applied the metadata log', () => [...nodes.values()].every((n) => n.sm.appliedIndex === log.length));
    },
    async close() {
      for (const n of nodes.values()) {
        await n.router.close();
        for (const s of n.stores.values()) await s.close();
        for (const h of n.hosts) await h.close();
      }
    },
  };
}

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Everything node n reads of a partition through its router, checking the offsets are dense. */
async function readAll(n: Node, topic: number, p: number): Promise<{ offset: number; text: string }[]> {
  const out: { offset: number; text: string }[] = [];
  let after = -1;
  for (;;) {
    const got = await n.router.read(topic, p, after as Offset, 50, 1 << 20);
    if (got.length === 0) return out;
    for (const e of got) {
      assert.equal(e.offset, after + 1, `node ${n.id} partition ${p}: dense offsets across timelines`);
      out.push({ offset: e.offset, text: e.bytes.toString() });
      after = e.offset;
    }
  }
}

/** Batches the producers publish at most: a wait that hangs fails the test instead of filling memory. */
const maxBatches = 20_000;
/** Empty reads in a row after which the follower is taken to spin (its waits do not wait). */
const maxEmptyReads = 1000;

test('switches begun on different nodes while six producers publish through every node: nothing lost, repeated or reordered; identical logs; a follower crosses the boundaries', { timeout: 180_000 }, async () => {
  const c = await cluster();
  // Any failure of the follower or a producer, or the test running long, ends the test's waits at once
  // (with every node's state): a hang must not leave producers publishing until memory runs out.
  let failed!: (err: unknown) => void;
  const failure = new Promise<never>((_, reject) => (failed = reject));
  failure.catch(() => undefined);
  const guard = <T>(p: Promise<T>): Promise<T> => Promise.race([p, failure]);
  const watchdog = setTimeout(() => failed(new Error(`the test did not finish in 90 s\n${c.dump()}`)), 90_000);
  let stop = false;
  let following = true;
  try {
    await c.propose(1, { op: 'event_type.create', eventType: storedEventType('orders'), partitionCount: 2 });
    await c.propose(1, { op: 'storage.create', storage: { id: 'second', storage_type: 'broker', broker_configuration: {} } });
    await c.settled();
    const topic = c.node(1).sm.eventType('orders')!.storage.topic;
    await until('partition leaders', () => [0, 1].every((p) => ids.some((id) => (c.node(id).stores.get('default')!.replica(topic, p)?.group.isLeader() ?? false))));

    // A follower of partition 0 on node 3, reading as events commit.
    const followed: string[] = [];
    const follower = (async () => {
      const n = c.node(3);
      let after = -1;
      let empty = 0;
      while (following) {
        const got = await n.router.read(topic, 0, after as Offset, 20, 1 << 20);
        empty = got.length === 0 ? empty + 1 : 0;
        if (empty >= maxEmptyReads) assert.fail(`the follower read nothing ${empty} times in a row after offset ${after}: its waits do not wait\n${c.dump()}`);
        for (const e of got) {
          assert.equal(e.offset, after + 1, 'the follower reads dense offsets');
          followed.push(e.bytes.toString());
          after = e.offset;
        }
        if (got.length === 0) await n.router.waitForEvents(topic, 0, after as Offset, AbortSignal.timeout(200));
      }
    })();
    follower.catch(failed);

    const acked: { p: number; first: number; texts: string[] }[] = [];
    let seq = 0;
    const producers = Array.from({ length: 6 }, (_, k) =>
      (async () => {
        const via = c.node(ids[k % 3]!);
        while (!stop) {
          if (seq >= maxBatches) assert.fail(`the producers published ${seq} batches and the test is still waiting\n${c.dump()}`);
          const p = seq % 2;
          const texts = [`k${k}-${seq}`, `k${k}-${seq}b`];
          seq++;
          const [r] = await via.router.append([{ topic, partition: p, events: texts.map((t) => Buffer.from(t)) }]);
          assert.ok(r !== undefined && r.ok, `producer ${k} via node ${via.id}: ${r !== undefined && !r.ok ? r.error.message : ''}`);
          acked.push({ p, first: (r as unknown as { first: number }).first, texts });
        }
      })(),
    );
    for (const p of producers) p.catch(failed);
    /** Until both partitions took batches at or after these starts (on the timeline that begins there). */
    const published = (starts: number[]) => until('batches on the timeline', () => [0, 1].every((p) => acked.some((a) => a.p === p && a.first >= starts[p]!)));
    await guard(published([10, 10]));
    const t2 = await guard(c.node(2).switcher.switchTo('orders', 'tl-2', 'second', undefined));
    await guard(published(t2.starts));
    const t3 = await guard(c.node(3).switcher.switchTo('orders', 'tl-3', 'default', undefined));
    await guard(published(t3.starts));
    stop = true;
    await guard(Promise.all(producers));
    await guard(c.settled());
    assert.deepEqual([t2.order, t3.order], [2, 3]);

    for (const p of [0, 1]) {
      const lastAck = Math.max(...acked.filter((a) => a.p === p).map((a) => a.first + 1));
      await until(`every node applied partition ${p}`, () => ids.every((id) => c.node(id).router.bounds(topic, p).newest >= lastAck));
      const logs = await Promise.all(ids.map((id) => readAll(c.node(id), topic, p)));
      assert.deepEqual(logs[1], logs[0], `nodes 1 and 2 hold the same partition ${p}`);
      assert.deepEqual(logs[2], logs[0], `nodes 1 and 3 hold the same partition ${p}`);
      const at = new Map(logs[0]!.map((e) => [e.text, e.offset]));
      assert.equal(at.size, logs[0]!.length, 'no event stored twice');
      const mine = acked.filter((a) => a.p === p);
      for (const a of mine) {
        assert.equal(at.get(a.texts[0]!), a.first, `${a.texts[0]} read at the offset it was acknowledged with`);
        assert.equal(at.get(a.texts[1]!), a.first + 1);
      }
      assert.equal(logs[0]!.length, mine.length * 2, 'nothing stored that was not acknowledged');
      // Each timeline holds events of this partition, and the next starts right after the previous.
      const tls = c.node(1).sm.eventType('orders')!.storage.timelines!;
      assert.ok(tls[1]!.starts[p]! > 0 && tls[2]!.starts[p]! > tls[1]!.starts[p]!, `events on every timeline of partition ${p}`);
    }
    await guard(until('the follower read everything', () => followed.length === acked.filter((a) => a.p === 0).length * 2));
    following = false;
    await follower;
    assert.deepEqual(followed, (await readAll(c.node(1), topic, 0)).map((e) => e.text));
  } finally {
    clearTimeout(watchdog);
    stop = true;
    following = false;
    await c.close();
  }
});

test('a switch whose node stops between its seals and its commit is finished by the nodes whose batches wait on the sealed logs', { timeout: 120_000 }, async () => {
  const c = await cluster({ stuckAfterMs: 500 });
  try {
    await c.propose(1, { op: 'event_type.create', eventType: storedEventType('orders'), partitionCount: 2 });
    await c.settled();
    const topic = c.node(1).sm.eventType('orders')!.storage.topic;
    for (const id of ids) {
      const [r] = await c.node(id).router.append([{ topic, partition: id % 2, events: [Buffer.from(`before-${id}`)] }]);
      assert.ok(r?.ok);
    }
    // Node 1 prepares and seals, then never commits (it stopped).
    c.hold.commitFrom.add(1);
    void c.node(1).switcher.switchTo('orders', 'tl-orphan', 'default', undefined);
    await until('both logs sealed', () => [0, 1].every((p) => ids.every((id) => c.node(id).stores.get('default')!.replica(topic, p)?.sealed === 'tl-orphan')));
    // Node 1's own completion is stuck for good; nodes 2 and 3 finish the switch for their batches.
    const [a, b] = await Promise.all([2, 3].map((id) => c.node(id).router.append([{ topic, partition: 0, events: [Buffer.from(`after-${id}`)] }])));
    assert.ok(a![0]!.ok && b![0]!.ok, JSON.stringify([a, b]));
    await c.settled();
    const rec = c.node(2).sm.eventType('orders')!;
    assert.equal(rec.storage.pendingTimeline, undefined);
    assert.deepEqual(rec.storage.timelines!.map((t) => t.id).slice(1), ['tl-orphan']);
    assert.deepEqual(rec.storage.timelines![1]!.starts, [1, 2]);
    await until('node 3 applied both', () => c.node(3).router.bounds(topic, 0).newest === 2);
    const texts = (await readAll(c.node(3), topic, 0)).map((e) => e.text);
    assert.deepEqual(texts.slice(0, 1), ['before-2']);
    assert.deepEqual(texts.slice(1).sort(), ['after-2', 'after-3']);
  } finally {
    await c.close();
  }
});
