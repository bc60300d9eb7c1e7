// Reads bench/scratch/ctx-sample.sh output: for each process, the window from LEAD_S seconds before its
// last sample minus SKIP_S, to SKIP_S before its last sample (the open loop of cluster-cpu.mjs ends just
// before its cluster stops), summed per build (the dist/main.js path): CPU ticks and context switches.
//   node bench/scratch/ctx-sum.mjs ctx.log [windowS=10] [skipS=1]
import { readFileSync } from 'node:fs';
const [file, windowArg = '10', skipArg = '1'] = process.argv.slice(2);
const byPid = new Map();
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const p = line.trim().split(/\s+/);
  if (p.length < 6) continue;
  const [t, pid, path, cpu, v, n] = p;
  if (!byPid.has(pid)) byPid.set(pid, { path, s: [] });
  byPid.get(pid).s.push({ t: +t, cpu: +cpu, v: +v, n: +n });
}
const w = +windowArg, skip = +skipArg;
const runs = [];
for (const [pid, { path, s }] of byPid) {
  const end = s[s.length - 1].t - skip;
  const pick = (t) => s.reduce((a, b) => (Math.abs(b.t - t) < Math.abs(a.t - t) ? b : a));
  const a = pick(end - w), b = pick(end);
  runs.push({ pid, path, end, dt: b.t - a.t, cpu: (b.cpu - a.cpu) / 100, v: b.v - a.v, n: b.n - a.n });
}
runs.sort((x, y) => x.end - y.end);
for (const r of runs) console.log(`${r.path} pid ${r.pid}: ${r.dt.toFixed(1)} s, CPU ${r.cpu.toFixed(2)} s, voluntary switches ${r.v}, involuntary ${r.n}`);
