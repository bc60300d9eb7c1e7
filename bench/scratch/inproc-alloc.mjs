// In one process (no child broker, so the load generator's allocations are in the profile too, alike for
// every build): a broker of the build at ROOT, closed-loop publishing of N batches of 10 by 16 producers,
// with V8's sampling heap profiler on (every allocation, collected or not) during the measured requests;
// prints self bytes per function per request. For comparing what two builds allocate per request.
// SURVIVORS=1 leaves out what died in a scavenge: what is left is what survived one (was promoted to old
// space, or was still young when sampling stopped), i.e. where the full collections' work comes from.
//   [SURVIVORS=1] node bench/scratch/inproc-alloc.mjs ROOT [requests=4000] [top=40]
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import inspector from 'node:inspector';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool } from '../../dist-bench/bench/lib/load.js';
const [root, n = '4000', top = '40'] = process.argv.slice(2);
const { startTestBroker } = await import(pathToFileURL(join(root, 'dist/testing/broker-harness.js')).href);
const b = await startTestBroker({});
const url = `http://127.0.0.1:${b.port}`;
const res = await fetch(`${url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('scratch.orders', 'hash')) });
if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
const bodies = batchBodies(10, 500, 0);
const pool = publishPool(url, 16);
const drive = async (count) => {
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < count) {
      const r = await pool.request({ path: '/event-types/scratch.orders/events', method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[next++ % bodies.length] });
      await r.body.arrayBuffer();
      if (r.statusCode !== 200) throw new Error(`status ${r.statusCode}`);
    }
  }));
};
await drive(1000);
const s = new inspector.Session();
s.connect();
const post = (m, p) => new Promise((ok, ko) => s.post(m, p, (e, r) => (e ? ko(e) : ok(r))));
await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: process.env.SURVIVORS !== '1' });
await drive(Number(n));
const { profile } = await post('HeapProfiler.stopSampling');
await pool.close();
await b.destroy();
const self = new Map();
let total = 0;
const walk = (node) => {
  const f = node.callFrame;
  const k = `${f.functionName || '(anon)'} ${f.url.replace(/.*(node_modules|dist)\//, '')}:${f.lineNumber}`;
  total += node.selfSize;
  self.set(k, (self.get(k) ?? 0) + node.selfSize);
  for (const c of node.children) walk(c);
};
walk(profile.head);
console.log(`${root}: ${(total / 1024 / Number(n)).toFixed(1)} KB per request sampled (broker and load generator${process.env.SURVIVORS === '1' ? ', survivors of scavenges only' : ''})`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${(v / 1024 / Number(n)).toFixed(2).padStart(8)} KB/req  ${k}`);
