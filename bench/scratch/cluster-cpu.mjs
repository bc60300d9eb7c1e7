// The CPU of a small publish on three nodes, build against build (docs/benchmarks.md, "Three nodes,
// 2026-11-27 afternoon"): for each build in turn (order alternating by round), a fresh three-node
// cluster (RF 3, 4 partitions, hash), WARM s of closed-loop batches of 10 (60 producers, not measured),
// then (b)'s open loop at RATE requests/s of 10 events over the three nodes for 2 s + SECONDS s. Prints
// the cluster's CPU per request over the open loop (all three processes, all threads), its latency, and
// the node hosts' counts per request (brook_raft_host_work_total, summed over the nodes; a build that exports
// brook_raft_messages_total also its Raft messages sent per type). With PERF=DIR
// the nodes run with --perf-basic-prof and `perf record -e cpu-clock -g` samples them during the
// measured seconds (one perf.data per build and round in DIR; bench/scratch/perf-sum.mjs reads them).
//   npm run build:bench && node bench/scratch/cluster-cpu.mjs [rounds] LABEL=ROOT ...   (ROOT: a built checkout)
//   RATE=500 WARM=20 SECONDS=10 PERF=/tmp/perf node bench/scratch/cluster-cpu.mjs 2 new=. main=/tmp/main
//   node bench/scratch/cluster-cpu.mjs 2 base=. stgc=.::--single-threaded-gc   (LABEL=ROOT::FLAGS: node options of that build's nodes)
// PERF_EVENT=EVENT: perf records that event instead of cpu-clock (a uprobe: bench/scratch/arraybuffer-census.py).
// GC=1: the nodes run with --trace-gc-nvp (GC=verbose adds --trace-gc-verbose); per node, over the open
// loop: KB allocated and promoted per request, scavenges and mark-compacts per node-minute, and (verbose)
// the external memory after GCs. KEEP=1 keeps the nodes' directories (logs in nodeN/node.log).
// ROLES=1: one partition instead of four, requests to one node that does not lead it, so each node has
// one role: "arrival" (HTTP, forwarding, and a follower too), "leader" (serves the forwarded appends,
// proposes, replicates) and "follower" (Raft only); the arrival's own share is about arrival - follower.
//   GC=1 ROLES=1 RATE=500 WARM=20 SECONDS=10 node bench/scratch/cluster-cpu.mjs 2 new=. main=/tmp/main
import { brokerEntryOf, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { startBrookCluster } from '../../dist-bench/bench/lib/clusters.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, openLoop, publishPool, RoundRobin } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { mkdirSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const rounds = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 1;
const builds = args.map((a) => {
  // LABEL=ROOT or LABEL=ROOT::--flag,--flag (node options of that build's nodes)
  const i = a.indexOf('=');
  const [root, flags] = a.slice(i + 1).split('::');
  return { label: a.slice(0, i), root, nodeArgs: flags === undefined ? [] : flags.split(',') };
});
const rate = Number(process.env.RATE ?? 500);
const warmS = Number(process.env.WARM ?? 20);
const seconds = Number(process.env.SECONDS ?? 10);
const perfDir = process.env.PERF;
const gcTrace = process.env.GC === '1' || process.env.GC === 'verbose';
const gcFlags = !gcTrace ? [] : process.env.GC === 'verbose' ? ['--trace-gc-nvp', '--trace-gc-verbose'] : ['--trace-gc-nvp'];
const roles = process.env.ROLES === '1';
if (perfDir !== undefined) mkdirSync(perfDir, { recursive: true });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const typeName = 'cpu.orders';
const path = `/event-types/${typeName}/events`;
const bodies = batchBodies(10, 500, 1_000_000);

/** The text a node wrote to its log between two byte offsets. */
function logSlice(file, from, to) {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(to - from);
    readSync(fd, b, 0, b.length, from);
    return b.toString('utf8');
  } finally {
    closeSync(fd);
  }
}
/** Sums V8's --trace-gc-nvp lines (and --trace-gc-verbose external memory) of one node's window. */
function gcSums(text) {
  const s = { allocated: 0, promoted: 0, scavenges: 0, markCompacts: 0, pauseMs: 0, external: [] };
  for (const line of text.split('\n')) {
    const x = /External memory reported:\s+(\d+) KB/.exec(line);
    if (x !== null) {
      s.external.push(Number(x[1]));
      continue;
    }
    const m = /\s\d+ ms: pause=([\d.]+) .*?gc=(\w+) /.exec(line);
    if (m === null) continue;
    const f = (k) => Number(new RegExp(`\\s${k}=(\\d+)`).exec(line)?.[1] ?? 0);
    s.allocated += f('allocated');
    s.promoted += f('promoted');
    s.pauseMs += Number(m[1]);
    if (m[2] === 's') s.scavenges++;
    else s.markCompacts++;
  }
  return s;
}

