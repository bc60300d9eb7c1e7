// Goal (issue 10, defence in depth): a partition replica checks a snapshot from a peer whole before
// anything of it is stored, and a committed entry that is malformed stops neither the node nor its
// next start (the second test below). A malformed one (not JSON, an image applied at another index than the
// snapshot's, offsets out of order or beyond exact integers, a bad de-duplication window) is dropped
// with a log line and never reaches the core, so the node neither stops now nor at its next start; a
// snapshot a leader really sends (the image of its state at that index) is installed.
// Method: one node host with a partition group whose replicas are nodes 1 and 2 (node 2 is silent);
// `snap` messages are handed to the host as if node 2 sent them with a higher term. Logs from a pino stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { MemoryKv } from '../log/index.js';
import { encodeBatchEntry } from '../log/partition-entry.js';
import type { Offset } from '../core/offset.js';
import { makeMessage, type Message } from '../raft/index.js';
import { encodeImage } from './partition-replica.js';
import { termJumpMax } from '../transport/limits.js';
import { PartitionReplicas } from './partition-replicas.js';
import { RaftNodeHost, type TickSource } from './raft-host/node-host.js';

const group = 1007;
let ids = 0;

function manualTicks(): TickSource {
  return { every: () => () => undefined };
}

async function node(kv: MemoryKv, logger: pino.Logger, fatal: unknown[], replicas: number[] = [1, 2]) {
  const clock = { nowMs: () => 1_700_000_000_000, monotonicMs: () => Date.now() };
  const host = new RaftNodeHost({ self: 1, kv, tickMs: 100, clock, ticks: manualTicks(), logger, onFatal: (err) => void fatal.push(err) });
  const partitionReplicas = new PartitionReplicas({
    self: 1,
    kv,
    host,
    placement: (_topic, partition) => ({ group: group + partition, replicas }),
    clock,
    random: { next: () => 0.5, int: (n: number) => Math.floor(n / 2), uuid: () => `request-${ids++}` },
    logger,
    electionTicks: 10,
    heartbeatTicks: 1,
    appendTimeoutMs: 5000,
  });
  host.start({ send: () => undefined });
  await partitionReplicas.ensure(7, 0);
  return { host, replicas: partitionReplicas, close: async () => { await partitionReplicas.close(); await host.close(); } };
}

test('a malformed partition snapshot from a peer is dropped before anything is stored; a real one is installed', async () => {
  const lines: { msg: string }[] = [];
  const logger = pino({ level: 'info' }, new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as { msg: string });
      done();
    },
  }));
  const fatal: unknown[] = [];
  const kv = new MemoryKv();
  let n = await node(kv, logger, fatal);
  const snap = (term: number, index: number, data: Uint8Array): Message =>
    makeMessage({ type: 'snap', from: 2, to: 1, term, snapshot: { metadata: { index, term, confState: { voters: [1, 2], learners: [] } }, data } });
  const bad: [string, Uint8Array][] = [
    ['not JSON', Buffer.from('{"applied":')],
    ['applied at another index', encodeImage({ applied: 99, next: 10, oldest: 0, recent: [] })],
    ['oldest beyond next', encodeImage({ applied: 100, next: 10, oldest: 11, recent: [] })],
    ['an offset beyond exact integers', encodeImage({ applied: 100, next: 2 ** 53, oldest: 0, recent: [] })],
    ['a request id whose offsets are not below next', encodeImage({ applied: 100, next: 10, oldest: 0, recent: [['r', 5, 10]] })],
    ['not an object', Buffer.from('[1,2]')],
    ['a log start beyond the image', encodeImage({ applied: 100, next: 10, oldest: 0, recent: [], start: [102, 0] })],
  ];
  try {
    let term = 10;
    for (const [what, data] of bad) {
      assert.equal(n.host.receive(group, snap(++term, 100, data)), true);
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(fatal, [], what);
      assert.equal(n.replicas.bounds(7, 0)?.newest, -1, `${what}: nothing installed`);
    }
    assert.equal(lines.filter((l) => l.msg === 'dropped a malformed snapshot from a peer').length, bad.length);
    // Nothing of them was stored: the replica opens again from its disk.
    await n.close();
    n = await node(kv, logger, fatal);
    assert.equal(n.replicas.bounds(7, 0)?.newest, -1);
    // The image of a leader's state at the snapshot's index is taken. This replica holds none of the
    // log before it (no peer to fetch it from here): it reads nothing before offset 10, never a hole.
    n.host.receive(group, snap(30, 100, encodeImage({ applied: 100, next: 10, oldest: 0, recent: [['r', 0, 9]] })));
    for (let i = 0; i < 100 && n.replicas.bounds(7, 0)?.newest !== 9; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(n.replicas.bounds(7, 0), { oldest: 10, newest: 9 });
    assert.deepEqual(fatal, []);
  } finally {
    await n.close();
  }
});

