// Does a second file's O_DSYNC write delay the next fdatasync of another file on this disk? (The raft
// marker beside the RocksDB WAL, docs/benchmarks.md "Single node, 2026-11-27 morning".) Serial loop of
// a 6 KB append + fdatasync on file A at RATE per second (open loop); in "marker" mode each completed
// fdatasync is followed by a 512-byte O_DSYNC pwrite on file B (one in flight), as node-disk.ts does.
// A third mode, "paced", starts a marker write at most every PACE_MS (default 10) ms, as node-disk.ts
// does since the marker is paced. Rotates the modes ROUNDS times, SECONDS each; prints fdatasync and
// append latency percentiles.
//   node bench/scratch/flush-overlap.mjs [RATE=500] [SECONDS=5] [ROUNDS=3]   (in a directory on the disk to test: cwd)
import { open } from 'node:fs/promises';
import { openSync, write, constants, rmSync } from 'node:fs';
const [rate = 500, secs = 5, rounds = 3] = process.argv.slice(2).map(Number);
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(p * (s.length - 1))]?.toFixed(2); };
const paceMs = Number(process.env.PACE_MS ?? 10);
async function run(mode) {
  const marker = mode !== 'off';
  let lastMark = -Infinity;
  const a = await open(`flush-overlap-a-${process.pid}`, 'w');
  const bfd = openSync(`flush-overlap-b-${process.pid}`, constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC);
  const block = Buffer.alloc(6000, 120), slot = Buffer.alloc(512, 1);
  let marking = false, markers = 0; const syncs = [], lat = [];
  let chain = Promise.resolve();
  const t0 = performance.now(); let n = 0; const pending = [];
  await new Promise((done) => {
    const tick = () => {
      const due = Math.floor((performance.now() - t0) * rate / 1000);
      while (n < due) {
        n++; const at = performance.now();
        chain = chain.then(async () => {
          await a.write(block);
          const s = performance.now(); await a.datasync(); syncs.push(performance.now() - s);
          if (marker && !marking && (mode === 'each' || performance.now() - lastMark >= paceMs)) { marking = true; markers++; lastMark = performance.now(); write(bfd, slot, 0, 512, (markers % 2) * 512, () => { marking = false; }); }
        });
        pending.push(chain.then(() => lat.push(performance.now() - at)));
      }
      if (performance.now() - t0 < secs * 1000) setTimeout(tick, 1); else done();
    };
    tick();
  });
  await Promise.all(pending); await a.close();
  rmSync(`flush-overlap-a-${process.pid}`); rmSync(`flush-overlap-b-${process.pid}`);
  return `marker ${mode.padEnd(5)}: fdatasync p50 ${q(syncs, 0.5)} p90 ${q(syncs, 0.9)} p99 ${q(syncs, 0.99)} max ${q(syncs, 1)} ms (${syncs.length}); append latency p50 ${q(lat, 0.5)} p90 ${q(lat, 0.9)} p99 ${q(lat, 0.99)} p99.9 ${q(lat, 0.999)} ms; marker writes ${markers}`;
}
const modes = ['off', 'each', 'paced'];
for (let r = 0; r < rounds; r++) for (let i = 0; i < modes.length; i++) console.log(await run(modes[(i + r) % modes.length]));
