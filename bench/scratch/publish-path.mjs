// Where the time of one publish goes on one node, build against build (docs/benchmarks.md, "Single
// node, 2026-11-27 morning"): (b) of `npm run bench` (open loop, 500 batches of 10 /s over 8 partitions,
// 2 s warm-up + 10 s) on a fresh broker of each build in turn, each started with the preload
// bench/scratch/publish-trace.cjs (fdatasyncs per request, time before the first and after the last
// fsync, event-loop iterations between the fsync and the answer), plus the node host's counts and
// phases where the build has them (/metrics/prometheus).
//   npm run build:bench && node bench/scratch/publish-path.mjs [rounds] LABEL=ROOT ...   (ROOT: a built checkout)
import { startBroker, brokerEntryOf, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { loadavg, tmpdir } from 'node:os';
import { readFileSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const rounds = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 1;
const builds = args.map((a) => { const i = a.indexOf('='); return { label: a.slice(0, i), root: a.slice(i + 1) }; });
const rate = Number(process.env.RATE ?? 500);
const scrape = async (url) => {
  const t = await (await fetch(`${url}/metrics/prometheus`)).text();
  const m = new Map();
  for (const line of t.split('\n')) { const x = /^(brook_raft_host_\w+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line); if (x) m.set(x[1] + (x[2] ?? ''), Number(x[3])); }
  return m;
};
const bodies = batchBodies(10, 500, 1_000_000);
for (let round = 1; round <= rounds; round++) {
  for (const { label, root } of round % 2 === 1 ? builds : [...builds].reverse()) {
    const out = join(tmpdir(), `publish-trace-${process.pid}-${label}.json`);
    const b = await startBroker({ entry: brokerEntryOf(root), nodeArgs: ['-r', join(here, 'publish-trace.cjs')], env: { TRACE_OUT: out } });
    let line;
    try {
      await http(b.url, 'POST', '/event-types', eventTypeBody('lat.x', 'hash'));
      const pool = publishPool(b.url, 32);
      const m0 = await scrape(b.url);
      const c0 = cpuSeconds(b.pid);
      const t0 = performance.now();
      const r = await openLoop({ pool, path: '/event-types/lat.x/events', bodies, requestsPerS: rate, warmupMs: 2000, durationMs: 10_000 });
      const wall = (performance.now() - t0) / 1000;
      const m1 = await scrape(b.url);
      await pool.close();
      const reqs = r.requests / r.seconds * wall;
      const d = (k) => ((m1.get(k) ?? NaN) - (m0.get(k) ?? NaN));
      const per = (what) => (d(`brook_raft_host_work_total{what="${what}"}`) / reqs).toFixed(2);
      const phase = (p) => `${p} ${(1000 * d(`brook_raft_host_phase_seconds_sum{phase="${p}"}`) / d(`brook_raft_host_phase_seconds_count{phase="${p}"}`)).toFixed(2)} ms x${(d(`brook_raft_host_phase_seconds_count{phase="${p}"}`) / reqs).toFixed(2)}`;
      const host = m1.size === 0 ? 'no host metrics' : `per request: turns ${per('turns')}, writes ${per('writes')}, durable ${per('durableWrites')}, readies ${per('readies')}; phase means ${phase('wait')}, ${phase('write')}, ${phase('ackApply')}`;
      line = `round ${round} ${label}: p50 ${r.latency.p50.toFixed(2)} ms p90 ${r.latency.p90.toFixed(2)} p99 ${r.latency.p99.toFixed(2)} ms; broker CPU ${((cpuSeconds(b.pid) - c0) / wall).toFixed(2)} cores; ${host}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
    } finally {
      await b.stop();
    }
    console.log(line);
    try { console.log(`  trace ${label}: ${readFileSync(out, 'utf8')}`); rmSync(out); } catch (e) { console.log(`  no trace: ${e.message}`); }
  }
}
