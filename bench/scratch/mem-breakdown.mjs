// Where a broker's memory is after publishing batches of 1000, in one process (no child broker; the load
// generator's few MB are in the figures too, alike for every build): a broker of the build at ROOT, 8
// partitions (hash), 4 closed-loop producers of batches of 1000 (~526-byte events) for N requests; then
// process.memoryUsage() (V8 heap, ArrayBuffers), RocksDB's own memory properties (memtables, block cache,
// table readers; every RocksDB instance the build opened), and VmRSS / RssAnon from /proc.
// Counts, not timing: what is held does not depend on the machine's speed, except what is in flight.
//   [BATCH=1000] [PRODUCERS=4] [CFG='{"tailCacheBytesMax":N}'] [MID_SNAPSHOT=FILE] \
//   node --expose-gc bench/scratch/mem-breakdown.mjs ROOT [requests=400] [--snapshot FILE]
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool } from '../../dist-bench/bench/lib/load.js';
const args = process.argv.slice(2);
const snapIdx = args.indexOf('--snapshot');
const snapshot = snapIdx === -1 ? undefined : args.splice(snapIdx, 2)[1];
const [root, n = '400'] = args;
// Every RocksDB the build opens (the same module instance the build loads).
const RocksDB = createRequire(join(root, 'dist/main.js'))('rocksdb-native');
const dbs = [];
const ready = RocksDB.prototype.ready;
RocksDB.prototype.ready = function () {
  dbs.push(this);
  return ready.call(this);
};
const { startTestBroker } = await import(pathToFileURL(join(root, 'dist/testing/broker-harness.js')).href);
const b = await startTestBroker(process.env.CFG ? JSON.parse(process.env.CFG) : {});
const url = `http://127.0.0.1:${b.port}`;
const res = await fetch(`${url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('scratch.orders', 'hash')) });
if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
const batch = Number(process.env.BATCH ?? '1000');
const producers = Number(process.env.PRODUCERS ?? '4');
const bodies = batchBodies(batch, 24, 0);
const pool = publishPool(url, producers);
const status = () => Object.fromEntries(readFileSync('/proc/self/status', 'utf8').split('\n').filter((l) => /^(VmRSS|RssAnon|RssFile|VmHWM)/.test(l)).map((l) => [l.split(':')[0], Math.round(Number(l.split(/\s+/)[1]) / 1024)]));
const mb = (x) => Math.round(x / 1048576);
const show = async (what) => {
  const m = process.memoryUsage();
  const props = [];
  for (const db of dbs) {
    const p = async (k) => mb(Number(await db.getProperty(k).catch(() => 'NaN')));
    props.push(`memtables ${await p('rocksdb.size-all-mem-tables')} (active ${await p('rocksdb.cur-size-active-mem-table')}), block cache ${await p('rocksdb.block-cache-usage')} (pinned ${await p('rocksdb.block-cache-pinned-usage')}), table readers ${await p('rocksdb.estimate-table-readers-mem')}`);
  }
  console.log(`${what}: rss ${mb(m.rss)} heapTotal ${mb(m.heapTotal)} heapUsed ${mb(m.heapUsed)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)} | ${JSON.stringify(status())} | rocksdb x${dbs.length}: ${props.join('; ')}`);
};
await show('after start');
let next = 0;
const total = Number(n);
let peak = 0;
let peakAb = 0;
let peakHeap = 0;
let midSnapshot = process.env.MID_SNAPSHOT;
const t = setInterval(() => {
  const u = process.memoryUsage();
  peak = Math.max(peak, u.rss);
  peakAb = Math.max(peakAb, u.arrayBuffers);
  peakHeap = Math.max(peakHeap, u.heapUsed);
  if (midSnapshot !== undefined && next >= total / 2) {
    console.log('mid snapshot', v8.writeHeapSnapshot(midSnapshot), 'at', next);
    midSnapshot = undefined;
  }
}, 100);
await Promise.all(Array.from({ length: producers }, async () => {
  while (next < total) {
    const r = await pool.request({ path: '/event-types/scratch.orders/events', method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[next++ % bodies.length] });
    await r.body.arrayBuffer();
    if (r.statusCode !== 200) throw new Error(`status ${r.statusCode}`);
  }
}));
clearInterval(t);
console.log(`published ${total} batches of ${batch} (${producers} producers); rss peak while publishing ${mb(peak)} MB, arrayBuffers peak ${mb(peakAb)}, heapUsed peak ${mb(peakHeap)}`);
await show('right after');
globalThis.gc?.();
await new Promise((r) => setTimeout(r, 2000));
globalThis.gc?.();
await show('2 s later, after full GC');
if (snapshot !== undefined) console.log('snapshot', v8.writeHeapSnapshot(snapshot));
await pool.close();
await b.destroy();
