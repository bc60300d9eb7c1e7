/**
 * `npm run bench:cluster`: partition replication on three local Brook nodes beside NATS JetStream R3 on
 * three local nats-servers, same machine, same events, same run (issue 9, section 5 "Figures").
 *
 * Brook: three `node dist/main.js` children started as cluster/up 3 starts them, on free loopback ports
 * and temp data dirs, BROOK_REPLICATION_FACTOR=3 (each partition a three-voter Raft group; a publish is
 * answered 200 once its entries are fsynced on a majority), log level warn, everything else default.
 * One event type, 4 partitions, hash partitioning on order_number, the business events of
 * `npm run bench` (~526 bytes each). Producers are spread over the three nodes (keep-alive HTTP,
 * undici, one connection per producer per node); a node that does not lead a partition forwards its
 * part of the batch to the leader.
 * NATS: `nats-server` (Debian's 2.9.10) x 3 with JetStream, a static route list, default settings (file
 * store, flushed by the OS and synced every 2 minutes: a PubAck does NOT wait for an fsync). Four R3
 * file streams, one per partition (bench/lib/nats-load.ts), the same events routed by the same hash,
 * producers spread over the servers.
 *
 * Rounds. Each round starts fresh Brook clusters (temp data dirs, new processes) and stops them at its
 * end; NATS stays up for the whole run. Within a round every figure is measured for each system in
 * turn (batch 1000: A, B, ...; batch 10: A, B, ...; then (b)), so the systems are interleaved round by
 * round, not phase by phase. What rotates, because an A/A run of an earlier version of this bench (the
 * same build on both sides, one pair of clusters kept for the whole run) had the first-started cluster
 * lose 10 of 12 batch-1000 rounds, with leaders placed 2-1-1 in one cluster and 3-1-0 in the other:
 *   - which Brook cluster is started first: alternates every round;
 *   - the order the systems are measured in: rotates every second round (so over 4 rounds of an A/B
 *     each of the 2x2 start/measure orders happens once);
 *   - leader placement: each cluster waits until every partition is led by its preferred leader (so
 *     both clusters of an A/B have their leaders on the same nodes), and the node that leads two of the
 *     4 partitions moves on by one each round (0, 1 or 2 idle event types are created first);
 *   - the node the load generator sends its first request to (then round-robin over the three).
 * Leader changes during a phase are reported under the figure. The summary gives per-round ratios
 * (brook/old, brook/nats) and their median. Under each (b) figure: a disk probe's fdatasyncs over the
 * phase (bench/lib/disk-probe.ts: by no broker, so a stall it shows is the disk's), each node's WAL
 * fdatasyncs over 0.1 / 0.5 / 1 s and Raft host phases over 0.5 / 1 s, and what the nodes logged in
 * the phase about leadership (changes, elections, hand-overs), publish parts they retried, and
 * warnings (the nodes run at log level info).
 *
 * Figures:
 *   (a) publish throughput, closed loop: batches of 1000 (6 producers) and of 10 (60 producers),
 *       2 s warm-up + 8 s;
 *   (b) publish latency at 5,000 events/s, open loop: batches of 10 due every 2 ms (500/s), spread over
 *       the nodes in turn, latency from the due time to the answer (or to the last PubAck), 2 s + 10 s;
 *   (c) failover gap (Brook only, after the rounds, NATS stopped, a fresh cluster): a user_defined event
 *       type of 4 partitions; publish batches of 10 to one partition at 100 requests/s (1,000 events/s,
 *       open loop) through a node that does not lead it, kill -9 the partition's leader, and take the
 *       time from the kill to the first 200 of a request SENT after the kill. The killed node is started
 *       again and the cluster allowed to catch up between trials.
 *
 *   npm run bench:cluster                      # 2 rounds of (a) and (b), 5 failovers, ~6 min
 *   npm run bench:cluster -- --rounds 4 --failovers 5   # rounds in multiples of 4 balance the orders
 *   npm run bench:cluster -- --only a,b        # phases; --systems brook (or nats) for one system
 *   npm run bench:cluster -- --quick           # short phases (smoke)
 *   npm run bench:cluster -- --cpu-prof DIR    # Brook nodes with --cpu-prof (one profile per pid)
 *   npm run bench:cluster -- --json FILE --no-build
 *   npm run bench:cluster -- --only b --rate 100     # (b) at 1,000 events/s instead of 5,000
 *   npm run bench:cluster -- --node-args '--max-semi-space-size=64' [--ab-node-args '...']   # node options of the nodes
 *   npm run bench:cluster -- --warm 0           # no warm-up publishing (cold processes; default 30 s, 0 with --quick)
 *   npm run bench:cluster -- --ab DIR --only a,b   # A/B: a second Brook cluster runs the build in DIR
 *                                              # (its dist/main.js), measured in the same rounds as
 *                                              # 'brook' (this checkout) and NATS, in rotating order;
 *                                              # --ab with this checkout's own path is an A/A run
 *
 * Warm-up. A Brook node is a fresh Node.js process at the start of each round: its code runs in V8's
 * interpreter and baseline tiers until the optimizing compiler has compiled it, and that compiling runs
 * on V8's worker threads beside the load. With three nodes on 2 shared cores this takes tens of
 * seconds of load; measured cold, 40 % of the cluster's CPU in (b) was the optimizing compiler and the
 * main threads ran baseline code (perf, 2026-11-27, docs/benchmarks.md). A broker in service is warm, so
 * each fresh cluster first gets --warm seconds (default 30) of publishing, batches of 10 and of 1000
 * closed loop, not measured; NATS (Go, compiled ahead of time) needs none.
 *
 * Each Brook figure line is followed by the WAL fdatasyncs per node during the phase and, where the
 * build exports brook_raft_host_phase_seconds, the mean of each phase of the Raft host's commit path
 * (src/broker/raft-host/node-host.ts, HostPhase).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { Pool } from 'undici';
import { brokerEntryOf, buildBroker, cpuSeconds } from './lib/broker.js';
import { natsServerVersion, startBrookCluster, startNatsCluster, type BrookCluster, type NatsCluster } from './lib/clusters.js';
import { batchBodies, eventTypeBody, orderEventText } from './lib/events.js';
import { closedLoop, openLoop, publishPool, RoundRobin, type PublishResult } from './lib/load.js';
import { createNatsStreams, natsBatches, natsClients, natsClosedLoop, natsOpenLoop, natsStreamLeaders, type NatsClients } from './lib/nats-load.js';
import { fmtInt, fmtMs, median, sleep } from './lib/stats.js';
import { diskProbeText, startDiskProbe, type DiskProbeResult } from './lib/disk-probe.js';

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const quick = process.argv.includes('--quick');
const rounds = Number(argValue('--rounds') ?? '2');
const failovers = Number(argValue('--failovers') ?? '5');
const only = argValue('--only')?.split(',');
const want = (phase: string) => only === undefined || only.includes(phase);
const abRoot = argValue('--ab') === undefined ? undefined : resolve(argValue('--ab')!);
const systems = [...((argValue('--systems') ?? 'brook,nats').split(',') as System[]), ...(abRoot === undefined ? [] : (['old'] as const))];
// Extra node options for this checkout's nodes and for the --ab build's (e.g. a V8 flag tried side by side).
const nodeArgs = argValue('--node-args')?.split(' ').filter((a) => a !== '') ?? [];
const abNodeArgs = argValue('--ab-node-args')?.split(' ').filter((a) => a !== '') ?? [];
const cpuProfDir = argValue('--cpu-prof') === undefined ? undefined : resolve(argValue('--cpu-prof')!);
const jsonOut = argValue('--json');
const cfg = quick
  ? { warmupMs: 1000, durationMs: 3000, latencyWarmupMs: 1000, latencyMs: 4000 }
  : { warmupMs: 2000, durationMs: 8000, latencyWarmupMs: 2000, latencyMs: 10_000 };
const partitions = 4;
const producers1000 = 6;
const producers10 = 60;
// requests/s of 10 events: 500 = the 5,000 events/s of issue 9; --rate N measures (b) at another rate.
const latencyRate = Number(argValue('--rate') ?? '500');
// Seconds of publishing each fresh Brook cluster gets before its first measured figure of a round (see
// the header, "Warm-up"); 0 measures cold processes as the bench did before.
const warmS = Number(argValue('--warm') ?? (quick ? '0' : '30'));
const failoverRate = 100; // requests/s of 10 events to one partition
const failoverTimeoutMs = 20_000;
const targetFailoverMs = 3000;
const targetP99Ms = 20;

/** 'brook': this checkout's build; 'old': the --ab build. */
type System = 'brook' | 'old' | 'nats';
const isBrook = (s: System) => s !== 'nats';
const log = (s: string) => process.stdout.write(s + '\n');
const load = () => `load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
const mb = (b: number) => (b / 1e6).toFixed(1);

interface ThroughputFigure extends PublishResult {
  system: System;
  round: number;
  batch: number;
  producers: number;
  clusterCores: number;
  benchCores: number;
  load: number[];
  /** Brook: where the bench's partitions were led when the round started. */
  placement?: Placement | undefined;
}
interface LatencyFigure extends PublishResult {
  system: System;
  round: number;
  sendLagP99Ms: number;
  inFlightMax: number;
  clusterCores: number;
  benchCores: number;
  load: number[];
  placement?: Placement | undefined;
  /** The disk probe over the phase (bench/lib/disk-probe.ts). */
  disk?: Omit<DiskProbeResult, 'slow'>;
}
interface FailoverFigure {
  trial: number;
  partition: string;
  killed: number;
  via: number;
  newLeader: number | null;
  gapMs: number | null;
  gapAnyAckMs: number | null;
  lastAckBeforeKillMs: number | null;
  failedAfterKill: number;
  statusesAfterKill: Record<string, number>;
  inFlightAtKill: number;
  recoverMs: number;
  load: number[];
}

/** CPU of a set of processes and of this one over a phase, as cores busy. */
function cpuMeter(pids: readonly number[]): () => { clusterCores: number; benchCores: number } {
  const t0 = performance.now();
  const c0 = pids.reduce((s, p) => s + cpuSeconds(p), 0);
  const self0 = process.cpuUsage();
  return () => {
    const wall = (performance.now() - t0) / 1000;
    const self = process.cpuUsage(self0);
    return { clusterCores: (pids.reduce((s, p) => s + cpuSeconds(p), 0) - c0) / wall, benchCores: (self.user + self.system) / 1e6 / wall };
  };
}

const hostPhases = ['wait', 'write', 'followerAck', 'ackApply'] as const;

interface NodeTotals {
  count: number;
  sum: number;
  /** Per phase of the Raft host's commit path (brook_raft_host_phase_seconds; absent in older builds). */
  phases: Record<string, { count: number; sum: number; within: Record<string, number> }>;
  /** The Raft host's counts (brook_raft_host_work_total{what}; absent in older builds). */
  work: Record<string, number>;
  /** The append streams' counts (brook_append_stream_total{what}; absent in older builds). */
  stream: Record<string, number>;
  /** fdatasyncs that took at most 0.1, 0.5 and 1 s (the histogram's buckets), to count the long ones. */
  within: Record<string, number>;
}

/** Buckets of brook_wal_fsync_duration_seconds whose complement the bench counts: fdatasyncs longer than these. */
const fsyncLong = ['0.1', '0.5', '1'] as const;
/** Buckets of brook_raft_host_phase_seconds likewise: a host phase of seconds is a stall of every group on that node. */
const phaseLong = ['0.5', '1'] as const;

const hostWork = ['turns', 'readies', 'writes', 'durableWrites', 'sends', 'messagesSent', 'messagesReceived', 'stampedMessagesSent'] as const;
const streamWork = ['requests', 'messages', 'replies', 'replyMessages'] as const;

/** fdatasyncs of the WAL so far on one node (brook_wal_fsync_duration_seconds _count and _sum), and the host's phases. */
async function fsyncTotals(url: string): Promise<NodeTotals> {
  try {
    const text = await (await fetch(`${url}/metrics/prometheus`, { signal: AbortSignal.timeout(3000) })).text();
    const num = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    const phase = (p: string, what: string) => Number(new RegExp(`^brook_raft_host_phase_seconds_${what}\\{phase="${p}"\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    const bucket = (p: string, le: string) => Number(new RegExp(`^brook_raft_host_phase_seconds_bucket\\{le="${le}",phase="${p}"\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    const phases = Object.fromEntries(hostPhases.map((p) => [p, { count: phase(p, 'count'), sum: phase(p, 'sum'), within: Object.fromEntries(phaseLong.map((le) => [le, bucket(p, le)])) }]));
    const work = Object.fromEntries(hostWork.map((w) => [w, Number(new RegExp(`^brook_raft_host_work_total\\{what="${w}"\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN)]));
    const stream = Object.fromEntries(streamWork.map((w) => [w, Number(new RegExp(`^brook_append_stream_total\\{what="${w}"\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN)]));
    const within = Object.fromEntries(fsyncLong.map((le) => [le, Number(new RegExp(`^brook_wal_fsync_duration_seconds_bucket\\{le="${le}"\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN)]));
    return { count: num('brook_wal_fsync_duration_seconds_count'), sum: num('brook_wal_fsync_duration_seconds_sum'), phases, work, stream, within };
  } catch {
    return { count: NaN, sum: NaN, phases: {}, work: {}, stream: {}, within: {} };
  }
}

