// How the memory tails' slabs fare under (a)'s batch-1000 load: in one process, a broker of the build
// at ROOT, closed-loop batches of 1,000 events (4 producers, SECONDS), then (b)'s open loop at RATE; per
// phase the RSS and ArrayBuffer memory at its end and their maximum (sampled every 50 ms), and for a
// build with slabs (src/broker/byte-slabs.ts) the allocations into them, those refused (entries that
// kept their own buffer) and the slabs allocated. Counts and bytes, so it holds on a loaded machine.
//   npm run build:bench && node --expose-gc bench/scratch/tail-slabs.mjs ROOT   (--expose-gc: ArrayBuffers after a full GC too)
import { pathToFileURL } from 'node:url';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
const [root] = process.argv.slice(2);
const seconds = Number(process.env.SECONDS ?? 10);
const rate = Number(process.env.RATE ?? 500);
let stats;
const slabsFile = join(root, 'dist/broker/byte-slabs.js');
if (existsSync(slabsFile)) {
  const { ByteSlabs } = await import(pathToFileURL(slabsFile).href);
  stats = { allocs: 0, refused: 0, instances: [] };
  const alloc = ByteSlabs.prototype.alloc;
  ByteSlabs.prototype.alloc = function (len) {
    if (!stats.instances.includes(this)) stats.instances.push(this);
    stats.allocs++;
    const h = alloc.call(this, len);
    if (h < 0) stats.refused++;
    return h;
  };
}
const { startTestBroker } = await import(pathToFileURL(join(root, 'dist/testing/broker-harness.js')).href);
const b = await startTestBroker({});
const url = `http://127.0.0.1:${b.port}`;
const path = '/event-types/lat.x/events';
const res = await fetch(`${url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('lat.x', 'hash')) });
if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
const mb = (n) => (n / 1048576).toFixed(0);
async function phase(label, run) {
  let rssMax = 0;
  let abMax = 0;
  const t = setInterval(() => {
    const m = process.memoryUsage();
    rssMax = Math.max(rssMax, m.rss);
    abMax = Math.max(abMax, m.arrayBuffers);
  }, 50);
  const before = stats === undefined ? undefined : { ...stats };
  const r = await run();
  clearInterval(t);
  const m = process.memoryUsage();
  let line = `${label}: ${r}; RSS max ${mb(rssMax)} MB (end ${mb(m.rss)}), ArrayBuffers max ${mb(abMax)} MB (end ${mb(m.arrayBuffers)})`;
  if (globalThis.gc !== undefined) {
    globalThis.gc();
    line += `, after a full GC ${mb(process.memoryUsage().arrayBuffers)} MB`;
  }
  if (stats !== undefined) {
    const s = stats.instances[0];
    line += `; slab allocations ${stats.allocs - before.allocs}, refused ${stats.refused - before.refused}; slabs allocated ${s?.slabsAllocated()} of ${s?.slabCount} x ${s === undefined ? '-' : mb(s.slabBytes)} MB, live ${s === undefined ? '-' : mb(s.liveBytes())} MB`;
  }
  console.log(line);
}
await phase('(a) batch 1000', async () => {
  const pool = publishPool(url, 4);
  const r = await closedLoop({ pool, path, bodies: batchBodies(1000, 24, 0), eventsPerBody: 1000, producers: 4, warmupMs: 1000, durationMs: seconds * 1000 });
  await pool.close();
  return `${Math.round(r.eventsPerS ?? r.throughput ?? 0)} ev/s`;
});
await phase('(b) 500/s x 10', async () => {
  const pool = publishPool(url, 32);
  const r = await openLoop({ pool, path, bodies: batchBodies(10, 500, 1_000_000), requestsPerS: rate, warmupMs: 1000, durationMs: seconds * 1000 });
  await pool.close();
  return `n=${r.latency.count}`;
});
await b.close?.();
process.exit(0);
