// What the slow publishes of (b) on three nodes overlap. A fresh three-node cluster (RF 3, 4 partitions,
// hash; as bench:cluster), every node started with the preload bench/scratch/stall-trace.cjs; WARM s of
// closed-loop batches of 10 (not measured), then (b)'s open loop (RATE requests/s of 10 events, each
// request to the next node in turn) for 2 s + SECONDS s. The client records every request (due time,
// latency, the node it went to) on the monotonic clock the nodes' traces share. Slow requests (over
// SLOW ms, default 20) are grouped into episodes (gaps under 50 ms); each episode is printed with, per
// node, what its trace holds in it: main-thread stalls (on-CPU ms: the node's own work; off-CPU: the
// machine or a blocking call), WAL fdatasyncs and directory fsyncs of 5 ms or more, GCs of 2 ms or more,
// RocksDB files made or removed (a memtable switch starts a *.log, a flush or compaction writes *.sst).
// Also the counts of the slow requests by node, and how many of them overlapped each kind on any node.
//   npm run build:bench && node bench/scratch/cluster-stalls.mjs [ROOT]
//   env: RATE (500), SECONDS (10), WARM (30), SLOW (20), EPISODES (12)
import { brokerEntryOf } from '../../dist-bench/bench/lib/broker.js';
import { startBrookCluster } from '../../dist-bench/bench/lib/clusters.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, publishPool, RoundRobin } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { readFileSync, rmSync, existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.argv[2] ?? '.');
const rate = Number(process.env.RATE ?? 500);
const seconds = Number(process.env.SECONDS ?? 10);
const warmS = Number(process.env.WARM ?? 30);
const slowMs = Number(process.env.SLOW ?? 20);
const episodesShown = Number(process.env.EPISODES ?? 12);
const typeName = 'stall.orders';
const path = `/event-types/${typeName}/events`;
const bodies = batchBodies(10, 500, 1_000_000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const monoMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

const traceOut = join(tmpdir(), `cluster-stalls-${process.pid}-%p.json`);
const c = await startBrookCluster({ env: { BROOK_REPLICATION_FACTOR: '3', TRACE_OUT: traceOut }, entry: brokerEntryOf(root), nodeArgs: ['-r', join(here, 'stall-trace.cjs')] });
const reqs = []; // [dueMono, latency, node index, ok]
let cpu = 0;
let wall = 0;
try {
  await http(c.members[0].url, 'POST', '/event-types', eventTypeBody(typeName, 'hash', 4));
  await sleep(3000);
  const pools = c.members.map((m) => publishPool(m.url, 60));
  if (warmS > 0) await closedLoop({ pool: new RoundRobin(pools), path, bodies, eventsPerBody: 10, producers: 60, warmupMs: 0, durationMs: warmS * 1000 });
  const c0 = c.members.reduce((s, m) => s + cpuSeconds(m.pid), 0);
  const total = Math.floor(rate * (2 + seconds));
  const start = monoMs() + 20;
  const pending = [];
  let i = 0;
  await new Promise((done) => {
    const tick = () => {
      const now = monoMs();
      while (i < total && start + (i * 1000) / rate <= now) {
        const due = start + (i * 1000) / rate;
        const node = i % pools.length;
        const body = bodies[i % bodies.length];
        i++;
        pending.push(
          pools[node]
            .request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body })
            .then(async (r) => { await r.body.dump(); reqs.push([due, monoMs() - due, node, r.statusCode === 200]); })
            .catch(() => reqs.push([due, monoMs() - due, node, false])),
        );
      }
      if (i >= total) return done();
      setTimeout(tick, Math.max(0, start + (i * 1000) / rate - monoMs()));
    };
    tick();
  });
  await Promise.all(pending);
  wall = monoMs() - start;
  cpu = c.members.reduce((s, m) => s + cpuSeconds(m.pid), 0) - c0;
  for (const p of pools) await p.close();
  var from = start + 2000;
} finally {
  await c.stop();
}
const traces = c.members.map((m) => {
  const f = traceOut.replace('%p', String(m.pid));
  if (!existsSync(f)) return undefined;
  const T = JSON.parse(readFileSync(f, 'utf8'));
  rmSync(f);
  // performance.now() of that process to the shared monotonic ms.
  const off = T.clock[1] / 1000 - T.clock[0];
  const sh = (iv) => [iv[0] + off, iv[1] + off, ...iv.slice(2)];
  return { stall: T.stall.map(sh), sync: T.sync.map(sh), gc: T.gc.map(sh), file: T.file.map((x) => [x[0] + off, x[1]]).filter((x) => !x[1].startsWith('change:')), eld: T.eld };
});
const measured = reqs.filter((r) => r[0] >= from).sort((a, b) => a[0] - b[0]);
const lat = measured.map((r) => r[1]);
console.log(`${root}: (b) at ${rate}/s for ${seconds} s after ${warmS} s warm-up: p50 ${f1(pct(lat, 0.5))} p90 ${f1(pct(lat, 0.9))} p99 ${f1(pct(lat, 0.99))} p99.9 ${f1(pct(lat, 0.999))} max ${f1(Math.max(...lat))} ms, errors ${measured.filter((r) => !r[3]).length}; cluster ${(cpu / (wall / 1000)).toFixed(2)} cores, ${((cpu * 1000) / reqs.length).toFixed(2)} ms CPU per request; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
traces.forEach((T, k) => {
  if (T === undefined) return console.log(`  node ${k + 1}: no trace`);
  const inM = (iv) => iv[0] >= from;
  const st = T.stall.filter(inM), sy = T.sync.filter(inM), gc = T.gc.filter(inM);
  const syncs = sy.filter((s) => s[2] === 0).map((s) => s[1] - s[0]);
  console.log(`  node ${k + 1}: loop stalls >4 ms ${st.length} (on-CPU >= 70 %: ${st.filter((s) => s[2] >= 0.7 * (s[1] - s[0])).length}), max ${f1(Math.max(0, ...st.map((s) => s[1] - s[0])))} ms; WAL fdatasyncs ${syncs.length} p50 ${f1(pct(syncs, 0.5))} p99 ${f1(pct(syncs, 0.99))} max ${f1(Math.max(0, ...syncs))} ms; dir fsyncs ${sy.filter((s) => s[2] === 1).length}; GCs ${gc.length} (mark-compact ${gc.filter((g) => g[2] === 4).length}, max ${f1(Math.max(0, ...gc.map((g) => g[1] - g[0])))} ms); files ${T.file.filter((x) => x[0] >= from).map((x) => x[1]).join(' ')}`);
});
const slow = measured.filter((r) => r[1] > slowMs);
const byNode = [0, 0, 0];
for (const r of slow) byNode[r[2]]++;
const hit = (ivs, a, b, min) => ivs.some((iv) => iv[1] > a && iv[0] < b && iv[1] - iv[0] >= min);
const kinds = { stall: 0, sync: 0, gc: 0, file: 0 };
for (const r of slow) {
  const a = r[0], b = r[0] + r[1];
  if (traces.some((T) => T && hit(T.stall, a, b, 10))) kinds.stall++;
  if (traces.some((T) => T && hit(T.sync, a, b, 10))) kinds.sync++;
  if (traces.some((T) => T && hit(T.gc, a, b, 5))) kinds.gc++;
  if (traces.some((T) => T && T.file.some((x) => x[0] >= a - 200 && x[0] <= b))) kinds.file++;
}
console.log(`slow (> ${slowMs} ms): ${slow.length} of ${measured.length}, sent to node 1/2/3: ${byNode.join('/')}; overlapping on some node a loop stall >= 10 ms: ${kinds.stall}, an fsync >= 10 ms: ${kinds.sync}, a GC >= 5 ms: ${kinds.gc}, a RocksDB file event (from 200 ms before): ${kinds.file}`);
const eps = [];
for (const r of slow) {
  const e = eps.at(-1);
  if (e !== undefined && r[0] <= e.b + 50) { e.b = Math.max(e.b, r[0] + r[1]); e.n++; e.worst = Math.max(e.worst, r[1]); }
  else eps.push({ a: r[0], b: r[0] + r[1], n: 1, worst: r[1] });
}
console.log(`episodes: ${eps.length}, at (s) ${eps.map((e) => ((e.a - from) / 1000).toFixed(2)).join(' ')}`);
for (const e of [...eps].sort((x, y) => y.n - x.n).slice(0, episodesShown)) {
  console.log(`  at ${((e.a - from) / 1000).toFixed(3)} s, ${f1(e.b - e.a)} ms: ${e.n} slow, worst ${f1(e.worst)} ms`);
  traces.forEach((T, k) => {
    if (T === undefined) return;
    const within = (iv, min) => iv[1] > e.a - 20 && iv[0] < e.b && iv[1] - iv[0] >= min;
    const at = (iv) => `${f1(iv[1] - iv[0])}@${f1(iv[0] - e.a)}`;
    const st = T.stall.filter((s) => within(s, 5)).map((s) => `${at(s)}(cpu ${f1(s[2])})`);
    const sy = T.sync.filter((s) => within(s, 5)).map((s) => `${s[2] === 1 ? 'dir ' : ''}${at(s)}`);
    const gc = T.gc.filter((g) => within(g, 2)).map((g) => `k${g[2]}:${at(g)}`);
    const fe = T.file.filter((x) => x[0] >= e.a - 200 && x[0] <= e.b).map((x) => `${x[1]}@${f1(x[0] - e.a)}`);
    const cap = (xs) => (xs.length > 10 ? [...xs.slice(0, 10), `+${xs.length - 10}`] : xs).join(' ');
    console.log(`    node ${k + 1}: stalls [${cap(st)}] syncs [${cap(sy)}] gc [${cap(gc)}] files [${cap(fe)}]`);
  });
}
