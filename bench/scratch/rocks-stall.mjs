// Do durable KV writes stall when RocksDB switches its memtable (and WAL) and flushes it? In process,
// no broker: one RocksKv (this build's dist/log), durable writes of BYTES bytes at RATE writes/s
// (open loop: a write is due every 1000/RATE ms; writes queue as the host's do), for SECONDS s, with a
// memtable of MEMTABLE MiB. Prints the latency of the writes (due time to resolved) and every write slower
// than SLOW ms with the WAL switches counted when it started and ended, and the main thread's longest
// event-loop delays (a stall of the loop, not of the disk, shows there too).
//   RATE=500 BYTES=5000 SECONDS=30 MEMTABLE=16 node bench/scratch/rocks-stall.mjs [ROOT]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const root = resolve(process.argv[2] ?? '.');
const { openRocksKv } = await import(join(root, 'dist/log/index.js'));
const rate = Number(process.env.RATE ?? 500);
const bytes = Number(process.env.BYTES ?? 5000);
const seconds = Number(process.env.SECONDS ?? 30);
const memtable = Number(process.env.MEMTABLE ?? 16);
const slowMs = Number(process.env.SLOW ?? 20);
const dir = mkdtempSync(join(process.env.DIR ?? tmpdir(), 'rocks-stall-'));
const fsyncs = [];
const kv = await openRocksKv(dir, { writeBufferSize: memtable * 1024 * 1024, onSync: (ms) => fsyncs.push([performance.now(), ms]) });
const value = Buffer.alloc(bytes, 7);
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
const lat = [];
const slow = [];
let k = 0;
const t0 = performance.now();
const total = rate * seconds;
const pend = [];
await new Promise((done) => {
  const tick = () => {
    const now = performance.now();
    while (k < total && t0 + (k * 1000) / rate <= now) {
      const due = t0 + (k * 1000) / rate;
      const key = Buffer.alloc(12);
      key.writeUInt32BE(k++, 8);
      const sw0 = kv.stats.walSwitches;
      pend.push(
        kv.write((b) => b.put(key, value), { durable: true }).then(() => {
          const l = performance.now() - due;
          lat.push(l);
          if (l > slowMs) slow.push(`${((due - t0) / 1000).toFixed(2)}s ${l.toFixed(0)}ms sw ${sw0}->${kv.stats.walSwitches}`);
        }),
      );
    }
    if (k >= total) return done();
    setTimeout(tick, 1);
  };
  tick();
});
await Promise.all(pend);
loop.disable();
lat.sort((a, b) => a - b);
const q = (p) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))].toFixed(2);
const fs = fsyncs.map((f) => f[1]).sort((a, b) => a - b);
console.log(`${total} durable writes of ${bytes} B at ${rate}/s, memtable ${memtable} MiB: p50 ${q(0.5)} p99 ${q(0.99)} p99.9 ${q(0.999)} max ${q(1)} ms; WAL switches ${kv.stats.walSwitches}, dir syncs ${kv.stats.dirSyncs}, commits ${kv.stats.commits}`);
console.log(`fsync (as onSync times it): n ${fs.length}, p50 ${fs[Math.floor(fs.length / 2)].toFixed(2)} p99 ${fs[Math.floor(fs.length * 0.99)].toFixed(2)} max ${fs[fs.length - 1].toFixed(1)} ms; slowest: ${fsyncs.filter((f) => f[1] > slowMs).map((f) => `${((f[0] - t0) / 1000).toFixed(2)}s:${f[1].toFixed(0)}`).join(' ')}`);
console.log(`event loop delay: p99 ${(loop.percentile(99) / 1e6).toFixed(1)} max ${(loop.max / 1e6).toFixed(1)} ms`);
console.log(`writes slower than ${slowMs} ms (${slow.length}): ${slow.slice(0, 40).join('; ')}`);
await kv.close();
rmSync(dir, { recursive: true, force: true });