const scrape = async (url) => {
  const t = await (await fetch(`${url}/metrics/prometheus`)).text();
  const m = new Map();
  for (const line of t.split('\n')) {
    const x = /^brook_raft_host_work_total\{what="(\w+)"\} ([0-9.e+-]+)$/.exec(line);
    if (x) m.set(x[1], Number(x[2]));
    const y = /^brook_raft_messages_total\{direction="sent",type="(\w+)"\} ([0-9.e+-]+)$/.exec(line);
    if (y) m.set(`sent.${y[1]}`, Number(y[2]));
  }
  return m;
};
const scrapeAll = async (c) => {
  const sum = new Map();
  for (const m of c.members) for (const [k, v] of await scrape(m.url)) sum.set(k, (sum.get(k) ?? 0) + v);
  return sum;
};

async function settled(c) {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const views = await Promise.all(c.members.map((m) => fetch(`${m.url}/cluster`).then((r) => r.json()).catch(() => undefined)));
    const ok = views.every((v) => v !== undefined && v.under_replicated_partitions === 0 && v.leaderless_partitions === 0 && v.partitions.filter((p) => p.event_type === typeName).every((p) => p.leader === p.preferred_leader));
    if (ok) return true;
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
}

/** One build's measured run on a fresh cluster; returns its line. */
async function measure(label, root, round, extraArgs = []) {
  const c = await startBrookCluster({ env: { BROOK_REPLICATION_FACTOR: '3' }, entry: brokerEntryOf(root), nodeArgs: [...extraArgs, ...gcFlags, ...(perfDir === undefined ? [] : ['--perf-basic-prof'])] });
  try {
    await http(c.members[0].url, 'POST', '/event-types', eventTypeBody(typeName, 'hash', roles ? 1 : 4));
    const ok = await settled(c);
    const first = (round - 1) % 3;
    let roleOf = () => '';
    let pools;
    if (roles) {
      const view = await (await fetch(`${c.members[0].url}/cluster`)).json();
      const leader = view.partitions.find((p) => p.event_type === typeName).leader;
      const arrival = c.members.find((m) => m.id !== leader);
      roleOf = (m) => (m.id === leader ? 'leader' : m === arrival ? 'arrival' : 'follower');
      pools = [publishPool(arrival.url, 60)];
    } else pools = c.members.map((m) => publishPool(m.url, 60));
    const pool = new RoundRobin([...pools.slice(first % pools.length), ...pools.slice(0, first % pools.length)]);
    if (warmS > 0) await closedLoop({ pool, path, bodies, eventsPerBody: 10, producers: 60, warmupMs: 0, durationMs: warmS * 1000 });
    const pids = c.members.map((m) => m.pid);
    const m0 = await scrapeAll(c);
    const logAt0 = c.members.map((m) => statSync(m.logFile).size);
    const c0 = pids.reduce((s, p) => s + cpuSeconds(p), 0);
    const t0 = performance.now();
    let perf;
    if (perfDir !== undefined) {
      const out = join(perfDir, `perf-${label}-r${round}.data`);
      // Starts with the measured seconds (after the open loop's 2 s warm-up).
      perf = sleep(2000).then(
        () =>
          new Promise((resolve) => {
            const p = spawn('perf', ['record', '-e', process.env.PERF_EVENT ?? 'cpu-clock', '-g', '-o', out, '-p', pids.join(','), '--', 'sleep', String(seconds)], { stdio: 'ignore' });
            p.on('exit', resolve);
          }),
      );
    }
    const r = await openLoop({ pool, path, bodies, requestsPerS: rate, warmupMs: 2000, durationMs: seconds * 1000 });
    const wall = (performance.now() - t0) / 1000;
    const cpu = pids.reduce((s, p) => s + cpuSeconds(p), 0) - c0;
    const m1 = await scrapeAll(c);
    await perf;
    const sent = Math.round(rate * (2 + seconds));
    let gcLines = '';
    if (gcTrace) {
      for (const [i, m] of c.members.entries()) {
        const g = gcSums(logSlice(m.logFile, logAt0[i], statSync(m.logFile).size));
        const rises = g.external.slice(1).reduce((a, v, k) => a + Math.max(0, v - g.external[k]), 0);
        gcLines +=
          `\n  node ${m.id} pid ${m.pid}${roles ? ` (${roleOf(m)})` : ''}: allocated ${(g.allocated / 1024 / sent).toFixed(1)} KB/req, promoted ${(g.promoted / 1024 / sent).toFixed(2)} KB/req; ` +
          `per node-minute: ${((g.scavenges * 60) / wall).toFixed(0)} scavenges, ${((g.markCompacts * 60) / wall).toFixed(1)} mark-compacts; main-thread GC pause ${((g.pauseMs * 1000) / sent).toFixed(1)} ms per 1000 req` +
          (g.external.length > 0 ? `; external after GCs ${(g.external[0] / 1024).toFixed(0)}->${(g.external.at(-1) / 1024).toFixed(0)} MB, risen between GCs ${(rises / 1024 / sent).toFixed(2)} KB/req` : '');
      }
    }
    const per = (k) => (((m1.get(k) ?? 0) - (m0.get(k) ?? 0)) / sent).toFixed(2);
    await pool.close();
    return (
      `round ${round} ${label}: ${((cpu / sent) * 1000).toFixed(3)} ms CPU per request (${(cpu / wall).toFixed(2)} cores); p50 ${r.latency.p50.toFixed(1)} p99 ${r.latency.p99.toFixed(1)} ms, in flight max ${r.inFlightMax}, errors ${r.errors}` +
      `; per request: turns ${per('turns')}, readies ${per('readies')}, durableWrites ${per('durableWrites')}, sends ${per('sends')}, messagesSent ${per('messagesSent')}, batchesSent ${per('batchesSent')}` +
      (m1.has('commitsInWrite') ? `, commitsInWrite ${per('commitsInWrite')} (held ${(((m1.get('commitInWriteMicros') ?? 0) - (m0.get('commitInWriteMicros') ?? 0)) / 1000 / Math.max(1, (m1.get('commitsInWrite') ?? 0) - (m0.get('commitsInWrite') ?? 0))).toFixed(2)} ms each)` : '') +
      (m1.has('sent.app') ? ` (sent by type: ${[...m1.keys()].filter((k) => k.startsWith('sent.')).sort().map((k) => `${k.slice(5)} ${per(k)}`).join(', ')})` : '') +
      `${ok ? '' : ' (leaders not preferred)'}; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}` + gcLines
    );
  } finally {
    if (process.env.KEEP === '1') console.log(`kept ${c.dir}`);
    await c.stop(process.env.KEEP === '1');
  }
}

// CONCURRENT=1: the builds' clusters run at the same time (same load on a shared machine), each with
// its own load generator in this process; otherwise one after the other.
const concurrent = process.env.CONCURRENT === '1';
for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? builds : [...builds].reverse();
  // Started 6 s apart: clusters started at the same moment can pick the same free ports.
  if (concurrent) for (const line of await Promise.all(order.map(({ label, root, nodeArgs }, i) => sleep(6000 * i).then(() => measure(label, root, round, nodeArgs))))) console.log(line);
  else for (const { label, root, nodeArgs } of order) console.log(await measure(label, root, round, nodeArgs));
}
