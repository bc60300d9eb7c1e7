// (b) of `npm run bench` on one node (open loop, RATE batches of 10 a second over 8 partitions, 2 s
// warm-up + SECONDS), a fresh broker of each build in turn, started with the preload
// bench/scratch/single-counts.cjs. Prints per publish request: CPU (process, main thread), event-loop
// iterations, fdatasyncs/fsyncs, raft marker writes, scavenges and mark-compacts; and for the slowest
// 1 % of requests (by the broker's own request->finish time) how many overlapped a mark-compact, a
// scavenge, a marker write or a WAL fdatasync's end, beside the same shares for all requests. Counts,
// not latencies: they hold on a loaded machine.
//   npm run build:bench && node bench/scratch/single-counts.mjs [rounds] LABEL=ROOT[::--flag,--flag[::ENV=value,ENV=value]] ...
//   env: RATE (500), SECONDS (10), PROMISES=1 (count promises too; slows the broker)
//   PREFILL=S: before the warm-up, S seconds of (a)'s closed loop of batches of 1000 (4 producers), as
//   `npm run bench` runs before (b): the memory tails' slabs are then full, as on a node that has run a while.
//   PERF=DIR [PERF_EVENT=EVENT]: the broker runs with --perf-basic-prof and `perf record -g` samples it
//   during the measured window (DIR/perf-LABEL-rROUND.data; with PERF_EVENT=probe_node:abappend the
//   ArrayBuffers it creates: bench/scratch/arraybuffer-census.py, RATE x SECONDS requests).
import { startBroker, brokerEntryOf } from '../../dist-bench/bench/lib/broker.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { loadavg, tmpdir } from 'node:os';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const rounds = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 1;
const builds = args.map((a) => {
  const i = a.indexOf('=');
  const [root, flags, env] = a.slice(i + 1).split('::');
  return { label: a.slice(0, i), root, flags: flags ? flags.split(',') : [], env: Object.fromEntries((env ? env.split(',') : []).map((kv) => kv.split('='))) };
});
const rate = Number(process.env.RATE ?? 500);
const seconds = Number(process.env.SECONDS ?? 10);
const bodies = batchBodies(10, 500, 1_000_000);
const bodies1000 = batchBodies(1000, 8, 0);
const tick = 100; // USER_HZ
const perfDir = process.env.PERF;
if (perfDir !== undefined) mkdirSync(perfDir, { recursive: true });

async function snapshot(b, out, n) {
  process.kill(b.pid, 'SIGUSR2');
  const f = `${out}.${n}.json`;
  for (let i = 0; i < 200 && !existsSync(f); i++) await sleep(25);
  await sleep(50);
  const s = JSON.parse(readFileSync(f, 'utf8'));
  rmSync(f);
  return s;
}

const overlaps = (r, xs) => xs.some(([s, e]) => s < r[1] && e > r[0]);
const endsIn = (r, xs) => xs.some(([, e]) => e > r[0] && e < r[1]);

