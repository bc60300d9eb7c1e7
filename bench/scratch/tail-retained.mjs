// What a publish leaves alive on the heap and outside it until the Raft memory tail is compacted: in one
// process (--expose-gc), a broker of the build at ROOT, (b)'s open loop at RATE publishes of 10 events
// a second for SECONDS, with a full GC before and after; the growth of the V8 heap and of ArrayBuffer
// memory, per Raft entry appended (counted on MemoryStorage.append) and per publish. Compactions of the
// memory tail during the run are counted too (they would free some of it). Counts and bytes, so it holds
// on a loaded machine.
//   npm run build:bench && node --expose-gc bench/scratch/tail-retained.mjs ROOT
//   SNAPSHOTS=DIR: heap snapshots before and after (DIR/before.heapsnapshot, DIR/after...), for snapshot-diff.mjs
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { getHeapStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
setFlagsFromString('--no-allocation-site-pretenuring');
const [root] = process.argv.slice(2);
const rate = Number(process.env.RATE ?? 100);
const seconds = Number(process.env.SECONDS ?? 8);
const { MemoryStorage } = await import(pathToFileURL(join(root, 'dist/raft/storage.js')).href);
let appended = 0;
let compactions = 0;
const append = MemoryStorage.prototype.append;
MemoryStorage.prototype.append = function (entries) {
  appended += entries.length;
  return append.call(this, entries);
};
const compact = MemoryStorage.prototype.compact;
MemoryStorage.prototype.compact = function (i) {
  compactions++;
  return compact.call(this, i);
};
const { startTestBroker } = await import(pathToFileURL(join(root, 'dist/testing/broker-harness.js')).href);
const b = await startTestBroker({});
const url = `http://127.0.0.1:${b.port}`;
const path = '/event-types/lat.x/events';
const res = await fetch(`${url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('lat.x', 'hash')) });
if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
const bodies = batchBodies(10, 500, 1_000_000);
const pool = publishPool(url, 32);
await openLoop({ pool, path, bodies, requestsPerS: rate, warmupMs: 0, durationMs: 2000 });
const measure = async () => {
  await new Promise((r) => setTimeout(r, 200));
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return { heap: getHeapStatistics().used_heap_size, ab: m.arrayBuffers, ext: m.external };
};
const m0 = await measure();
if (process.env.SNAPSHOTS) writeHeapSnapshot(join(process.env.SNAPSHOTS, 'before.heapsnapshot'));
const a0 = appended;
const c0 = compactions;
const r = await openLoop({ pool, path, bodies, requestsPerS: rate, warmupMs: 0, durationMs: seconds * 1000 });
const m1 = await measure();
if (process.env.SNAPSHOTS) writeHeapSnapshot(join(process.env.SNAPSHOTS, 'after.heapsnapshot'));
const entries = appended - a0;
const n = r.requests;
await pool.close();
await b.destroy();
const kb = (x) => (x / 1024).toFixed(2);
console.log(`${root}: ${n} publishes, ${entries} entries appended (${(entries / n).toFixed(2)} per publish), ${compactions - c0} memory compactions during the run`);
console.log(`  retained after full GCs: heap +${kb(m1.heap - m0.heap)} KB (${kb((m1.heap - m0.heap) / entries)} KB per entry, ${kb((m1.heap - m0.heap) / n)} KB per publish); ArrayBuffers +${kb(m1.ab - m0.ab)} KB (${kb((m1.ab - m0.ab) / n)} KB per publish)`);
