// In-process, no HTTP: PartitionReplicas on a RaftNodeHost over RocksKv (the single-node partition path),
// N appenders of batches of B events of 520 B to P one-member partition groups for S seconds.
//   node bench/scratch/partition-path.mjs [appenders=64] [batch=10] [seconds=6] [partitions=8]
import { openRocksKv } from '../../dist/log/rocks-kv.js';
import { PartitionReplicas } from '../../dist/broker/partition-replicas.js';
import { RaftNodeHost, systemTicks } from '../../dist/broker/raft-host/node-host.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
const [appenders = 64, batch = 10, seconds = 6, P = 8] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), 'brook-partition-path-'));
const kv = await openRocksKv(dir);
const logger = pino({ level: 'warn' });
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
const host = new RaftNodeHost({ self: 1, kv, tickMs: 100, clock, ticks: systemTicks, logger, onFatal: (e) => { console.error('FATAL', e); process.exit(1); } });
const replicas = new PartitionReplicas({ self: 1, kv, host, placement: (t, p) => ({ group: 100 + p, replicas: [1] }), clock, random: { next: Math.random, int: (n) => Math.floor(Math.random() * n), uuid: randomUUID }, logger, electionTicks: 10, heartbeatTicks: 1, appendTimeoutMs: 5000 });
host.start(undefined);
for (let p = 0; p < P; p++) await replicas.ensure(1, p);
await new Promise((r) => setTimeout(r, 300));
const ev = Buffer.alloc(520, 97);
const events = Array.from({ length: batch }, () => ev);
let stop = false, n = 0, failed = 0;
const lat = [];
const cpu0 = process.cpuUsage(); const t0 = performance.now();
await Promise.all(Array.from({ length: appenders }, async (_, k) => {
  while (!stop) {
    const s = performance.now();
    const [r] = await replicas.append([{ topic: 1, partition: (k + n) % P, events }]);
    if (!r.ok) failed++; else n++;
    lat.push(performance.now() - s);
    if (performance.now() - t0 > seconds * 1000) stop = true;
  }
}));
const wall = (performance.now() - t0) / 1000; const c = process.cpuUsage(cpu0);
lat.sort((a, b) => a - b);
console.log(`appends ${n} (${(n / wall).toFixed(0)}/s, ${(n * batch / wall).toFixed(0)} ev/s), failed ${failed}, CPU ${((c.user + c.system) / 1000 / n).toFixed(3)} ms/append, p50 ${lat[lat.length >> 1].toFixed(1)} p99 ${lat[Math.floor(lat.length * 0.99)].toFixed(1)} ms, turns ${host.stats.turns} writes ${host.stats.writes}, RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
await replicas.close(); await host.close(); await kv.close();
rmSync(dir, { recursive: true, force: true });
