// Which functions V8 still compiles and deoptimizes on three warm nodes (the optimizing compiler was a
// fifth of the cluster's CPU samples after the warm-up, docs/benchmarks.md): a fresh three-node cluster
// (RF 3, 4 partitions, hash) run with --trace-opt --trace-deopt, WARM s of closed-loop batches of 10,
// then (b)'s open loop at RATE requests/s for SECONDS s; counts, in what the nodes logged during the
// open loop only, the optimizations started and the deoptimizations per function and reason.
//   npm run build:bench && RATE=300 WARM=30 SECONDS=15 node bench/scratch/cluster-deopts.mjs [ROOT]
// FLAGS=--trace-deopt-verbose,... adds node options; KEEP=1 keeps the nodes' logs.
import { brokerEntryOf } from '../../dist-bench/bench/lib/broker.js';
import { startBrookCluster } from '../../dist-bench/bench/lib/clusters.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, openLoop, publishPool, RoundRobin } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { readFileSync, statSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';

const root = process.argv[2] ?? '.';
const rate = Number(process.env.RATE ?? 300);
const warmS = Number(process.env.WARM ?? 30);
const seconds = Number(process.env.SECONDS ?? 15);
const top = Number(process.env.TOP ?? 40);
const typeName = 'deopt.orders';
const path = `/event-types/${typeName}/events`;
const bodies = batchBodies(10, 500, 1_000_000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const c = await startBrookCluster({ env: { BROOK_REPLICATION_FACTOR: '3', BROOK_LOG_LEVEL: 'error' }, entry: brokerEntryOf(root), nodeArgs: ['--trace-opt', '--trace-deopt', ...(process.env.FLAGS ?? '').split(',').filter((f) => f !== '')] });
try {
  await http(c.members[0].url, 'POST', '/event-types', eventTypeBody(typeName, 'hash', 4));
  await sleep(3000);
  const pools = c.members.map((m) => publishPool(m.url, 60));
  const pool = new RoundRobin(pools);
  await closedLoop({ pool, path, bodies, eventsPerBody: 10, producers: 60, warmupMs: 0, durationMs: warmS * 1000 });
  // With --perf-basic-prof the nodes name every code object they make in /tmp/perf-PID.map: the
  // optimized ones (JS:*) made during the open loop, by source position, say which functions get
  // optimized again and again (a closure made per request starts with no feedback of its own).
  const perfMap = (m) => `/tmp/perf-${m.pid}.map`;
  const withMaps = (process.env.FLAGS ?? '').includes('--perf-basic-prof');
  const mapFrom = withMaps ? c.members.map((m) => statSync(perfMap(m)).size) : [];
  const from = c.members.map((m) => statSync(m.logFile).size);
  const r = await openLoop({ pool, path, bodies, requestsPerS: rate, warmupMs: 0, durationMs: seconds * 1000 });
  console.log(`open loop ${rate}/s for ${seconds} s: p50 ${r.latency.p50.toFixed(1)} p99 ${r.latency.p99.toFixed(1)} ms; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await pool.close();
  const opts = new Map();
  const deopts = new Map();
  let nOpt = 0;
  let nDeopt = 0;
  let compileMs = 0;
  const took = new Map();
  c.members.forEach((m, i) => {
    const text = readFileSync(m.logFile).subarray(from[i]).toString('utf8');
    for (const line of text.split('\n')) {
      let x = /^\[compiling method \S+ <JSFunction (\S*)[^>]*> \(target (\w+)\)(.*)/.exec(line);
      if (x) {
        nOpt++;
        const k = `${x[1] || '(anonymous)'} ${x[2]}${x[3].includes('OSR') ? ' OSR' : ''}`;
        opts.set(k, (opts.get(k) ?? 0) + 1);
        continue;
      }
      // Wall time of the compile job: main thread (prepare, finalize) and background (execute).
      x = /^\[completed compiling \S+ <JSFunction (\S*) \(sfi = (\w+)\)> \(target \w+\)(?: OSR)? - took ([\d.]+), ([\d.]+), ([\d.]+) ms/.exec(line);
      if (x) {
        const ms = Number(x[3]) + Number(x[4]) + Number(x[5]);
        compileMs += ms;
        const k = `${x[1] === '(sfi' ? `(anonymous ${x[2]} node${i + 1})` : x[1]}`;
        took.set(k, (took.get(k) ?? 0) + ms);
        continue;
      }
      x = /^\[bailout \(kind: ([\w-]+), reason: ([^)]*)\): begin\. deoptimizing \S+ <JSFunction (\S*)/.exec(line);
      if (x) {
        nDeopt++;
        const k = `${x[3] || '(anonymous)'} | ${x[1]} | ${x[2]}`;
        deopts.set(k, (deopts.get(k) ?? 0) + 1);
      }
    }
  });
  const show = (title, m) => {
    console.log(title);
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${String(v).padStart(5)}  ${k}`);
  };
  console.log(`during the open loop, three nodes: ${nOpt} optimizations started, ${nDeopt} deoptimizations (${(nOpt / seconds).toFixed(1)}/s, ${(nDeopt / seconds).toFixed(1)}/s)`);
  show('optimizations by function:', opts);
  console.log(`compile jobs finished during the open loop: ${compileMs.toFixed(0)} ms of wall time (${(compileMs / seconds / 10).toFixed(1)} % of a core)`);
  show('compile wall ms by function:', new Map([...took].map(([k, v]) => [k, Math.round(v)])));
  show('deoptimizations by function | kind | reason:', deopts);
  if (withMaps) {
    const code = new Map();
    let n = 0;
    c.members.forEach((m, i) => {
      for (const line of readFileSync(perfMap(m)).subarray(mapFrom[i]).toString('utf8').split('\n')) {
        const x = /^\S+ \S+ JS:([*+])(.*)$/.exec(line);
        if (x === null) continue;
        n++;
        const k = `${x[1]}${x[2].replace(/(file:\/\/)?\/\S*\/(dist|node_modules)\//, '$2/')}`;
        code.set(k, (code.get(k) ?? 0) + 1);
      }
    });
    console.log(`optimized code objects made during the open loop, three nodes: ${n} (${(n / seconds).toFixed(1)}/s)`);
    show('by function and source position:', code);
  }
} finally {
  await c.stop(true);
  if (process.env.KEEP !== '1') rmSync(c.dir, { recursive: true, force: true });
  else console.log(`logs kept in ${c.dir}`);
}