/** Per node over a phase: fsyncs per second and their mean duration (where the commit path waits). */
async function fsyncMeter(cluster: BrookCluster): Promise<() => Promise<string>> {
  const t0 = performance.now();
  const before = await Promise.all(cluster.members.map((m) => fsyncTotals(m.url)));
  return async () => {
    const wall = (performance.now() - t0) / 1000;
    const after = await Promise.all(cluster.members.map((m) => fsyncTotals(m.url)));
    return after
      .map((a, k) => {
        const n = a.count - before[k]!.count;
        const s = a.sum - before[k]!.sum;
        const phases = hostPhases
          .map((p) => {
            const pn = (a.phases[p]?.count ?? NaN) - (before[k]!.phases[p]?.count ?? NaN);
            const ps = (a.phases[p]?.sum ?? NaN) - (before[k]!.phases[p]?.sum ?? NaN);
            const long = phaseLong.map((le) => pn - ((a.phases[p]?.within[le] ?? NaN) - (before[k]!.phases[p]?.within[le] ?? NaN)));
            const longText = long.every(Number.isFinite) && long[0]! > 0 ? ` (over 0.5/1 s: ${long.join('/')})` : '';
            return pn > 0 ? `${p} ${((1000 * ps) / pn).toFixed(1)}${longText}` : undefined;
          })
          .filter((x) => x !== undefined);
        const work = hostWork
          .map((w) => {
            const d = (a.work[w] ?? NaN) - (before[k]!.work[w] ?? NaN);
            return Number.isFinite(d) ? `${w} ${fmtInt(d / wall)}` : undefined;
          })
          .filter((x) => x !== undefined);
        const stream = streamWork
          .map((w) => {
            const d = (a.stream[w] ?? NaN) - (before[k]!.stream[w] ?? NaN);
            return Number.isFinite(d) ? `${w} ${fmtInt(d / wall)}` : undefined;
          })
          .filter((x) => x !== undefined);
        // fdatasyncs longer than 0.1 / 0.5 / 1 s: one of seconds on every node at once is the disk's.
        const long = fsyncLong.map((le) => n - ((a.within[le] ?? NaN) - (before[k]!.within[le] ?? NaN)));
        return (
          `node ${k + 1} ${fmtInt(n / wall)}/s mean ${n > 0 ? ((1000 * s) / n).toFixed(2) : '-'} ms (busy ${((100 * s) / wall).toFixed(0)} %` +
          `${long.every(Number.isFinite) ? `; over 0.1/0.5/1 s: ${long.join('/')}` : ''})` +
          (phases.length > 0 ? ` [host phase means, ms: ${phases.join(', ')}]` : '') +
          (work.length > 0 ? ` [host per s: ${work.join(', ')}]` : '') +
          (stream.length > 0 ? ` [append stream per s: ${stream.join(', ')}]` : '')
        );
      })
      .join(', ');
  };
}

