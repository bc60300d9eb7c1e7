// In process: the CPU of the publishing code alone (Publisher.publish: parse, validate, enrich,
// partition, splice) for one batch-10 request of the bench's order events, builds side by side. The
// writer answers every append at once, so nothing of the storage path is in it. µs per request,
// rounds alternating the builds (the process's CPU over N requests, published one after another).
//   npm run build:bench
//   [SIZE=10] node bench/scratch/publish-ab.mjs [ROUNDS] [N] LABEL=ROOT ...
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
const args = process.argv.slice(2);
const builds = args.filter((a) => a.includes('=')).map((a) => a.split('='));
const [rounds = '6', n = '20000'] = args.filter((a) => !a.includes('='));
const b = eventTypeBody('scratch.orders', 'hash');
const now = '2026-11-27T00:00:00.000Z';
const eventType = {
  ...b,
  compatibility_mode: 'forward',
  schema: { type: 'json_schema', schema: b.schema.schema, version: '1.0.0', created_at: now },
  options: { retention_time: 172800000 },
  created_at: now,
  updated_at: now,
};
const rec = { eventType, schemas: [eventType.schema], storage: { topic: 1, partitions: ['0', '1', '2', '3', '4', '5', '6', '7'], timeline: 1 } };
const size = Number(process.env.SIZE ?? 10);
const bodies = batchBodies(size, size >= 1000 ? 8 : 500, 0);
const publishers = [];
for (const [label, root] of builds) {
  const { Publisher } = await import(pathToFileURL(join(root, 'dist/publishing/publish.js')).href);
  const { SchemaValidatorCache } = await import(pathToFileURL(join(root, 'dist/registry/validator-cache.js')).href);
  const validators = new SchemaValidatorCache();
  const ok = { ok: true, offsets: [] };
  const p = new Publisher({
    eventTypes: { eventType: () => rec },
    validators: { validatorFor: (r) => validators.validatorFor(r.eventType, r.eventType.schema) },
    writer: { append: async (appends) => appends.map(() => ok) },
    clock: { nowMs: () => Date.now(), monotonicMs: () => performance.now() },
    random: { uuid: randomUUID, int: (k) => Math.floor(Math.random() * k), float: Math.random, bytes: (k) => Buffer.alloc(k) },
    features: { isEnabled: () => false },
    pause: () => new Promise((r) => setImmediate(r)),
  });
  const out = await p.publish('scratch.orders', bodies[0], 'flow');
  if (out.status !== 200) throw new Error(`${label}: ${JSON.stringify(out).slice(0, 400)}`);
  publishers.push([label, p]);
}
const results = new Map();
for (let r = 0; r < Number(rounds); r++) {
  for (const [label, p] of r % 2 ? [...publishers].reverse() : publishers) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < Number(n); i++) await p.publish('scratch.orders', bodies[i % bodies.length], 'flow');
    const c = process.cpuUsage(c0);
    (results.get(label) ?? results.set(label, []).get(label)).push((c.user + c.system) / Number(n));
  }
}
for (const [label, xs] of results) console.log(`${label}: µs per batch-${size} publish (publishing code only): ${xs.map((x) => x.toFixed(1)).join(' ')}; min ${Math.min(...xs).toFixed(1)}`);
