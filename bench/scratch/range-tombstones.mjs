// The write pattern of the node host before 2026-11-26, against RocksKv: per turn and group one entry put and
// (mode 'range') a range deletion from that entry to the end of the log, which every append carried.
// Prints the write rate, the longest turn, the time to read 16 entries and the RSS every 500 turns.
//   node bench/scratch/range-tombstones.mjs range|none [entry bytes=70000] [turns=2000]
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRocksKv } from '../../dist/log/rocks-kv.js';
import { entryKey } from '../../dist/broker/raft-keys.js';
import { mkdtempSync, rmSync } from 'node:fs';
const mode = process.argv[2]; // 'range' or 'none'
const entryBytes = Number(process.argv[3] ?? 70000);
const turns = Number(process.argv[4] ?? 2000);
const groups = 8;
const dir = mkdtempSync(join(tmpdir(), 'brook-tombstones-'));
const kv = await openRocksKv(dir);
const val = Buffer.alloc(entryBytes, 7);
const last = new Array(groups).fill(0);
const rss = () => (Number(/VmRSS:\s+(\d+)/.exec(require_fs())[1]) / 1024).toFixed(0);
import { readFileSync } from 'node:fs';
function require_fs() { return readFileSync('/proc/self/status', 'utf8'); }
let t0 = performance.now(); let maxTurn = 0;
for (let t = 0; t < turns; t++) {
  const s = performance.now();
  await kv.write((b) => {
    for (let g = 0; g < groups; g++) {
      const i = ++last[g];
      if (mode === 'range') b.delRange(entryKey(g, i), entryKey(g, Number.MAX_SAFE_INTEGER));
      b.put(entryKey(g, i), val);
      b.put(Buffer.from([2, 0, 0, 0, g, 1]), Buffer.alloc(30));
    }
  }, { durable: true });
  maxTurn = Math.max(maxTurn, performance.now() - s);
  if (t % 500 === 499) {
    // read: iterator of 16 from some old index
    const rs = performance.now();
    let n = 0;
    for await (const _ of kv.iterate({ gte: entryKey(3, Math.max(1, i0(t) - 300)), lt: entryKey(3, Number.MAX_SAFE_INTEGER), capacity: 16 })) { if (++n >= 16) break; }
    console.log(`turn ${t + 1}: ${((t + 1) * groups * entryBytes / 1e6 / ((performance.now() - t0) / 1000)).toFixed(1)} MB/s, max turn ${maxTurn.toFixed(1)} ms, read16 ${(performance.now() - rs).toFixed(1)} ms, RSS ${rss()} MB`);
    maxTurn = 0;
  }
}
function i0(t) { return t; }
await kv.close();
rmSync(dir, { recursive: true, force: true });
