// Self time of a broker .cpuprofile by category (publishing, GC, fastify, rocksdb-native, ...), scaled to US_PER_REQ.
//   node bench/scratch/profile-categories.mjs PROFILE FROM TO US_PER_REQ
// node cats.mjs PROFILE from to usPerRequestBusy : self time by category, scaled so busy = given µs
import { readFileSync } from 'node:fs';
const [file, from, to, scale] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const cat = (n) => {
  const f = n.callFrame.functionName, u = n.callFrame.url;
  if (f === '(idle)' || f === '(root)') return null;
  if (f === '(garbage collector)') return 'GC';
  if (f === '(program)') return 'program';
  if (u.includes('re2js')) return 're2js';
  if (u.includes('ajv') || f.startsWith('validate') || f.startsWith('RegExp')) return 'ajv+formats';
  if (u.includes('/publishing/')) return 'publishing (parse, splice)';
  if (u.includes('rocksdb-native')) return 'rocksdb-native js';
  if (u.includes('fastify') || u.includes('find-my-way') || u.includes('avvio') || u.includes('light-my-request')) return 'fastify';
  if (u.includes('prom-client') || u.includes('tdigest')) return 'metrics';
  if (u.includes('pino')) return 'pino';
  if (u.includes('/raft/')) return 'brook raft core';
  if (u.includes('/broker/') || u.includes('/replication/')) return 'brook broker/replication';
  if (u.includes('/log/')) return 'brook log (kv, crc, entry)';
  if (u.includes('/api/') || u.includes('/auth/') || u.includes('/observability/')) return 'brook api/auth/obs';
  if (u.includes('crypto')) return 'node crypto';
  if (u.includes('async_hooks')) return 'async_hooks';
  if (u.includes('_http') || u.includes('net') || u.includes('stream')) return 'node http/net/streams';
  if (u.startsWith('node:')) return 'node other';
  if (u === '') return 'native (' + (f.length > 20 ? f.slice(0, 20) : f) + ')';
  return 'other ' + u.replace(/.*\//, '');
};
const res = new Map(); let t = p.startTime, busy = 0;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i] ?? 0; if (t < +from || t > +to) continue;
  const c = cat(byId.get(p.samples[i])); if (c === null) continue; const d = p.timeDeltas[i] ?? 0; busy += d; res.set(c, (res.get(c) ?? 0) + d);
}
for (const [k, v] of [...res].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${(v / busy * +scale).toFixed(1).padStart(7)} µs ${(100 * v / busy).toFixed(1).padStart(5)}%  ${k}`);
