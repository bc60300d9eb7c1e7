// Goal: the operator's lever for a partition whose only replica is damaged (docs/replication.md,
// "Accepting the loss of a sole replica"). The rule (loss-acceptance.ts) allows it only for a damaged,
// open, sole replica on this node; the action makes that replica lead again at a term above every
// term its node could have used (its term ceiling), keeping every event it holds in order, and the
// partition takes writes again; the acceptance is recorded (GET /cluster's accepted_losses).
// Method: the rule as a table; then one node (PartitionReplicas on a RaftNodeHost over MemoryKv with a
// NodeDisk and MemoryCell, testing/one-node-replicas.ts) whose write-ahead-log tail is lost (the KV
// rolled back to an earlier durable image): the partition of one replica opens damaged, takes no
// write, the service accepts its loss, and it is written and read again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryCell, MemoryKv } from '../log/index.js';
import { Problem } from '../core/problem.js';
import type { PlacedPartition } from '../metadata/placement-of.js';
import { lossAcceptance, type LossFacts } from './loss-acceptance.js';
import { LossService } from './loss-service.js';
import { MetadataStateMachine } from '../metadata/state-machine.js';
import { NodeDisk } from './node-disk.js';
import { oneNodeReplicas } from '../testing/one-node-replicas.js';
import { systemClock } from './system.js';

/** The group of partition p (of topic 7, the only one here). */
const groupOf = (p: number): number => 1000 + p;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

test('the rule: only a damaged, open replica that is the only one of its partition may accept its loss', () => {
  const sole = { replicas: [1], learners: [] };
  const ok: LossFacts = { placement: sole, member: 1, open: true, damaged: true, probing: false };
  const cases: [string, LossFacts, 404 | 409 | 'allowed', RegExp?][] = [
    ['damaged sole replica', ok, 'allowed'],
    ['no partition has the group', { ...ok, placement: undefined }, 404, /No partition is replicated by group/],
    ['another node holds it', { ...ok, placement: { replicas: [2], learners: [] }, member: undefined }, 409, /holds no replica of group 5; node\(s\) 2 do/],
    ['replication factor 3 (a healthy voter can repair it)', { ...ok, placement: { replicas: [1, 2, 3], learners: [] } }, 409, /other replicas \(node\(s\) 2, 3\)/],
    ['a move adds a replica (a learner)', { ...ok, placement: { replicas: [1], learners: [2] } }, 409, /other replicas \(node\(s\) 2\)/],
    ['its open failed', { ...ok, open: false }, 409, /not open/],
    ['not damaged', { ...ok, damaged: false }, 409, /not damaged/],
    ['still learning its term floor', { ...ok, probing: true }, 409, /term floor/],
  ];
  for (const [what, facts, want, detail] of cases) {
    const v = lossAcceptance(5, facts);
    if (want === 'allowed') assert.ok(v.allowed, what);
    else {
      assert.ok(!v.allowed, what);
      assert.equal(v.status, want, what);
      assert.match(v.detail, detail!, what);
    }
  }
});

async function node(kv: MemoryKv, disk: NodeDisk, replicaSet: number[]) {
  const { replicas, close } = oneNodeReplicas(kv, { disk, replicaSet, groupOf: (_topic, p) => groupOf(p), clock: systemClock, appendTimeoutMs: 300 });
  const placed = (): PlacedPartition[] => [0, 1].map((p) => ({ event_type: 'solo', partition: String(p), index: p, topic: 7, legacy: false, placement: { group: groupOf(p), replicas: replicaSet } }));
  const said: string[] = [];
  const loud = pino({ level: 'error' }, { write: (line: string) => said.push(line) });
  // The metadata the records go to: a state machine that applies each proposal at once.
  const metadata = new MetadataStateMachine();
  let ids = 0;
  const losses = new LossService({
    placed,
    replicas: () => [replicas],
    self: 1,
    formatCursor: (_t, _p, o) => (o < 0 ? 'BEGIN' : String(o)),
    nowMs: () => Date.now(),
    monotonicMs: () => performance.now(),
    logger: loud,
    newId: () => `loss-${ids++}`,
    recorded: () => metadata.acceptedLosses,
    record: async (loss) => void metadata.apply(metadata.appliedIndex + 1, { op: 'loss.accepted', loss }),
    // The other replicas' nodes (of a partition of several) are down here: they do not answer.
    askPeer: async () => undefined,
    propose: async () => assert.fail('nothing is proposed while a replica does not answer'),
  });
  return { replicas, losses, said, metadata, close };
}

