// In one process (no child broker): a broker of the build at ROOT (its dist/testing/broker-harness.js)
// on a temp dir, one event type of 8 partitions (hash), then closed-loop publishing of batches of
// SIZE by PRODUCERS for SECONDS, with the process's CPU per request. For quick comparisons of two
// builds while the machine's heavy lock is taken; the real figures come from `npm run bench`.
//   node bench/scratch/inproc-publish.mjs ROOT [sizes=10, or e.g. 1000,10 one after the other] [producers=64] [seconds=5]
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool, closedLoop } from '../../dist-bench/bench/lib/load.js';
const [root, size = '10', producers = '64', seconds = '5'] = process.argv.slice(2);
const { startTestBroker } = await import(pathToFileURL(join(root, 'dist/testing/broker-harness.js')).href);
const b = await startTestBroker({});
const url = `http://127.0.0.1:${b.port}`;
const res = await fetch(`${url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('scratch.orders', 'hash')) });
if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
for (const part of size.split(',')) {
  const n = Number(part);
  const np = n >= 1000 ? 4 : Number(producers);
  const bodies = batchBodies(n, n >= 1000 ? 8 : 500, 0);
  const pool = publishPool(url, np);
  const f0 = (await (await fetch(`${url}/metrics`)).json()).timers['brook.wal.fsync'] ?? { count: 0, sum: 0 };
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await closedLoop({ pool, path: '/event-types/scratch.orders/events', bodies, eventsPerBody: n, producers: np, warmupMs: 1000, durationMs: Number(seconds) * 1000 });
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  await pool.close();
  const f1 = (await (await fetch(`${url}/metrics`)).json()).timers['brook.wal.fsync'];
  const fs = f1 === undefined ? 'fsyncs not counted by this build' : `${f1.count - f0.count} fsyncs (mean ${((f1.sum - f0.sum) / Math.max(1, f1.count - f0.count)).toFixed(1)} ms)`;
  console.log(`${root}: batch ${n} x ${np}: ${r.eventsPerS.toFixed(0)} ev/s, ${(r.requests / r.seconds).toFixed(0)} req/s, p50 ${r.latency.p50.toFixed(1)} ms p99 ${r.latency.p99.toFixed(1)} ms, errors ${r.errors}${r.firstError ? ` (${r.firstError})` : ''}; ${fs}; process CPU ${(((c.user + c.system) / 1000) / (r.requests * wall / r.seconds)).toFixed(3)} ms per request (broker and load generator); RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
}
await b.destroy();
