// Goal: timelines keep one dense, ordered offset sequence per partition across storages: a switch
// under concurrent appends loses, duplicates and reorders nothing; a batch applied after its log was
// sealed waits for the switch's commit and lands in the new timeline; reads cross from the old
// timeline to the new one; bounds span timelines; a new log starts at its timeline's first offset,
// also after a crash; waiting readers wake on a switch. Also the replicated rules of storages and
// timelines in the state machine.
// Method: the router over the partition groups of one node (PartitionReplicas on MemoryKv, one per
// storage), the TimelineSwitcher, and a real state machine whose applied commands reach the router as
// main.ts passes them.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { toOffset } from '../core/offset.js';
import { MemoryKv } from '../log/index.js';
import { gate, ManualClock } from '../log/test-support.js';
import { MetadataStateMachine } from '../metadata/state-machine.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { timelinesOf } from '../metadata/timelines.js';
import type { TimelineRecord } from '../metadata/types.js';
import { PartitionReplicas } from './partition-replicas.js';
import { RaftNodeHost, systemTicks } from './raft-host/node-host.js';
import { StorageRouter } from './storage-router.js';
import { TimelineSwitcher } from './timeline-switch.js';
import { storedEventType } from '../testing/metadata-fixtures.js';

const et = (name: string) => storedEventType(name);
const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });
let ids = 0;

/**
 * The setups a test has not closed: a failed assertion skips its test's close, and the hosts' tick
 * timers then kept the file's process alive for good (the full suite hung on it under load).
 */
const open = new Set<() => Promise<void>>();
afterEach(async () => {
  for (const close of open) await close();
  open.clear();
});

