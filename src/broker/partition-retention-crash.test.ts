/**
 * Goal: a crash in the middle of retention never leaves a replica that refuses to read its own log.
 * Retention removes the oldest batches' index rows and entries in one write, and the replica's new
 * oldest offset goes with its applied state in a later write (the node's next one, which keeps the
 * applied index atomic with the offset index rows). A power loss after a durable write that covered
 * the removal but before the one carrying the new oldest offset left a replica whose stored oldest
 * offset named rows that were gone: every read from it failed as a corrupt batch ("offsets missing"),
 * for good (host simulation, seed 9 once the simulation applied retention).
 * Method: a single node on a MemoryKv; the removal's write is made durable on its own (as a durable
 * write of another group right after it would), then the node loses every unsynced write; the
 * replica opened again must read from the retained start, and the snapshot it would send a follower
 * must say where its log starts now (the one stored before the crash named removed entries, and a
 * follower sent it asked for them again and again: seed 292).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import type { Offset } from '../core/offset.js';
import { MemoryKv } from '../log/index.js';
import { decodeImage } from './partition-replica.js';
import { PartitionReplicas } from './partition-replicas.js';
import { RaftNodeHost, type TickSource } from './raft-host/node-host.js';

const logger = pino({ level: 'silent' });
let ids = 0;

function manualTicks(): TickSource {
  return { every: () => () => undefined };
}

async function node(kv: MemoryKv, clock: { t: number }) {
  const c = { nowMs: () => 1_700_000_000_000 + clock.t, monotonicMs: () => clock.t };
  const host = new RaftNodeHost({ self: 1, kv, tickMs: 100, clock: c, ticks: manualTicks(), logger, onFatal: (err) => { throw err; } });
  const replicas = new PartitionReplicas({
    self: 1,
    kv,
    host,
    placement: (topic, partition) => ({ group: 1000 + topic * 16 + partition, replicas: [1], start: 0 }),
    clock: c,
    random: { next: () => 0.5, int: (n: number) => Math.floor(n / 2), uuid: () => `request-${ids++}` },
    logger,
    electionTicks: 10,
    heartbeatTicks: 1,
    appendTimeoutMs: 5000,
  });
  host.start(undefined);
  return { host, replicas };
}

test('a crash after retention\'s removal was made durable, before the new oldest offset was written, reads from the retained start', async () => {
  const kv = new MemoryKv();
  const clock = { t: 0 };
  const n = await node(kv, clock);
  for (let i = 0; i < 20; i++) {
    clock.t = i;
    const [r] = await n.replicas.append([{ topic: 7, partition: 0, events: [Buffer.from(`{"n":${i}}`)] }]);
    assert.ok(r?.ok);
  }
  // The removal (the write deleting index rows) is fsynced at once; every later write is not.
  const write = kv.write.bind(kv);
  kv.write = (fill, opts) => {
    // MemoryKv reads `durable` when the write runs, after filling it.
    const o = { durable: opts.durable };
    return write((b) => fill({ put: (k, v) => b.put(k, v), del: (k) => b.del(k), delRange: (s, e) => ((o.durable = true), b.delRange(s, e)) }), o);
  };
  assert.equal(await n.replicas.applyRetention(7, 0, 1_700_000_000_000 + 10), 10);
  assert.deepEqual(n.replicas.bounds(7, 0), { oldest: 10, newest: 19 });
  await n.host.close();
  const m = await node(kv.crash(), clock);
  await m.replicas.ensure(7, 0);
  const { oldest, newest } = m.replicas.bounds(7, 0);
  assert.equal(newest, 19);
  assert.ok(oldest <= 10, `oldest ${oldest}: the events from 10 on are all held`);
  const got = await m.replicas.read(7, 0, (oldest - 1) as Offset, 100, 1 << 20);
  assert.deepEqual(got.map((e) => e.offset), Array.from({ length: 20 - oldest }, (_, k) => oldest + k));
  assert.deepEqual(got.map((e) => (JSON.parse(e.bytes.toString()) as { n: number }).n), Array.from({ length: 20 - oldest }, (_, k) => oldest + k));
  // The snapshot a follower would be sent says where the log starts now, not where it started before
  // retention (a follower told the old start asks for removed entries again and again: seed 292).
  const r = m.replicas.replica(7, 0)!;
  const [first] = await r.logStart();
  const stored = () => decodeImage(r.group.store.storage.snapshot().data).start?.[0];
  for (let i = 0; i < 100 && stored() !== first; i++) await new Promise((res) => setTimeout(res, 5));
  assert.equal(stored(), first, 'the stored snapshot names where the log starts');
  await m.replicas.close();
  await m.host.close();
});