/**
 * What each node logged between two wall-clock times about leadership and retries (partition and
 * metadata leader changes, elections, hand-overs, publish parts retried) and every warning: a phase
 * with a stall of seconds says here whether a leader moved or refused, and where.
 */
function nodeEvents(cluster: BrookCluster, fromMs: number, toMs: number, perNodeMax = 12): string[] {
  const out: string[] = [];
  for (const m of cluster.members) {
    let text = '';
    try {
      text = readFileSync(m.logFile, 'utf8');
    } catch {
      continue;
    }
    const lines: string[] = [];
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      const t = typeof o.time === 'string' ? Date.parse(o.time) : Number(o.time);
      if (!(t >= fromMs && t <= toMs)) continue;
      const msg = String(o.msg ?? '');
      if (!(Number(o.level) >= 40 || /leader|election|pre-vote|handing|retried/i.test(msg))) continue;
      const where = o.group !== undefined ? `g${String(o.group)}${o.partition !== undefined ? `/p${String(o.partition)}` : ''} ` : o.raftId !== undefined ? 'metadata ' : '';
      const extra = [o.leader !== undefined ? `leader ${String(o.leader)}` : '', o.to !== undefined ? `to ${String(o.to)}` : '', o.term !== undefined ? `term ${String(o.term)}` : '', o.retries !== undefined ? `${JSON.stringify(o.retries)} over ${String(o.overMs)} ms (${String(o.answer).slice(0, 80)})` : ''].filter((x) => x !== '');
      lines.push(`+${((t - fromMs) / 1000).toFixed(3)} s ${where}${msg}${extra.length > 0 ? `: ${extra.join(', ')}` : ''}`);
    }
    for (const l of lines.slice(0, perNodeMax)) out.push(`node ${m.id} ${l}`);
    if (lines.length > perNodeMax) out.push(`node ${m.id} ... ${lines.length - perNodeMax} more`);
  }
  return out;
}

