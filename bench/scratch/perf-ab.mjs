// On-CPU profile per request, builds side by side: a fresh broker of each build (--perf-basic-prof),
// one event type of 8 partitions (hash), closed-loop publishing of batches of SIZE by PRODUCERS; after
// WARM seconds of the same load, `perf record -e cpu-clock -F 999 -g` on the broker (all its threads)
// for SECONDS while the load goes on. Prints the broker's CPU per request (/proc) and, per build, the
// self samples per function in µs per request (perf's samples scaled to the /proc CPU of the window),
// then the functions whose µs per request differ most between the first build and each other one.
//   npm run build:bench
//   SIZE=10 PRODUCERS=64 WARM=15 SECONDS=8 OUT=DIR node bench/scratch/perf-ab.mjs [ROUNDS] LABEL=ROOT ...
// Rounds alternate the order of the builds. A root may carry node flags: LABEL=ROOT::--flag,--flag2. perf.data files are kept in OUT (default a temp dir).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool, closedLoop } from '../../dist-bench/bench/lib/load.js';

const args = process.argv.slice(2);
const builds = args.filter((a) => a.includes('=')).map((a) => a.split('='));
const rounds = Number(args.find((a) => !a.includes('=')) ?? 1);
const size = Number(process.env.SIZE ?? 10);
const producers = Number(process.env.PRODUCERS ?? (size >= 1000 ? 4 : 64));
const warm = Number(process.env.WARM ?? 15);
const seconds = Number(process.env.SECONDS ?? 8);
const top = Number(process.env.TOP ?? 40);
const out = process.env.OUT ?? mkdtempSync(join(tmpdir(), 'perf-ab-'));
const bodies = batchBodies(size, size >= 1000 ? 24 : 500, 0);
const unit = size >= 1000 ? 'event' : 'request';

function symName(sym, dso) {
  let s = sym.replace(/\+0x[0-9a-f]+$/, '').replace(/^(JS|LazyCompile|Function):[*~^+]?/, '');
  s = s.replace(/(file:\/\/)?\/[^ ]*\/(dist|node_modules)\//, '$2/').replace(/:\d+:\d+$/, '');
  if (s === '[unknown]' || s === '') return `[${dso.replace(/^.*\//, '')}]`;
  return s;
}

/** self samples per (thread kind, function) and inclusive (main thread) per function. */
function summarize(file) {
  const r = spawnSync('perf', ['script', '-i', file, '-F', 'comm,pid,tid,ip,sym,dso'], { maxBuffer: 1 << 30, encoding: 'utf8' });
  const self = new Map();
  const incl = new Map();
  let total = 0;
  let cur;
  const flush = () => {
    if (cur === undefined) return;
    total++;
    const key = `${cur.main ? '' : `(${cur.comm}) `}${cur.frames[0] ?? '?'}`;
    self.set(key, (self.get(key) ?? 0) + 1);
    if (cur.main) for (const f of new Set(cur.frames)) incl.set(f, (incl.get(f) ?? 0) + 1);
    cur = undefined;
  };
  for (const line of r.stdout.split('\n')) {
    if (line === '') { flush(); continue; }
    if (!line.startsWith('\t') && !line.startsWith(' ')) {
      flush();
      const m = /^(.*?)\s+(\d+)\/(\d+)\s*$/.exec(line.trim());
      cur = { comm: m === null ? '?' : m[1].trim().replace(/[0-9]+$/, 'N'), main: m !== null && m[2] === m[3], frames: [] };
      continue;
    }
    const m = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$/.exec(line);
    if (m && cur) cur.frames.push(symName(m[1], m[2]));
  }
  flush();
  return { self, incl, total };
}

const results = new Map(); // label -> [{ perUnit, self, incl, total, cpuMs }]

async function measure(label, root, round) {
  // ROOT::--flag,--flag2: the same build with extra node flags.
  const [dir, flags = ''] = root.split('::');
  const b = await startBroker({ entry: join(dir, 'dist', 'main.js'), nodeArgs: ['--perf-basic-prof', ...flags.split(',').filter((f) => f !== '')] });
  try {
    const res = await fetch(`${b.url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('scratch.orders', 'hash')) });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    const path = '/event-types/scratch.orders/events';
    const pool = publishPool(b.url, producers);
    await closedLoop({ pool, path, bodies, eventsPerBody: size, producers, warmupMs: 0, durationMs: warm * 1000 });
    const file = join(out, `perf-${label}-r${round}.data`);
    const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(b.pid), '-o', file, '--', 'sleep', String(seconds)], { stdio: 'ignore' });
    const c0 = cpuSeconds(b.pid);
    const r = await closedLoop({ pool, path, bodies, eventsPerBody: size, producers, warmupMs: 0, durationMs: seconds * 1000 });
    const c1 = cpuSeconds(b.pid);
    await new Promise((ok) => perf.once('exit', ok));
    await pool.close();
    const units = size >= 1000 ? r.events : r.requests;
    const cpuMs = (c1 - c0) * 1000;
    const s = summarize(file);
    const perUnitUs = (cpuMs * 1000) / units;
    console.log(`${label} r${round}: ${r.requests} requests (${(r.requests / r.seconds).toFixed(0)}/s, ${r.eventsPerS.toFixed(0)} ev/s, errors ${r.errors}), broker CPU ${(c1 - c0).toFixed(2)} s = ${perUnitUs.toFixed(2)} µs per ${unit}; ${s.total} samples`);
    (results.get(label) ?? results.set(label, []).get(label)).push({ perUnitUs, ...s });
  } finally {
    await b.stop();
  }
}

for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? builds : [...builds].reverse();
  for (const [label, root] of order) await measure(label, root, round);
}

/** µs per unit for each key, summed over the rounds' samples, scaled to the mean measured CPU per unit. */
function scaled(label, which) {
  const rs = results.get(label);
  const meanUs = rs.reduce((a, r) => a + r.perUnitUs, 0) / rs.length;
  const total = rs.reduce((a, r) => a + r.total, 0);
  const m = new Map();
  for (const r of rs) for (const [k, v] of r[which]) m.set(k, (m.get(k) ?? 0) + v);
  for (const [k, v] of m) m.set(k, (v / total) * meanUs);
  return { m, meanUs };
}
const f = (n) => n.toFixed(2).padStart(7);
for (const which of ['self', 'incl']) {
  const base = scaled(builds[0][0], which);
  for (const [label] of builds.slice(1)) {
    const other = scaled(label, which);
    console.log(`\n=== ${which}: µs per ${unit}, ${label} (${other.meanUs.toFixed(1)}) against ${builds[0][0]} (${base.meanUs.toFixed(1)}); largest differences`);
    const keys = [...new Set([...base.m.keys(), ...other.m.keys()])];
    const rows = keys.map((k) => [k, base.m.get(k) ?? 0, other.m.get(k) ?? 0]).sort((a, b) => Math.abs(b[2] - b[1]) - Math.abs(a[2] - a[1]));
    for (const [k, a, b] of rows.slice(0, top)) console.log(`${f(b - a)}  ${builds[0][0]} ${f(a)}  ${label} ${f(b)}  ${k.slice(0, 140)}`);
  }
  if (which === 'self') {
    for (const [label] of builds) {
      const s = scaled(label, which);
      console.log(`\n--- ${label}: top self, µs per ${unit}`);
      for (const [k, v] of [...s.m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${f(v)}  ${k.slice(0, 140)}`);
    }
  }
}
console.log(`\nperf data in ${out}`);