const event = (k: number) => Buffer.from(`{"k":${k}}`);

/** A node whose replicas (of `replicaSet`) lost the tail of their write-ahead log: partition 0 held 5 events durably, then 3 more were lost. */
async function afterLostTail(replicaSet: number[]) {
  const kv = new MemoryKv();
  const cell = new MemoryCell();
  const disk = await NodeDisk.open({ kv, cell, self: 1, newId: () => 'disk-1', logger: quiet });
  const n = await node(kv, disk, [1]);
  for (const p of [0, 1]) await n.replicas.ensure(7, p);
  for (let k = 0; k < 5; k++) assert.ok((await n.replicas.append([{ topic: 7, partition: 0, events: [event(k)] }]))[0]!.ok);
  const termBefore = n.replicas.replica(7, 0)!.group.raw.term;
  const before = kv.copyDurable();
  for (let k = 5; k < 8; k++) assert.ok((await n.replicas.append([{ topic: 7, partition: 0, events: [event(k)] }]))[0]!.ok);
  await disk.flush();
  await n.close();
  const disk2 = await NodeDisk.open({ kv: before, cell, self: 1, newId: () => 'disk-2', logger: quiet });
  assert.match(disk2.lostTail ?? '', /was durable before/);
  return { n: await node(before, disk2, replicaSet), disk: disk2, termBefore, kv: before, cell };
}

async function readAll(n: Awaited<ReturnType<typeof node>>, partition: number): Promise<string[]> {
  const r = n.replicas.replica(7, partition)!;
  return (await r.read(-1 as never, 1000, 1 << 20)).map((e) => `${e.offset}:${e.bytes.toString()}`);
}

test('a partition whose only replica lost its tail takes no writes until the operator accepts the loss; then it leads above its term ceiling, keeps every event it holds and takes writes', { timeout: 30_000 }, async () => {
  const { n, disk, termBefore } = await afterLostTail([1]);
  try {
    const r = (await n.replicas.ensure(7, 0))!;
    await n.replicas.ensure(7, 1);
    assert.notEqual(r.group.raw.status().damaged, null, 'the lost tail marked it damaged');
    await new Promise((res) => setTimeout(res, 200));
    assert.ok(!r.group.isLeader(), 'damaged and alone: it does not lead');
    const stuck = (await n.replicas.append([{ topic: 7, partition: 0, events: [event(100)] }]))[0]!;
    assert.ok(!stuck.ok, 'it takes no write');
    const held = await readAll(n, 0);
    assert.deepEqual(held, [0, 1, 2, 3, 4].map((k) => `${k}:{"k":${k}}`), 'it keeps the events that were durable');
    const ceiling = disk.termCeiling;
    const stuckTerm = r.group.raw.term;

    const accepted = await n.losses.accept(String(groupOf(0)));
    assert.equal(accepted.group, groupOf(0));
    assert.equal(accepted.kept.newest_offset, '4');
    assert.ok(r.group.isLeader(), 'it leads');
    assert.equal(r.group.raw.status().damaged, null);
    assert.equal(r.group.store.damage, undefined, 'the damage mark is gone');
    assert.ok(accepted.term > Math.max(ceiling, stuckTerm, termBefore), `it leads at term ${accepted.term}, above its ceiling ${ceiling}, the term it was stuck at (${stuckTerm}) and the one it led at before the loss (${termBefore})`);
    assert.equal(accepted.term_before, stuckTerm);
    assert.ok(disk.termCeiling >= accepted.term, 'the term ceiling follows the new term');
    assert.match(n.said.join(''), /ACCEPTED DATA LOSS on partition 0 of solo \(group 1000\)/, 'logged loudly');
    assert.deepEqual(n.losses.view().accepted_losses.map((l) => [l.group, l.scope, l.node, l.recorded]), [[groupOf(0), 'partition', 1, true]], 'recorded in the metadata, listed for GET /cluster');
    assert.deepEqual(n.metadata.acceptedLosses.records.map((l) => [l.id, l.group, l.kept.newest_offset, l.term]), [[accepted.id, groupOf(0), '4', accepted.term]], 'the metadata holds the record');

    for (let k = 100; k < 103; k++) assert.ok((await n.replicas.append([{ topic: 7, partition: 0, events: [event(k)] }]))[0]!.ok, 'it takes writes again');
    assert.deepEqual(await readAll(n, 0), [...held, '5:{"k":100}', '6:{"k":101}', '7:{"k":102}'], 'every event it held, in order, then the new ones at the next offsets');

    // Asked again: nothing left to accept.
    await assert.rejects(n.losses.accept(String(groupOf(0))), (e: unknown) => e instanceof Problem && e.status === 409 && /not damaged/.test(e.detail ?? ''));
    await assert.rejects(n.losses.accept('77'), (e: unknown) => e instanceof Problem && e.status === 404);
  } finally {
    await n.close();
  }
});