async function setup(partitions = 2) {
  const manual = new ManualClock();
  // Append times follow the manual clock (retention); waits and deadlines the real one.
  const clock = { nowMs: () => manual.now, monotonicMs: () => performance.now() };
  const sm = new MetadataStateMachine();
  const kvs = new Map<string, MemoryKv>([['default', new MemoryKv()], ['second', new MemoryKv()]]);
  /** Set to leave the timeline start out of the placement, as versions before did (a later base sets it). */
  const opts = { startless: false };
  const placement = (topic: number, partition: number) => {
    const rec = [...sm.eventTypes()].find((r) => timelinesOf(r).some((t) => t.topic === topic));
    if (rec === undefined) return undefined;
    const start = opts.startless ? 0 : (timelinesOf(rec).find((t) => t.topic === topic)!.starts[partition] ?? 0);
    return { group: 1000 + topic * 16 + partition, replicas: [1], start };
  };
  const hosts: RaftNodeHost[] = [];
  const openReplicas = (kv: MemoryKv, own?: RaftNodeHost[]) => {
    const host = new RaftNodeHost({ self: 1, kv, tickMs: 20, clock, ticks: systemTicks, logger, onFatal: (err) => assert.fail(String(err)) });
    (own ?? hosts).push(host);
    const replicas = new PartitionReplicas({
      self: 1, kv, host, placement, clock, logger, electionTicks: 10, heartbeatTicks: 1, appendTimeoutMs: 3000,
      random: { next: () => 0.5, int: () => 0, uuid: () => `request-${ids++}` },
    });
    host.start(undefined);
    return replicas;
  };
  const main = openReplicas(kvs.get('default')!);
  const opened: string[] = [];
  const stores = new Map<string, PartitionReplicas>([['default', main]]);
  let router!: StorageRouter;
  let switcher: TimelineSwitcher | undefined;
  router = new StorageRouter(
    main,
    (topic) => [...sm.eventTypes()].find((r) => r.storage.topic === topic),
    async (id) => {
      opened.push(id);
      const own: RaftNodeHost[] = [];
      const store = openReplicas(kvs.get(id)!, own);
      stores.set(id, store);
      return { store, close: async () => { await store.close(); await own[0]!.close(); } };
    },
    { switchWaitMs: 3000, stuckAfterMs: 1000, onSwitchStuck: (t, tl) => switcher?.finishStuck(t, tl), monotonicMs: clock.monotonicMs },
  );
  /** Applies a command as the metadata group would on this node, and tells the router as main.ts does. */
  const apply = (cmd: MetadataCommand) => {
    const r = sm.apply(sm.appliedIndex + 1, cmd);
    if (r.ok && (cmd.op === 'timeline.commit' || cmd.op === 'timeline.create')) router.timelineChanged(sm.eventType(cmd.eventType)!.storage.topic);
    return r;
  };
  /** Holds timeline.commit until it is opened (a switcher that is slow between its seals and its commit). */
  const hooks: { beforeCommit?: Promise<void> } = {};
  switcher = new TimelineSwitcher({
    state: () => sm,
    propose: async (cmd) => {
      if (cmd.op === 'timeline.commit' && hooks.beforeCommit !== undefined) await hooks.beforeCommit;
      return apply(cmd);
    },
    seal: (t, p, to, deadlineMs) => router.sealLog(t, p, to, deadlineMs),
    clock,
    logger,
    sealTimeoutMs: 3000,
    staleAfterMs: 1000,
  });
  apply({ op: 'event_type.create', eventType: et('orders'), partitionCount: partitions });
  apply({ op: 'storage.create', storage: { id: 'second', storage_type: 'broker', broker_configuration: {} } });
  const topic = sm.eventType('orders')!.storage.topic;
  const append = (p: number, texts: string[]) => router.append([{ topic, partition: p, events: texts.map((t) => Buffer.from(t)) }]);
  const switchTo = (storage: string): Promise<TimelineRecord> => switcher!.switchTo('orders', `tl-${storage}-${sm.appliedIndex}`, storage, undefined);
  const readAll = async (p: number, after = -1) => {
    const out: string[] = [];
    let pos = after;
    for (;;) {
      const evs = await router.read(topic, p, toOffset(pos), 3, 1_000_000);
      if (evs.length === 0) break;
      for (const e of evs) {
        assert.equal(e.offset, pos + 1, 'dense offsets across timelines');
        out.push(e.bytes.toString());
        pos = e.offset;
      }
    }
    return out;
  };
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await router.close();
      await main.close();
      for (const h of hosts) await h.close();
    })());
  open.add(close);
  return { sm, apply, router, topic, append, switchTo, switcher, readAll, kvs, main, stores, opened, manual, hooks, opts, openReplicas, close, clock };
}

test('a switch continues the offsets; reads cross timelines; bounds span them', async () => {
  const s = await setup();
  await s.append(0, ['a0', 'a1', 'a2']);
  await s.append(1, ['b0']);
  const t = await s.switchTo('second');
  assert.deepEqual(t.starts, [3, 1]);
  assert.equal(t.order, 2);
  await s.append(0, ['a3', 'a4']);
  assert.deepEqual(s.opened, ['second']);
  assert.deepEqual(await s.readAll(0), ['a0', 'a1', 'a2', 'a3', 'a4']);
  assert.deepEqual(await s.readAll(0, 2), ['a3', 'a4'], 'after the last offset of the old timeline, the new one');
  assert.deepEqual(await s.readAll(0, 1), ['a2', 'a3', 'a4']);
  assert.deepEqual(s.router.bounds(s.topic, 0), { oldest: 0, newest: 4 });
  assert.deepEqual(s.router.bounds(s.topic, 1), { oldest: 0, newest: 0 }, 'nothing written on the new timeline yet');
  assert.deepEqual(s.main.bounds(s.topic, 0), { oldest: 0, newest: 2 }, 'the old log is closed at the switch');
  assert.equal(s.main.replica(s.topic, 0)!.sealed, t.id, 'sealed for the new timeline');
  // A third timeline back on the default storage, in a new log.
  await s.switchTo('default');
  await s.append(1, ['b1']);
  assert.deepEqual(await s.readAll(1), ['b0', 'b1']);
  assert.equal(s.sm.eventType('orders')!.storage.timelines!.length, 3);
  await s.close();
});