for (let round = 1; round <= rounds; round++) {
  for (const { label, root, flags, env } of round % 2 === 1 ? builds : [...builds].reverse()) {
    const out = join(tmpdir(), `single-counts-${process.pid}-${label}`);
    const b = await startBroker({ entry: brokerEntryOf(root), nodeArgs: [...flags, ...(perfDir === undefined ? [] : ['--perf-basic-prof']), '-r', join(here, 'single-counts.cjs')], env: { ...env, COUNTS_OUT: out } });
    try {
      await http(b.url, 'POST', '/event-types', eventTypeBody('lat.x', 'hash'));
      const prefill = Number(process.env.PREFILL ?? 0);
      if (prefill > 0) {
        const p4 = publishPool(b.url, 4);
        await closedLoop({ pool: p4, path: '/event-types/lat.x/events', bodies: bodies1000, eventsPerBody: 1000, producers: 4, warmupMs: 0, durationMs: prefill * 1000 });
        await p4.close();
      }
      const pool = publishPool(b.url, 32);
      await openLoop({ pool, path: '/event-types/lat.x/events', bodies, requestsPerS: rate, warmupMs: 0, durationMs: 2000 });
      const s0 = await snapshot(b, out, 0);
      const perf = perfDir === undefined ? undefined : spawn('perf', ['record', '-e', process.env.PERF_EVENT ?? 'cpu-clock', '-g', '-o', join(perfDir, `perf-${label}-r${round}.data`), '-p', String(b.pid), '--', 'sleep', String(seconds)], { stdio: 'ignore' });
      const r = await openLoop({ pool, path: '/event-types/lat.x/events', bodies, requestsPerS: rate, warmupMs: 0, durationMs: seconds * 1000 });
      const s1 = await snapshot(b, out, 1);
      if (perf !== undefined && perf.exitCode === null) await new Promise((res) => perf.once('exit', res));
      await pool.close();
      const n = s1.posts - s0.posts;
      const per = (k, scale = 1, digits = 2) => ((scale * (s1[k] - s0[k])) / n).toFixed(digits);
      const wall = (s1.at - s0.at) / 1000;
      const reqs = s1.reqs.map(([a, z]) => [a, z, z - a]).sort((x, y) => y[2] - x[2]);
      const slow = reqs.slice(0, Math.max(1, Math.floor(reqs.length / 100)));
      const mcs = s1.gcs.filter((g) => g[2] === 'MC');
      const scs = s1.gcs.filter((g) => g[2] === 'S');
      const syncsBesideMarker = s1.syncs.filter((x) => overlaps(x, s1.marks));
      const share = (rs, f) => `${((100 * rs.filter(f).length) / rs.length).toFixed(0)}%`;
      const shares = (rs) => `MC ${share(rs, (q) => overlaps(q, mcs))}, scavenge ${share(rs, (q) => overlaps(q, scs))}, marker ${share(rs, (q) => overlaps(q, s1.marks))}, fdatasync end ${share(rs, (q) => endsIn(q, s1.syncs))}, of which a fdatasync that overlapped a marker write ${share(rs, (q) => endsIn(q, syncsBesideMarker))}`;
      // A WAL fdatasync beside a marker write: the disk may serialise the two flushes.
      const syncMs = (xs) => (xs.length === 0 ? 'none' : `${(xs.reduce((t, [a, z]) => t + z - a, 0) / xs.length).toFixed(2)} ms x${xs.length}`);
      const withMarker = s1.syncs.filter((x) => overlaps(x, s1.marks));
      const withoutMarker = s1.syncs.filter((x) => !overlaps(x, s1.marks));
      const markMs = syncMs(s1.marks);
      const q = (p) => reqs[Math.floor((1 - p) * reqs.length)]?.[2].toFixed(2);
      console.log(
        `round ${round} ${label}: ${n} requests in ${wall.toFixed(1)} s (client p50 ${r.latency.p50.toFixed(2)} p99 ${r.latency.p99.toFixed(2)} ms; broker p50 ${q(0.5)} p99 ${q(0.99)} max ${reqs[0]?.[2].toFixed(1)} ms)\n` +
          `  per request: CPU ${per('cpuTicks', 1000 / tick, 3)} ms (main thread ${per('mainCpuTicks', 1000 / tick, 3)}), loop iterations ${per('loops')}, fdatasync ${per('fdatasync', 1, 3)}, fsync ${per('fsync', 1, 3)}, bytes written ${per('wchar', 1 / 1024, 1)} KB (to the disk ${per('write_bytes', 1 / 1024, 1)} KB), marker writes ${per('markerWrites', 1, 3)} (${((s1.markerWrites - s0.markerWrites) / wall).toFixed(0)}/s), ` +
          `scavenges ${per('scavenges', 1, 3)} (${per('scavengeMs', 1000, 0)} µs), mark-compacts ${per('markCompacts', 1, 4)} (${(s1.markCompacts - s0.markCompacts)} in the window, ${per('markCompactMs', 1000, 0)} µs)${s1.promises > 0 ? `, promises ${per('promises', 1, 1)}` : ''}\n` +
          `  slowest 1 % (${slow.length}, from ${slow[slow.length - 1]?.[2].toFixed(2)} ms) overlapped: ${shares(slow)}; all requests: ${shares(reqs)}\n  WAL fdatasync mean: beside a marker write ${syncMs(withMarker)}, alone ${syncMs(withoutMarker)}; marker write mean ${markMs}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
      );
    } finally {
      await b.stop();
    }
  }
}