test('a committed partition entry that is malformed is dropped with a log line: it assigns no offsets, and stops neither the node nor its next start', async () => {
  const lines: { msg: string }[] = [];
  const logger = pino({ level: 'info' }, new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as { msg: string });
      done();
    },
  }));
  const fatal: unknown[] = [];
  const kv = new MemoryKv();
  let n = await node(kv, logger, fatal, [1]);
  const ev = (s: string) => [Buffer.from(`{"n":"${s}"}`)];
  const read = async () => (await n.replicas.read(7, 0, -1 as Offset, 10, 1 << 20)).map((e) => [e.offset, e.bytes.toString()]);
  try {
    // A group of one leads itself; what it proposes is committed and applied at once.
    for (let i = 0; i < 50 && !n.replicas.replica(7, 0)?.group.isLeader(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(await n.replicas.append([{ topic: 7, partition: 0, events: ev('before') }]), [{ ok: true, first: 0, last: 0 }]);
    // A buggy leader's entries: bytes that are no partition entry, and a batch entry cut short.
    const g = n.replicas.replica(7, 0)!.group;
    await g.propose(Buffer.from('not a partition entry'), Date.now() + 5000);
    await g.propose(encodeBatchEntry(1, 'r', ev('cut')).subarray(0, 20), Date.now() + 5000);
    assert.deepEqual(fatal, [], 'the node goes on');
    assert.equal(lines.filter((l) => l.msg === 'dropped a malformed committed partition entry (it assigns no offsets)').length, 2);
    assert.deepEqual(await n.replicas.append([{ topic: 7, partition: 0, events: ev('after') }]), [{ ok: true, first: 1, last: 1 }], 'offsets go on as if they were not there');
    assert.deepEqual(await read(), [[0, '{"n":"before"}'], [1, '{"n":"after"}']]);
    // The entries stay in the log: the next start replays them the same way.
    await n.close();
    n = await node(kv, logger, fatal, [1]);
    assert.deepEqual(await read(), [[0, '{"n":"before"}'], [1, '{"n":"after"}']]);
    assert.deepEqual(fatal, []);
  } finally {
    await n.close();
  }
});

test('a message whose term is more than 2^32 ahead of a partition group\'s is dropped with a log line; a nearer one is taken', async () => {
  const lines: { msg: string }[] = [];
  const logger = pino({ level: 'info' }, new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as { msg: string });
      done();
    },
  }));
  const fatal: unknown[] = [];
  const n = await node(new MemoryKv(), logger, fatal);
  try {
    const g = n.replicas.replica(7, 0)!.group;
    const before = g.term;
    n.host.receive(group, makeMessage({ type: 'heartbeat', from: 2, to: 1, term: before + termJumpMax + 1 }));
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(g.term, before, 'not taken');
    assert.ok(lines.some((l) => l.msg === 'dropped a message whose term is implausibly far ahead'));
    n.host.receive(group, makeMessage({ type: 'heartbeat', from: 2, to: 1, term: before + 5 }));
    for (let i = 0; i < 100 && g.term !== before + 5; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(g.term, before + 5, 'a term a few elections ahead is taken');
    assert.deepEqual(fatal, []);
  } finally {
    await n.close();
  }
});