test('a switch under concurrent appends loses, repeats and reorders nothing', async () => {
  const s = await setup(1);
  let n = 0;
  let stop = false;
  const acked: string[][] = [];
  const writers = Array.from({ length: 4 }, async () => {
    while (!stop) {
      const batch = [`e${n++}`, `e${n++}`];
      const r = await s.append(0, batch);
      assert.ok(r.every((x) => x.ok), JSON.stringify(r));
      acked.push(batch);
      await new Promise((res) => setImmediate(res));
    }
  });
  // Each timeline takes batches before the next switch: wait for acknowledgements, not a fixed time
  // (under load 50 ms could pass with none). Four writers have at most four batches in flight at a
  // switch, so of eight more acknowledged at least four were sent after it.
  const batchesMore = (k: number) => {
    const want = acked.length + k;
    return until(`${k} more acknowledged batches`, () => acked.length >= want, 30_000);
  };
  await batchesMore(8);
  await s.switchTo('second');
  await batchesMore(8);
  await s.switchTo('default');
  await batchesMore(8);
  stop = true;
  await Promise.all(writers);
  const all = await s.readAll(0);
  assert.equal(all.length, n, 'every acknowledged event is readable');
  assert.equal(new Set(all).size, n, 'no duplicates');
  for (const batch of acked) assert.equal(all.indexOf(batch[1]!), all.indexOf(batch[0]!) + 1, 'a batch stays whole and in order');
  const tls = s.sm.eventType('orders')!.storage.timelines!;
  assert.ok(tls[1]!.starts[0]! > 0 && tls[2]!.starts[0]! > tls[1]!.starts[0]!, 'events were written on each timeline');
  await s.close();
});

test('a batch that reaches a sealed log is not stored there: it waits for the commit and lands first in the new timeline', async () => {
  const s = await setup(1);
  await s.append(0, ['h0', 'h1', 'h2']);
  const commit = gate();
  s.hooks.beforeCommit = commit.promise;
  const switching = s.switchTo('second');
  // The log is sealed once the switch reaches its commit.
  await until('the seal', () => s.main.replica(s.topic, 0)!.sealed !== undefined);
  let done = false;
  const waiting = s.append(0, ['h3']).then((r) => ((done = true), r));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(done, false, 'the batch waits for the switch');
  assert.deepEqual(s.main.bounds(s.topic, 0), { oldest: 0, newest: 2 }, 'the sealed log took nothing');
  commit.open();
  const t = await switching;
  assert.deepEqual(await waiting, [{ ok: true, first: 3, last: 3 }]);
  assert.deepEqual(t.starts, [3]);
  assert.deepEqual(await s.readAll(0), ['h0', 'h1', 'h2', 'h3']);
  assert.deepEqual(s.stores.get('second')!.bounds(t.topic, 0), { oldest: 3, newest: 3 });
  await s.close();
});

test('a switch whose node stopped after the seals is finished by a node whose batch waited on a sealed log', async () => {
  const s = await setup(1);
  await s.append(0, ['k0']);
  // Another node's switcher seals, then stops for good before its commit.
  const stopped = new TimelineSwitcher({
    state: () => s.sm,
    propose: (cmd) => (cmd.op === 'timeline.commit' ? new Promise(() => {}) : Promise.resolve(s.apply(cmd))),
    seal: (t, p, to, deadlineMs) => s.router.sealLog(t, p, to, deadlineMs),
    clock: s.clock,
    logger,
    sealTimeoutMs: 3000,
    staleAfterMs: 1000,
  });
  void stopped.switchTo('orders', 'tl-stuck', 'second', undefined);
  await until('the seal', () => s.main.replica(s.topic, 0)!.sealed !== undefined);
  const started = performance.now();
  // The waiting batch reports the switch stuck after 1 s; this node's switcher finishes it.
  const [r] = await s.append(0, ['k1']);
  assert.deepEqual(r, { ok: true, first: 1, last: 1 });
  assert.ok(performance.now() - started >= 900, 'it waited for the stuck report first');
  assert.equal(s.sm.eventType('orders')!.storage.pendingTimeline, undefined);
  assert.equal(s.sm.eventType('orders')!.storage.timelines![1]!.id, 'tl-stuck');
  assert.deepEqual(await s.readAll(0), ['k0', 'k1']);
  await s.close();
});