async function getJson(url: string): Promise<unknown> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return undefined;
    return await res.json();
  } catch {
    return undefined;
  }
}

interface PartitionView {
  event_type: string;
  partition: string;
  leader: number | null;
  /** The first replica of the placement, whom the leadership balancer gives the leadership. */
  preferred_leader: number;
  replicas: number[];
  under_replicated: boolean;
}
interface ClusterView {
  metadata: { leader: number | null };
  partitions: PartitionView[];
  under_replicated_partitions: number;
  leaderless_partitions: number;
}

/** Waits until every live node sees every partition of `eventType` with the same leader and none under-replicated. */
async function partitionsSettled(cluster: BrookCluster, eventType: string, timeoutMs = 60_000): Promise<Map<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const views = (await Promise.all(cluster.members.map((m) => getJson(`${m.url}/cluster`)))) as (ClusterView | undefined)[];
    const ok = views.every((v) => v !== undefined && v.under_replicated_partitions === 0 && v.leaderless_partitions === 0);
    if (ok) {
      const leaders = views.map((v) => v!.partitions.filter((p) => p.event_type === eventType).map((p) => `${p.partition}:${p.leader}`).sort().join(','));
      if (leaders.every((l) => l === leaders[0]) && leaders[0]!.split(',').length === partitions) {
        return new Map(views[0]!.partitions.filter((p) => p.event_type === eventType).map((p) => [p.partition, p.leader!]));
      }
      last = JSON.stringify(leaders);
    } else {
      last = JSON.stringify(views.map((v) => (v === undefined ? 'no answer' : `ur=${v.under_replicated_partitions} ll=${v.leaderless_partitions}`)));
    }
    if (Date.now() > deadline) throw new Error(`partitions of ${eventType} not settled within ${timeoutMs} ms: ${last}`);
    await sleep(200);
  }
}

