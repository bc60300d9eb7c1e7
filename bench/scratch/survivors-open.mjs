// What survives scavenges under (b)'s load, per function: in one process, a broker of the build at ROOT
// (pretenuring off, as dist/main.js sets it), optionally (a)'s load first (PRE_A seconds per batch size),
// then (b)'s open loop (RATE batches of 10 per second) with V8's sampling heap profiler keeping only
// objects that survived a scavenge (collected by a later mark-compact or still alive). At a fixed rate a
// scavenge comes every few hundred ms, so this is what lives longer than that: what fills old space.
// The load generator is in the same process (alike for every build). Caveat: V8 counts an object that a
// mark-compact collects while still young as collected by a major GC, so it stays in this profile: with
// mark-compacts every second or two, ordinary per-request garbage shows up too. Read it for what is
// new at the top between two builds, not as bytes promoted (gc-reasons.mjs gives those, from V8's trace).
//   npm run build:bench && PRE_A=8 SECONDS=10 node bench/scratch/survivors-open.mjs ROOT [top=30]
//   FULL_GC=1 RATE=100 SECONDS=5 ...: a window without full GCs, so the profile is what was promoted   (CALLERS=n: callers shown per function)
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import inspector from 'node:inspector';
import { setFlagsFromString, GCProfiler } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
setFlagsFromString('--no-allocation-site-pretenuring');
const [root, top = '30'] = process.argv.slice(2);
const rate = Number(process.env.RATE ?? 500);
const seconds = Number(process.env.SECONDS ?? 10);
const preA = Number(process.env.PRE_A ?? 0);
const { startTestBroker } = await import(pathToFileURL(join(root, 'dist/testing/broker-harness.js')).href);
const b = await startTestBroker({});
const url = `http://127.0.0.1:${b.port}`;
const path = '/event-types/lat.x/events';
const res = await fetch(`${url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('lat.x', 'hash')) });
if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
const bodies = batchBodies(10, 500, 1_000_000);
if (preA > 0) {
  for (const [size, producers, bs] of [[1000, 4, batchBodies(1000, 24, 0)], [10, 64, bodies]]) {
    const pp = publishPool(url, producers);
    await closedLoop({ pool: pp, path, bodies: bs, eventsPerBody: size, producers, warmupMs: 1000, durationMs: preA * 1000 });
    await pp.close();
  }
}
const pool = publishPool(url, 32);
await openLoop({ pool, path, bodies, requestsPerS: rate, warmupMs: 0, durationMs: 2000 });
const s = new inspector.Session();
s.connect();
const post = (m, p) => new Promise((ok, ko) => s.post(m, p, (e, r) => (e ? ko(e) : ok(r))));
// FULL_GC=1: a full GC right before sampling, and the count of full GCs in the window printed: with none
// in it, what the profile holds is exactly what was promoted (plus what is still young at the end).
let gcp;
if (process.env.FULL_GC === '1') {
  setFlagsFromString('--expose-gc');
  runInNewContext('gc')();
  gcp = new GCProfiler();
  gcp.start();
}
await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
const r = await openLoop({ pool, path, bodies, requestsPerS: rate, warmupMs: 0, durationMs: seconds * 1000 });
const { profile } = await post('HeapProfiler.stopSampling');
const fullGcs = gcp === undefined ? undefined : gcp.stop().statistics.filter((x) => x.gcType === 'MarkSweepCompact').length;
await pool.close();
await b.destroy();
const n = r.requests;
const self = new Map();
let total = 0;
const walk = (node, stack) => {
  const f = node.callFrame;
  const k = `${f.functionName || '(anon)'} ${f.url.replace(/.*(node_modules|dist)\//, '')}:${f.lineNumber}`;
  const here = [...stack, k];
  total += node.selfSize;
  if (node.selfSize > 0) {
    const e = self.get(k) ?? { bytes: 0, callers: new Map() };
    e.bytes += node.selfSize;
    const caller = stack.slice(-3).map((x) => x.split(' ')[0]).join(' < ');
    e.callers.set(caller, (e.callers.get(caller) ?? 0) + node.selfSize);
    self.set(k, e);
  }
  for (const c of node.children) walk(c, here);
};
walk(profile.head, []);
console.log(`${root}: ${n} requests at ${rate}/s; ${(total / 1024 / n).toFixed(2)} KB per request survived a scavenge (sampled)${fullGcs === undefined ? '' : `; full GCs in the window: ${fullGcs}`}`);
for (const [k, e] of [...self].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Number(top))) {
  const callers = [...e.callers].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.CALLERS ?? 2)).map(([c, v]) => `${(v / 1024 / n).toFixed(2)} via ${c.split(' < ').reverse().join(' < ')}`).join('; ');
  console.log(`${(e.bytes / 1024 / n).toFixed(3).padStart(8)} KB/req  ${k}    [${callers}]`);
}
