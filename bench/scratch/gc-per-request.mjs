// What the broker allocates and promotes per publish request, from V8's own GC trace: a fixed number of
// requests (not a fixed time), so bytes allocated per request do not depend on how loaded the machine
// is; promoted bytes and full collections still do somewhat (they follow how long requests wait).
// Builds alternate per round (A B / B A). The broker is a child (`node --trace-gc-nvp ROOT/dist/main.js`),
// the load generator this process. Run from a checkout after `npm run build:bench`.
//   node bench/scratch/gc-per-request.mjs [--size 10] [--producers 64] [--requests 20000] [--rounds 2] ROOT_A ROOT_B ...
// A root may carry node flags for its broker: ROOT::--max-semi-space-size=32,--other.
import { readFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startBroker, brokerEntryOf, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool } from '../../dist-bench/bench/lib/load.js';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const size = Number(opt('--size', '10'));
const producers = Number(opt('--producers', size >= 1000 ? '4' : '64'));
const requests = Number(opt('--requests', size >= 1000 ? '400' : '20000'));
const rounds = Number(opt('--rounds', '2'));
const roots = args;
if (roots.length === 0) throw new Error('give the build roots to compare');
const logDir = mkdtempSync(join(tmpdir(), 'brook-gc-'));
const bodies = batchBodies(size, size >= 1000 ? 24 : 500, 0);

async function drive(pool, path, n) {
  let next = 0;
  let errors = 0;
  const worker = async () => {
    while (next < n) {
      const body = bodies[next++ % bodies.length];
      const res = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) errors++;
    }
  };
  await Promise.all(Array.from({ length: producers }, worker));
  return errors;
}

function gcSums(file, fromMs, toMs) {
  const s = { allocated: 0, promoted: 0, scavenges: 0, markCompacts: 0, pauseMs: 0, mcPauseMs: 0 };
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /\s(\d+) ms: pause=([\d.]+) .*?gc=(\w+) /.exec(line);
    if (m === null) continue;
    const t = Number(m[1]);
    if (t < fromMs || t > toMs) continue;
    const f = (k) => Number(new RegExp(`\\s${k}=(\\d+)`).exec(line)?.[1] ?? 0);
    s.allocated += f('allocated');
    s.promoted += f('promoted');
    s.pauseMs += Number(m[2]);
    if (m[3] === 's') s.scavenges++;
    else {
      s.markCompacts++;
      s.mcPauseMs += Number(m[2]);
    }
  }
  return s;
}

const results = new Map(roots.map((r) => [r, []]));
for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? roots : [...roots].reverse();
  for (const root of order) {
    const logFile = join(logDir, `${round}-${results.get(root).length}-${root.replace(/\W/g, '_')}.log`);
    const spawned = performance.now();
    // ROOT::--flag,--flag2: the same build with extra node flags (e.g. to try V8's heap settings).
    const [dir, flags = ''] = root.split('::');
    const b = await startBroker({ nodeArgs: ['--trace-gc-nvp', ...flags.split(',').filter((f) => f !== '')], logFile, entry: brokerEntryOf(dir) });
    const res = await fetch(`${b.url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('bench.order-placed', 'hash')) });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    const pool = publishPool(b.url, producers);
    const path = '/event-types/bench.order-placed/events';
    await drive(pool, path, Math.ceil(requests / 10));
    const from = performance.now() - spawned;
    const c0 = cpuSeconds(b.pid);
    const errors = await drive(pool, path, requests);
    const to = performance.now() - spawned;
    const cpu = cpuSeconds(b.pid) - c0;
    await pool.close();
    await b.stop();
    await new Promise((r) => setTimeout(r, 300));
    const g = gcSums(logFile, from, to);
    const r = { wallS: (to - from) / 1000, cpuMsPerReq: (cpu * 1000) / requests, kbAllocPerReq: g.allocated / 1024 / requests, kbPromotedPerReq: g.promoted / 1024 / requests, mcPer10k: (g.markCompacts * 10_000) / requests, gcPauseMsPer1k: (g.pauseMs * 1000) / requests, errors };
    results.get(root).push(r);
    console.log(`round ${round} ${root}: ${requests} x batch ${size} in ${r.wallS.toFixed(1)} s (${(requests / r.wallS).toFixed(0)} req/s), broker CPU ${r.cpuMsPerReq.toFixed(3)} ms/req; allocated ${r.kbAllocPerReq.toFixed(1)} KB/req, promoted ${r.kbPromotedPerReq.toFixed(2)} KB/req; scavenges ${g.scavenges}, mark-compacts ${g.markCompacts} (${g.mcPauseMs.toFixed(0)} ms); main-thread GC pause ${r.gcPauseMsPer1k.toFixed(1)} ms per 1000 req; errors ${errors}`);
  }
}
console.log('\nmedians per build (batch ' + size + '):');
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
for (const [root, rs] of results) {
  const m = (k) => med(rs.map((r) => r[k]));
  console.log(`${root}: CPU ${m('cpuMsPerReq').toFixed(3)} ms/req, allocated ${m('kbAllocPerReq').toFixed(1)} KB/req, promoted ${m('kbPromotedPerReq').toFixed(2)} KB/req, mark-compacts ${m('mcPer10k').toFixed(1)} per 10k req, GC pause ${m('gcPauseMsPer1k').toFixed(1)} ms per 1000 req`);
}
