// In process, no HTTP: 64 producers append batches of 10 events (526 B) hashed over 8 one-member partition
// groups through PartitionReplicas on RocksDB (durable), for SECONDS; prints KV writes, fsyncs and host
// turns per request and the sequence of the first writes (D = durable, n = not; puts; start+duration ms).
//   node bench/scratch/inproc-turns.mjs ROOT_OF_A_BUILD [SECONDS]
// In-process: 64 producers append batches of 10 events (526 B) hashed over 8 partitions through
// PartitionReplicas on RocksKv (durable), for N seconds; prints kv stats and host stats per request.
import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
const root = process.argv[2]; const secs = +(process.argv[3] ?? 5);
const { openRocksKv, FileCell } = await import(root + '/dist/log/index.js');
const { RaftNodeHost } = await import(root + '/dist/broker/raft-host/node-host.js');
const { PartitionReplicas } = await import(root + '/dist/broker/partition-replicas.js');
const { NodeDisk, markerFileName } = await import(root + '/dist/broker/node-disk.js');
const pino = (await import(root + '/node_modules/pino/pino.js')).default;
const logger = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'turns-'));
const kv = await openRocksKv(dir);
const disk = await NodeDisk.open({ kv, cell: new FileCell(join(dir, markerFileName)), self: 1, newId: randomUUID, logger });
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
const host = new RaftNodeHost({ self: 1, kv, disk, tickMs: 100, clock, ticks: { every: (ms, f) => { const t = setInterval(f, ms); return () => clearInterval(t); } }, logger, onFatal: (e) => { console.error(e); process.exit(1); } });
const replicas = new PartitionReplicas({ self: 1, kv, disk, host, placement: (t, p) => ({ group: 1000 + p, replicas: [1] }), clock, random: { next: Math.random, int: (n) => Math.floor(Math.random() * n), uuid: randomUUID }, logger, electionTicks: 10, heartbeatTicks: 1, appendTimeoutMs: 5000 });
host.start(undefined);
const ev = Buffer.alloc(526, 120);
let reqs = 0, stop = false;
async function producer() {
  while (!stop) {
    const by = new Map(); for (let i = 0; i < 10; i++) { const p = Math.floor(Math.random() * 8); (by.get(p) ?? by.set(p, []).get(p)).push(ev); }
    const res = await replicas.append([...by].map(([p, events]) => ({ topic: 1, partition: p, events })));
    if (!res.every((r) => r.ok)) throw new Error('failed');
    reqs++;
  }
}
await Promise.all(Array.from({ length: 8 }, (_, p) => replicas.append([{ topic: 1, partition: p, events: [ev] }])));
const s0 = { ...kv.stats }, h0 = { ...host.stats }, c0 = process.cpuUsage(), t0 = performance.now(); reqs = 0;
const trace = []; const w0 = kv.write.bind(kv); kv.write = (fill, o) => { let n = 0; const t = performance.now(); const p = w0((b) => { fill({ put: (k, v) => { n++; b.put(k, v); }, del: (k) => { n++; b.del(k); }, delRange: (a, z) => { n++; b.delRange(a, z); } }); }, o); p.then(() => trace.length < 60 && trace.push(`${o.durable ? 'D' : 'n'}${n}@${(t - t0).toFixed(1)}+${(performance.now() - t).toFixed(1)}`)); return p; };
const ps = Array.from({ length: 64 }, producer);
await new Promise((r) => setTimeout(r, secs * 1000)); stop = true; await Promise.all(ps);
const dt = (performance.now() - t0) / 1000, c = process.cpuUsage(c0);
const per = (k, a, b) => `${k} ${((b[k] - a[k]) / reqs).toFixed(3)}`;
console.log(`${root}: ${reqs} requests in ${dt.toFixed(1)} s = ${(reqs / dt).toFixed(0)} req/s; CPU ${((c.user + c.system) / reqs).toFixed(0)} us/request`);
console.log('per request: ' + ['writeCalls', 'commits', 'walSyncs'].map((k) => per(k, s0, kv.stats)).join(', ') + '; ' + ['turns', 'writes', 'durableWrites', 'readies'].map((k) => per(k, h0, host.stats)).join(', '));
console.log(trace.join(' '));
await replicas.close(); await host.close(); await disk.close?.(); await kv.close();
