// Why the broker runs full collections during (b): (a)'s load (optional, PRE_A seconds per batch size),
// then (b)'s open loop (RATE batches of 10 per second over 8 partitions) against a fresh broker of each
// build under `--trace-gc --trace-gc-nvp`; prints, for (b) only, scavenges, mark-compacts with V8's reason
// and the heap around each, and the bytes promoted per publish. Counts and bytes, not latencies: they
// hold on a loaded machine.
//   npm run build:bench && PRE_A=8 SECONDS=10 node bench/scratch/gc-reasons.mjs [rounds] LABEL=ROOT ...
//   env: GC_FLAGS ('--trace-gc-nvp'; '--trace-gc' prints V8's reason for each mark-compact instead; add
//   '--trace-gc-verbose' for the external memory after each GC), RATE (500), SECONDS (10), PRE_A (0), NODE_ARGS (more flags for the broker), KEEP=DIR (keep the GC logs)
import { startBroker, brokerEntryOf } from '../../dist-bench/bench/lib/broker.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { loadavg, tmpdir } from 'node:os';
import { readFileSync, mkdtempSync, copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const rounds = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 1;
const builds = args.map((a) => { const i = a.indexOf('='); return { label: a.slice(0, i), root: a.slice(i + 1) }; });
const rate = Number(process.env.RATE ?? 500);
const seconds = Number(process.env.SECONDS ?? 10);
const preA = Number(process.env.PRE_A ?? 0);
const bodies = batchBodies(10, 500, 1_000_000);
const logDir = mkdtempSync(join(tmpdir(), 'brook-gc-reasons-'));

function parse(file, fromMs, toMs) {
  const out = { scavenges: 0, promoted: 0, allocated: 0, mcs: [], lines: 0, external: [] };
  let lastT = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    // --trace-gc-verbose: the external memory V8 counts (ArrayBuffer backing stores), after each GC
    const x = /External memory reported:\s+(\d+) KB/.exec(line);
    if (x !== null) {
      if (lastT >= fromMs && lastT <= toMs) out.external.push(Number(x[1]) / 1024);
      continue;
    }
    const tm = /\s(\d+) ms: /.exec(line);
    if (tm !== null) lastT = Number(tm[1]);
    // --trace-gc-nvp: one line per GC with allocated= promoted=
    let m = /\s(\d+) ms: pause=([\d.]+) .*?gc=(\w+) /.exec(line);
    if (m !== null) {
      const t = Number(m[1]);
      if (t < fromMs || t > toMs) continue;
      const f = (k) => Number(new RegExp(`\\s${k}=(\\d+)`).exec(line)?.[1] ?? 0);
      out.allocated += f('allocated');
      out.promoted += f('promoted');
      if (m[3] === 's') out.scavenges++;
      else out.mcs.push(`${((t - fromMs) / 1000).toFixed(1)}s ${(f('total_size_before') / 1e6).toFixed(1)}->${(f('total_size_after') / 1e6).toFixed(1)} MB, pause ${m[2]} ms, allocated since the last GC ${(f('allocated') / 1e6).toFixed(1)} MB`);
      continue;
    }
    // --trace-gc: Mark-Compact lines with sizes and the reason at the end
    m = /\s(\d+) ms: (Mark-Compact|Mark-Compact \(reduce\)) ([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB.*?\) (.*)$/.exec(line);
    if (m !== null) {
      const t = Number(m[1]);
      if (t < fromMs || t > toMs) continue;
      out.mcs.push(`${((t - fromMs) / 1000).toFixed(1)}s ${m[3]}->${m[5]} MB: ${m[7].replace(/^(average mu = [\d.]+, current mu = [\d.]+\) )/, '')}`);
    }
  }
  return out;
}

for (let round = 1; round <= rounds; round++) {
  for (const { label, root } of round % 2 === 1 ? builds : [...builds].reverse()) {
    const logFile = join(logDir, `r${round}-${label}.log`);
    const spawned = performance.now();
    const b = await startBroker({ entry: brokerEntryOf(root), logFile, nodeArgs: [...(process.env.GC_FLAGS ?? '--trace-gc-nvp').split(' '), ...(process.env.NODE_ARGS ?? '').split(' ').filter(Boolean)] });
    let line;
    let from = 0, to = 0, n = 0;
    try {
      await http(b.url, 'POST', '/event-types', eventTypeBody('lat.x', 'hash'));
      if (preA > 0) {
        for (const [size, producers, bs] of [[1000, 4, batchBodies(1000, 24, 0)], [10, 64, bodies]]) {
          const pp = publishPool(b.url, producers);
          await closedLoop({ pool: pp, path: '/event-types/lat.x/events', bodies: bs, eventsPerBody: size, producers, warmupMs: 1000, durationMs: preA * 1000 });
          await pp.close();
        }
      }
      const pool = publishPool(b.url, 32);
      // Node's trace-gc times are ms since the isolate started, about when the child was spawned.
      from = performance.now() - spawned + 2000;
      const r = await openLoop({ pool, path: '/event-types/lat.x/events', bodies, requestsPerS: rate, warmupMs: 2000, durationMs: seconds * 1000 });
      to = performance.now() - spawned;
      n = r.latency.count;
      await pool.close();
      line = `round ${round} ${label}: client p50 ${r.latency.p50.toFixed(2)} p99 ${r.latency.p99.toFixed(2)} ms (n=${n}); load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
    } finally {
      const rss = (() => { try { return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${b.pid}/status`, 'utf8'))[1]) / 1024; } catch { return NaN; } })();
      await b.stop();
      line += `; RSS peak (whole run) ${rss.toFixed(0)} MB`;
    }
    await new Promise((r) => setTimeout(r, 300));
    const g = parse(logFile, from, to);
    console.log(line);
    console.log(`  (b): scavenges ${g.scavenges}, mark-compacts ${g.mcs.length}; allocated ${(g.allocated / n / 1024).toFixed(1)} KB, promoted ${(g.promoted / n / 1024).toFixed(2)} KB per publish`);
    if (g.external.length > 0) console.log(`  external memory after each GC (MB): first ${g.external[0].toFixed(0)}, last ${g.external.at(-1).toFixed(0)}, min ${Math.min(...g.external).toFixed(0)}, max ${Math.max(...g.external).toFixed(0)}; rises between GCs summed: ${g.external.slice(1).reduce((a, v, i) => a + Math.max(0, v - g.external[i]), 0).toFixed(0)} MB`);
    for (const mc of g.mcs) console.log(`    ${mc}`);
    if (process.env.KEEP) copyFileSync(logFile, join(process.env.KEEP, `gc-reasons-r${round}-${label}.log`));
  }
}
