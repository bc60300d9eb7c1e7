// CPU seconds per thread (main thread = MAIN) of one broker between two instants, from bench/scratch/thread-cpu.sh output.
//   node bench/scratch/thread-cpu-sum.mjs threads.log PID FROM_EPOCH_S TO_EPOCH_S
// node thrsum.mjs threads.log PID fromEpochS toEpochS : per thread-name CPU seconds between two snapshots nearest the window
import { readFileSync } from 'node:fs';
const [file, pid, from, to] = process.argv.slice(2);
const snaps = []; let cur;
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const m = line.match(/^(\d+\.\d+) (\d+) /);
  if (m) { cur = m[2] === pid ? { t: +m[1], th: new Map() } : undefined; if (cur) snaps.push(cur); continue; }
  if (!cur) continue;
  const p = line.trim().split(' '); if (p.length < 4) continue;
  const tid = p[0], s = +p[p.length - 1], u = +p[p.length - 2], name = p.slice(1, p.length - 2).join(' ');
  cur.th.set(tid, { name, ticks: u + s });
}
const pick = (t) => snaps.reduce((a, b) => (Math.abs(b.t - t) < Math.abs(a.t - t) ? b : a));
const a = pick(+from), b = pick(+to);
const byName = new Map();
for (const [tid, v] of b.th) { const d = v.ticks - (a.th.get(tid)?.ticks ?? 0); const k = tid === pid ? 'MAIN' : v.name.replace(/\d+$/, '#'); byName.set(k, (byName.get(k) ?? 0) + d); }
console.log(`window ${(b.t - a.t).toFixed(1)} s`);
for (const [k, v] of [...byName].sort((x, y) => y[1] - x[1])) if (v > 0) console.log(`${(v / 100).toFixed(2).padStart(7)} s  ${((v / 100) / (b.t - a.t)).toFixed(2)} cores  ${k}`);
