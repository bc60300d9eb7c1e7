// CPU (process, all threads: user + system) per storage operation of a node's turn, each op run N times
// one after the other on a fresh RocksDB: a native write of a turn-sized batch, an fdatasync of the WAL,
// the WAL question (currentWalFile), both of the last together (as a durable commit issues them), a
// durable RocksKv write (write + both), and a marker-sized O_DSYNC pwrite. CPU, not wall time: a loaded
// machine stretches the wall time of each op but not much the CPU it takes.
//   [ROUNDS=3] [ONLY=regexp of names] node bench/scratch/kv-op-cpu.mjs ROOT_OF_A_BUILD [N=2000] [valueBytes=2000]
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
const root = process.argv[2] ?? '.';
const n = Number(process.argv[3] ?? 2000);
const valueBytes = Number(process.argv[4] ?? 2000);
const { openRocksKv } = await import(join(resolve(root), 'dist/log/index.js'));
const dir = mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), 'kvopcpu-'));
const kv = await openRocksKv(dir);
const db = kv.db;
const value = Buffer.alloc(valueBytes, 7);
let k = 0;
const key = () => { const b = Buffer.alloc(14); b[0] = 2; b.writeUInt32BE(1000, 1); b[5] = 3; b.writeBigUInt64BE(BigInt(++k), 6); return b; };
const seqKey = Buffer.from([3, 1]);
const only = process.env.ONLY === undefined ? undefined : new RegExp(process.env.ONLY);
async function measure(name, op) {
  if (only !== undefined && !only.test(name)) return;
  for (let i = 0; i < 50; i++) await op();
  const c0 = process.cpuUsage(); const t0 = performance.now(); const r0 = process.resourceUsage();
  for (let i = 0; i < n; i++) await op();
  const c = process.cpuUsage(c0); const t = performance.now() - t0; const r1 = process.resourceUsage();
  const cs = (r1.voluntaryContextSwitches - r0.voluntaryContextSwitches + r1.involuntaryContextSwitches - r0.involuntaryContextSwitches) / n;
  console.log(`${name.padEnd(34)} ${((c.user + c.system) / n).toFixed(1).padStart(7)} us CPU (user ${(c.user / n).toFixed(1)}, sys ${(c.system / n).toFixed(1)}), ${((t * 1000) / n).toFixed(0).padStart(6)} us wall, ${cs.toFixed(2)} context switches`);
}
// A turn's write: the sequence key, one entry, one index row.
const nativeWrite = async () => { const b = db.write({ capacity: 3 }); b.tryPut(seqKey, Buffer.alloc(16)); b.tryPut(key(), value); b.tryPut(key(), Buffer.alloc(40)); await b.flush(); b.destroy(); };
await kv.write((b) => b.put(key(), value), { durable: true }); // opens the WAL fd
const walFd = kv.wal.fd;
const markerFd = await open(join(dir, 'marker'), constants.O_RDWR | constants.O_CREAT | (constants.O_DSYNC ?? 0));
const marker = Buffer.alloc(64, 1);
await markerFd.write(marker, 0, 64, 0);
await measure('native write (3 puts)', nativeWrite);
await measure('currentWalFile', () => db.currentWalFile());
// Interleaved, ROUNDS times: a durable commit with and without the WAL question (the difference is its cost).
for (let r = 0; r < Number(process.env.ROUNDS ?? 1); r++) {
  await measure('write, then fdatasync', async () => { await nativeWrite(); await walFd.datasync(); });
  await measure('write, then fdatasync+WAL question', async () => { await nativeWrite(); await Promise.all([db.currentWalFile(), walFd.datasync()]); });
}
await measure('RocksKv durable write (3 puts)', () => kv.write((b) => { b.put(seqKey, Buffer.alloc(16)); b.put(key(), value); b.put(key(), Buffer.alloc(40)); }, { durable: true }));
await measure('RocksKv write, not durable', () => kv.write((b) => { b.put(seqKey, Buffer.alloc(16)); b.put(key(), value); b.put(key(), Buffer.alloc(40)); }, { durable: false }));
await measure('marker pwrite O_DSYNC (64 B)', () => markerFd.write(marker, 0, 64, 0));
await measure('setImmediate round (baseline)', () => new Promise((r) => setImmediate(r)));
await markerFd.close();
await kv.close();
rmSync(dir, { recursive: true, force: true });
