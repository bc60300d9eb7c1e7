// In process: the CPU of validating one batch-10 request of the bench's order events (bench/lib/events.ts)
// with the event validator of each build (its SchemaValidatorCache, the same path as a publish), µs per
// request of 10 events, rounds alternating the builds. Load-independent as far as a CPU-bound loop is.
//   npm run build:bench
//   node bench/scratch/validate-ab.mjs [ROUNDS] [N] LABEL=ROOT ...
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
const args = process.argv.slice(2);
const builds = args.filter((a) => a.includes('=')).map((a) => a.split('='));
const [rounds = '5', n = '20000'] = args.filter((a) => !a.includes('='));
const body = eventTypeBody('scratch.orders', 'hash');
const et = { ...body, compatibility_mode: 'forward', schema: undefined };
const schema = { type: 'json_schema', schema: body.schema.schema, version: '1.0.0', created_at: '2026-01-01T00:00:00Z' };
const batches = batchBodies(10, 500, 0).map((b) => JSON.parse(b.toString()));
const validators = [];
for (const [label, root] of builds) {
  const { SchemaValidatorCache } = await import(pathToFileURL(join(root, 'dist/registry/validator-cache.js')).href);
  const v = new SchemaValidatorCache().validatorFor(et, schema);
  for (const ev of batches[0]) { const e = v(ev); if (e !== null) throw new Error(`${label}: ${e}`); }
  validators.push([label, v]);
}
const results = new Map();
for (let r = 0; r < Number(rounds); r++) {
  for (const [label, v] of r % 2 ? [...validators].reverse() : validators) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < Number(n); i++) for (const ev of batches[i % batches.length]) if (v(ev) !== null) throw new Error('invalid');
    const c = process.cpuUsage(c0);
    const us = (c.user + c.system) / Number(n);
    (results.get(label) ?? results.set(label, []).get(label)).push(us);
  }
}
for (const [label, xs] of results) console.log(`${label}: µs per request of 10 events: ${xs.map((x) => x.toFixed(2)).join(' ')}; min ${Math.min(...xs).toFixed(2)}`);
