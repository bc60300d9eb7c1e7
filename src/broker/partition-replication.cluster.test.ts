// Goal: partition replication across three real node processes on loopback (issue 9, section 4): the
// same partitions, offset for offset, on every node; publishes on any node (forwarded to the leader);
// no acknowledged event lost, duplicated or reordered when a partition leader is killed with kill -9
// while six producers publish, and the failover gap that users see (printed); a partition leader cut
// off by iptables acknowledges nothing and answers within the deadline while the majority moves on;
// a restarted follower converges by fetching the log it lacks (log shipping); a subscription
// continues on another node from its committed cursor after the node that streamed it was killed;
// timeline switches asked on two nodes while producers publish through all three.
// Method: cluster/up 3 (the developers' scripts) in a temporary directory on free ports, with
// BROOK_PARTITION_MEMORY_ENTRIES=16 (a follower that missed a few hundred entries is shipped the log)
// and a 2 s deadline (BROOK_METADATA_TIMEOUT_MS, also the append deadline). Each part uses an event
// type of its own with 4 partitions and hash partitioning on a required field. Partition leaders and
// terms are read from the nodes' logs ("partition leader changed" lines). Partitions are read with
// low-level streams from BEGIN (X-Svc-Cursors) on every node and compared event for event. The
// network partition is made with iptables (src/testing/partition.ts); without root and iptables that
// part is skipped with a message saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call } from '../testing/broker-harness.js';
import { isolate, partitionUnsupported, sweep } from '../testing/partition.js';
import { LocalCluster } from '../testing/local-cluster.js';
import { cursorsHeader, openStream, readUntil, type StreamLine } from '../testing/stream-client.js';
import { SubscriptionStreamClient, type SubscriptionCursor } from '../testing/subscription-client.js';
import { hashPartitionIndex } from '../publishing/partitioner.js';

const nodes = [1, 2, 3];
const partitionCount = 4;
const partitions = Array.from({ length: partitionCount }, (_, p) => String(p));
const deadlineMs = 2000;
const memoryEntries = 16;

