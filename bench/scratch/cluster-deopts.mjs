// Which functions V8 still compiles and deoptimizes on three warm nodes (the optimizing compiler was a
// fifth of the cluster's CPU samples after the warm-up, docs/benchmarks.md): a fresh three-node cluster
// (RF 3, 4 partitions, hash) run with --trace-opt --trace-deopt, WARM s of closed-loop batches of 10,
// then (b)'s open loop at RATE requests/s for SECONDS s; counts, in what the nodes logged during the
// open loop only, the optimizations started and the deoptimizations per function and reason.
//   npm run build:bench && RATE=300 WARM=30 SECONDS=15 node bench/scratch/cluster-deopts.mjs [ROOT]
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

const c = await startBrookCluster({ env: { BROOK_REPLICATION_FACTOR: '3', BROOK_LOG_LEVEL: 'error' }, entry: brokerEntryOf(root), nodeArgs: ['--trace-opt', '--trace-deopt'] });
try {
  await http(c.members[0].url, 'POST', '/event-types', eventTypeBody(typeName, 'hash', 4));
  await sleep(3000);
  const pools = c.members.map((m) => publishPool(m.url, 60));
  const pool = new RoundRobin(pools);
  await closedLoop({ pool, path, bodies, eventsPerBody: 10, producers: 60, warmupMs: 0, durationMs: warmS * 1000 });
  const from = c.members.map((m) => statSync(m.logFile).size);
  const r = await openLoop({ pool, path, bodies, requestsPerS: rate, warmupMs: 0, durationMs: seconds * 1000 });
  console.log(`open loop ${rate}/s for ${seconds} s: p50 ${r.latency.p50.toFixed(1)} p99 ${r.latency.p99.toFixed(1)} ms; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await pool.close();
  const opts = new Map();
  const deopts = new Map();
  let nOpt = 0;
  let nDeopt = 0;
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
  show('deoptimizations by function | kind | reason:', deopts);
} finally {
  await c.stop(true);
  if (process.env.KEEP !== '1') rmSync(c.dir, { recursive: true, force: true });
  else console.log(`logs kept in ${c.dir}`);
}
