// In one process (no child broker): like inproc-publish.mjs, batch-10 closed loop by 64 producers, but
// prints the measured window on V8's profile clock (monotonic µs) so that a --cpu-prof profile can be
// cut to it (profile-diff.mjs FROM TO), and the process CPU per request over that window.
//   node --cpu-prof --cpu-prof-dir=DIR bench/scratch/inproc-window.mjs ROOT [seconds=10] [size=10] [producers=64]
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool, closedLoop } from '../../dist-bench/bench/lib/load.js';
const [root, seconds = '10', size = '10', producers = '64'] = process.argv.slice(2);
const { startTestBroker } = await import(pathToFileURL(join(root, 'dist/testing/broker-harness.js')).href);
const b = await startTestBroker({});
const url = `http://127.0.0.1:${b.port}`;
const res = await fetch(`${url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('scratch.orders', 'hash')) });
if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
const n = Number(size);
const np = Number(producers);
const bodies = batchBodies(n, n >= 1000 ? 8 : 500, 0);
const pool = publishPool(url, np);
// warm-up (JIT, first appends of every partition) outside the window
await closedLoop({ pool, path: '/event-types/scratch.orders/events', bodies, eventsPerBody: n, producers: np, warmupMs: 0, durationMs: 3000 });
const mono = () => String(process.hrtime.bigint() / 1000n);
const from = mono();
const c0 = process.cpuUsage();
const r = await closedLoop({ pool, path: '/event-types/scratch.orders/events', bodies, eventsPerBody: n, producers: np, warmupMs: 0, durationMs: Number(seconds) * 1000 });
const c = process.cpuUsage(c0);
const to = mono();
await pool.close();
const us = (c.user + c.system) / r.requests;
console.log(`${root}: batch ${n} x ${np}: ${r.eventsPerS.toFixed(0)} ev/s, ${(r.requests / r.seconds).toFixed(0)} req/s, p50 ${r.latency.p50.toFixed(1)} p99 ${r.latency.p99.toFixed(1)} ms, errors ${r.errors}; process CPU ${us.toFixed(0)} us per request; window ${from} ${to}`);
await b.destroy();
