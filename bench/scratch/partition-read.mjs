// In-process, no HTTP: writes a mixed backlog through PartitionReplicas (one-member groups over RocksKv)
// — E1 events in batches of 1000, then E2 in batches of 10, spread over P partitions — then reads it
// all back from the start with read(after, 1000, 1 MB) per partition in turn, as a low-level stream
// does, and prints the read rate and the RSS.
//   node bench/scratch/partition-read.mjs [E1=400000] [E2=100000] [partitions=4]
import { openRocksKv } from '../../dist/log/rocks-kv.js';
import { PartitionReplicas } from '../../dist/broker/partition-replicas.js';
import { RaftNodeHost, systemTicks } from '../../dist/broker/raft-host/node-host.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
const [E1 = 400_000, E2 = 100_000, P = 4] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), 'brook-partition-read-'));
const kv = await openRocksKv(dir);
const logger = pino({ level: 'warn' });
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
const host = new RaftNodeHost({ self: 1, kv, tickMs: 100, clock, ticks: systemTicks, logger, onFatal: (e) => { console.error('FATAL', e); process.exit(1); } });
const replicas = new PartitionReplicas({ self: 1, kv, host, placement: (t, p) => ({ group: 100 + p, replicas: [1] }), clock, random: { next: Math.random, int: (n) => Math.floor(Math.random() * n), uuid: randomUUID }, logger, electionTicks: 10, heartbeatTicks: 1, appendTimeoutMs: 5000 });
host.start(undefined);
for (let p = 0; p < P; p++) await replicas.ensure(1, p);
await new Promise((r) => setTimeout(r, 300));
const ev = Buffer.alloc(520, 97);
async function write(total, batch, producers) {
  let sent = 0;
  await Promise.all(Array.from({ length: producers }, async () => {
    while (sent < total) {
      sent += batch;
      // A batch is split by partition as the broker does with hash partitioning.
      const items = [];
      for (let p = 0; p < P; p++) items.push({ topic: 1, partition: p, events: Array.from({ length: Math.ceil(batch / P) }, () => ev) });
      const rs = await replicas.append(batch >= P ? items : [items[Math.floor(Math.random() * P)]]);
      for (const r of rs) if (!r.ok) throw r.error;
    }
  }));
}
let t = performance.now();
await write(E1, 1000, 4);
await write(E2, 10, 64);
const total = [...Array(P).keys()].reduce((n, p) => n + replicas.bounds(1, p).newest + 1, 0);
console.log(`wrote ${total} events in ${((performance.now() - t) / 1000).toFixed(1)} s; RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
const rss0 = process.memoryUsage().rss; let rssMax = rss0;
t = performance.now();
const readFrom = process.hrtime.bigint() / 1000n;
const cpu0 = process.cpuUsage();
const after = new Array(P).fill(-1);
let read = 0, calls = 0;
for (let busy = true; busy; ) {
  busy = false;
  for (let p = 0; p < P; p++) {
    if (after[p] >= replicas.bounds(1, p).newest) continue;
    const got = await replicas.read(1, p, after[p], 1000, 1_000_000);
    calls++;
    if (got.length > 0) { after[p] = got[got.length - 1].offset; read += got.length; busy = true; }
    if (calls % 50 === 0) rssMax = Math.max(rssMax, process.memoryUsage().rss);
  }
}
const s = (performance.now() - t) / 1000;
console.log(`read window on the monotonic clock: ${readFrom} ${process.hrtime.bigint() / 1000n} us`);
const cpu = process.cpuUsage(cpu0);
console.log(`read ${read} events in ${s.toFixed(2)} s: ${(read / s).toFixed(0)} ev/s, CPU ${((cpu.user + cpu.system) / read).toFixed(2)} us/event (${(read / ((cpu.user + cpu.system) / 1e6)).toFixed(0)} ev per CPU-s), ${calls} read calls; RSS ${(rss0 / 1e6).toFixed(0)} -> max ${(rssMax / 1e6).toFixed(0)} MB`);
await replicas.close(); await host.close(); await kv.close();
rmSync(dir, { recursive: true, force: true });
