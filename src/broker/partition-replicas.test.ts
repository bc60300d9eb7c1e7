import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryKv, PartitionSealedError } from '../log/index.js';
import { SealConflictError } from './partition-control.js';
import type { Offset } from '../core/offset.js';
import { PartitionReplicas } from './partition-replicas.js';
import { RaftNodeHost, type TickSource } from './raft-host/node-host.js';

const logger = pino({ level: 'silent' });

/** Ticks only when the test says so. */
function manualTicks(): TickSource & { fire(): void } {
  let fn: (() => void) | undefined;
  return { every: (_ms, f) => ((fn = f), () => (fn = undefined)), fire: () => fn?.() };
}

// Request ids come from the Random port: each append needs its own, also across restarts, or it would be
// de-duplicated as a retry of an earlier one.
let ids = 0;

async function node(kv: MemoryKv, clock = { t: 0 }, start = 0) {
  const c = { nowMs: () => 1_700_000_000_000 + clock.t, monotonicMs: () => clock.t };
  const host = new RaftNodeHost({ self: 1, kv, tickMs: 100, clock: c, ticks: manualTicks(), logger, onFatal: (err) => { throw err; } });
  const replicas = new PartitionReplicas({
    self: 1,
    kv,
    host,
    placement: (topic, partition) => ({ group: 1000 + topic * 16 + partition, replicas: [1], start }),
    clock: c,
    random: { next: () => 0.5, int: (n: number) => Math.floor(n / 2), uuid: () => `request-${ids++}` },
    logger,
    electionTicks: 10,
    heartbeatTicks: 1,
    appendTimeoutMs: 5000,
  });
  host.start(undefined);
  return { host, replicas, close: async () => { await replicas.close(); await host.close(); } };
}

const events = (from: number, n: number) => Array.from({ length: n }, (_, i) => Buffer.from(`{"n":${from + i}}`));

async function readAll(r: PartitionReplicas, after: number, maxEvents = 1000): Promise<{ offset: number; n: number }[]> {
  const out: { offset: number; n: number }[] = [];
  for (;;) {
    const got = await r.read(7, 0, after as Offset, maxEvents, 1 << 20);
    if (got.length === 0) return out;
    for (const e of got) out.push({ offset: e.offset, n: (JSON.parse(e.bytes.toString()) as { n: number }).n });
    after = got[got.length - 1]!.offset;
  }
}

test('a single node appends through its one-member groups: dense offsets, one durable write per turn, reads of any backlog', async () => {
  const kv = new MemoryKv();
  const n = await node(kv);
  let written = 0;
  // Mixed batch sizes, enough entries to push older ones out of the memory tail (read from the KV).
  for (let i = 0; i < 1400; i++) {
    const size = i < 200 ? 50 : 1 + (i % 3);
    const [res] = await n.replicas.append([{ topic: 7, partition: 0, events: events(written, size) }]);
    assert.ok(res !== undefined && res.ok, String(res !== undefined && !res.ok && res.error));
    assert.equal(res.first, written);
    assert.equal(res.last, written + size - 1);
    written += size;
  }
  assert.deepEqual(n.replicas.bounds(7, 0), { oldest: 0, newest: written - 1 });
  const all = await readAll(n.replicas, -1, 97);
  assert.equal(all.length, written);
  all.forEach((e, i) => assert.deepEqual(e, { offset: i, n: i }));
  // From the middle of a batch, from the KV part and from the memory part.
  assert.deepEqual((await n.replicas.read(7, 0, 24 as Offset, 3, 1 << 20)).map((e) => e.offset), [25, 26, 27]);
  assert.deepEqual((await n.replicas.read(7, 0, (written - 3) as Offset, 10, 1 << 20)).map((e) => e.offset), [written - 2, written - 1]);
  assert.ok(kv.stats.durableWrites <= 1400 + 5, `${kv.stats.durableWrites} durable writes for 1400 appends`);
  await n.close();
});

test('concurrent appends to many partitions share one write and one fsync per turn', async () => {
  const kv = new MemoryKv();
  const n = await node(kv);
  for (let p = 0; p < 8; p++) await n.replicas.ensure(7, p);
  const before = kv.stats.durableWrites;
  const res = await n.replicas.append(Array.from({ length: 8 }, (_, p) => ({ topic: 7, partition: p, events: events(0, 2) })));
  assert.ok(res.every((r) => r.ok));
  assert.ok(kv.stats.durableWrites - before <= 2, `${kv.stats.durableWrites - before} fsyncs for 8 partitions`);
  await n.close();
});

test('acknowledged events survive a crash that loses every unsynced write, and offsets go on after them', async () => {
  const kv = new MemoryKv();
  const n = await node(kv);
  let written = 0;
  for (let i = 0; i < 30; i++) {
    const [r] = await n.replicas.append([{ topic: 7, partition: 0, events: events(written, 3) }]);
    assert.ok(r!.ok);
    written += 3;
  }
  await n.host.close();
  const after = kv.crash();
  const m = await node(after);
  await m.replicas.ensure(7, 0);
  // The restarted one-member group applies its whole durable log as it opens (the index rows and the
  // commit index were not fsynced): everything durable is readable at once, before any election, so a
  // client that reads after a restart never misses what is stored (and never sends it again).
  assert.deepEqual(m.replicas.bounds(7, 0), { oldest: 0, newest: written - 1 });
  const all = await readAll(m.replicas, -1);
  assert.deepEqual(all.map((e) => e.n), Array.from({ length: written }, (_, i) => i));
  const [r] = await m.replicas.append([{ topic: 7, partition: 0, events: events(written, 1) }]);
  assert.ok(r !== undefined && r.ok && r.first === written);
  await m.close();
});

