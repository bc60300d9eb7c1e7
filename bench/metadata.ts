/**
 * `npm run bench:metadata`: metadata commits on three local Brook nodes beside a three-member etcd
 * cluster on the same machine, same client code, same run (issue 3, "Tests and measurements").
 *
 * The write. Brook: `POST /settings/features {"feature":"check_owning_application","enabled":true|false}`,
 * a replicated feature.set command, answered 204 once it is committed (fsynced on a majority) and
 * applied on the receiving node. etcd: `POST /v3/kv/put` (etcd 3.4's grpc-gateway JSON API) with a
 * base64 key and value "true"|"false", answered 200 once committed and applied. Sent to the leader
 * (found with GET /cluster, resp. POST /v3/maintenance/status) and, as a second figure, to a follower
 * (which forwards to the leader).
 *
 * Figures, per system and entry node:
 *   (1) max commits/s: closed loop, C writes in flight (C connections, default 128), 2 s warm-up + 10 s;
 *   (2) commit latency at 1,000 commits/s: open loop on a fixed schedule, latency from the scheduled
 *       send time to the end of the response (queueing counted), 2 s warm-up + 10 s.
 * The clusters run one after the other (never both at once), each fresh per run, on temp dirs.
 *
 *   npm run bench:metadata                      # one run, ~2 min
 *   npm run bench:metadata -- --runs 3          # three runs, medians [min-max]
 *   npm run bench:metadata -- --quick           # short phases (smoke)
 *   npm run bench:metadata -- --only brook      # or etcd
 *   npm run bench:metadata -- --concurrency 256 --rate 1000
 *   npm run bench:metadata -- --no-follower     # leader figures only
 *   npm run bench:metadata -- --cpu-prof DIR    # Brook nodes run with --cpu-prof (profiles per pid in DIR)
 *   npm run bench:metadata -- --json FILE       # every figure as JSON
 *   npm run bench:metadata -- --no-build        # do not rebuild dist/ first
 *   npm run bench:metadata -- --ab DIR --runs 2 # A/B: this build and the build in DIR (DIR/dist/main.js),
 *                                               # alternating which goes first; no etcd
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { brokerEntryOf, buildBroker, cpuSeconds } from './lib/broker.js';
import { etcdVersion, startBrookCluster, startEtcdCluster, type ClusterMember, type LocalCluster } from './lib/clusters.js';
import { closedLoop, openLoop, publishPool, type LatencySummary } from './lib/load.js';
import { fmtInt, fmtMs, median, sleep } from './lib/stats.js';

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const quick = process.argv.includes('--quick');
const runs = Number(argValue('--runs') ?? '1');
const concurrency = Number(argValue('--concurrency') ?? '128');
const rate = Number(argValue('--rate') ?? '1000');
const only = argValue('--only');
const withFollower = !process.argv.includes('--no-follower');
const cpuProfDir = argValue('--cpu-prof');
const jsonOut = argValue('--json');
const etcdBin = argValue('--etcd') ?? 'etcd';
const abRoot = argValue('--ab');
const cfg = quick ? { warmupMs: 1000, durationMs: 3000 } : { warmupMs: 2000, durationMs: 10_000 };
const targetCommitsPerS = 5000;
const targetP99Ms = 20;

const log = (s: string) => process.stdout.write(s + '\n');

/** 'old' is Brook built in the --ab directory. */
type System = 'brook' | 'old' | 'etcd';
type Via = 'leader' | 'follower';

interface Workload {
  path: string;
  bodies: Buffer[];
  okStatus: number;
}

const brookWorkload: Workload = {
  path: '/settings/features',
  bodies: [true, false].map((enabled) => Buffer.from(JSON.stringify({ feature: 'check_owning_application', enabled }))),
  okStatus: 204,
};

const workloads: Record<System, Workload> = {
  brook: brookWorkload,
  old: brookWorkload,
  etcd: {
    path: '/v3/kv/put',
    bodies: ['true', 'false'].map((v) =>
      Buffer.from(JSON.stringify({ key: Buffer.from('brook-bench/features/check_owning_application').toString('base64'), value: Buffer.from(v).toString('base64') })),
    ),
    okStatus: 200,
  },
};

interface Figures {
  system: System;
  via: Via;
  node: number;
  closed: { commitsPerS: number; errors: number; firstError?: string; latency: LatencySummary; clusterCores: number; entryCores: number; benchCores: number };
  open: { achievedPerS: number; errors: number; firstError?: string; latency: LatencySummary; sendLagP99Ms: number; inFlightMax: number; clusterCores: number; entryCores: number; benchCores: number };
}