async function createEventType(cluster: BrookCluster, body: object): Promise<void> {
  const leader = await cluster.leader();
  const res = await fetch(`${leader.url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`creating an event type: ${res.status} ${await res.text()}`);
}

/** Batches of `size` events for a user_defined event type, every event on `partition`. */
function partitionBodies(size: number, count: number, seed: number, partition: string): Buffer[] {
  return Array.from({ length: count }, (_, b) => {
    const texts: string[] = [];
    for (let k = 0; k < size; k++) {
      const e = JSON.parse(orderEventText(seed + b * size + k)) as { metadata: Record<string, unknown> };
      e.metadata.partition = partition;
      texts.push(JSON.stringify(e));
    }
    return Buffer.from('[' + texts.join(',') + ']');
  });
}

/** One failover trial: see the header. */
async function failoverTrial(cluster: BrookCluster, eventType: string, trial: number): Promise<FailoverFigure> {
  const leaders = await partitionsSettled(cluster, eventType);
  // Rotate over the partitions; publish through the next node after the leader.
  const partition = String((trial - 1) % partitions);
  const killed = leaders.get(partition)!;
  const via = cluster.members[killed % cluster.members.length]!;
  const bodies = partitionBodies(10, 50, 50_000_000 + trial * 100_000, partition);
  const pool = new Pool(via.url, { connections: 1024, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const path = `/event-types/${eventType}/events`;
  const records: { sent: number; done: number; status: number }[] = [];
  const interval = 1000 / failoverRate;
  const t0 = performance.now() + 20;
  let killAt = Infinity;
  let firstAckAfterKill = Infinity;
  let i = 0;
  let inFlight = 0;
  let inFlightAtKill = 0;
  const pending: Promise<void>[] = [];
  const loadAtKill = loadavg();
  await new Promise<void>((finished) => {
    const tick = () => {
      const now = performance.now();
      while (t0 + i * interval <= now) {
        const sent = t0 + i * interval;
        const body = bodies[i % bodies.length]!;
        i++;
        inFlight++;
        pending.push(
          pool
            .request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body })
            .then(async (res) => {
              await res.body.dump();
              return res.statusCode;
            })
            .catch(() => 0)
            .then((status) => {
              inFlight--;
              const done = performance.now();
              records.push({ sent, done, status });
              if (status === 200 && sent >= killAt && done < firstAckAfterKill) firstAckAfterKill = done;
            }),
        );
      }
      if (killAt === Infinity && now >= t0 + 2000) {
        killAt = performance.now();
        inFlightAtKill = inFlight;
        void cluster.kill(killed, 'SIGKILL');
      }
      if (now > killAt + failoverTimeoutMs || now > firstAckAfterKill + 1000) {
        finished();
        return;
      }
      setTimeout(tick, Math.max(0, t0 + i * interval - performance.now()));
    };
    setTimeout(tick, 20);
  });
  await Promise.race([Promise.all(pending), sleep(15_000)]);
  await pool.destroy();
  const after = records.filter((r) => r.done >= killAt);
  const statusesAfterKill: Record<string, number> = {};
  for (const r of after) statusesAfterKill[String(r.status)] = (statusesAfterKill[String(r.status)] ?? 0) + 1;
  const anyAck = after.filter((r) => r.status === 200).map((r) => r.done);
  const beforeAcks = records.filter((r) => r.status === 200 && r.done < killAt).map((r) => r.done);
  const view = (await getJson(`${via.url}/cluster`)) as ClusterView | undefined;
  const newLeader = view?.partitions.find((p) => p.event_type === eventType && p.partition === partition)?.leader ?? null;
  // Start the killed node again and let it catch up before the next trial.
  const r0 = performance.now();
  cluster.restart(killed);
  await cluster.leader(60_000);
  await partitionsSettled(cluster, eventType, 90_000);
  const recoverMs = performance.now() - r0;
  return {
    trial,
    partition,
    killed,
    via: via.id,
    newLeader,
    gapMs: Number.isFinite(firstAckAfterKill) ? firstAckAfterKill - killAt : null,
    gapAnyAckMs: anyAck.length > 0 ? Math.min(...anyAck) - killAt : null,
    lastAckBeforeKillMs: beforeAcks.length > 0 ? killAt - Math.max(...beforeAcks) : null,
    failedAfterKill: after.filter((r) => r.status !== 200).length,
    statusesAfterKill,
    inFlightAtKill,
    recoverMs,
    load: loadAtKill,
  };
}

/** Where a cluster's partitions of the bench's event type are led, and by which node its metadata. */
interface Placement {
  /** Leader node per partition, in partition order (null: none known). */
  leaders: (number | null)[];
  metadataLeader: number | null;
}

const placementText = (p: Placement) => `partition leaders ${p.leaders.map((l, k) => `${k}->${l ?? '-'}`).join(' ')}, metadata leader ${p.metadataLeader ?? '-'}`;

/** The placement as the first node that answers sees it. */
async function placementOf(cluster: BrookCluster, eventType: string): Promise<Placement | undefined> {
  for (const m of cluster.members) {
    const v = (await getJson(`${m.url}/cluster`)) as ClusterView | undefined;
    if (v === undefined) continue;
    const mine = v.partitions.filter((p) => p.event_type === eventType).sort((a, b) => Number(a.partition) - Number(b.partition));
    return { leaders: mine.map((p) => p.leader), metadataLeader: v.metadata.leader };
  }
  return undefined;
}

/**
 * Waits until every node sees each partition of `eventType` led by its preferred leader (the first
 * replica of its placement), none under-replicated: the placement's rule then puts the leaders of both
 * Brook clusters of an A/B on the same nodes, where the first election alone left them 2-1-1 in one
 * and 3-1-0 in the other. The leadership balancer gets there within a few of its 5 s passes; if it does
 * not within the timeout, the run goes on with what it has (and says so).
 */
async function preferredLeadersSettled(cluster: BrookCluster, eventType: string, timeoutMs = 45_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const views = (await Promise.all(cluster.members.map((m) => getJson(`${m.url}/cluster`)))) as (ClusterView | undefined)[];
    const settled = views.every((v) => {
      if (v === undefined || v.under_replicated_partitions !== 0 || v.leaderless_partitions !== 0) return false;
      const mine = v.partitions.filter((p) => p.event_type === eventType);
      return mine.length === partitions && mine.every((p) => p.leader === p.preferred_leader);
    });
    if (settled) return true;
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
}

async function main(): Promise<void> {
  log(`brook bench:cluster ${quick ? '(quick) ' : ''}${new Date().toISOString()}; ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}`);
  log(`uptime: ${readFileSync('/proc/loadavg', 'utf8').trim()} (${load()}); the machine is shared: other work may be running on the same cores`);
  if (cpuProfDir !== undefined) mkdirSync(cpuProfDir, { recursive: true });
  if (!process.argv.includes('--no-build')) {
    log('building the broker (tsc -p tsconfig.json, incremental) so dist/ matches src/ ...');
    buildBroker();
  }
  const natsVersion = natsServerVersion();
  if (systems.includes('nats') && natsVersion === undefined) throw new Error('nats-server is not installed (apt-get install -y nats-server), or pass --systems brook');
  const started = performance.now();
  const figures: Figures = { throughput: [], latency: [], failover: [] };
  const typeName = 'bench.cluster-orders';
  const brookSystems = systems.filter(isBrook);
  // The measured systems in the order of `systems` (brook, nats, then old).
  const measured = systems;

  /** A fresh three-node cluster of `system`'s build, its placement rotated for `round` (see the header). */
  const startBrook = async (system: System, round: number): Promise<{ cluster: BrookCluster; placement: Placement | undefined; settled: boolean }> => {
    const cluster = await startBrookCluster({
      // At info the nodes log leadership changes, elections and retried publish parts (none per
      // request): nodeEvents() prints those of each measured phase.
      env: { BROOK_REPLICATION_FACTOR: '3', BROOK_LOG_LEVEL: 'info' },
      ...(system === 'old' ? { entry: brokerEntryOf(abRoot!), nodeArgs: abNodeArgs } : { nodeArgs: [...nodeArgs, ...(cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`])] }),
    });
    try {
      // Event types created before the bench's move its preferred leaders on by one node each
      // (placement.ts gives the next partition to the node that leads fewest, then the lowest id).
      for (let f = 0; f < (round - 1) % 3; f++) await createEventType(cluster, eventTypeBody(`bench.cluster-filler-${f}`, 'hash', partitions));
      await createEventType(cluster, eventTypeBody(typeName, 'hash', partitions));
      await partitionsSettled(cluster, typeName);
      const settled = await preferredLeadersSettled(cluster, typeName);
      return { cluster, placement: await placementOf(cluster, typeName), settled };
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  };

  let nats: NatsCluster | undefined;
  let natsc: NatsClients | undefined;
  let brookPools: RoundRobin[] = [];
  const live = new Map<System, BrookCluster>();
  try {
    if (systems.includes('nats') && (want('a') || want('b'))) {
      nats = await startNatsCluster();
      natsc = await natsClients(nats.members.map((m) => m.natsUrl), 1);
      await createNatsStreams(natsc.connections[0]!, partitions, 3);
      await sleep(1000);
      log(`nats: ${natsVersion}, 3 servers ${nats.members.map((m) => `n${m.id}=pid ${m.pid} ${m.natsUrl}`).join(', ')}; ${partitions} R3 file streams, leaders ${JSON.stringify(await natsStreamLeaders(natsc.connections[0]!, partitions))}`);
    }
    const bodies1000 = batchBodies(1000, quick ? 8 : 24, 0);
    const bodies10 = batchBodies(10, 500, 1_000_000);
    log(`events: business, ${((bodies1000[0]!.length - 2) / 1000).toFixed(0)} B/event as submitted; ${partitions} partitions (hash on order_number)`);
    const nats1000 = natsBatches(bodies1000, partitions);
    const nats10 = natsBatches(bodies10, partitions);
    const pubPath = `/event-types/${typeName}/events`;
    const clusterOf = (s: System): BrookCluster => live.get(s)!;
    const brookPids = (s: System) => clusterOf(s).members.map((m) => m.pid);
    const natsPids = () => nats!.members.map((m) => m.pid);
    // Enough connections per node that every producer may be on any node at once; the first request of
    // a phase goes to node `first` (rotated by round), the next to the one after, and so on.
    const brookPool = (s: System, connections: number, first: number) => {
      const pools = clusterOf(s).members.map((m) => publishPool(m.url, connections));
      return new RoundRobin([...pools.slice(first), ...pools.slice(0, first)]);
    };

    if (want('a') || want('b')) {
      log(
        `\nrounds: ${rounds}; each round starts fresh Brook clusters (start order alternating by round), rotates their preferred leaders and the node the load starts on, ` +
          `and measures the systems in an order that rotates every second round, so start order and measurement order are balanced over 4 rounds; NATS stays up`,
      );
    }
    for (let round = 1; round <= rounds && (want('a') || want('b')); round++) {
      const startOrder = round % 2 === 1 ? brookSystems : [...brookSystems].reverse();
      const k = Math.floor((round - 1) / 2) % measured.length;
      const order = [...measured.slice(k), ...measured.slice(0, k)];
      const first = (round - 1) % 3;
      log(`\n--- round ${round}: start ${startOrder.join(', ')}; measure ${order.join(', ')}; load from node ${first + 1} on`);
      const placements = new Map<System, Placement | undefined>();
      try {
        for (const s of startOrder) {
          const { cluster, placement, settled } = await startBrook(s, round);
          live.set(s, cluster);
          placements.set(s, placement);
          log(
            `  ${s}${s === 'old' ? ` (${brokerEntryOf(abRoot!)})` : ''}: pids ${cluster.members.map((m) => m.pid).join(' ')}; ` +
              `${placement === undefined ? 'placement unknown' : placementText(placement)}${settled ? '' : ' (NOT the preferred leaders: the balancer did not get there in time)'}`,
          );
        }
        if (warmS > 0) {
          for (const s of startOrder) {
            const t = performance.now();
            const pool = brookPool(s, producers10, first);
            try {
              const w10 = await closedLoop({ pool, path: pubPath, bodies: bodies10, eventsPerBody: 10, producers: producers10, warmupMs: 0, durationMs: (warmS * 1000 * 2) / 3 });
              const w1000 = await closedLoop({ pool, path: pubPath, bodies: bodies1000, eventsPerBody: 1000, producers: producers1000, warmupMs: 0, durationMs: (warmS * 1000) / 3 });
              log(`  ${s}: warmed up for ${((performance.now() - t) / 1000).toFixed(0)} s (batch 10: ${fmtInt(w10.eventsPerS)} ev/s, batch 1000: ${fmtInt(w1000.eventsPerS)} ev/s; not measured)`);
            } finally {
              await pool.close();
            }
          }
        }
        const placementNote = async (s: System): Promise<string> => {
          const now = await placementOf(clusterOf(s), typeName);
          const before = placements.get(s);
          if (now === undefined || before === undefined) return '';
          return now.leaders.join() === before.leaders.join() ? '' : `      leaders MOVED during the phase: now ${placementText(now)}`;
        };

        if (want('a')) {
          for (const [batch, producers] of [
            [1000, producers1000],
            [10, producers10],
          ] as const) {
            for (const system of order) {
              const l0 = loadavg();
              const meter = cpuMeter(isBrook(system) ? brookPids(system) : natsPids());
              let res: PublishResult;
              let fsyncs = '';
              let moved = '';
              if (isBrook(system)) {
                const pool = brookPool(system, producers, first);
                brookPools.push(pool);
                const fm = await fsyncMeter(clusterOf(system));
                res = await closedLoop({ pool, path: pubPath, bodies: batch === 1000 ? bodies1000 : bodies10, eventsPerBody: batch, producers, warmupMs: cfg.warmupMs, durationMs: cfg.durationMs });
                fsyncs = await fm();
                await pool.close();
                brookPools = brookPools.filter((p) => p !== pool);
                moved = await placementNote(system);
              } else {
                res = await natsClosedLoop({ js: natsc!.js, batches: batch === 1000 ? nats1000 : nats10, producers, warmupMs: cfg.warmupMs, durationMs: cfg.durationMs });
              }
              const c = meter();
              figures.throughput.push({ ...res, ...c, system, round, batch, producers, load: l0, placement: placements.get(system) });
              log(
                `  (a) round ${round} ${system.padEnd(5)} batch ${String(batch).padStart(4)} x ${producers}: ${fmtInt(res.eventsPerS).padStart(7)} ev/s (${mb(res.bytesPerS)} MB/s, ${fmtInt(res.requests / res.seconds)} batches/s); ` +
                  `batch latency p50 ${fmtMs(res.latency.p50)} ms p99 ${fmtMs(res.latency.p99)} ms; errors ${res.errors}${res.firstError ? ` (${res.firstError.slice(0, 200)})` : ''}; ` +
                  `cluster CPU ${c.clusterCores.toFixed(2)} cores, bench ${c.benchCores.toFixed(2)}; load ${l0.map((x) => x.toFixed(2)).join(' ')}`,
              );
              if (fsyncs !== '') log(`      WAL fdatasync (warm-up included): ${fsyncs}`);
              if (moved !== '') log(moved);
              await sleep(1000);
            }
          }
        }

        if (want('b')) {
          for (const system of order) {
            const l0 = loadavg();
            const meter = cpuMeter(isBrook(system) ? brookPids(system) : natsPids());
            // Beside the brokers' data (the same filesystem): whether the disk itself stalled meanwhile.
            const probe = startDiskProbe(isBrook(system) ? clusterOf(system).dir : tmpdir());
            let res: Awaited<ReturnType<typeof openLoop>>;
            let fsyncs = '';
            let moved = '';
            let events: string[] = [];
            if (isBrook(system)) {
              const pool = brookPool(system, 32, first);
              brookPools.push(pool);
              const fm = await fsyncMeter(clusterOf(system));
              const from = Date.now();
              res = await openLoop({ pool, path: pubPath, bodies: bodies10, requestsPerS: latencyRate, warmupMs: cfg.latencyWarmupMs, durationMs: cfg.latencyMs });
              events = nodeEvents(clusterOf(system), from, Date.now());
              fsyncs = await fm();
              await pool.close();
              brookPools = brookPools.filter((p) => p !== pool);
              moved = await placementNote(system);
            } else {
              res = await natsOpenLoop({ js: natsc!.js, batches: nats10, requestsPerS: latencyRate, warmupMs: cfg.latencyWarmupMs, durationMs: cfg.latencyMs });
            }
            const c = meter();
            const disk = await probe.stop();
            figures.latency.push({ ...res, ...c, system, round, load: l0, placement: placements.get(system), disk: { count: disk.count, p50Ms: disk.p50Ms, p99Ms: disk.p99Ms, maxMs: disk.maxMs, over100: disk.over100, over1000: disk.over1000 } });
            log(
              `  (b) round ${round} ${system.padEnd(5)} at ${fmtInt(latencyRate * 10)} ev/s: achieved ${fmtInt(res.eventsPerS)} ev/s; p50 ${fmtMs(res.latency.p50)} ms, p90 ${fmtMs(res.latency.p90)}, p99 ${fmtMs(res.latency.p99)}, ` +
                `p99.9 ${fmtMs(res.latency.p999)}, max ${fmtMs(res.latency.max)} (n=${res.latency.count}); sender lag p99 ${fmtMs(res.sendLagP99Ms)} ms; in flight max ${res.inFlightMax}; ` +
                `errors ${res.errors}${res.firstError ? ` (${res.firstError.slice(0, 200)})` : ''}; cluster CPU ${c.clusterCores.toFixed(2)} cores, bench ${c.benchCores.toFixed(2)}; load ${l0.map((x) => x.toFixed(2)).join(' ')}`,
            );
            if (fsyncs !== '') log(`      WAL fdatasync (warm-up included): ${fsyncs}`);
            log(`      ${diskProbeText(disk)}`);
            if (events.length > 0) log(`      node logs (leadership, retries, warnings; from the phase's start):\n${events.map((e) => `        ${e}`).join('\n')}`);
            if (moved !== '') log(moved);
            await sleep(1000);
          }
        }
      } finally {
        for (const p of brookPools) await p.close();
        brookPools = [];
        for (const [s, c] of live) {
          await c.stop();
          live.delete(s);
        }
      }
    }

    if (natsc !== undefined) await natsc.close();
    natsc = undefined;
    if (nats !== undefined) await nats.stop();
    nats = undefined;

    if (want('c') && systems.includes('brook')) {
      const brook = await startBrookCluster({ env: { BROOK_REPLICATION_FACTOR: '3' }, nodeArgs });
      live.set('brook', brook);
      const foType = 'bench.failover';
      await createEventType(brook, { ...eventTypeBody(foType, 'user_defined', partitions) });
      log(`\n(c) failover gap: ${failoverRate} batches of 10/s to one partition through a node that does not lead it; kill -9 its leader after 2 s; gap = kill -> first 200 of a request sent after the kill (target < ${targetFailoverMs / 1000} s)`);
      log(`  brook: 3 nodes ${brook.members.map((m) => `${m.id}=pid ${m.pid} ${m.url}`).join(', ')}; data ${brook.dir}`);
      for (let trial = 1; trial <= failovers; trial++) {
        const f = await failoverTrial(brook, foType, trial);
        figures.failover.push(f);
        log(
          `  trial ${trial}: partition ${f.partition}, killed node ${f.killed} (its leader), publishing via node ${f.via}; new leader node ${f.newLeader}; ` +
            `gap ${f.gapMs === null ? 'NO ACK' : fmtMs(f.gapMs) + ' ms'} (first 200 of any request after the kill: ${f.gapAnyAckMs === null ? '-' : fmtMs(f.gapAnyAckMs) + ' ms'}; ` +
            `last 200 before the kill ${f.lastAckBeforeKillMs === null ? '-' : fmtMs(f.lastAckBeforeKillMs) + ' ms'} before it); ${f.inFlightAtKill} requests in flight at the kill; ` +
            `answers after the kill ${JSON.stringify(f.statusesAfterKill)}; node back and caught up in ${(f.recoverMs / 1000).toFixed(1)} s; load ${f.load.map((x) => x.toFixed(2)).join(' ')}`,
        );
      }
    }
  } finally {
    for (const p of brookPools) await p.close();
    if (natsc !== undefined) await natsc.close().catch(() => undefined);
    if (nats !== undefined) await nats.stop();
    for (const c of live.values()) await c.stop();
  }
  summary(figures);
  log(`\nend: ${load()}; total ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (jsonOut !== undefined) writeFileSync(jsonOut, JSON.stringify({ quick, rounds, cfg, figures }, null, 2));
}

interface Figures {
  throughput: ThroughputFigure[];
  latency: LatencyFigure[];
  failover: FailoverFigure[];
}

function summary(f: Figures): void {
  const i = (n: number) => fmtInt(n);
  const rng = (v: number[], fmt: (n: number) => string) => (v.length < 2 ? fmt(v[0] ?? NaN) : `${fmt(median(v))} [${fmt(Math.min(...v))}-${fmt(Math.max(...v))}]`);
  const ratios = (v: number[]) => (v.length === 0 ? '-' : `${v.map((r) => r.toFixed(2)).join(', ')} (median ${median(v).toFixed(2)})`);
  log(`\n=== summary (median [min-max] over rounds; ratios per round, then their median; the machine is shared, see the load averages above)`);
  for (const batch of [1000, 10]) {
    const at = f.throughput.filter((x) => x.batch === batch);
    const of = (s: System) => at.filter((x) => x.system === s);
    const ev = (x: ThroughputFigure) => x.eventsPerS;
    const paired = (a: System, b: System) => of(a).filter((x) => of(b).some((y) => y.round === x.round)).map((x) => ev(x) / ev(of(b).find((y) => y.round === x.round)!));
    if (of('old').length > 0) log(`(a) batch ${batch}: old (--ab) ${rng(of('old').map(ev), i)} ev/s; brook/old per round ${ratios(paired('brook', 'old'))}`);
    if (of('brook').length === 0 && of('nats').length === 0) continue;
    const bn = paired('brook', 'nats');
    log(
      `(a) batch ${batch}: brook ${of('brook').length > 0 ? rng(of('brook').map(ev), i) : '-'} ev/s; nats R3 ${of('nats').length > 0 ? rng(of('nats').map(ev), i) : '-'} ev/s; ` +
        `brook/nats per round ${ratios(bn)}` +
        (batch === 1000 && bn.length > 0 ? ` (target >= 1.00: ${median(bn) >= 1 ? 'MET' : 'MISSED'})` : ''),
    );
  }
  for (const system of ['brook', 'old', 'nats'] as const) {
    const l = f.latency.filter((x) => x.system === system);
    if (l.length === 0) continue;
    log(
      `(b) ${system} at ${fmtInt(latencyRate * 10)} ev/s: p50 ${rng(l.map((x) => x.latency.p50), fmtMs)} ms, p99 ${rng(l.map((x) => x.latency.p99), fmtMs)} ms, max ${rng(l.map((x) => x.latency.max), fmtMs)} ms` +
        (isBrook(system) ? ` (target p99 < ${targetP99Ms} ms: ${median(l.map((x) => x.latency.p99)) < targetP99Ms ? 'MET' : 'MISSED'})` : ''),
    );
  }
  const lOf = (s: System) => f.latency.filter((x) => x.system === s);
  if (lOf('brook').length > 0 && lOf('old').length > 0) {
    const p = (q: 'p50' | 'p99') => lOf('brook').filter((x) => lOf('old').some((y) => y.round === x.round)).map((x) => x.latency[q] / lOf('old').find((y) => y.round === x.round)!.latency[q]);
    log(`(b) brook/old latency per round: p50 ${ratios(p('p50'))}; p99 ${ratios(p('p99'))}`);
  }
  if (f.failover.length > 0) {
    const gaps = f.failover.map((x) => x.gapMs);
    log(
      `(c) failover gaps: ${gaps.map((g) => (g === null ? 'none' : `${(g / 1000).toFixed(2)} s`)).join(', ')}; ` +
        `max ${(Math.max(...gaps.map((g) => g ?? Infinity)) / 1000).toFixed(2)} s (target < ${targetFailoverMs / 1000} s each: ${gaps.every((g) => g !== null && g < targetFailoverMs) ? 'MET' : 'MISSED'})`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
