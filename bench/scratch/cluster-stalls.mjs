// What the slow publishes of (b) on three nodes overlap. A fresh three-node cluster (RF 3, 4 partitions,
// hash; as bench:cluster), every node started with the preload bench/scratch/stall-trace.cjs; WARM s of
// warm-up as bench:cluster gives it (two thirds closed-loop batches of 10 from 60 producers, one third
// batches of 1000 from 6; WARM1000=0: all batches of 10), not measured, then IDLE s with no load (in
// bench:cluster a cluster waits while the other build warms up: 30 s), then (b)'s open loop (RATE requests/s of 10 events, each
// request to the next node in turn) for 2 s + SECONDS s. The client records every request (due time,
// latency, the node it went to) on the monotonic clock the nodes' traces share. Slow requests (over
// SLOW ms, default 20) are grouped into episodes (gaps under 50 ms); each episode is printed with, per
// node, what its trace holds in it: main-thread stalls (on-CPU ms: the node's own work; off-CPU: the
// machine or a blocking call), WAL fdatasyncs and directory fsyncs of 5 ms or more, GCs of 2 ms or more,
// RocksDB files made or removed (a memtable switch starts a *.log, a flush or compaction writes *.sst),
// RocksDB write batches of 5 ms or more (a thread-pool request: a write stall shows there).
// Also the counts of the slow requests by node, and how many of them overlapped each kind on any node.
// The nodes log at info (LOG_LEVEL): their lines about leadership (partition and metadata leader changes,
// elections, hand-overs) and every warning, on the same clock, are printed per episode and counted over
// the warm-up and the measured seconds. KEEP=1 keeps the cluster's directory (nodeN/node.log). GRPC=1
// runs the nodes with grpc-js's own traces of connections (subchannel states, keepalive pings, transport
// sessions: GRPC_TRACE, GRPC_VERBOSITY=DEBUG); their lines about a connection changing state, a ping
// timing out or a session closing are printed as the log's are. A disk probe (bench/lib/disk-probe.ts:
// a 128 B append and fdatasync every 20 ms in the cluster's directory, by no broker) runs over the
// measured loop: its blocks of 20 ms or more are printed per episode ("disk"), so a stall of every
// node's fdatasyncs at once can be told to be the disk's.
//   npm run build:bench && node bench/scratch/cluster-stalls.mjs [ROOT]
//   env: RATE (500), SECONDS (10), WARM (30), WARM1000 (1), IDLE (0), SLOW (20), EPISODES (12), LOG_LEVEL (info), KEEP
import { brokerEntryOf } from '../../dist-bench/bench/lib/broker.js';
import { startBrookCluster } from '../../dist-bench/bench/lib/clusters.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, publishPool, RoundRobin } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { diskProbeText, startDiskProbe } from '../../dist-bench/bench/lib/disk-probe.js';
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
const warm1000 = process.env.WARM1000 !== '0';
const idleS = Number(process.env.IDLE ?? 0);
const slowMs = Number(process.env.SLOW ?? 20);
const episodesShown = Number(process.env.EPISODES ?? 12);
const typeName = 'stall.orders';
const path = `/event-types/${typeName}/events`;
const bodies = batchBodies(10, 500, 1_000_000);
const bodies1000 = warm1000 ? batchBodies(1000, 24, 0) : [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const monoMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

const traceOut = join(tmpdir(), `cluster-stalls-${process.pid}-%p.json`);
const c = await startBrookCluster({ env: { BROOK_REPLICATION_FACTOR: '3', TRACE_OUT: traceOut, BROOK_LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...(process.env.GRPC === '1' ? { GRPC_TRACE: 'subchannel,keepalive,transport', GRPC_VERBOSITY: 'DEBUG' } : {}) }, entry: brokerEntryOf(root), nodeArgs: ['-r', join(here, 'stall-trace.cjs')] });
const reqs = []; // [dueMono, latency, node index, ok]
let cpu = 0;
let wall = 0;
try {
  var created = monoMs();
  await http(c.members[0].url, 'POST', '/event-types', eventTypeBody(typeName, 'hash', 4));
  await sleep(3000);
  const pools = c.members.map((m) => publishPool(m.url, 60));
  if (warmS > 0) {
    const pool = new RoundRobin(pools);
    await closedLoop({ pool, path, bodies, eventsPerBody: 10, producers: 60, warmupMs: 0, durationMs: (warmS * 1000 * (warm1000 ? 2 : 3)) / 3 });
    if (warm1000) await closedLoop({ pool, path, bodies: bodies1000, eventsPerBody: 1000, producers: 6, warmupMs: 0, durationMs: (warmS * 1000) / 3 });
  }
  var warmEnd = monoMs();
  if (idleS > 0) await sleep(idleS * 1000);
  const c0 = c.members.reduce((s, m) => s + cpuSeconds(m.pid), 0);
  var probe = startDiskProbe(c.dir);
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
  var disk = await probe.stop();
  // The probe's times are on this thread's performance.now(): to the shared monotonic ms.
  const poff = monoMs() - performance.now();
  var diskSlow = disk.slow.map(([t, ms]) => [t + poff, t + poff + ms]);
  cpu = c.members.reduce((s, m) => s + cpuSeconds(m.pid), 0) - c0;
  for (const p of pools) await p.close();
  var from = start + 2000;
} finally {
  await c.stop(true);
}
const logText = c.members.map((m) => { try { return readFileSync(m.logFile, 'utf8'); } catch { return ''; } });
if (process.env.KEEP !== '1') rmSync(c.dir, { recursive: true, force: true });
else console.log(`kept ${c.dir}`);
const traces = c.members.map((m) => {
  const f = traceOut.replace('%p', String(m.pid));
  if (!existsSync(f)) return undefined;
  const T = JSON.parse(readFileSync(f, 'utf8'));
  rmSync(f);
  // performance.now() of that process to the shared monotonic ms.
  const off = T.clock[1] / 1000 - T.clock[0];
  const sh = (iv) => [iv[0] + off, iv[1] + off, ...iv.slice(2)];
  // A log line's wall-clock ms to the shared monotonic ms (the trace's third clock reading).
  const logOff = T.clock[2] === undefined ? NaN : T.clock[1] / 1000 - T.clock[2];
  return { kvw: (T.kvw ?? []).map(sh), stall: T.stall.map(sh), sync: T.sync.map(sh), gc: T.gc.map(sh), file: T.file.map((x) => [x[0] + off, x[1]]).filter((x) => !x[1].startsWith('change:')), eld: T.eld, log: logLines(logText[c.members.indexOf(m)], logOff) };
});
/** The lines of a node's log worth naming beside a stall: leadership, elections, terms, and warnings. */
function logLines(text, logOff) {
  const out = [];
  for (const line of (text ?? '').split('\n')) {
    // grpc-js: "D 2026-11-28T08:03:41.123Z | v1.14.7 1234 | subchannel | (3) 127.0.0.1:1 READY -> IDLE"
    const g = /^D (\S+) \| \S+ \d+ \| (\w+) \| (.*)$/.exec(line);
    if (g !== null) {
      if (/->|timeout|GOAWAY|closed|disconnect|failed|error|ended/i.test(g[3]) && !/Received ping response|Sending ping|Starting keepalive/.test(g[3])) out.push([Date.parse(g[1]) + logOff, `grpc ${g[2]}: ${g[3].slice(0, 120)}`, 35]);
      continue;
    }
    if (!line.startsWith('{')) continue;
    let o;
    try { o = JSON.parse(line); } catch { continue; }
    if (!(o.level >= 40 || /leader|election|pre-vote|term|handing|transfer|dropped/i.test(o.msg ?? ''))) continue;
    const where = o.group !== undefined ? `g${o.group}` : o.raftId !== undefined ? 'meta' : '';
    const what = `${where}${o.partition !== undefined ? `/p${o.partition}` : ''} ${o.msg}${o.leader !== undefined ? ` leader=${o.leader}` : ''}${o.to !== undefined ? ` to=${o.to}` : ''}${o.term !== undefined ? ` term=${o.term}` : ''}${o.level >= 40 && o.err !== undefined ? ` err=${JSON.stringify(o.err?.message ?? o.err).slice(0, 80)}` : ''}${o.retries !== undefined ? ` ${JSON.stringify(o.retries)} over ${o.overMs} ms, last answer: ${String(o.answer).slice(0, 80)}` : ''}`;
    out.push([(typeof o.time === 'string' ? Date.parse(o.time) : o.time) + logOff, what.trim(), o.level]);
  }
  return out;
}
const measured = reqs.filter((r) => r[0] >= from).sort((a, b) => a[0] - b[0]);
const lat = measured.map((r) => r[1]);
console.log(`${root}: (b) at ${rate}/s for ${seconds} s after ${warmS} s warm-up${warm1000 ? ' (a third of it batches of 1000)' : ''} and ${idleS} s idle (warm-up ended at ${((warmEnd - from) / 1000).toFixed(1)} s): p50 ${f1(pct(lat, 0.5))} p90 ${f1(pct(lat, 0.9))} p99 ${f1(pct(lat, 0.99))} p99.9 ${f1(pct(lat, 0.999))} max ${f1(Math.max(...lat))} ms, errors ${measured.filter((r) => !r[3]).length}; cluster ${(cpu / (wall / 1000)).toFixed(2)} cores, ${((cpu * 1000) / reqs.length).toFixed(2)} ms CPU per request; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log(`  ${diskProbeText(disk)}`);
traces.forEach((T, k) => {
  if (T === undefined) return console.log(`  node ${k + 1}: no trace`);
  const inM = (iv) => iv[0] >= from;
  const st = T.stall.filter(inM), sy = T.sync.filter(inM), gc = T.gc.filter(inM);
  const syncs = sy.filter((s) => s[2] === 0).map((s) => s[1] - s[0]);
  const kw = T.kvw.filter(inM).map((w) => w[1] - w[0]);
  console.log(`  node ${k + 1}: loop stalls >4 ms ${st.length} (on-CPU >= 70 %: ${st.filter((s) => s[2] >= 0.7 * (s[1] - s[0])).length}), max ${f1(Math.max(0, ...st.map((s) => s[1] - s[0])))} ms; WAL fdatasyncs ${syncs.length} p50 ${f1(pct(syncs, 0.5))} p99 ${f1(pct(syncs, 0.99))} max ${f1(Math.max(0, ...syncs))} ms; dir fsyncs ${sy.filter((s) => s[2] === 1).length}; RocksDB writes ${kw.length} p99 ${f1(pct(kw, 0.99))} max ${f1(Math.max(0, ...kw))} ms; GCs ${gc.length} (mark-compact ${gc.filter((g) => g[2] === 4).length}, max ${f1(Math.max(0, ...gc.map((g) => g[1] - g[0])))} ms); files ${T.file.filter((x) => x[0] >= from).map((x) => x[1]).join(' ')}`);
});
traces.forEach((T, k) => {
  if (T === undefined) return;
  const rel = (t) => ((t - from) / 1000).toFixed(3);
  const after = T.log.filter((x) => x[0] >= created);
  console.log(`  node ${k + 1} log since the event type (s from the measured start): ${after.length === 0 ? 'nothing' : ''}`);
  for (const x of after.slice(0, 40)) console.log(`    ${rel(x[0])} ${x[1]}`);
  if (after.length > 40) console.log(`    +${after.length - 40} more`);
});
const slow = measured.filter((r) => r[1] > slowMs);
const byNode = [0, 0, 0];
for (const r of slow) byNode[r[2]]++;
const hit = (ivs, a, b, min) => ivs.some((iv) => iv[1] > a && iv[0] < b && iv[1] - iv[0] >= min);
const kinds = { stall: 0, sync: 0, gc: 0, file: 0, disk: 0, kvw: 0 };
for (const r of slow) {
  const a = r[0], b = r[0] + r[1];
  if (traces.some((T) => T && hit(T.stall, a, b, 10))) kinds.stall++;
  if (traces.some((T) => T && hit(T.sync, a, b, 10))) kinds.sync++;
  if (traces.some((T) => T && hit(T.gc, a, b, 5))) kinds.gc++;
  if (traces.some((T) => T && T.file.some((x) => x[0] >= a - 200 && x[0] <= b))) kinds.file++;
  if (hit(diskSlow, a, b, 50)) kinds.disk++;
  if (traces.some((T) => T && hit(T.kvw, a, b, 10))) kinds.kvw++;
}
console.log(`slow (> ${slowMs} ms): ${slow.length} of ${measured.length}, sent to node 1/2/3: ${byNode.join('/')}; overlapping on some node a loop stall >= 10 ms: ${kinds.stall}, an fsync >= 10 ms: ${kinds.sync}, a GC >= 5 ms: ${kinds.gc}, a RocksDB file event (from 200 ms before): ${kinds.file}, a disk probe block >= 50 ms: ${kinds.disk}, a RocksDB write >= 10 ms: ${kinds.kvw}`);
const eps = [];
for (const r of slow) {
  const e = eps.at(-1);
  if (e !== undefined && r[0] <= e.b + 50) { e.b = Math.max(e.b, r[0] + r[1]); e.n++; e.worst = Math.max(e.worst, r[1]); }
  else eps.push({ a: r[0], b: r[0] + r[1], n: 1, worst: r[1] });
}
console.log(`episodes: ${eps.length}, at (s) ${eps.map((e) => ((e.a - from) / 1000).toFixed(2)).join(' ')}`);
for (const e of [...eps].sort((x, y) => y.n - x.n).slice(0, episodesShown)) {
  const dk = diskSlow.filter((iv) => iv[1] > e.a - 20 && iv[0] < e.b).map((iv) => `${f1(iv[1] - iv[0])}@${f1(iv[0] - e.a)}`);
  console.log(`  at ${((e.a - from) / 1000).toFixed(3)} s, ${f1(e.b - e.a)} ms: ${e.n} slow, worst ${f1(e.worst)} ms; disk [${(dk.length > 10 ? [...dk.slice(0, 10), `+${dk.length - 10}`] : dk).join(' ')}]`);
  traces.forEach((T, k) => {
    if (T === undefined) return;
    const within = (iv, min) => iv[1] > e.a - 20 && iv[0] < e.b && iv[1] - iv[0] >= min;
    const at = (iv) => `${f1(iv[1] - iv[0])}@${f1(iv[0] - e.a)}`;
    const st = T.stall.filter((s) => within(s, 5)).map((s) => `${at(s)}(cpu ${f1(s[2])})`);
    const sy = T.sync.filter((s) => within(s, 5)).map((s) => `${s[2] === 1 ? 'dir ' : ''}${at(s)}`);
    const gc = T.gc.filter((g) => within(g, 2)).map((g) => `k${g[2]}:${at(g)}`);
    const kw = T.kvw.filter((w) => within(w, 5)).map(at);
    const fe = T.file.filter((x) => x[0] >= e.a - 200 && x[0] <= e.b).map((x) => `${x[1]}@${f1(x[0] - e.a)}`);
    const cap = (xs) => (xs.length > 10 ? [...xs.slice(0, 10), `+${xs.length - 10}`] : xs).join(' ');
    const lg = T.log.filter((x) => x[0] >= e.a - 3000 && x[0] <= e.b).map((x) => `${x[1]}@${f1(x[0] - e.a)}`);
    console.log(`    node ${k + 1}: stalls [${cap(st)}] syncs [${cap(sy)}] kv writes [${cap(kw)}] gc [${cap(gc)}] files [${cap(fe)}]${lg.length > 0 ? ` log [${cap(lg)}]` : ''}`);
  });
}
