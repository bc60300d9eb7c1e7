// Compares two V8 .cpuprofile files of the broker (e.g. old and new build, npm run bench -- --ab DIR --cpu-prof D):
// self time per function, each profile scaled so that its busy time equals the main-thread CPU per request
// measured for it (bench/scratch/thread-cpu.sh). Windows are the bench's monotonic-clock lines.
//   node bench/scratch/profile-diff.mjs OLD.cpuprofile FROM TO US_PER_REQ NEW.cpuprofile FROM TO US_PER_REQ [top]
// self time per function, each profile scaled so its busy time = given µs per request
import { readFileSync } from 'node:fs';
const a = process.argv.slice(2);
function load(file, from, to) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n])); const res = new Map(); let t = p.startTime, busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0; if (t < from || t > to) continue; const n = byId.get(p.samples[i]);
    if (['(idle)', '(root)'].includes(n.callFrame.functionName)) continue;
    const u = n.callFrame.url.replace(/.*(node_modules|dist)\//, ''); const k = `${n.callFrame.functionName || '(anon)'} ${u}`;
    const d = p.timeDeltas[i] ?? 0; busy += d; res.set(k, (res.get(k) ?? 0) + d);
  }
  for (const [k, v] of res) res.set(k, v / busy); return res;
}
const o = load(a[0], +a[1], +a[2]), n = load(a[4], +a[5], +a[6]); const so = +a[3], sn = +a[7];
const rows = [...new Set([...o.keys(), ...n.keys()])].map((k) => [k, (o.get(k) ?? 0) * so, (n.get(k) ?? 0) * sn]);
rows.sort((x, y) => (y[2] - y[1]) - (x[2] - x[1]));
const f = (r) => `${(r[2] - r[1]).toFixed(1).padStart(6)}  old ${r[1].toFixed(1).padStart(5)} new ${r[2].toFixed(1).padStart(5)}  ${r[0]}`;
console.log('--- grew'); for (const r of rows.slice(0, +(a[8] ?? 50))) console.log(f(r));
console.log('--- shrank'); for (const r of rows.slice(-15)) console.log(f(r));