const url = (i: number) => cluster.url(i);
// Retention runs often, so that a part can make it remove a log a follower lacks (only event types
// whose retention time is set short lose anything).
const cluster = await LocalCluster.create('brook-partition-cluster-test-', {
  BROOK_METADATA_TIMEOUT_MS: String(deadlineMs),
  BROOK_PARTITION_MEMORY_ENTRIES: String(memoryEntries),
  BROOK_RETENTION_CHECK_INTERVAL_MS: '500',
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ processes and logs

/** Kills node i with SIGKILL; returns when (Date.now()). */
function kill9(i: number): number {
  cluster.kill9(i);
  return Date.now();
}

const logs = () => cluster.logs(nodes, 30);

interface LogLine {
  msg?: string;
  topic?: number;
  partition?: number;
  leader?: number | null;
  term?: number;
}

function logLines(i: number, msg: string): LogLine[] {
  const out: LogLine[] = [];
  for (const l of cluster.nodeLog(i).split('\n')) {
    if (!l.includes(msg)) continue;
    try {
      const j = JSON.parse(l) as LogLine;
      if (j.msg === msg) out.push(j);
    } catch {
      // a line cut by kill -9
    }
  }
  return out;
}

interface PartitionView {
  event_type: string;
  partition: string;
  topic: number;
  leader: number | null;
  term: number | null;
}

/** The partitions of `name` as node i lists them in GET /cluster (undefined when it does not answer). */
async function partitionViews(i: number, name: string): Promise<PartitionView[] | undefined> {
  try {
    const res = await fetch(`${url(i)}/cluster`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return undefined;
    return ((await res.json()) as { partitions?: PartitionView[] }).partitions?.filter((p) => p.event_type === name);
  } catch {
    return undefined;
  }
}

/** partition -> {leader, term}: the newest leader of each partition of `name` that the nodes `from` know of. */
async function leaders(name: string, from: readonly number[] = nodes): Promise<Map<string, { leader: number; term: number }>> {
  const out = new Map<string, { leader: number; term: number }>();
  for (const v of await Promise.all(from.map((i) => partitionViews(i, name)))) {
    for (const p of v ?? []) {
      if (p.leader === null || p.term === null) continue;
      const have = out.get(p.partition);
      if (have === undefined || p.term > have.term) out.set(p.partition, { leader: p.leader, term: p.term });
    }
  }
  return out;
}

/** The partitions of `name` each node leads, once every node names the same leader for every partition. */
async function agreedLeaders(name: string, timeoutMs: number): Promise<Map<number, string[]>> {
  return until(`every node to name the same leader for each partition of ${name}`, timeoutMs, async () => {
    const vs = await Promise.all(nodes.map((i) => partitionViews(i, name)));
    const out = new Map<number, string[]>(nodes.map((i) => [i, []]));
    for (const p of partitions) {
      const ls = vs.map((v) => v?.find((x) => x.partition === p)?.leader);
      if (ls[0] == null || !ls.every((l) => l === ls[0])) return undefined;
      out.get(ls[0])?.push(p);
    }
    return out;
  });
}

/** The node leading most partitions of `name` (at least one: 4 partitions on 3 nodes) and those partitions. */
async function busiestLeader(name: string): Promise<[number, string[]]> {
  const led = await agreedLeaders(name, 20_000);
  return [...led].sort((a, b) => b[1].length - a[1].length)[0]!;
}

const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, pauseMs = 100) => cluster.until(what, timeoutMs, probe, pauseMs);

async function metadataLeader(i: number): Promise<number | null | undefined> {
  try {
    const res = await fetch(`${url(i)}/cluster`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? ((await res.json()) as { metadata: { leader: number | null } }).metadata.leader : undefined;
  } catch {
    return undefined;
  }
}

/** Starts the nodes that are down and waits until all three agree on a metadata leader. */
async function allUp(): Promise<number> {
  cluster.run('up', '3');
  return until('a metadata leader agreed on by every node', 20_000, async () => {
    const ls = await Promise.all(nodes.map(metadataLeader));
    return ls[0] != null && ls.every((l) => l === ls[0]) ? ls[0] : undefined;
  });
}

/** Runs a part and, when it fails, adds the nodes' last log lines to the error. */
async function withLogs(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof Error && !err.message.includes('--- node 1 (last lines)')) err.message += `\n${logs()}`;
    throw err;
  }
}

// ------------------------------------------------------------------ event types and events

/** Keys whose events land in each partition (the broker's own hash), `perPartition` of each. */
function keysFor(prefix: string, perPartition = 1): string[][] {
  const out: string[][] = partitions.map(() => []);
  for (let n = 0; out.some((ks) => ks.length < perPartition); n++) {
    const k = `${prefix}-${n}`;
    const p = hashPartitionIndex([k], partitionCount);
    if (out[p]!.length < perPartition) out[p]!.push(k);
  }
  return out;
}

/** Creates an event type with 4 partitions (hash on the required field "key"); returns its topic once every partition has a leader. */
async function createEventType(name: string): Promise<number> {
  await cluster.created(1, '/event-types', {
    name,
    owning_application: 'partition-test',
    category: 'business',
    enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: 'hash',
    partition_key_fields: ['key'],
    default_statistic: { messages_per_minute: 100, message_size: 100, read_parallelism: partitionCount, write_parallelism: partitionCount },
    schema: {
      type: 'json_schema',
      schema: JSON.stringify({
        type: 'object',
        properties: { key: { type: 'string' }, producer: { type: 'string' }, seq: { type: 'integer' } },
        required: ['key'],
      }),
    },
  });
  // Every node opens its replicas as soon as the event type is applied, and each group elects.
  await agreedLeaders(name, 20_000);
  const v = (await partitionViews(1, name))!;
  assert.deepEqual(v.map((p) => p.partition).sort(), partitions);
  return v[0]!.topic;
}

interface Sent {
  eid: string;
  key: string;
  seq: number;
  partition: string;
}

/** Sets an event type's retention time (GET, change, PUT). */
async function setRetention(name: string, ms: number): Promise<void> {
  const got = await call(url(1), 'GET', `/event-types/${name}`);
  assert.equal(got.status, 200, got.text);
  const body = got.body as Record<string, unknown>;
  const r = await call(url(1), 'PUT', `/event-types/${name}`, { ...body, options: { ...(body['options'] as object), retention_time: ms } });
  assert.equal(r.status, 200, r.text);
}

function event(s: Sent, producer: string): Record<string, unknown> {
  return { key: s.key, producer, seq: s.seq, metadata: { eid: s.eid, occurred_at: new Date().toISOString() } };
}

interface Outcome {
  node: number;
  status: number; // 0: no answer (connection refused, client timeout)
  /** eids of the batch. */
  eids: string[];
  sentAt: number;
  doneAt: number;
  /** eids the broker acknowledged (200: all; 207: submitted items). */
  acked: string[];
  /** eids reported failed or aborted in a 207. */
  failed: string[];
  text: string;
}

async function publishTo(node: number, name: string, sent: readonly Sent[], producer = 'test', clientTimeoutMs = 20_000): Promise<Outcome> {
  const sentAt = Date.now();
  const eids = sent.map((s) => s.eid);
  try {
    const res = await fetch(`${url(node)}/event-types/${name}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sent.map((s) => event(s, producer))),
      signal: AbortSignal.timeout(clientTimeoutMs),
    });
    const text = await res.text();
    const doneAt = Date.now();
    if (res.status === 200) return { node, status: 200, eids, sentAt, doneAt, acked: eids, failed: [], text };
    if (res.status === 207) {
      const items = JSON.parse(text) as { publishing_status: string }[];
      assert.equal(items.length, sent.length, `a 207 has an item per event: ${text}`);
      return {
        node,
        status: 207,
        eids,
        sentAt,
        doneAt,
        acked: eids.filter((_, k) => items[k]!.publishing_status === 'submitted'),
        failed: eids.filter((_, k) => items[k]!.publishing_status !== 'submitted'),
        text,
      };
    }
    return { node, status: res.status, eids, sentAt, doneAt, acked: [], failed: [], text };
  } catch (err) {
    return { node, status: 0, eids, sentAt, doneAt: Date.now(), acked: [], failed: [], text: (err as Error).message };
  }
}

// ------------------------------------------------------------------ reading partitions

interface Stored {
  offset: string;
  event: Record<string, unknown> & { key: string; seq?: number; metadata: { eid: string } };
}

async function partitionsOf(node: number, name: string): Promise<{ partition: string; oldest_available_offset: string; newest_available_offset: string }[]> {
  const r = await call(url(node), 'GET', `/event-types/${name}/partitions`);
  assert.equal(r.status, 200, `partitions on node ${node}: ${r.text}`);
  return r.body as { partition: string; oldest_available_offset: string; newest_available_offset: string }[];
}

/** Every event of one partition on one node, from BEGIN up to the newest offset that node lists. */
async function readPartition(node: number, name: string, partition: string): Promise<Stored[]> {
  const newest = (await partitionsOf(node, name)).find((p) => p.partition === partition)!.newest_available_offset;
  if (newest === 'BEGIN') return [];
  const res = await openStream(url(node), name, 'batch_limit=1000&batch_flush_timeout=1', cursorsHeader([{ partition, offset: 'BEGIN' }]));
  assert.equal(res.status, 200, `stream of partition ${partition} on node ${node}: ${res.status}`);
  const lines = await readUntil(res, (ls) => ls.some((l) => l.cursor.offset === newest && (l.events?.length ?? 0) > 0), 30_000);
  const out: Stored[] = [];
  let last = '';
  for (const l of lines as StreamLine[]) {
    assert.equal(l.cursor.partition, partition, 'a stream of one partition sends only that partition');
    const evs = l.events ?? [];
    if (evs.length === 0) continue;
    // A batch's cursor is its last event's offset; the events before it have the offsets just below.
    const lastN = offsetNumber(l.cursor.offset);
    evs.forEach((e, k) => out.push({ offset: formatLike(l.cursor.offset, lastN - (evs.length - 1 - k)), event: e as Stored['event'] }));
    assert.ok(l.cursor.offset > last, 'cursors increase');
    last = l.cursor.offset;
  }
  return out;
}

function offsetNumber(o: string): number {
  return Number(o.slice(o.lastIndexOf('-') + 1));
}

function formatLike(o: string, n: number): string {
  const digits = o.length - o.lastIndexOf('-') - 1;
  return o.slice(0, o.lastIndexOf('-') + 1) + String(n).padStart(digits, '0');
}

async function readAll(node: number, name: string): Promise<Map<string, Stored[]>> {
  const lists = await Promise.all(partitions.map((p) => readPartition(node, name, p)));
  return new Map(partitions.map((p, k) => [p, lists[k]!]));
}

/** Waits until every node lists the same partitions, then reads them all and asserts they are identical. */
async function converged(name: string, timeoutMs: number, among: readonly number[] = nodes, retained = false): Promise<Map<string, Stored[]>> {
  await until(`nodes ${among.join(', ')} to list the same partitions of ${name}`, timeoutMs, async () => {
    try {
      const ls = await Promise.all(among.map((i) => partitionsOf(i, name)));
      return ls.every((l) => JSON.stringify(l) === JSON.stringify(ls[0])) ? true : undefined;
    } catch {
      return undefined;
    }
  }, 250);
  const all = await Promise.all(among.map((i) => readAll(i, name)));
  for (let k = 1; k < among.length; k++) {
    for (const p of partitions) {
      const a = all[0]!.get(p)!;
      const b = all[k]!.get(p)!;
      assert.equal(b.length, a.length, `partition ${p}: node ${among[k]} holds ${b.length} events, node ${among[0]} ${a.length}`);
      assert.deepEqual(b, a, `partition ${p} of ${name}: node ${among[k]} differs from node ${among[0]}`);
    }
  }
  for (const p of partitions) {
    // Dense offsets from the first one (from 0 unless retention removed the oldest events).
    const list = all[0]!.get(p)!;
    const first = retained && list.length > 0 ? offsetNumber(list[0]!.offset) : 0;
    list.forEach((s, k) => assert.equal(offsetNumber(s.offset), first + k, `partition ${p}: offsets are dense from ${first}`));
  }
  return all[0]!;
}

/** Checks a history against what the nodes hold: nothing acknowledged lost, nothing duplicated or invented, per-key order. */
function checkHistory(stored: Map<string, Stored[]>, sent: readonly Sent[], acked: ReadonlySet<string>): { stored: number } {
  const bySent = new Map(sent.map((s) => [s.eid, s]));
  const seen = new Map<string, string>();
  for (const [p, list] of stored) {
    for (const s of list) {
      const eid = s.event.metadata.eid;
      const orig = bySent.get(eid);
      assert.ok(orig !== undefined, `partition ${p} holds an event nobody sent (eid ${eid})`);
      assert.ok(!seen.has(eid), `eid ${eid} is stored twice (at ${seen.get(eid)} and ${p}/${s.offset})`);
      seen.set(eid, `${p}/${s.offset}`);
      assert.equal(p, orig.partition, `eid ${eid} is in the partition of its key`);
      assert.equal(s.event.key, orig.key);
      assert.equal(s.event.seq, orig.seq);
    }
  }
  const lost = [...acked].filter((e) => !seen.has(e));
  assert.deepEqual(lost, [], `${lost.length} acknowledged events are missing`);
  // Per key, the acknowledged events are stored in the order they were sent.
  for (const list of stored.values()) {
    const lastSeq = new Map<string, number>();
    for (const s of list) {
      if (!acked.has(s.event.metadata.eid)) continue;
      const prev = lastSeq.get(s.event.key);
      assert.ok(prev === undefined || s.event.seq! > prev, `key ${s.event.key}: acknowledged seq ${s.event.seq} stored after seq ${prev}`);
      lastSeq.set(s.event.key, s.event.seq!);
    }
  }
  return { stored: seen.size };
}

/** Sent events of one batch: `n` events of `key` with the next sequence numbers. */
function batchOf(key: string, partition: string, seqs: Map<string, number>, n: number): Sent[] {
  return Array.from({ length: n }, () => {
    const seq = (seqs.get(key) ?? 0) + 1;
    seqs.set(key, seq);
    return { eid: randomUUID(), key, seq, partition };
  });
}

// ------------------------------------------------------------------ the test

test('partition replication on three nodes: same logs everywhere, failover, partitions, log shipping, subscriptions', { timeout: 300_000 }, async (t) => {
  cluster.destroyWhenDone(t);
  try {
    await allUp();

    await t.test('events published on node 1 are read, offset for offset, on nodes 2 and 3; publishes on nodes 2 and 3 are forwarded', () =>
      withLogs(async () => {
        const name = 'repl.same';
        await createEventType(name);
        const keys = keysFor('same', 2);
        const seqs = new Map<string, number>();
        const sent: Sent[] = [];
        // Batches spanning all four partitions, so every publish goes to every partition's leader.
        const publishOn = async (node: number, batches: number) => {
          for (let b = 0; b < batches; b++) {
            const batch = partitions.flatMap((p) => keys[Number(p)]!.flatMap((k) => batchOf(k, p, seqs, 2)));
            const o = await publishTo(node, name, batch);
            assert.equal(o.status, 200, `publish on node ${node}: ${o.status} ${o.text}`);
            sent.push(...batch);
          }
        };
        await publishOn(1, 5);
        const afterNode1 = await converged(name, 15_000);
        for (const p of partitions) {
          // Exactly what was sent to this partition, in the order it was sent.
          const want = sent.filter((s) => s.partition === p).map((s) => s.eid);
          assert.deepEqual(afterNode1.get(p)!.map((s) => s.event.metadata.eid), want, `partition ${p}`);
        }
        await publishOn(2, 2);
        // Publishing reads metadata under a read lease (docs/metadata-raft.md, "Read leases"): after
        // the first publish on a node asked for one, the next publishes there take no ReadIndex round.
        const leaseReads = async (node: number) => {
          const text = await (await fetch(`${url(node)}/metrics/prometheus`, { signal: AbortSignal.timeout(10_000) })).text();
          return Number(/^brook_metadata_read_leases_total\{what="lease_reads"\} ([0-9.e+]+)$/m.exec(text)?.[1] ?? 'NaN');
        };
        await publishOn(3, 1);
        await new Promise((r) => setTimeout(r, 500));
        const before = (await leaseReads(1)) + (await leaseReads(2)) + (await leaseReads(3));
        await publishOn(2, 1);
        await publishOn(3, 1);
        const after = (await leaseReads(1)) + (await leaseReads(2)) + (await leaseReads(3));
        assert.ok(after >= before + 2, `publishes on nodes 2 and 3 served under a lease: ${before} -> ${after}`);
        await publishOn(3, 1);
        const all = await converged(name, 15_000);
        let total = 0;
        for (const p of partitions) {
          const want = sent.filter((s) => s.partition === p).map((s) => s.eid);
          assert.deepEqual(all.get(p)!.map((s) => s.event.metadata.eid), want, `partition ${p} after publishes on nodes 2 and 3`);
          // What was read before is unchanged: the n-th event keeps its offset.
          assert.deepEqual(all.get(p)!.slice(0, afterNode1.get(p)!.length), afterNode1.get(p));
          total += want.length;
        }
        assert.equal(total, 11 * partitionCount * 2 * 2);
        t.diagnostic(`${total} events in ${partitionCount} partitions, identical on nodes 1, 2 and 3`);
      }));

    await t.test('timeline switches asked on nodes 2 and 3 (to a created storage and back) while six producers publish on random nodes: every publish succeeds (or, past its deadline, fails as retriable with nothing stored), nothing lost, duplicated or reordered, offsets dense across timelines on every node', () =>
      withLogs(async () => {
        const name = 'repl.timelines';
        await createEventType(name);
        const st = await call(url(1), 'POST', '/storages', { id: 'repl-st', storage_type: 'broker', broker_configuration: {} });
        assert.equal(st.status, 201, st.text);
        const sent: Sent[] = [];
        const outcomes: Outcome[] = [];
        let stop = false;
        const producer = async (j: number) => {
          const keys = keysFor(`tl${j}`);
          const seqs = new Map<string, number>();
          while (!stop) {
            const p = partitions[Math.floor(Math.random() * partitionCount)]!;
            const node = nodes[Math.floor(Math.random() * nodes.length)]!;
            const batch = batchOf(keys[Number(p)]![0]!, p, seqs, 3);
            sent.push(...batch);
            outcomes.push(await publishTo(node, name, batch, `tl${j}`));
          }
        };
        const running = Array.from({ length: 6 }, (_, j) => producer(j));
        const switches: { node: number; status: number; ms: number; text: string }[] = [];
        try {
          for (const [node, storage] of [[2, 'repl-st'], [3, 'default']] as const) {
            await sleep(1500);
            const at = Date.now();
            const r = await call(url(node), 'POST', `/event-types/${name}/timelines`, { storage_id: storage });
            switches.push({ node, status: r.status, ms: Date.now() - at, text: r.text });
          }
          await sleep(1500);
        } finally {
          stop = true;
          await Promise.all(running);
        }
        const slowest = outcomes.reduce((m, o) => Math.max(m, o.doneAt - o.sentAt), 0);
        t.diagnostic(`switches: ${switches.map((x) => `node ${x.node} ${x.status} in ${x.ms} ms`).join(', ')}; ${outcomes.length} publishes, slowest ${slowest} ms`);
        for (const x of switches) assert.equal(x.status, 201, `the switch on node ${x.node}: ${x.text}`);
        // A batch caught by a seal waits for the switch's commit until its deadline (2 s here); on a
        // loaded machine a switch can take longer, and then the batch fails as retriable with nothing
        // stored. So can the first batch a node sends to a partition of the new timeline: it first sets
        // the partition's base through the group's leader (storage-router.ts #baseOnce) and is not
        // appended when that does not commit by the deadline (503 "no leader applied the base in time";
        // seen at load ~20). Anything else is a failure, and such failures stay rare.
        const late = outcomes.filter(
          (o) =>
            (o.status === 207 && o.acked.length === 0 && o.failed.length === o.eids.length && /did not complete in time; the batch was not stored, retry it/.test(o.text)) ||
            (o.status === 503 && /no leader applied the base in time/.test(o.text)),
        );
        for (const o of outcomes) if (!late.includes(o)) assert.equal(o.status, 200, `a publish during the switches (node ${o.node}): ${o.status} ${o.text.slice(0, 300)}`);
        assert.ok(late.length * 10 <= outcomes.length, `${late.length} of ${outcomes.length} publishes waited past their deadline for a switch`);
        if (late.length > 0) t.diagnostic(`${late.length} publishes failed as retriable: the switch took longer than their deadline`);
        const stored = await converged(name, 30_000);
        const { stored: n } = checkHistory(stored, sent, new Set(outcomes.flatMap((o) => o.acked)));
        const failed = new Set(late.flatMap((o) => o.eids));
        const phantoms = [...stored.values()].flat().filter((s) => failed.has(s.event.metadata.eid));
        assert.deepEqual(phantoms, [], 'a batch told "not stored, retry it" is stored nowhere');
        assert.equal(n, sent.length - failed.size, 'every event sent was acknowledged (or told not stored) and is stored once');
        // Every node lists the three timelines, and events were stored on each of them: the closed ones
        // end where the next begins (latest_position), and each holds events of some partition.
        type Tl = { order: number; storage_id: string; latest_position?: { offsets: { partition: string; offset: string }[] } };
        let listed: Tl[] = [];
        for (const i of nodes) {
          const tls = await call(url(i), 'GET', `/event-types/${name}/timelines`);
          listed = tls.body as Tl[];
          assert.deepEqual(listed.map((x) => [x.order, x.storage_id]), [[1, 'default'], [2, 'repl-st'], [3, 'default']], `timelines on node ${i}`);
        }
        const lastOf = (k: number, p: string) => offsetNumber(listed[k]!.latest_position!.offsets.find((o) => o.partition === p)!.offset);
        const held = (k: number) => partitions.reduce((n, p) => n + (k === 0 ? lastOf(0, p) + 1 : k === 1 ? lastOf(1, p) - lastOf(0, p) : stored.get(p)!.length - 1 - lastOf(1, p)), 0);
        assert.ok(held(0) > 0 && held(1) > 0 && held(2) > 0, `events on every timeline: ${[0, 1, 2].map(held).join(', ')}`);
        t.diagnostic(`events per timeline: ${[0, 1, 2].map(held).join(', ')}`);
        t.diagnostic(`${n} events in ${partitionCount} partitions over three timelines, identical on nodes 1, 2 and 3`);
      }));

    await t.test('kill -9 of a partition leader under six producers: nothing acknowledged lost, duplicated or reordered; failover gap', () =>
      withLogs(async () => {
        await allUp();
        const name = 'repl.failover';
        await createEventType(name);

        const sent: Sent[] = [];
        const outcomes: (Outcome & { partition: string })[] = [];
        let stop = false;
        const producer = async (j: number) => {
          const keys = keysFor(`prod${j}`);
          const seqs = new Map<string, number>();
          while (!stop) {
            const p = partitions[Math.floor(Math.random() * partitionCount)]!;
            const node = nodes[Math.floor(Math.random() * nodes.length)]!;
            const batch = batchOf(keys[Number(p)]![0]!, p, seqs, 3);
            sent.push(...batch);
            const o = await publishTo(node, name, batch, `prod${j}`);
            outcomes.push({ ...o, partition: p });
            if (o.status !== 200) await sleep(20);
          }
        };
        const running = Array.from({ length: 6 }, (_, j) => producer(j));
        let killedAt = 0;
        let victim = 0;
        let victimLed: string[] = [];
        let before = new Map<string, { leader: number; term: number }>();
        try {
          await sleep(2500);
          // The node leading most partitions (with 4 partitions on 3 nodes, at least one), as the
          // nodes see it now (leadership moves back to preferred leaders every few seconds).
          // The terms before the victim is chosen: read after, a hand-over that moved one of its
          // partitions away meanwhile (leadership balancing) would show as the leader and term to beat,
          // and that leader rightly stays after the kill ("partition 2 has a new leader in a new term"
          // failed so once, with every failover gap under 2 s).
          before = await leaders(name);
          [victim, victimLed] = await busiestLeader(name);
          assert.ok(victimLed.length > 0, `node ${victim} leads a partition: ${JSON.stringify([...before])}`);
          killedAt = kill9(victim);
          // Keep publishing until every partition the victim led took a batch sent after the kill
          // (or 20 s passed), and for at least 4 s.
          const firstOk = (p: string) => outcomes.find((o) => o.partition === p && o.status === 200 && o.sentAt >= killedAt);
          const deadline = killedAt + 20_000;
          while (Date.now() < deadline && (Date.now() < killedAt + 4000 || victimLed.some((p) => firstOk(p) === undefined))) await sleep(100);
        } finally {
          stop = true;
          await Promise.all(running);
        }
        const gaps = victimLed.map((p) => {
          const o = outcomes.find((x) => x.partition === p && x.status === 200 && x.sentAt >= killedAt);
          return { partition: p, gapMs: o === undefined ? undefined : o.doneAt - killedAt, node: o?.node };
        });
        const ackedBefore = outcomes.filter((o) => o.sentAt < killedAt && o.status === 200).length;
        const after = outcomes.filter((o) => o.sentAt >= killedAt);
        const statusCounts = after.reduce<Record<string, number>>((m, o) => ((m[o.status] = (m[o.status] ?? 0) + 1), m), {});
        const newLeaders = await leaders(name, nodes.filter((i) => i !== victim));
        t.diagnostic(
          `kill -9 of node ${victim} (led partitions ${victimLed.join(', ')}): failover gap per partition (kill to first 200 of a batch sent after it): ` +
            gaps.map((g) => `p${g.partition} ${g.gapMs ?? 'none'} ms (via node ${g.node})`).join(', ') +
            `; new leaders ${victimLed.map((p) => `p${p}=node ${newLeaders.get(p)?.leader} term ${newLeaders.get(p)?.term}`).join(', ')}` +
            `; ${ackedBefore} batches acknowledged before the kill, after it: ${JSON.stringify(statusCounts)} (0 = no answer)`,
        );
        for (const g of gaps) {
          assert.ok(g.gapMs !== undefined, `partition ${g.partition} took no batch within 20 s of the kill`);
          // A hang detector; the target (< 3 s) is reported, not asserted.
          assert.ok(g.gapMs < 10_000, `failover of partition ${g.partition} took ${g.gapMs} ms`);
        }
        for (const p of victimLed) {
          const l = newLeaders.get(p);
          assert.ok(l !== undefined && l.leader !== victim && l.term > before.get(p)!.term, `partition ${p} has a new leader in a new term`);
        }
        for (const o of outcomes) {
          // Every answer is one the interface allows (0: the killed node refused the connection).
          assert.ok([0, 200, 207, 503].includes(o.status), `publish answered ${o.status}: ${o.text.slice(0, 300)}`);
          if (o.status === 0) assert.equal(o.node, victim, `only the killed node leaves a publish unanswered: ${o.text}`);
        }

        const out = cluster.run('up', '3');
        assert.match(out, new RegExp(`node ${victim}: started`));
        const stored = await converged(name, 40_000);
        const acked = new Set(outcomes.flatMap((o) => o.acked));
        const { stored: n } = checkHistory(stored, sent, acked);
        t.diagnostic(`${sent.length} events sent in ${outcomes.length} batches, ${acked.size} acknowledged, ${n} stored, identical on all nodes`);
        assert.ok(acked.size > 0 && outcomes.some((o) => o.status === 200 && o.sentAt >= killedAt));
      }));

    await t.test('a partition leader cut off by iptables acknowledges nothing and answers within the deadline; the majority moves on; it converges when healed', (st) =>
      withLogs(async () => {
        const reason = partitionUnsupported();
        if (reason !== undefined) {
          st.skip(`cannot partition here: ${reason}`);
          return;
        }
        await allUp();
        const name = 'repl.partitioned';
        await createEventType(name);
        const keys = keysFor('cut');
        const seqs = new Map<string, number>();
        const sent: Sent[] = [];
        const outcomes: Outcome[] = [];
        const send = async (node: number, p: string) => {
          const batch = batchOf(keys[Number(p)]![0]!, p, seqs, 2);
          sent.push(...batch);
          const o = await publishTo(node, name, batch);
          outcomes.push(o);
          return o;
        };
        // Some events before the cut, through every node.
        for (const n of nodes) for (const p of partitions) assert.equal((await send(n, p)).status, 200);
        // The terms first, as in the kill -9 part: read after the leaders were chosen, a hand-over that
        // moved one of the cut node's partitions to another node meanwhile (leadership balancing)
        // shows as the leader and term to beat, and that leader rightly stays after the cut (this part
        // failed so at load ~20: "timed out after 20000 ms waiting for new leaders of partitions 0, 1
        // on the majority side", the majority having named new leaders within 2 s).
        const before = await leaders(name);
        const [cut, cutLed] = await busiestLeader(name);
        assert.ok(cutLed.length > 0);
        const majority = nodes.filter((i) => i !== cut);

        const onCut: Outcome[] = [];
        let electedMs = 0;
        let majorityOkMs = 0;
        const partition = isolate(cut, cluster.pid(cut), cluster.base + cut - 1, cluster.raftPort(cut), majority.map((i) => cluster.raftPort(i)));
        const cutAt = Date.now();
        try {
          // Publishes on the cut node to the partitions it led (refused within the deadline), while
          // the majority elects new leaders of those partitions and acknowledges.
          const probing = (async () => {
            for (const p of cutLed) onCut.push(await send(cut, p));
          })();
          try {
            await until(`new leaders of partitions ${cutLed.join(', ')} on the majority side`, 20_000, async () => {
              const now = await leaders(name, majority);
              return cutLed.every((p) => {
                const l = now.get(p);
                return l !== undefined && majority.includes(l.leader) && l.term > before.get(p)!.term;
              })
                ? true
                : undefined;
            });
            electedMs = Date.now() - cutAt;
            await Promise.all(
              cutLed.map((p) =>
                until(`a 200 for partition ${p} on the majority side`, 15_000, async () => {
                  const o = await send(majority[Number(p) % 2]!, p);
                  return o.status === 200 ? o : undefined;
                }),
              ),
            );
            majorityOkMs = Date.now() - cutAt;
          } finally {
            await probing;
          }
          // And again on the cut node, now that the others have moved on.
          for (const p of cutLed) onCut.push(await send(cut, p));
        } finally {
          partition.heal();
        }
        const healedAt = Date.now();
        const times = onCut.map((o) => o.doneAt - o.sentAt);
        t.diagnostic(
          `node ${cut} (led partitions ${cutLed.join(', ')}) cut off: its publishes to them answered ${onCut.map((o) => o.status).join(', ')} in ${times.join(', ')} ms; ` +
            `the majority side named new leaders of all of them ${electedMs} ms and acknowledged on each ${majorityOkMs} ms after the cut`,
        );
        for (const o of onCut) {
          assert.ok(o.status === 503 || (o.status === 207 && o.acked.length === 0), `the cut node must not acknowledge: ${o.status} ${o.text.slice(0, 300)}`);
          if (o.status === 503) assert.match(o.text, /"status":503/);
          // The deadline (2 s) plus slack for this loaded machine.
          assert.ok(o.doneAt - o.sentAt < deadlineMs + 5000, `the cut node answered after ${o.doneAt - o.sentAt} ms`);
        }

        for (const n of nodes) for (const p of partitions) await until(`a 200 on node ${n} after the heal`, 20_000, async () => ((await send(n, p)).status === 200 ? true : undefined));
        const stored = await converged(name, 30_000);
        t.diagnostic(`the healed node converged ${Date.now() - healedAt} ms after the heal`);
        const acked = new Set(outcomes.flatMap((o) => o.acked));
        checkHistory(stored, sent, acked);
        const storedIds = new Set([...stored.values()].flat().map((s) => s.event.metadata.eid));
        // What the cut node refused was never committed (its old term's entries lose to the new leaders').
        for (const o of onCut) for (const e of o.eids) assert.ok(!storedIds.has(e), `event ${e} refused on the cut node is stored`);
      }));

    await t.test('a follower restarted after a few hundred batches converges by fetching the log it lacked', () =>
      withLogs(async () => {
        const metaLeader = await allUp();
        const name = 'repl.shipping';
        const topic = await createEventType(name);
        // The node leading fewest partitions, preferably not the metadata leader either.
        const led = await agreedLeaders(name, 20_000);
        const follower = nodes.map((i) => [i, led.get(i)!.length + (i === metaLeader ? 0.5 : 0)] as const).sort((a, b) => a[1] - b[1])[0]![0];
        const others = nodes.filter((i) => i !== follower);
        const shippedBefore = logLines(follower, 'partition replica fetched the log it lacked; installing the snapshot').filter((l) => l.topic === topic).length;
        assert.equal(shippedBefore, 0);
        kill9(follower);
        const sent: Sent[] = [];
        const outcomes: Outcome[] = [];
        const batches = 400;
        let ok = 0;
        const started = Date.now();
        // Each batch has one event per partition: every partition group gets `batches` entries, more
        // than the 16 x 16 a leader keeps in memory for a lagging follower. One producer: batches that
        // reach a leader between two of its turns share an entry, so concurrent producers would make
        // fewer entries than batches.
        const producer = async (j: number) => {
          const keys = keysFor(`ship${j}`);
          const seqs = new Map<string, number>();
          while (ok < batches) {
            if (Date.now() - started > 90_000) throw new Error(`only ${ok} of ${batches} batches acknowledged in 90 s`);
            const batch = partitions.flatMap((p) => batchOf(keys[Number(p)]![0]!, p, seqs, 1));
            sent.push(...batch);
            const o = await publishTo(others[j % 2]!, name, batch, `ship${j}`);
            outcomes.push(o);
            if (o.status === 200) ok++;
            else await sleep(50);
          }
        };
        await producer(0);
        t.diagnostic(`${ok} batches of ${partitionCount} events acknowledged by nodes ${others.join(', ')} in ${Date.now() - started} ms while node ${follower} was down`);
        const out = cluster.run('up', '3');
        assert.match(out, new RegExp(`node ${follower}: started`));
        const restartedAt = Date.now();
        const stored = await converged(name, 60_000);
        t.diagnostic(`node ${follower} converged ${Date.now() - restartedAt} ms after its restart`);
        const acked = new Set(outcomes.flatMap((o) => o.acked));
        const { stored: n } = checkHistory(stored, sent, acked);
        assert.ok(n >= batches * partitionCount);
        const shipped = logLines(follower, 'partition replica fetched the log it lacked; installing the snapshot').filter((l) => l.topic === topic);
        assert.deepEqual(
          [...new Set(shipped.map((l) => String(l.partition)))].sort(),
          partitions,
          `node ${follower} fetched the log of every partition (it lacked ${batches} entries of each); its log: ${JSON.stringify(shipped)}`,
        );
      }));

    await t.test('a follower down while retention removed the log it lacked catches up from the retained start, with the same offsets', () =>
      withLogs(async () => {
        await allUp();
        const name = 'repl.retention';
        const topic = await createEventType(name);
        const follower = 3;
        const others = nodes.filter((i) => i !== follower);
        const retentionLines = (i: number) => logLines(i, 'retention removed events').filter((l) => (l as { eventType?: string }).eventType === name);
        kill9(follower);
        const keys = keysFor('ret');
        const seqs = new Map<string, number>();
        const sent: Sent[] = [];
        const publishBatches = async (n: number) => {
          for (let b = 0; b < n; ) {
            const batch = partitions.flatMap((p) => batchOf(keys[Number(p)]![0]!, p, seqs, 1));
            const o = await publishTo(others[b % 2]!, name, batch, 'ret');
            if (o.status === 200) {
              sent.push(...batch);
              b++;
            } else await sleep(50);
          }
        };
        await publishBatches(30);
        await sleep(1500);
        // Everything published so far expires on the two running nodes; then retention is long again.
        await setRetention(name, 1000);
        await until('retention removed the first batches of every partition on both running nodes', 30_000, async () =>
          others.every((i) => new Set(retentionLines(i).map((l) => String(l.partition))).size === partitionCount) ? true : undefined);
        await setRetention(name, 3_600_000);
        await sleep(1500);
        // More entries than a leader keeps for a lagging follower (16 x 16): its snapshot moves past the
        // retained start, so the follower has a retained log to fetch before it.
        await publishBatches(280);
        const before = await partitionsOf(others[0]!, name);
        for (const p of before) assert.ok(offsetNumber(p.oldest_available_offset) >= 30, `partition ${p.partition} starts after the removed batches: ${p.oldest_available_offset}`);
        const out = cluster.run('up', '3');
        assert.match(out, new RegExp(`node ${follower}: started`));
        const restartedAt = Date.now();
        const stored = await converged(name, 60_000, nodes, true);
        t.diagnostic(`node ${follower} converged ${Date.now() - restartedAt} ms after its restart`);
        assert.deepEqual(await partitionsOf(follower, name), await partitionsOf(others[0]!, name), 'the same oldest and newest offsets everywhere');
        for (const p of partitions) {
          const want = sent.filter((x) => x.partition === p).slice(30).map((x) => x.eid);
          assert.deepEqual(stored.get(p)!.map((x) => x.event.metadata.eid), want, `partition ${p}: the events after the retained start`);
        }
        const fetched = logLines(follower, 'partition replica fetched the retained log before its snapshot: it reads from the retained start').filter((l) => l.topic === topic);
        assert.deepEqual([...new Set(fetched.map((l) => String(l.partition)))].sort(), partitions, `node ${follower} fetched the retained log of every partition: ${JSON.stringify(fetched)}`);
      }));

    await t.test('a subscription streamed on one node continues on another from its committed cursor after kill -9 (and restart) of the first', () =>
      withLogs(async () => {
        const metaLeader = await allUp();
        const name = 'repl.subscribed';
        await createEventType(name);
        // A: not the metadata leader (its kill then tests the stream, not a metadata failover too).
        const a = nodes.find((i) => i !== metaLeader)!;
        const b = nodes.find((i) => i !== metaLeader && i !== a)!;
        const keys = keysFor('sub');
        const seqs = new Map<string, number>();
        const perPartition = 5;
        for (let k = 0; k < perPartition; k++) {
          for (const p of partitions) {
            const o = await publishTo(nodes[k % 3]!, name, batchOf(keys[Number(p)]![0]!, p, seqs, 1));
            assert.equal(o.status, 200, o.text);
          }
        }
        const created = await call(url(b), 'POST', '/subscriptions', { owning_application: 'partition-test', event_types: [name], read_from: 'begin' });
        assert.equal(created.status, 201, created.text);
        const id = (created.body as { id: string }).id;

        const onA = await SubscriptionStreamClient.open(url(a), id, 'batch_limit=1&max_uncommitted_events=100&batch_flush_timeout=1');
        let onB: SubscriptionStreamClient | undefined;
        try {
          await onA.waitFor((c) => c.events().length >= perPartition * partitionCount, 20_000, `all ${perPartition * partitionCount} events on node ${a}`);
          const got = (c: SubscriptionStreamClient, p: string) => c.batches().filter((l) => l.cursor.partition === p);
          // Commit the first two events of each partition (the second batch's cursor).
          const toCommit = partitions.map((p) => got(onA, p)[1]!.cursor);
          const committed = await onA.commit(toCommit);
          assert.equal(committed.status, 204, committed.text);
          const seenOnB = await call(url(b), 'GET', `/subscriptions/${id}/cursors`);
          assert.deepEqual(
            (seenOnB.body as { items: SubscriptionCursor[] }).items.map((c) => [c.partition, c.offset]).sort(),
            toCommit.map((c) => [c.partition, c.offset]).sort(),
            'node B sees the committed cursors',
          );
          kill9(a);
          await onA.close();
          const streamB = await SubscriptionStreamClient.open(url(b), id, 'batch_limit=1&max_uncommitted_events=100&batch_flush_timeout=1');
          onB = streamB;
          // The killed node's session holds its partitions until that node is back (it closes the
          // sessions of its previous run at start).
          const out = cluster.run('up', '3');
          assert.match(out, new RegExp(`node ${a}: started`));
          const rest = (perPartition - 2) * partitionCount;
          await streamB.waitFor((c) => c.events().length >= rest, 30_000, `the ${rest} uncommitted events on node ${b}`);
          await sleep(1500); // anything re-delivered or extra would arrive now
          for (const p of partitions) {
            const fromA = got(onA, p).flatMap((l) => l.events!.map((e): [string, unknown] => [l.cursor.offset, e.metadata['eid']]));
            const fromB = got(streamB, p).flatMap((l) => l.events!.map((e): [string, unknown] => [l.cursor.offset, e.metadata['eid']]));
            // No committed event again, none skipped, every uncommitted one again, in order.
            assert.deepEqual(fromB, fromA.slice(2), `partition ${p} on node ${b} continues after the committed cursor`);
          }
          const last = partitions.map((p) => got(streamB, p).at(-1)!.cursor);
          const commitB = await streamB.commit(last);
          assert.equal(commitB.status, 204, commitB.text);
          const c = nodes.find((i) => i !== a && i !== b)!;
          await until(`node ${c} to show the cursors committed on node ${b}`, 10_000, async () => {
            const r = await call(url(c), 'GET', `/subscriptions/${id}/cursors`);
            const items = (r.body as { items?: SubscriptionCursor[] } | undefined)?.items ?? [];
            return JSON.stringify(items.map((x) => [x.partition, x.offset]).sort()) === JSON.stringify(last.map((x) => [x.partition, x.offset]).sort()) ? true : undefined;
          });
          // The stream on B keeps working: a new event arrives there.
          const o = await publishTo(a, name, batchOf(keys[0]![0]!, '0', seqs, 1));
          assert.equal(o.status, 200, o.text);
          await streamB.waitFor((cl) => cl.events().length >= rest + 1, 15_000, 'a new event on node B');
        } finally {
          await onA.close();
          await onB?.close();
        }
      }));
  } finally {
    try {
      sweep();
    } catch {
      // nothing to remove
    }
    const said = cluster.destroy();
    if (said !== undefined) t.diagnostic(said);
  }
});