test('a forwarded batch retried with the same request id is stored once', async () => {
  const kv = new MemoryKv();
  const n = await node(kv);
  const r = (await n.replicas.ensure(7, 0))!;
  for (let i = 0; i < 20 && !r.group.isLeader(); i++) await new Promise((res) => setTimeout(res, 5));
  const req = { group: r.groupId, topic: 7, partition: 0, epoch: 0, requestId: 'retry-me', flowId: 'f', deadlineMs: 2000, events: events(0, 2) };
  const a = await n.replicas.appendForwarded(req);
  const b = await n.replicas.appendForwarded(req);
  assert.deepEqual(a, { status: 'committed', epoch: r.group.term, firstOffset: 0, lastOffset: 1 });
  assert.deepEqual(b, a, 'the retry is answered with the first offsets');
  assert.equal(n.replicas.bounds(7, 0).newest, 1);
  const c = await n.replicas.appendForwarded({ ...req, requestId: 'other', epoch: r.group.term + 1 });
  assert.equal(c.status, 'notLeader', 'a batch routed for another epoch is refused');
  assert.deepEqual((await readAll(n.replicas, -1)).map((e) => e.n), [0, 1]);
  await n.close();
});

test('retention removes old batches from the log and the index; reads before them are expired', async () => {
  const kv = new MemoryKv();
  const clock = { t: 0 };
  const n = await node(kv, clock);
  for (let i = 0; i < 1300; i++) {
    clock.t = i;
    const [r] = await n.replicas.append([{ topic: 7, partition: 0, events: events(i, 1) }]);
    assert.ok(r!.ok);
  }
  const removed = await n.replicas.applyRetention(7, 0, 1_700_000_000_000 + 500);
  assert.equal(removed, 500);
  assert.deepEqual(n.replicas.bounds(7, 0), { oldest: 500, newest: 1299 });
  await assert.rejects(n.replicas.read(7, 0, 10 as Offset, 1, 100), /expired|LOG_OFFSET_EXPIRED|older/i);
  const rest = await readAll(n.replicas, 499);
  assert.equal(rest.length, 800);
  assert.equal(rest[0]!.offset, 500);
  await n.close();
});

test('a seal ends a partition log: later batches fail as sealed, a retried request id keeps its offsets, the seal survives a crash', async () => {
  const kv = new MemoryKv();
  const n = await node(kv);
  const [a] = await n.replicas.append([{ topic: 7, partition: 0, events: events(0, 3) }]);
  assert.ok(a!.ok);
  const r = (await n.replicas.ensure(7, 0))!;
  const req = { group: r.groupId, topic: 7, partition: 0, epoch: r.group.term, requestId: 'before-seal', flowId: '', deadlineMs: 1000, events: events(3, 2) };
  assert.equal((await n.replicas.appendForwarded(req)).status, 'committed');
  assert.equal(await n.replicas.control(7, 0, { kind: 'seal', timeline: 'T2', floor: 0 }), 5);
  const [b] = await n.replicas.append([{ topic: 7, partition: 0, events: events(5, 1) }]);
  assert.ok(b !== undefined && !b.ok && b.error instanceof PartitionSealedError && b.error.timeline === 'T2', String(b !== undefined && !b.ok && b.error));
  assert.deepEqual(await n.replicas.appendForwarded(req), { status: 'committed', epoch: r.group.term, firstOffset: 3, lastOffset: 4 }, 'a retry of a batch stored before the seal');
  assert.deepEqual(await n.replicas.appendForwarded({ ...req, requestId: 'after-seal' }), { status: 'sealed', timeline: 'T2' });
  assert.equal(await n.replicas.control(7, 0, { kind: 'seal', timeline: 'T2', floor: 0 }), 5, 'sealing again answers the same start');
  await assert.rejects(n.replicas.control(7, 0, { kind: 'seal', timeline: 'T3', floor: 0 }), (e: unknown) => e instanceof SealConflictError && e.sealedFor === 'T2');
  assert.deepEqual(n.replicas.bounds(7, 0), { oldest: 0, newest: 4 });
  // A crash that loses every unsynced write (the applied rows): the seal is replayed from the log.
  await n.host.close();
  const m = await node(kv.crash());
  await m.replicas.ensure(7, 0);
  assert.equal(m.replicas.replica(7, 0)!.sealed, 'T2');
  const [c] = await m.replicas.append([{ topic: 7, partition: 0, events: events(5, 1) }]);
  assert.ok(c !== undefined && !c.ok && c.error instanceof PartitionSealedError);
  assert.deepEqual((await readAll(m.replicas, -1)).map((e) => e.n), [0, 1, 2, 3, 4]);
  await m.close();
});

test('a group of a later timeline starts at its timeline\'s first offset without a base; sealing it untouched answers that start', async () => {
  const n = await node(new MemoryKv(), { t: 0 }, 40);
  assert.equal(await n.replicas.control(7, 1, { kind: 'seal', timeline: 'T9', floor: 40 }), 40);
  const [a] = await n.replicas.append([{ topic: 7, partition: 0, events: events(0, 2) }]);
  assert.ok(a !== undefined && a.ok && a.first === 40 && a.last === 41, JSON.stringify(a));
  assert.deepEqual(n.replicas.bounds(7, 0), { oldest: 40, newest: 41 });
  await n.close();
});
