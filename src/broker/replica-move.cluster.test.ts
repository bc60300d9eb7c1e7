// Goal: an operator moves a replica of a partition that holds data to another node of a real four-node
// cluster while producers publish on every node (issue 9: "operators scaling partitions across nodes";
// docs/replication.md, "Moving a replica"): every acknowledged event is readable on every node
// afterwards, identically and offset for offset; the old node no longer holds the replica (it logs the
// drop, and no node lists it as a replica); GET /cluster on every node shows the new replicas; the
// leader took every step, the leaving node never removing itself (it hands leadership away when it still
// leads; a node that lost leadership under load is removed by the new leader); a
// second move while one is in flight is refused with 409; a cancel after the promotion is refused.
// Method: cluster/up 4 (the developers' scripts) in a temporary directory on free ports, with
// BROOK_PARTITION_MEMORY_ENTRIES=16 so the new replica is brought up to date through a snapshot and log
// shipping; one partition, placed on three of the four nodes; the move takes the replica of the
// partition's leader to the fourth node. Partitions are read with low-level streams from BEGIN on every node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call } from '../testing/broker-harness.js';
import { LocalCluster } from '../testing/local-cluster.js';
import { cursorsHeader, openStream, readUntil } from '../testing/stream-client.js';

const nodes = [1, 2, 3, 4];
const cluster = await LocalCluster.create('brook-move-cluster-test-', { BROOK_METADATA_TIMEOUT_MS: '3000', BROOK_PARTITION_MEMORY_ENTRIES: '16' }, { nodes: nodes.length });
const url = (i: number) => cluster.url(i);
const name = 'moves.cluster';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The lines node i logged about group `group`, in order. */
function groupLines(i: number, group: number): { msg: string; leader?: number | null }[] {
  const out: { msg: string; leader?: number | null }[] = [];
  for (const l of cluster.nodeLog(i).split('\n')) {
    if (!l.includes(`"group":${group}`)) continue;
    try {
      out.push(JSON.parse(l) as { msg: string; leader?: number | null });
    } catch {
      // a line being written
    }
  }
  return out;
}

/** The messages node i logged about group `group`, in order. */
function groupMessages(i: number, group: number): string[] {
  return groupLines(i, group).map((l) => l.msg);
}

/** As LocalCluster.until, a probe that throws (a node down) counting as no answer yet. */
function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  return cluster.until(what, timeoutMs, () => probe().catch(() => undefined), 200);
}

interface PartitionView {
  event_type: string;
  partition: string;
  group: number;
  leader: number | null;
  replicas: number[];
  learners: number[];
  moving: { from: number; to: number } | null;
  replica_status: { node: number }[];
}

async function partitionView(i: number): Promise<PartitionView | undefined> {
  const res = await fetch(`${url(i)}/cluster`, { signal: AbortSignal.timeout(2000) });
  if (!res.ok) return undefined;
  return ((await res.json()) as { partitions?: PartitionView[] }).partitions?.find((p) => p.event_type === name);
}

interface Stored {
  offset: string;
  eid: string;
}

/** Every event of the partition on node i, from BEGIN up to the newest offset node i lists. */
async function readPartition(i: number): Promise<Stored[]> {
  const r = await call(url(i), 'GET', `/event-types/${name}/partitions`);
  assert.equal(r.status, 200, r.text);
  const newest = (r.body as { newest_available_offset: string }[])[0]!.newest_available_offset;
  if (newest === 'BEGIN') return [];
  const res = await openStream(url(i), name, 'batch_limit=1000&batch_flush_timeout=1', cursorsHeader([{ partition: '0', offset: 'BEGIN' }]));
  assert.equal(res.status, 200, `stream on node ${i}`);
  const lines = await readUntil(res, (ls) => ls.some((l) => l.cursor.offset === newest && (l.events?.length ?? 0) > 0), 30_000);
  const out: Stored[] = [];
  for (const l of lines) {
    const evs = (l.events ?? []) as { metadata: { eid: string } }[];
    const last = Number(l.cursor.offset.slice(l.cursor.offset.lastIndexOf('-') + 1));
    evs.forEach((e, k) => out.push({ offset: String(last - (evs.length - 1 - k)), eid: e.metadata.eid }));
  }
  return out;
}