test('the metadata leader finishes a switch left pending before any log was sealed', async () => {
  const s = await setup(2);
  await s.append(1, ['m0']);
  assert.ok(s.apply({ op: 'timeline.prepare', eventType: 'orders', id: 'tl-left', storage_id: 'second', at: 't' }).ok);
  s.switcher.finishPending();
  assert.ok(s.sm.eventType('orders')!.storage.pendingTimeline !== undefined, 'not before it is stale');
  await new Promise((r) => setTimeout(r, 1050));
  s.switcher.finishPending();
  await until('the commit', () => s.sm.eventType('orders')!.storage.pendingTimeline === undefined);
  assert.deepEqual(s.sm.eventType('orders')!.storage.timelines![1]!.starts, [0, 1]);
  await s.close();
});

test('a reader at the newest event of the old timeline gets nothing before the new log has opened, not an error', async () => {
  const s = await setup(1);
  await s.append(0, ['q0', 'q1']);
  await s.router.ensureStorage('second');
  // The switch applied (as on a node that applies it) before this node's replica of the new log opened.
  assert.ok(s.apply({ op: 'timeline.prepare', eventType: 'orders', id: 'tl-x', storage_id: 'second', at: 't' }).ok);
  assert.ok(s.apply({ op: 'timeline.commit', eventType: 'orders', id: 'tl-x', starts: [2], at: 't' }).ok);
  assert.deepEqual(s.router.bounds(s.topic, 0), { oldest: 0, newest: 1 });
  assert.deepEqual(await s.router.read(s.topic, 0, toOffset(1), 10, 1_000_000), []);
  assert.deepEqual(await s.readAll(0), ['q0', 'q1']);
  await s.append(0, ['q2']);
  assert.deepEqual(await s.readAll(0, 1), ['q2']);
  await s.close();
});

test('a reader waiting on the old timeline wakes at the switch and continues on the new one', async () => {
  const s = await setup(1);
  await s.append(0, ['x0']);
  const ac = new AbortController();
  let woke = false;
  const waiting = s.router.waitForEvents(s.topic, 0, toOffset(0), ac.signal).then(() => (woke = true));
  await s.switchTo('second');
  await waiting;
  assert.ok(woke);
  await s.append(0, ['x1']);
  assert.deepEqual(await s.readAll(0, 0), ['x1']);
  ac.abort();
  await s.close();
});

test('a new log starts at its timeline\'s first offset, also after a crash; a log opened without it (older versions) gets a base before its first batch', async () => {
  const s = await setup(2);
  await s.append(0, ['y0', 'y1']);
  await s.append(1, ['z0']);
  const t = await s.switchTo('second');
  await s.append(0, ['y2']);
  await s.stores.get('second')!.ensure(t.topic, 1);
  // Every unsynced write of the second storage is lost; its groups open again from their durable log.
  await s.router.close();
  const reopened = s.openReplicas(s.kvs.get('second')!.crash());
  await reopened.ensure(t.topic, 0);
  await reopened.ensure(t.topic, 1);
  assert.deepEqual(reopened.bounds(t.topic, 0), { oldest: 2, newest: 2 });
  assert.deepEqual(reopened.bounds(t.topic, 1), { oldest: 1, newest: 0 });
  await reopened.close();
  // A log of a later timeline opened without its start, as the version before did: the router bases it.
  const r = await setup(1);
  await r.append(0, ['w0', 'w1', 'w2']);
  r.opts.startless = true;
  await r.switchTo('second');
  await r.append(0, ['w3']);
  assert.deepEqual(await r.readAll(0), ['w0', 'w1', 'w2', 'w3']);
  await r.close();
  await s.close();
});

