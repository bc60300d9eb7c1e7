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
 * Figures:
 *   (a) publish throughput, closed loop: batches of 1000 (6 producers) and of 10 (60 producers),
 *       2 s warm-up + 8 s, Brook and NATS in alternating rounds (ABAB.. / BABA..);
 *   (b) publish latency at 5,000 events/s, open loop: batches of 10 due every 2 ms (500/s), spread over
 *       the nodes in turn, latency from the due time to the answer (or to the last PubAck), 2 s + 10 s,
 *       alternating rounds;
 *   (c) failover gap (Brook only, NATS stopped first): a user_defined event type of 4 partitions;
 *       publish batches of 10 to one partition at 100 requests/s (1,000 events/s, open loop) through a
 *       node that does not lead it, kill -9 the partition's leader, and take the time from the kill
 *       to the first 200 of a request SENT after the kill. The killed node is started again and the
 *       cluster allowed to catch up between trials.
 *
 *   npm run bench:cluster                      # 2 rounds of (a) and (b), 5 failovers, ~5 min
 *   npm run bench:cluster -- --rounds 3 --failovers 5
 *   npm run bench:cluster -- --only a,b        # phases; --systems brook (or nats) for one system
 *   npm run bench:cluster -- --quick           # short phases (smoke)
 *   npm run bench:cluster -- --cpu-prof DIR    # Brook nodes with --cpu-prof (one profile per pid)
 *   npm run bench:cluster -- --json FILE --no-build
 *   npm run bench:cluster -- --only b --rate 100     # (b) at 1,000 events/s instead of 5,000
 *   npm run bench:cluster -- --node-args '--max-semi-space-size=64' [--ab-node-args '...']   # node options of the nodes
 *   npm run bench:cluster -- --ab DIR --only a,b   # A/B: a second Brook cluster runs the build in DIR
 *                                              # (its dist/main.js), measured in the same rounds as
 *                                              # 'brook' (this checkout) and NATS, in rotating order
 *
 * Each Brook figure line is followed by the WAL fdatasyncs per node during the phase and, where the
 * build exports brook_raft_host_phase_seconds, the mean of each phase of the Raft host's commit path
 * (src/broker/raft-host/node-host.ts, HostPhase).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { Pool } from 'undici';
import { brokerEntryOf, buildBroker, cpuSeconds } from './lib/broker.js';
import { natsServerVersion, startBrookCluster, startNatsCluster, type BrookCluster, type NatsCluster } from './lib/clusters.js';
import { batchBodies, eventTypeBody, orderEventText } from './lib/events.js';
import { closedLoop, openLoop, publishPool, RoundRobin, type PublishResult } from './lib/load.js';
import { createNatsStreams, natsBatches, natsClients, natsClosedLoop, natsOpenLoop, natsStreamLeaders, type NatsClients } from './lib/nats-load.js';
import { fmtInt, fmtMs, median, sleep } from './lib/stats.js';

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
}
interface LatencyFigure extends PublishResult {
  system: System;
  round: number;
  sendLagP99Ms: number;
  inFlightMax: number;
  clusterCores: number;
  benchCores: number;
  load: number[];
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
  phases: Record<string, { count: number; sum: number }>;
}

