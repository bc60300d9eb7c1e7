// What the slow publishes of (b) overlap: (b)'s load of `npm run bench` (open loop, 500 batches of 10
// per second over 8 partitions) against a fresh broker of each build, started with the preload
// bench/scratch/stall-trace.cjs; then, for the publishes slower than SLOW ms (default 10), what ran
// while they waited: event-loop stalls, GCs, long fdatasyncs, marker writes, RocksDB files created.
// Slow publishes are grouped into episodes (gaps under 50 ms), printed with what each overlapped.
//   npm run build:bench && node bench/scratch/stall-path.mjs [rounds] LABEL=ROOT ...   (ROOT: a built checkout)
//   env: RATE (500), SECONDS (20), SLOW (10), EPISODES (how many to print, 12), KEEP=DIR (keep the raw traces)
import { startBroker, brokerEntryOf, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { loadavg, tmpdir } from 'node:os';
import { readFileSync, rmSync, copyFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const rounds = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 1;
const builds = args.map((a) => { const i = a.indexOf('='); return { label: a.slice(0, i), root: a.slice(i + 1) }; });
const rate = Number(process.env.RATE ?? 500);
const seconds = Number(process.env.SECONDS ?? 20);
const slowMs = Number(process.env.SLOW ?? 10);
const episodesShown = Number(process.env.EPISODES ?? 12);
const bodies = batchBodies(10, 500, 1_000_000);
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const dur = (iv) => iv[1] - iv[0];
/** Sum and max of the parts of intervals `ivs` inside [a, b]. */
function overlap(ivs, a, b) {
  let sum = 0, max = 0, n = 0;
  for (const iv of ivs) {
    const o = Math.min(b, iv[1]) - Math.max(a, iv[0]);
    if (o > 0) { sum += o; max = Math.max(max, dur(iv)); n++; }
  }
  return { sum, max, n };
}
function analyse(T, from) {
  const req = T.req.filter((r) => r[0] >= from);
  const lat = req.map(dur);
  const out = [];
  const syncs = T.sync.filter((s) => s[0] >= from && s[2] === 0).map(dur);
  const markers = T.marker.filter((s) => s[0] >= from).map(dur);
  const stalls = T.stall.filter((s) => s[0] >= from);
  const gcs = T.gc.filter((s) => s[0] >= from);
  const span = (req.at(-1)?.[1] ?? from) - from;
  out.push(`  broker side: ${req.length} publishes, p50 ${f1(pct(lat, 0.5))} p90 ${f1(pct(lat, 0.9))} p99 ${f1(pct(lat, 0.99))} p99.9 ${f1(pct(lat, 0.999))} max ${f1(Math.max(...lat))} ms; event-loop delay (whole run) p50 ${f1(T.eld.p50)} p99 ${f1(T.eld.p99)} max ${f1(T.eld.max)} ms`);
  out.push(`  WAL fdatasyncs ${syncs.length} (${f1(syncs.length / req.length * 100 / 100)} per publish): p50 ${pct(syncs, 0.5).toFixed(2)} p99 ${f1(pct(syncs, 0.99))} max ${f1(Math.max(...syncs))} ms, ${syncs.filter((x) => x > 5).length} over 5 ms; marker writes ${markers.length}: p50 ${markers.length ? pct(markers, 0.5).toFixed(2) : '-'} p99 ${f1(pct(markers, 0.99))} max ${markers.length ? f1(Math.max(...markers)) : '-'} ms`);
  const gcBy = new Map();
  for (const g of gcs) { const k = g[2]; const e = gcBy.get(k) ?? { n: 0, ms: 0, max: 0 }; e.n++; e.ms += dur(g); e.max = Math.max(e.max, dur(g)); gcBy.set(k, e); }
  const busy = stalls.filter((s) => s[2] >= 0.7 * dur(s));
  out.push(`  stalls on a CPU (main thread on a CPU >= 70 % of the gap): ${busy.length}, ${f1(busy.reduce((a, s) => a + s[2], 0))} ms; by length >= 5/10/20/50 ms: ${[5, 10, 20, 50].map((m) => busy.filter((s) => s[2] >= m).length).join('/')}; longest (on-CPU ms @ s) ${[...busy].sort((a, b) => b[2] - a[2]).slice(0, 12).map((s) => `${f1(s[2])}@${((s[0] - from) / 1000).toFixed(2)}`).join(' ')}`);
  out.push(`  stalls over 4 ms: ${stalls.length} (${f1(stalls.reduce((a, s) => a + dur(s), 0))} ms in ${f1(span / 1000)} s), max ${f1(Math.max(0, ...stalls.map(dur)))} ms; GC by kind (1 scavenge, 2 minor mc, 4 mark-compact, 8 incremental, 16 weak cb): ${[...gcBy].map(([k, e]) => `${k}: ${e.n}x ${f1(e.ms)} ms max ${f1(e.max)}`).join('; ')}`);
  // A change of the WAL is every write: only files made, renamed or removed count.
  const files = T.file.filter((x) => x[0] >= from && !x[1].startsWith('change:'));
  const ssts = files.filter((x) => /\.sst$/.test(x[1]) && x[1].startsWith('rename'));
  out.push(`  data directory events: ${files.length} (${ssts.length} on *.sst, ${files.filter((x) => /\.log$/.test(x[1])).length} on *.log)`);
  // Slow publishes and what they overlapped.
  const slow = req.filter((r) => dur(r) > slowMs);
  let withStall = 0, withLongSync = 0, withLongMarker = 0, withGc = 0, withFile = 0;
  for (const r of slow) {
    if (overlap(T.stall, r[0], r[1]).max >= 5) withStall++;
    if (overlap(T.sync.filter((s) => s[2] === 0), r[0], r[1]).max >= 5) withLongSync++;
    if (overlap(T.marker, r[0], r[1]).max >= 5) withLongMarker++;
    if (overlap(T.gc, r[0], r[1]).max >= 3) withGc++;
    if (files.some((x) => x[0] >= r[0] - 100 && x[0] <= r[1])) withFile++;
  }
  out.push(`  publishes over ${slowMs} ms: ${slow.length} (${f1(slow.length / req.length * 100)} %); of them overlapping a stall >= 5 ms: ${withStall}, a WAL fdatasync >= 5 ms: ${withLongSync}, a marker write >= 5 ms: ${withLongMarker}, a GC >= 3 ms: ${withGc}, a data-directory file event (from 100 ms before): ${withFile}`);
  // Episodes.
  const eps = [];
  for (const r of slow) {
    const e = eps.at(-1);
    if (e !== undefined && r[0] <= e.b + 50) { e.b = Math.max(e.b, r[1]); e.n++; e.worst = Math.max(e.worst, dur(r)); }
    else eps.push({ a: r[0], b: r[1], n: 1, worst: dur(r) });
  }
  out.push(`  episodes: ${eps.length}, starting at (s) ${eps.map((e) => ((e.a - from) / 1000).toFixed(2)).join(' ')}`);
  for (const e of [...eps].sort((x, y) => y.n - x.n).slice(0, episodesShown)) {
    const st = overlap(T.stall, e.a, e.b), sy = overlap(T.sync.filter((s) => s[2] === 0), e.a, e.b), mk = overlap(T.marker, e.a, e.b), gc = overlap(T.gc, e.a, e.b);
    const fe = files.filter((x) => x[0] >= e.a - 200 && x[0] <= e.b).map((x) => `${x[1]}@${f1(x[0] - e.a)}`);
    const longStalls = T.stall.filter((s) => s[1] > e.a && s[0] < e.b && dur(s) >= 5).map((s) => `${f1(dur(s))}@${f1(s[0] - e.a)}`);
    const longSyncs = T.sync.filter((s) => s[1] > e.a && s[0] < e.b && dur(s) >= 3).map((s) => `${f1(dur(s))}@${f1(s[0] - e.a)}`);
    const gcs2 = T.gc.filter((s) => s[1] > e.a && s[0] < e.b && dur(s) >= 1).map((s) => `k${s[2]}:${f1(dur(s))}@${f1(s[0] - e.a)}`);
    const cap = (xs) => (xs.length > 16 ? [...xs.slice(0, 16), `... ${xs.length - 16} more`] : xs);
    out.push(`    at ${((e.a - from) / 1000).toFixed(3)} s, ${f1(e.b - e.a)} ms: ${e.n} slow (worst ${f1(e.worst)} ms); stalls ${st.n} (${f1(st.sum)} ms) [${cap(longStalls).join(' ')}]; WAL syncs ${sy.n} [${cap(longSyncs).join(' ')}]; markers ${mk.n} max ${f1(mk.max)}; GC [${cap(gcs2).join(' ')}]; files [${cap(fe).join(' ')}]`);
  }
  return out.join('\n');
}
/** What the CPU profile ran during the stalls longest on a CPU (inclusive frames, then self). */
function profileStalls(profFile, T, from, n) {
  const p = JSON.parse(readFileSync(profFile, 'utf8'));
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const parent = new Map();
  for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const nm = (x) => { const f = x.callFrame; return `${f.functionName || '(anon)'} ${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`; };
  let t = p.startTime;
  const times = p.samples.map((_, i) => (t += p.timeDeltas[i]));
  const toProf = (ms) => T.clock[1] + (ms - T.clock[0]) * 1000;
  const out = [];
  const agg = new Map();
  let aggN = 0;
  for (const s of [...T.stall].filter((x) => x[0] >= from && x[2] >= 0.7 * dur(x)).sort((a, b) => b[2] - a[2]).slice(0, n)) {
    const a = toProf(s[0]), b = toProf(s[1]);
    const inc = new Map(), self = new Map();
    let k = 0;
    for (let i = 0; i < times.length; i++) {
      if (times[i] < a || times[i] > b) continue;
      const leaf = byId.get(p.samples[i]);
      if (leaf.callFrame.functionName === '(idle)') continue;
      k++;
      self.set(nm(leaf), (self.get(nm(leaf)) ?? 0) + 1);
      const seen = new Set();
      for (let x = p.samples[i]; x !== undefined; x = parent.get(x)) { const f = nm(byId.get(x)); if (!seen.has(f)) { seen.add(f); inc.set(f, (inc.get(f) ?? 0) + 1); } }
      for (const f of seen) agg.set(f, (agg.get(f) ?? 0) + 1);
      aggN++;
    }
    const top = (m, c) => [...m].sort((x, y) => y[1] - x[1]).filter(([f]) => !/^\(root\)|processTicksAndRejections|runMicrotasks/.test(f)).slice(0, c).map(([f, v]) => `${Math.round(100 * v / Math.max(1, k))}% ${f}`).join(' | ');
    out.push(`    stall at ${((s[0] - from) / 1000).toFixed(3)} s, ${f1(dur(s))} ms (${f1(s[2])} on a CPU), ${k} samples: ${top(inc, 10)}\n      self: ${top(self, 6)}`);
  }
  const top = [...agg].sort((x, y) => y[1] - x[1]).filter(([f]) => !/^\(root\)|processTicksAndRejections|runMicrotasks/.test(f)).slice(0, 30);
  out.push(`  over those stalls (${aggN} samples), inclusive: ${top.map(([f, v]) => `${Math.round(100 * v / Math.max(1, aggN))}% ${f}`).join(' | ')}`);
  return out.join('\n');
}
for (let round = 1; round <= rounds; round++) {
  for (const { label, root } of round % 2 === 1 ? builds : [...builds].reverse()) {
    const out = join(tmpdir(), `stall-trace-${process.pid}-${label}.json`);
    const prof = process.env.PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROF_DIR}`, '--cpu-prof-interval', '250'] : [];
    const b = await startBroker({ entry: brokerEntryOf(root), nodeArgs: ['-r', join(here, 'stall-trace.cjs'), ...prof, ...(process.env.NODE_ARGS ?? '').split(' ').filter(Boolean)], env: { TRACE_OUT: out } });
    let line;
    let startedAt;
    let bStartUs = 0;
    let ioLine = '';
    let cpuLine = '';
    try {
      await http(b.url, 'POST', '/event-types', eventTypeBody('lat.x', 'hash'));
      // PRE_A=S: first (a)'s load for S seconds each (batch 1000 x 4, then batch 10 x 64), as (b) of
      // `npm run bench` follows (a) on the same broker and event type.
      // Bytes the broker's threads (RocksDB's flushes and compactions included) sent to the disk.
      const io = () => { const m = /write_bytes: (\d+)/.exec(readFileSync(`/proc/${b.pid}/io`, 'utf8')); return m ? Number(m[1]) : NaN; };
      const io0 = io();
      const { readdirSync, statSync } = await import('node:fs');
      const sizes = () => { const o = { log: 0, sst: 0, other: 0 }; const walk = (d) => { for (const f of readdirSync(d, { withFileTypes: true })) { const q = join(d, f.name); if (f.isDirectory()) walk(q); else { const k = f.name.endsWith('.log') ? 'log' : f.name.endsWith('.sst') ? 'sst' : 'other'; o[k] += statSync(q).size; } } }; walk(b.dataDir); return o; };
      const preA = Number(process.env.PRE_A ?? 0);
      if (preA > 0) {
        for (const [size, producers, bs] of [[1000, 4, batchBodies(1000, 24, 0)], [10, 64, bodies]]) {
          const pp = publishPool(b.url, producers);
          const res = await closedLoop({ pool: pp, path: '/event-types/lat.x/events', bodies: bs, eventsPerBody: size, producers, warmupMs: 1000, durationMs: preA * 1000 });
          await pp.close();
          console.log(`  before: batch ${size} x ${producers}: ${Math.round(res.eventsPerS)} ev/s`);
        }
      }
      // On-CPU time per thread (schedstat, ns): robust to a loaded machine, unlike wall-clock latencies.
      const threads = () => { const o = { main: 0, node: 0, rocksdb: 0 }; for (const t of readdirSync(`/proc/${b.pid}/task`)) { try { const ns = Number(readFileSync(`/proc/${b.pid}/task/${t}/schedstat`, 'latin1').split(' ')[0]); const comm = readFileSync(`/proc/${b.pid}/task/${t}/comm`, 'latin1').trim(); o[Number(t) === b.pid ? 'main' : comm.startsWith('rocksdb') ? 'rocksdb' : 'node'] += ns / 1e6; } catch { /* gone */ } } return o; };
      const th1 = threads();
      const io1 = io();
      const sz1 = sizes();
      const pool = publishPool(b.url, 32);
      bStartUs = Number(process.hrtime.bigint() / 1000n);
      const c0 = cpuSeconds(b.pid);
      const t0 = performance.now();
      const r = await openLoop({ pool, path: '/event-types/lat.x/events', bodies, requestsPerS: rate, warmupMs: 2000, durationMs: seconds * 1000 });
      const wall = (performance.now() - t0) / 1000;
      await pool.close();
      const th2 = threads();
      const io2 = io();
      const sz2 = sizes();
      const mb = (x) => (x / 1e6).toFixed(1);
      const reqs = r.requests / r.seconds * wall;
      cpuLine = `on-CPU ms per publish during (b): main thread ${((th2.main - th1.main) / reqs).toFixed(3)}, other node threads (V8 workers, libuv pool) ${((th2.node - th1.node) / reqs).toFixed(3)}, RocksDB threads ${((th2.rocksdb - th1.rocksdb) / reqs).toFixed(3)}`;
      ioLine = `disk writes of the broker: before (b) ${((io1 - io0) / 1e6).toFixed(0)} MB, during (b) ${((io2 - io1) / 1e6).toFixed(0)} MB (${((io2 - io1) / 1e6 / wall).toFixed(1)} MB/s; what (b) submits: ${(rate * 10 * 526 / 1e6).toFixed(1)} MB/s); WAL files ${mb(sz1.log)} -> ${mb(sz2.log)} MB, SST files ${mb(sz1.sst)} -> ${mb(sz2.sst)} MB`;
      startedAt = wall;
      line = `round ${round} ${label}: client p50 ${r.latency.p50.toFixed(2)} ms p90 ${r.latency.p90.toFixed(2)} p99 ${r.latency.p99.toFixed(2)} p99.9 ${r.latency.p999.toFixed(2)} max ${r.latency.max.toFixed(1)} ms (n=${r.latency.count}); broker CPU ${((cpuSeconds(b.pid) - c0) / wall).toFixed(2)} cores; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
    } finally {
      await b.stop();
    }
    console.log(line);
    console.log(`  ${ioLine}`);
    console.log(`  ${cpuLine}`);
    try {
      const T = JSON.parse(readFileSync(out, 'utf8'));
      if (process.env.KEEP) copyFileSync(out, join(process.env.KEEP, `stall-trace-r${round}-${label}.json`));
      // (b) started at bStartUs on the monotonic clock both processes share; its first 2 s are warm-up.
      const first = T.clock[0] + (bStartUs - T.clock[1]) / 1000;
      console.log(analyse(T, first + 2000));
      const pd = process.env.PROF_DIR;
      if (pd) {
        const { readdirSync, statSync } = await import('node:fs');
        const newest = readdirSync(pd).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(pd, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
        if (newest) console.log(profileStalls(newest, T, first + 2000, Number(process.env.PROF_STALLS ?? 8)));
      }
      rmSync(out);
    } catch (e) { console.log(`  no trace: ${e.stack}`); }
    void startedAt;
  }
}