test('retention and deletion reach every timeline', async () => {
  const s = await setup(1);
  await s.append(0, ['r0', 'r1']);
  await s.switchTo('second');
  s.manual.now += 10_000;
  await s.append(0, ['r2']);
  const removed = await s.router.applyRetention(s.topic, 0, s.manual.now - 1);
  assert.equal(removed, 2, 'the old timeline was cleaned, the new event kept');
  assert.deepEqual(s.router.bounds(s.topic, 0), { oldest: 2, newest: 2 });
  assert.deepEqual(await s.readAll(0, 1), ['r2']);
  const r = s.apply({ op: 'event_type.delete', name: 'orders' });
  assert.ok(r.ok && r.droppedLogs?.length === 2);
  await s.router.dropLogs(r.ok ? r.droppedLogs! : []);
  const t = (r.ok ? r.droppedLogs! : [])[1]!;
  const second = await s.router.ensureStorage('second');
  assert.deepEqual(second.topics().includes(t.topic), false);
  await s.close();
});

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('state machine: storages are unique, in use cannot be deleted, the default one is built in; timelines never go back', () => {
  const sm = new MetadataStateMachine();
  const apply = (cmd: Parameters<MetadataStateMachine['apply']>[1]) => sm.apply(sm.appliedIndex + 1, cmd);
  const storage = (id: string) => ({ id, storage_type: 'broker' as const, broker_configuration: {} });
  assert.ok(apply({ op: 'storage.create', storage: storage('s1') }).ok);
  assert.deepEqual(apply({ op: 'storage.create', storage: storage('s1') }).ok, false);
  assert.deepEqual(apply({ op: 'storage.create', storage: storage('default') }).ok, false);
  apply({ op: 'event_type.create', eventType: et('a'), partitionCount: 2 });
  assert.equal(apply({ op: 'timeline.create', eventType: 'a', id: 't', storage_id: 'nope', starts: [0, 0], at: 't' }).ok, false);
  assert.equal(apply({ op: 'timeline.create', eventType: 'a', id: 't', storage_id: 's1', starts: [0], at: 't' }).ok, false, 'a start per partition');
  const r = apply({ op: 'timeline.create', eventType: 'a', id: 't2', storage_id: 's1', starts: [4, 0], at: 't' });
  assert.ok(r.ok);
  assert.deepEqual(sm.eventType('a')!.storage.timelines!.map((t) => [t.order, t.storage_id, t.starts]), [[1, 'default', [0, 0]], [2, 's1', [4, 0]]]);
  assert.equal(sm.eventType('a')!.storage.timeline, 2);
  const back = apply({ op: 'timeline.create', eventType: 'a', id: 't3', storage_id: 'default', starts: [3, 0], at: 't' });
  assert.deepEqual([back.ok, back.ok ? '' : back.reason], [false, 'conflict']);
  const inUse = apply({ op: 'storage.delete', id: 's1' });
  assert.deepEqual([inUse.ok, inUse.ok ? '' : inUse.reason], [false, 'in_use']);
  assert.deepEqual(apply({ op: 'storage.delete', id: 'default' }).ok, false);
  apply({ op: 'storage.create', storage: storage('s2') });
  assert.ok(apply({ op: 'storage.delete', id: 's2' }).ok);
  const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
  assert.deepEqual([...restored.storages()].map((s) => s.id), ['s1']);
  assert.deepEqual(restored.eventType('a')!.storage.timelines, sm.eventType('a')!.storage.timelines);
});
