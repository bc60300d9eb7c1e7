// What one raft marker write costs (src/log/durable-cell.ts, src/broker/node-disk.ts), in process:
//  1. FileCell.write back to back, N writes: wall time, CPU of the process (all threads: the libuv pool
//     thread's O_DSYNC pwrite included) and of the main thread alone, per write;
//  2. NodeDisk as the broker runs it (systemMarkerPacing, 10 ms): durable() reported RATE times a second
//     for SECONDS (what a node making RATE durable raft writes a second does), marker writes made and
//     CPU per second, against the same loop with a cell that writes nothing.
// Run from a built checkout:  node bench/scratch/marker-cost.mjs ROOT [N] [RATE] [SECONDS]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';

const [root = '.', nArg = '3000', rateArg = '500', secArg = '10'] = process.argv.slice(2);
const abs = root.startsWith('/') ? root : join(process.cwd(), root);
const { FileCell, openRocksKv } = await import(join(abs, 'dist/log/index.js'));
const { NodeDisk, markerFileName, systemMarkerPacing } = await import(join(abs, 'dist/broker/node-disk.js'));
const ticks = (file) => { const f = readFileSync(file, 'utf8'); const r = f.slice(f.lastIndexOf(')') + 2).split(' '); return (Number(r[11]) + Number(r[12])) * 10; }; // ms
const cpu = () => ({ all: ticks('/proc/self/stat'), main: ticks(`/proc/self/task/${process.pid}/stat`), t: performance.now() });
const dir = mkdtempSync(join(tmpdir(), 'marker-cost-'));

// 1. back to back
const cell = new FileCell(join(dir, 'cell'));
await cell.write(Buffer.alloc(40, 1));
const n = Number(nArg);
const payload = Buffer.alloc(40, 7);
const a0 = cpu();
for (let i = 0; i < n; i++) await cell.write(payload);
const a1 = cpu();
await cell.close();
console.log(`back to back: ${n} writes, ${((a1.t - a0.t) / n).toFixed(3)} ms wall, CPU ${((1000 * (a1.all - a0.all)) / n).toFixed(1)} µs (main thread ${((1000 * (a1.main - a0.main)) / n).toFixed(1)} µs) per write; load ${loadavg()[0].toFixed(2)}`);

// 2. paced, as a node runs it
const logger = { info() {}, warn() {}, error() {} };
for (const kind of ['file', 'none', 'file', 'none']) {
  const d = mkdtempSync(join(dir, 'kv-'));
  const kv = await openRocksKv(d);
  let writes = 0;
  const real = new FileCell(join(d, markerFileName));
  const cellOf = kind === 'file' ? { read: () => real.read(), write: (p) => { writes++; return real.write(p); }, close: () => real.close() } : { read: () => real.read(), write: async (p) => { writes++; if (writes === 1) await real.write(p); }, close: () => real.close() };
  const disk = await NodeDisk.open({ kv, cell: cellOf, self: 1, newId: randomUUID, logger, pacing: systemMarkerPacing() });
  await disk.flush();
  writes = 0;
  const rate = Number(rateArg);
  const total = rate * Number(secArg);
  let seq = 0;
  const c0 = cpu();
  const start = performance.now();
  await new Promise((done) => {
    const step = () => {
      const due = Math.floor(((performance.now() - start) / 1000) * rate);
      while (seq < due && seq < total) disk.durable(++seq); // the sequence numbers stamp() would hand out
      if (seq >= total) return done();
      setTimeout(step, 1000 / rate);
    };
    step();
  });
  const c1 = cpu();
  const s = (c1.t - c0.t) / 1000;
  console.log(`paced ${kind}: ${writes} marker writes in ${s.toFixed(1)} s (${(writes / s).toFixed(0)}/s) for ${total} durable writes; CPU ${((c1.all - c0.all) / s).toFixed(1)} ms/s (main thread ${((c1.main - c0.main) / s).toFixed(1)} ms/s); load ${loadavg()[0].toFixed(2)}`);
  await disk.close();
  await kv.close();
}
rmSync(dir, { recursive: true, force: true });