/** Publishes `n` events through node i; returns the eids acknowledged (200: all; 207: the submitted ones). */
async function publish(i: number, n: number): Promise<{ acked: string[]; status: number }> {
  const eids = Array.from({ length: n }, () => randomUUID());
  try {
    const res = await fetch(`${url(i)}/event-types/${name}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(eids.map((eid) => ({ via: i, metadata: { eid, occurred_at: new Date().toISOString() } }))),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    if (res.status === 200) return { acked: eids, status: 200 };
    if (res.status === 207) {
      const items = JSON.parse(text) as { publishing_status: string }[];
      return { acked: eids.filter((_, k) => items[k]!.publishing_status === 'submitted'), status: 207 };
    }
    return { acked: [], status: res.status };
  } catch {
    return { acked: [], status: 0 };
  }
}

test('a replica of a partition with data moves to another node while producers publish on every node', { timeout: 300_000 }, async (t) => {
  cluster.destroyWhenDone(t);
  // Outside the try: producers loop while it is true, and must stop when an assertion fails too, or
  // the test never exits.
  let publishing = true;
  try {
    cluster.run('up', '4');
    await cluster.created(1, '/event-types', {
      name,
      owning_application: 'move-test',
      category: 'business',
      enrichment_strategies: ['metadata_enrichment'],
      partition_strategy: 'random',
      default_statistic: { messages_per_minute: 100, message_size: 100, read_parallelism: 1, write_parallelism: 1 },
      schema: { type: 'json_schema', schema: '{"type": "object"}' },
    });
    const before = await until('every node to name the same leader of the partition', 30_000, async () => {
      const vs = await Promise.all(nodes.map(partitionView));
      const l = vs[0]?.leader;
      return l != null && vs.every((v) => v?.leader === l) ? vs[0] : undefined;
    });
    assert.equal(before.replicas.length, 3, 'three replicas of four nodes');
    const from = before.leader!;
    const to = nodes.find((n) => !before.replicas.includes(n))!;
    const group = before.group;

    // Data before the move: enough that the leader drops the oldest entries from memory.
    const acked: string[] = [];
    for (let k = 0; k < 120; k++) {
      const o = await publish(nodes[k % 4]!, 5);
      assert.equal(o.status, 200);
      acked.push(...o.acked);
    }

    // Producers on every node while the replica moves.
    const statuses = new Map<number, number>();
    const producers = nodes.map(async (i) => {
      while (publishing) {
        const o = await publish(i, 3);
        acked.push(...o.acked);
        statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
        await sleep(5);
      }
    });

    const started = await call(url(to), 'POST', `/cluster/partitions/${group}/move`, { from, to });
    assert.equal(started.status, 202, started.text);
    assert.deepEqual((started.body as { placement: unknown }).placement, { replicas: before.replicas, learners: [to], moving: { from, to } });
    const again = await call(url(from), 'POST', `/cluster/partitions/${group}/move`, { from: before.replicas.find((n) => n !== from)!, to });
    assert.match(again.headers.get('content-type') ?? '', /problem\+json/);
    if (again.status === 422) {
      // The whole move can finish before this request is read (0.2-0.7 s of margin in passing runs on
      // a loaded machine). With a move in flight the service answers 409 before any other rule, so a
      // 422 saying the target already replicates the group means the move was done: the conflict rule
      // itself is unit-tested (placement-changes.test.ts), not exercised end to end in this run.
      assert.match(again.text, new RegExp(`Node ${to} already replicates group ${group}`), `a second move: ${again.text}`);
      t.diagnostic('the move was done before the second move request was read: its 409 was not exercised');
    } else {
      assert.equal(again.status, 409, `a second move while one is in flight: ${again.text}`);
    }

    const want = before.replicas.map((n) => (n === from ? to : n));
    await until('every node to show the new replicas and no move in flight', 90_000, async () => {
      const vs = await Promise.all(nodes.map(partitionView));
      return vs.every((v) => v !== undefined && v.moving === null && v.learners.length === 0 && JSON.stringify(v.replicas) === JSON.stringify(want)) ? true : undefined;
    });
    const cancel = await call(url(2), 'DELETE', `/cluster/partitions/${group}/move`);
    assert.equal(cancel.status, 409, 'nothing to cancel once the move is done');
    await sleep(1000);
    publishing = false;
    await Promise.all(producers);
    assert.ok(acked.length > 600, `producers kept publishing during the move (${acked.length} acknowledged; answers ${JSON.stringify([...statuses])})`);

    // Every acknowledged event on every node, the same sequence everywhere, dense offsets.
    await until('every node to list the same newest offset', 30_000, async () => {
      const ns = await Promise.all(nodes.map(async (i) => JSON.stringify((await call(url(i), 'GET', `/event-types/${name}/partitions`)).body)));
      return ns.every((n) => n === ns[0]) ? true : undefined;
    });
    const reads = await Promise.all(nodes.map(readPartition));
    for (const [k, read] of reads.entries()) {
      assert.deepEqual(read, reads[0], `node ${nodes[k]} reads the same events as node 1`);
      const eids = new Set(read.map((s) => s.eid));
      assert.equal(eids.size, read.length, `node ${nodes[k]}: no event stored twice`);
      const lost = acked.filter((e) => !eids.has(e));
      assert.deepEqual(lost, [], `node ${nodes[k]} misses ${lost.length} acknowledged events`);
    }
    reads[0]!.forEach((s, k) => assert.equal(Number(s.offset), k, 'offsets dense from 0'));

    // The old node dropped its replica; the new replicas report; the leader is not the old node.
    await until('the old node to log the drop', 10_000, async () => (groupMessages(from, group).includes('partition replica moved to another node: dropping it here') ? true : undefined));
    assert.ok(!cluster.nodeLog(from).includes('dropping a moved partition replica failed'));
    const after = await until('a leader among the new replicas', 20_000, async () => {
      const v = await partitionView(to);
      return v?.leader != null && want.includes(v.leader) ? v : undefined;
    });
    assert.ok(!after.replica_status.some((s) => s.node === from), 'the old node is no replica');
    assert.ok(groupMessages(to, group).includes('partition replica joins its group empty; its leader brings it up to date'));
    assert.ok(groupMessages(to, group).includes('partition replica fetched the log it lacked; installing the snapshot'), 'the new replica was shipped the log');
    // The steps, in order, across the leaders that took them.
    const steps = nodes.flatMap((i) => groupMessages(i, group)).filter((m) => m.startsWith('replica move: '));
    const order = ['replica move: proposing addLearner of node', 'replica move: promote recorded', 'replica move: proposing addVoter of node', 'replica move: proposing removeNode of node', 'replica move: remove recorded'];
    for (const s of order) assert.ok(steps.some((m) => m.startsWith(s)), `step "${s}" missing: ${JSON.stringify(steps)}`);
    // The leaving node never removes itself: when it still leads at the removal it hands leadership away
    // first; when it lost leadership earlier (an election on a loaded machine), the new leader removes it.
    assert.ok(!groupMessages(from, group).some((m) => m === `replica move: proposing removeNode of node ${from}`), 'the leaving node never removed itself');
    const handedAway = groupMessages(from, group).some((m) => m.startsWith('replica move: this node leaves the group'));
    const removers = nodes.filter((i) => groupMessages(i, group).includes(`replica move: proposing removeNode of node ${from}`));
    assert.ok(removers.length > 0 && !removers.includes(from), `node ${from} was removed by another node (${JSON.stringify(removers)})`);
    if (!handedAway) {
      const lost = groupLines(from, group).some((l) => l.msg === 'partition leader changed' && l.leader !== from);
      assert.ok(lost, `node ${from} neither handed leadership away nor lost it before its removal: ${JSON.stringify(steps)}`);
      t.diagnostic(`node ${from} lost leadership before the removal step; node ${removers.join(',')} removed it`);
    }
  } finally {
    publishing = false;
    const said = cluster.destroy();
    if (said !== undefined) t.diagnostic(said);
  }
});