/** CPU (cores busy) of every member, of the entry member, and of this process over a phase. */
class ClusterCpu {
  readonly #t0 = performance.now();
  readonly #self0 = process.cpuUsage();
  readonly #start: number[];
  constructor(readonly pids: readonly number[], readonly entryPid: number) {
    this.#start = pids.map(cpuSeconds);
  }
  read(): { clusterCores: number; entryCores: number; benchCores: number } {
    const wall = (performance.now() - this.#t0) / 1000;
    const used = this.pids.map((p, k) => cpuSeconds(p) - this.#start[k]!);
    const self = process.cpuUsage(this.#self0);
    return {
      clusterCores: used.reduce((a, b) => a + b, 0) / wall,
      entryCores: used[this.pids.indexOf(this.entryPid)]! / wall,
      benchCores: (self.user + self.system) / 1e6 / wall,
    };
  }
}

async function measure(system: System, cluster: LocalCluster, via: Via, entry: ClusterMember): Promise<Figures> {
  const w = workloads[system];
  const pids = cluster.members.map((m) => m.pid);
  // A few writes first: connections, JIT, and a check that the write is answered as expected.
  {
    const pool = publishPool(entry.url, 4);
    const res = await closedLoop({ pool, path: w.path, bodies: w.bodies, eventsPerBody: 1, producers: 4, warmupMs: 0, durationMs: 300, okStatus: w.okStatus });
    await pool.close();
    if (res.errors > 0) throw new Error(`${system} via ${via}: ${res.errors} failed writes (${res.firstError})`);
  }
  const pool = publishPool(entry.url, concurrency);
  let cpu = new ClusterCpu(pids, entry.pid);
  const c = await closedLoop({ pool, path: w.path, bodies: w.bodies, eventsPerBody: 1, producers: concurrency, warmupMs: cfg.warmupMs, durationMs: cfg.durationMs, okStatus: w.okStatus });
  const cc = cpu.read();
  await pool.close();
  await sleep(500);
  const opool = publishPool(entry.url, 64);
  cpu = new ClusterCpu(pids, entry.pid);
  const o = await openLoop({ pool: opool, path: w.path, bodies: w.bodies, requestsPerS: rate, warmupMs: cfg.warmupMs, durationMs: cfg.durationMs, okStatus: w.okStatus });
  const oc = cpu.read();
  await opool.close();
  const f: Figures = {
    system,
    via,
    node: entry.id,
    closed: { commitsPerS: c.events / c.seconds, errors: c.errors, latency: c.latency, ...cc, ...(c.firstError === undefined ? {} : { firstError: c.firstError }) },
    open: {
      achievedPerS: o.requests / o.seconds,
      errors: o.errors,
      latency: o.latency,
      sendLagP99Ms: o.sendLagP99Ms,
      inFlightMax: o.inFlightMax,
      ...oc,
      ...(o.firstError === undefined ? {} : { firstError: o.firstError }),
    },
  };
  const name = `${systemName(system)} via ${via} (node ${entry.id})`;
  log(
    `  ${name}: (1) closed loop x ${concurrency}: ${fmtInt(f.closed.commitsPerS)} commits/s, latency p50 ${fmtMs(c.latency.p50)} ms p99 ${fmtMs(c.latency.p99)} ms, ` +
      `errors ${c.errors}${c.firstError ? ` (${c.firstError})` : ''}; CPU cluster ${cc.clusterCores.toFixed(2)} cores (entry node ${cc.entryCores.toFixed(2)}), bench ${cc.benchCores.toFixed(2)}`,
  );
  log(
    `  ${name}: (2) open loop ${fmtInt(rate)}/s: achieved ${fmtInt(f.open.achievedPerS)}/s, p50 ${fmtMs(o.latency.p50)} ms, p90 ${fmtMs(o.latency.p90)}, p99 ${fmtMs(o.latency.p99)}, ` +
      `p99.9 ${fmtMs(o.latency.p999)}, max ${fmtMs(o.latency.max)} (n=${o.latency.count}); sender lag p99 ${fmtMs(o.sendLagP99Ms)} ms; in flight max ${o.inFlightMax}; errors ${o.errors}` +
      `${o.firstError ? ` (${o.firstError})` : ''}; CPU cluster ${oc.clusterCores.toFixed(2)} cores (entry ${oc.entryCores.toFixed(2)}), bench ${oc.benchCores.toFixed(2)}`,
  );
  return f;
}

function systemName(s: System): string {
  return s === 'brook' ? (abRoot === undefined ? 'Brook' : 'Brook (this build)') : s === 'old' ? 'Brook (old build)' : 'etcd';
}

async function runSystem(system: System, runNo: number): Promise<Figures[]> {
  const prof = cpuProfDir === undefined ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${resolve(cpuProfDir, `run${runNo}-${system}`)}`] };
  const cluster =
    system === 'brook'
      ? await startBrookCluster(prof)
      : system === 'old'
        ? await startBrookCluster({ ...prof, entry: brokerEntryOf(abRoot!) })
        : await startEtcdCluster({ bin: etcdBin });
  try {
    const leader = await cluster.leader();
    const follower = cluster.members.find((m) => m.id !== leader.id)!;
    log(`${system} cluster up (${cluster.dir}): pids ${cluster.members.map((m) => `${m.id}=${m.pid}`).join(' ')}, leader ${leader.id}`);
    const out = [await measure(system, cluster, 'leader', leader)];
    const after = await cluster.leader();
    if (after.id !== leader.id) log(`  WARNING: leadership moved from ${leader.id} to ${after.id} during the run`);
    if (withFollower) out.push(await measure(system, cluster, 'follower', follower.id === after.id ? leader : follower));
    return out;
  } finally {
    await cluster.stop();
  }
}

function range(values: number[], f: (n: number) => string): string {
  if (values.length === 0) return '-';
  if (values.length < 2) return f(values[0]!);
  return `${f(median(values))} [${f(Math.min(...values))}-${f(Math.max(...values))}]`;
}

function summary(all: Figures[][]): void {
  const flat = all.flat();
  // Two columns: Brook and etcd, or this build and the old one.
  const [colA, colB]: [System, System] = abRoot === undefined ? ['brook', 'etcd'] : ['brook', 'old'];
  const pick = (s: System, v: Via, f: (x: Figures) => number) => flat.filter((x) => x.system === s && x.via === v).map(f);
  const i = (n: number) => fmtInt(n);
  const ms = (n: number) => fmtMs(n);
  log(`\n=== summary (${all.length} run${all.length > 1 ? 's: median [min-max]' : ''}); ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; etcd: ${etcdVersion(etcdBin) ?? 'not run'}`);
  const rows: [string, (x: Figures) => number, (n: number) => string][] = [
    [`(1) max commits/s, closed loop x ${concurrency}`, (x) => x.closed.commitsPerS, i],
    [`    latency p50 under that load (ms)`, (x) => x.closed.latency.p50, ms],
    [`    cluster CPU (cores)`, (x) => x.closed.clusterCores, (n) => n.toFixed(2)],
    [`(2) p50 at ${i(rate)}/s open loop (ms)`, (x) => x.open.latency.p50, ms],
    [`    p99 at ${i(rate)}/s open loop (ms)`, (x) => x.open.latency.p99, ms],
    [`    p99.9 (ms)`, (x) => x.open.latency.p999, ms],
    [`    cluster CPU (cores)`, (x) => x.open.clusterCores, (n) => n.toFixed(2)],
  ];
  const vias: Via[] = withFollower ? ['leader', 'follower'] : ['leader'];
  for (const via of vias) {
    log(`\nvia the ${via}:`);
    log(abRoot === undefined ? `${''.padEnd(44)}${'Brook'.padEnd(28)}${'etcd'.padEnd(28)}Brook/etcd` : `${''.padEnd(44)}${'this build'.padEnd(28)}${'old build'.padEnd(28)}this/old`);
    for (const [label, f, fmt] of rows) {
      const b = pick(colA, via, f);
      const e = pick(colB, via, f);
      const ratio = b.length > 0 && e.length > 0 ? (median(b) / median(e)).toFixed(2) : '-';
      log(`${label.padEnd(44)}${range(b, fmt).padEnd(28)}${range(e, fmt).padEnd(28)}${ratio}`);
    }
  }
  const bThr = pick('brook', 'leader', (x) => x.closed.commitsPerS);
  const bP99 = pick('brook', 'leader', (x) => x.open.latency.p99);
  const errs = flat.reduce((a, x) => a + x.closed.errors + x.open.errors, 0);
  if (bThr.length > 0) {
    log(`\ntargets (Brook via the leader, medians): >= ${i(targetCommitsPerS)} commits/s: ${median(bThr) >= targetCommitsPerS ? 'MET' : 'MISSED'} (${i(median(bThr))}); ` +
      `p99 < ${targetP99Ms} ms at ${i(rate)}/s: ${median(bP99) < targetP99Ms ? 'MET' : 'MISSED'} (${ms(median(bP99))} ms)`);
  }
  log(`failed writes in all measured phases: ${errs}`);
}

async function main(): Promise<void> {
  log(`brook metadata-commit bench ${quick ? '(quick) ' : ''}${new Date().toISOString()}; ${cpus().length} x ${cpus()[0]?.model ?? '?'}; Node ${process.version}`);
  const systems: System[] = abRoot !== undefined ? ['brook', 'old'] : only === undefined ? ['brook', 'etcd'] : [only as System];
  if (systems.includes('etcd') && etcdVersion(etcdBin) === undefined) throw new Error(`no etcd binary (${etcdBin}); apt-get install -y etcd-server etcd-client`);
  if (cpuProfDir !== undefined) mkdirSync(cpuProfDir, { recursive: true });
  if (!process.argv.includes('--no-build')) {
    log('building the broker (tsc -p tsconfig.json, incremental) so dist/ matches src/ ...');
    buildBroker();
  }
  const started = performance.now();
  const all: Figures[][] = [];
  for (let n = 1; n <= runs; n++) {
    log(`\n=== run ${n}`);
    const figs: Figures[] = [];
    // A/B: the order alternates between runs, so neither build always runs on a warmer machine.
    const order = abRoot !== undefined && n % 2 === 0 ? [...systems].reverse() : systems;
    for (const s of order) figs.push(...(await runSystem(s, n)));
    all.push(figs);
  }
  summary(all);
  log(`total ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (jsonOut !== undefined) writeFileSync(jsonOut, JSON.stringify({ quick, concurrency, rate, etcd: etcdVersion(etcdBin), ab: abRoot ?? null, runs: all }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
