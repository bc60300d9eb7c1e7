// In one process (no child broker): the RocksDB operations a build's broker hands to the native write
// per publish request (puts, deletes, write batches), counted on rocksdb-native's WriteBatch, while 64
// producers publish batches of 10 in a closed loop. Counts, not timings: they do not depend on how
// loaded the machine is, only on how many requests share a turn (printed too).
//   node bench/scratch/kv-ops.mjs ROOT [seconds=8] [producers=64]
import { createRequire } from 'node:module';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool, closedLoop } from '../../dist-bench/bench/lib/load.js';
const [root, seconds = '8', producers = '64'] = process.argv.slice(2);
const req = createRequire(join(root, 'package.json'));
// The package exports no subpath: its batch module by real path (the instance the package itself loads).
const { WriteBatch } = req(join(realpathSync(join(root, 'node_modules/rocksdb-native')), 'lib/batch.js'));
const count = { puts: 0, deletes: 0, batches: 0, bytes: 0 };
const kinds = new Map();
for (const [name, key] of [['tryPut', 'puts'], ['put', 'puts'], ['tryDelete', 'deletes'], ['delete', 'deletes'], ['tryDeleteRange', 'deletes'], ['deleteRange', 'deletes']]) {
  const orig = WriteBatch.prototype[name];
  if (typeof orig !== 'function') continue;
  WriteBatch.prototype[name] = function (...a) {
    count[key]++;
    if (key === 'puts') {
      count.bytes += a[0].length + (a[1]?.length ?? 0);
      // By kind of key: raft records by their kind byte (0x01 hard state, 0x02 snapshot, 0x03 entry),
      // the node's records, and other prefixes (index rows, applied rows, ...) by their first byte.
      const k = a[0];
      const kind = k[0] === 0x02 && k.length >= 6 ? `raft kind 0x0${k[5]}` : `prefix 0x${k[0].toString(16).padStart(2, '0')}${k[0] === 0x03 ? ` 0x0${k[1]}` : ''}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    return orig.apply(this, a);
  };
}
const flush = WriteBatch.prototype.flush;
WriteBatch.prototype.flush = function (...a) { count.batches++; return flush.apply(this, a); };
const { startTestBroker } = await import(pathToFileURL(join(root, 'dist/testing/broker-harness.js')).href);
const b = await startTestBroker({});
const url = `http://127.0.0.1:${b.port}`;
const res = await fetch(`${url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('scratch.orders', 'hash')) });
if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
const np = Number(producers);
const bodies = batchBodies(10, 500, 0);
const pool = publishPool(url, np);
await closedLoop({ pool, path: '/event-types/scratch.orders/events', bodies, eventsPerBody: 10, producers: np, warmupMs: 0, durationMs: 2000 });
const c0 = { ...count };
const k0 = new Map(kinds);
const r = await closedLoop({ pool, path: '/event-types/scratch.orders/events', bodies, eventsPerBody: 10, producers: np, warmupMs: 0, durationMs: Number(seconds) * 1000 });
await pool.close();
const d = (k) => (count[k] - c0[k]) / r.requests;
console.log(`${root}: ${r.requests} requests (${(r.requests / r.seconds).toFixed(0)}/s, errors ${r.errors}); per request: ${d('puts').toFixed(2)} puts, ${d('deletes').toFixed(2)} deletes, ${d('bytes').toFixed(0)} bytes put; ${(r.requests / (count.batches - c0.batches)).toFixed(1)} requests per KV write`);
console.log(`  puts per request by key: ${[...kinds].map(([k, n]) => [k, (n - (k0.get(k) ?? 0)) / r.requests]).sort((x, y) => y[1] - x[1]).map(([k, n]) => `${k} ${n.toFixed(2)}`).join(', ')}`);
await b.destroy();