/** fdatasyncs of the WAL so far on one node (brook_wal_fsync_duration_seconds _count and _sum), and the host's phases. */
async function fsyncTotals(url: string): Promise<NodeTotals> {
  try {
    const text = await (await fetch(`${url}/metrics/prometheus`, { signal: AbortSignal.timeout(3000) })).text();
    const num = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    const phase = (p: string, what: string) => Number(new RegExp(`^brook_raft_host_phase_seconds_${what}\\{phase="${p}"\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    const phases = Object.fromEntries(hostPhases.map((p) => [p, { count: phase(p, 'count'), sum: phase(p, 'sum') }]));
    return { count: num('brook_wal_fsync_duration_seconds_count'), sum: num('brook_wal_fsync_duration_seconds_sum'), phases };
  } catch {
    return { count: NaN, sum: NaN, phases: {} };
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
            return pn > 0 ? `${p} ${((1000 * ps) / pn).toFixed(1)}` : undefined;
          })
          .filter((x) => x !== undefined);
        return (
          `node ${k + 1} ${fmtInt(n / wall)}/s mean ${n > 0 ? ((1000 * s) / n).toFixed(2) : '-'} ms (busy ${((100 * s) / wall).toFixed(0)} %)` +
          (phases.length > 0 ? ` [host phase means, ms: ${phases.join(', ')}]` : '')
        );
      })
      .join(', ');
  };
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
  const figures: { throughput: ThroughputFigure[]; latency: LatencyFigure[]; failover: FailoverFigure[] } = { throughput: [], latency: [], failover: [] };

  const brook = await startBrookCluster({
    env: { BROOK_REPLICATION_FACTOR: '3' },
    nodeArgs: [...nodeArgs, ...(cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`])],
  });
  let old: BrookCluster | undefined;
  let nats: NatsCluster | undefined;
  let natsc: NatsClients | undefined;
  let brookPools: RoundRobin[] = [];
  try {
    log(`brook: 3 nodes ${brook.members.map((m) => `${m.id}=pid ${m.pid} ${m.url}`).join(', ')}; data ${brook.dir}`);
    const typeName = 'bench.cluster-orders';
    await createEventType(brook, eventTypeBody(typeName, 'hash', partitions));
    const brookLeaders = await partitionsSettled(brook, typeName);
    log(`brook: event type ${typeName}, ${partitions} partitions, RF 3; partition leaders ${[...brookLeaders].map(([p, l]) => `${p}->node ${l}`).join(', ')}`);
    if (abRoot !== undefined && (want('a') || want('b'))) {
      old = await startBrookCluster({ env: { BROOK_REPLICATION_FACTOR: '3' }, entry: brokerEntryOf(abRoot), nodeArgs: abNodeArgs });
      await createEventType(old, eventTypeBody(typeName, 'hash', partitions));
      const oldLeaders = await partitionsSettled(old, typeName);
      log(`old (${brokerEntryOf(abRoot)}): 3 nodes ${old.members.map((m) => `${m.id}=pid ${m.pid} ${m.url}`).join(', ')}; data ${old.dir}; partition leaders ${[...oldLeaders].map(([p, l]) => `${p}->node ${l}`).join(', ')}`);
    }
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
    const clusterOf = (s: System): BrookCluster => (s === 'old' ? old! : brook);
    const brookPids = (s: System) => clusterOf(s).members.map((m) => m.pid);
    const natsPids = () => nats!.members.map((m) => m.pid);
    // Enough connections per node that every producer may be on any node at once.
    const brookPool = (s: System, connections: number) => new RoundRobin(clusterOf(s).members.map((m) => publishPool(m.url, connections)));

    // Rounds rotate the order (brook, old, nats / old, nats, brook / ...), so no system always runs first.
    const order = (round: number): System[] => {
      const s = systems.filter((x) => x === 'brook' || (x === 'old' && old !== undefined) || (x === 'nats' && nats !== undefined));
      const k = (round - 1) % s.length;
      return s.length === 3 ? [...s.slice(k), ...s.slice(0, k)] : round % 2 === 1 ? s : [...s].reverse();
    };

    if (want('a')) {
      log(`\n(a) publish throughput, closed loop, ${cfg.warmupMs / 1000} s warm-up + ${cfg.durationMs / 1000} s, producers spread over the 3 nodes/servers`);
      for (let round = 1; round <= rounds; round++) {
        for (const system of order(round)) {
          for (const [batch, producers] of [
            [1000, producers1000],
            [10, producers10],
          ] as const) {
            const l0 = loadavg();
            const meter = cpuMeter(isBrook(system) ? brookPids(system) : natsPids());
            let res: PublishResult;
            let fsyncs = '';
            if (isBrook(system)) {
              const pool = brookPool(system, producers);
              brookPools.push(pool);
              const fm = await fsyncMeter(clusterOf(system));
              res = await closedLoop({ pool, path: pubPath, bodies: batch === 1000 ? bodies1000 : bodies10, eventsPerBody: batch, producers, warmupMs: cfg.warmupMs, durationMs: cfg.durationMs });
              fsyncs = await fm();
              await pool.close();
              brookPools = brookPools.filter((p) => p !== pool);
            } else {
              res = await natsClosedLoop({ js: natsc!.js, batches: batch === 1000 ? nats1000 : nats10, producers, warmupMs: cfg.warmupMs, durationMs: cfg.durationMs });
            }
            const c = meter();
            figures.throughput.push({ ...res, ...c, system, round, batch, producers, load: l0 });
            log(
              `  round ${round} ${system.padEnd(5)} batch ${String(batch).padStart(4)} x ${producers}: ${fmtInt(res.eventsPerS).padStart(7)} ev/s (${mb(res.bytesPerS)} MB/s, ${fmtInt(res.requests / res.seconds)} batches/s); ` +
                `batch latency p50 ${fmtMs(res.latency.p50)} ms p99 ${fmtMs(res.latency.p99)} ms; errors ${res.errors}${res.firstError ? ` (${res.firstError.slice(0, 200)})` : ''}; ` +
                `cluster CPU ${c.clusterCores.toFixed(2)} cores, bench ${c.benchCores.toFixed(2)}; load ${l0.map((x) => x.toFixed(2)).join(' ')}`,
            );
            if (fsyncs !== '') log(`      WAL fdatasync (warm-up included): ${fsyncs}`);
            await sleep(1000);
          }
        }
      }
    }

    if (want('b')) {
      log(`\n(b) publish latency at ${fmtInt(latencyRate * 10)} ev/s: open loop, batches of 10 at ${latencyRate}/s over the 3 nodes in turn, ${cfg.latencyWarmupMs / 1000} s + ${cfg.latencyMs / 1000} s`);
      for (let round = 1; round <= rounds; round++) {
        for (const system of order(round)) {
          const l0 = loadavg();
          const meter = cpuMeter(isBrook(system) ? brookPids(system) : natsPids());
          let res: Awaited<ReturnType<typeof openLoop>>;
          let fsyncs = '';
          if (isBrook(system)) {
            const pool = brookPool(system, 32);
            const fm = await fsyncMeter(clusterOf(system));
            res = await openLoop({ pool, path: pubPath, bodies: bodies10, requestsPerS: latencyRate, warmupMs: cfg.latencyWarmupMs, durationMs: cfg.latencyMs });
            fsyncs = await fm();
            await pool.close();
          } else {
            res = await natsOpenLoop({ js: natsc!.js, batches: nats10, requestsPerS: latencyRate, warmupMs: cfg.latencyWarmupMs, durationMs: cfg.latencyMs });
          }
          const c = meter();
          figures.latency.push({ ...res, ...c, system, round, load: l0 });
          log(
            `  round ${round} ${system.padEnd(5)}: achieved ${fmtInt(res.eventsPerS)} ev/s; p50 ${fmtMs(res.latency.p50)} ms, p90 ${fmtMs(res.latency.p90)}, p99 ${fmtMs(res.latency.p99)}, ` +
              `p99.9 ${fmtMs(res.latency.p999)}, max ${fmtMs(res.latency.max)} (n=${res.latency.count}); sender lag p99 ${fmtMs(res.sendLagP99Ms)} ms; in flight max ${res.inFlightMax}; ` +
              `errors ${res.errors}${res.firstError ? ` (${res.firstError.slice(0, 200)})` : ''}; cluster CPU ${c.clusterCores.toFixed(2)} cores, bench ${c.benchCores.toFixed(2)}; load ${l0.map((x) => x.toFixed(2)).join(' ')}`,
          );
          if (fsyncs !== '') log(`      WAL fdatasync (warm-up included): ${fsyncs}`);
          await sleep(1000);
        }
      }
    }

    if (natsc !== undefined) await natsc.close();
    natsc = undefined;
    if (nats !== undefined) await nats.stop();
    nats = undefined;
    if (old !== undefined) await old.stop();
    old = undefined;

    if (want('c') && systems.includes('brook')) {
      const foType = 'bench.failover';
      await createEventType(brook, { ...eventTypeBody(foType, 'user_defined', partitions) });
      log(`\n(c) failover gap: ${failoverRate} batches of 10/s to one partition through a node that does not lead it; kill -9 its leader after 2 s; gap = kill -> first 200 of a request sent after the kill (target < ${targetFailoverMs / 1000} s)`);
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
    if (old !== undefined) await old.stop();
    await brook.stop();
  }
  summary(figures);
  log(`\nend: ${load()}; total ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (jsonOut !== undefined) writeFileSync(jsonOut, JSON.stringify({ quick, rounds, cfg, figures }, null, 2));
}

function summary(f: { throughput: ThroughputFigure[]; latency: LatencyFigure[]; failover: FailoverFigure[] }): void {
  const i = (n: number) => fmtInt(n);
  const rng = (v: number[], fmt: (n: number) => string) => (v.length < 2 ? fmt(v[0] ?? NaN) : `${fmt(median(v))} [${fmt(Math.min(...v))}-${fmt(Math.max(...v))}]`);
  log(`\n=== summary (median [min-max] over rounds; the machine is shared, see the load averages above)`);
  for (const batch of [1000, 10]) {
    const b = f.throughput.filter((x) => x.system === 'brook' && x.batch === batch);
    const n = f.throughput.filter((x) => x.system === 'nats' && x.batch === batch);
    const o = f.throughput.filter((x) => x.system === 'old' && x.batch === batch);
    if (o.length > 0) {
      const perRound = b.map((x) => x.eventsPerS / (o.find((y) => y.round === x.round)?.eventsPerS ?? NaN)).filter(Number.isFinite);
      log(`(a) batch ${batch}: old (--ab) ${rng(o.map((x) => x.eventsPerS), i)} ev/s; brook/old per round ${perRound.map((r) => r.toFixed(2)).join(', ') || '-'}`);
    }
    if (b.length === 0 && n.length === 0) continue;
    const ratios = b.map((x) => {
      const peer = n.find((y) => y.round === x.round);
      return peer === undefined ? NaN : x.eventsPerS / peer.eventsPerS;
    }).filter(Number.isFinite);
    log(
      `(a) batch ${batch}: brook ${b.length > 0 ? rng(b.map((x) => x.eventsPerS), i) : '-'} ev/s; nats R3 ${n.length > 0 ? rng(n.map((x) => x.eventsPerS), i) : '-'} ev/s; ` +
        `brook/nats per round ${ratios.map((r) => r.toFixed(2)).join(', ') || '-'}` +
        (batch === 1000 && ratios.length > 0 ? ` (target >= 1.00: ${median(ratios) >= 1 ? 'MET' : 'MISSED'})` : ''),
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