test('the action over every partition of the node accepts each damaged sole replica; after a restart they are undamaged and lead above the accepted term', { timeout: 30_000 }, async () => {
  const { n, disk, kv, cell } = await afterLostTail([1]);
  let terms: number[];
  try {
    await n.replicas.ensure(7, 0);
    await n.replicas.ensure(7, 1);
    const all = await n.losses.acceptAll();
    assert.deepEqual(all.accepted.map((a) => a.group).sort(), [groupOf(0), groupOf(1)], 'every damaged sole replica of the node');
    assert.deepEqual(all.refused, []);
    terms = all.accepted.sort((a, b) => a.group - b.group).map((a) => a.term);
    assert.ok((await n.replicas.append([{ topic: 7, partition: 1, events: [event(9)] }]))[0]!.ok);
    await disk.flush();
  } finally {
    await n.close();
  }
  const disk3 = await NodeDisk.open({ kv, cell, self: 1, newId: () => 'disk-3', logger: quiet });
  assert.equal(disk3.lostTail, undefined);
  const m = await node(kv, disk3, [1]);
  try {
    for (const p of [0, 1]) {
      const r = (await m.replicas.ensure(7, p))!;
      assert.equal(r.group.store.damage, undefined, `partition ${p}: the mark stays gone`);
      assert.ok((await m.replicas.append([{ topic: 7, partition: p, events: [event(50)] }]))[0]!.ok, `partition ${p} takes writes after the restart`);
      assert.ok(r.group.raw.term > terms[p]!, `partition ${p} leads above the term it accepted the loss at`);
    }
    assert.deepEqual(await readAll(m, 1), ['0:{"k":9}', '1:{"k":50}']);
  } finally {
    await m.close();
  }
});

test('a damaged replica with other replicas is refused while they do not answer (they may repair it), and so is the action over every partition', { timeout: 30_000 }, async () => {
  const { n } = await afterLostTail([1, 2, 3]);
  try {
    const r = (await n.replicas.ensure(7, 0))!;
    await n.replicas.ensure(7, 1);
    assert.notEqual(r.group.raw.status().damaged, null);
    await assert.rejects(n.losses.accept(String(groupOf(0))), (e: unknown) => e instanceof Problem && e.status === 409 && /on node 2, node 3 did not answer: each may be healthy/.test(e.detail ?? ''));
    const all = await n.losses.acceptAll();
    assert.deepEqual(all.accepted, []);
    assert.deepEqual(all.refused.map((x) => x.group).sort(), [groupOf(0), groupOf(1)]);
    assert.notEqual(r.group.raw.status().damaged, null, 'still damaged: its leader repairs it');
    // What the lever for a partition whose every replica is damaged compares (group-loss-choice.ts).
    const report = n.losses.report(String(groupOf(0)));
    assert.match(report.damage ?? '', /write-ahead log was lost/);
    assert.deepEqual([report.node, report.member, report.event_type, report.partition, report.last_index], [1, 1, 'solo', '0', r.group.store.storage.lastIndex()]);
    assert.equal(report.last_term, r.group.store.storage.term(report.last_index));
    assert.ok(report.term_floor >= Math.max(report.term, r.group.store.damage!.term, n.replicas.termCeiling()), JSON.stringify(report));
    assert.throws(() => n.losses.report('77'), (e: unknown) => e instanceof Problem && e.status === 404);
    assert.deepEqual(n.losses.view().accepted_losses, []);
  } finally {
    await n.close();
  }
});
