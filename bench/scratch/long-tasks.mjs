// The long tasks of a main-thread CPU profile (node --cpu-prof): stretches of consecutive samples that
// are not (idle), i.e. the event loop was busy without a break. For stretches longer than MIN ms
// (default 5), what they ran: the frames with the most samples inside them (inclusive, by function and
// file), against the same over the whole profile. Diagnostic only.
//   node bench/scratch/long-tasks.mjs FILE.cpuprofile [MIN_MS] [TOP]
import { readFileSync } from 'node:fs';
const [file, minArg, topArg] = process.argv.slice(2);
const minMs = Number(minArg ?? 5);
const top = Number(topArg ?? 25);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n) => { const f = n.callFrame; const u = f.url.replace(/^.*\/(dist|node_modules)\//, '$1/'); return `${f.functionName || '(anon)'} ${u}:${f.lineNumber + 1}`; };
const isIdle = (id) => { const n = byId.get(id); const fn = n.callFrame.functionName; return fn === '(idle)' || fn === '(program)'; };
// Inclusive frame sets per node, cached.
const chainCache = new Map();
function chain(id) {
  let c = chainCache.get(id);
  if (c !== undefined) return c;
  const out = new Set();
  for (let x = id; x !== undefined; x = parent.get(x)) { const n = byId.get(x); if (n.callFrame.functionName !== '(root)') out.add(name(n)); }
  c = [...out];
  chainCache.set(id, c);
  return c;
}
const samples = p.samples;
const dt = p.timeDeltas;
let t = p.startTime;
const times = samples.map((_, i) => (t += dt[i]));
// Stretches.
const stretches = [];
let cur;
for (let i = 0; i < samples.length; i++) {
  if (isIdle(samples[i])) { if (cur) { cur.end = times[i]; stretches.push(cur); cur = undefined; } continue; }
  if (!cur) cur = { start: i > 0 ? times[i - 1] : times[i], from: i, to: i };
  cur.to = i;
}
const long = stretches.filter((s) => (s.end - s.start) / 1000 >= minMs);
const allBusy = stretches.reduce((a, s) => a + (s.end - s.start), 0) / 1000;
const totalMs = (p.endTime - p.startTime) / 1000;
const hist = [1, 2, 5, 10, 20, 50, 100].map((ms) => `>=${ms} ms: ${stretches.filter((s) => (s.end - s.start) / 1000 >= ms).length}`);
console.log(`${file}: ${(totalMs / 1000).toFixed(1)} s, busy ${allBusy.toFixed(0)} ms in ${stretches.length} tasks; ${hist.join(', ')}`);
function count(ranges) {
  const m = new Map();
  let n = 0;
  for (const [a, b] of ranges) for (let i = a; i <= b; i++) { if (isIdle(samples[i])) continue; n++; for (const f of chain(samples[i])) m.set(f, (m.get(f) ?? 0) + 1); }
  return { m, n };
}
const inLong = count(long.map((s) => [s.from, s.to]));
const all = count([[0, samples.length - 1]]);
console.log(`long tasks (>= ${minMs} ms): ${long.length}, ${(long.reduce((a, s) => a + s.end - s.start, 0) / 1000).toFixed(0)} ms; longest ${long.map((s) => ((s.end - s.start) / 1000).toFixed(1)).sort((a, b) => b - a).slice(0, 15).join(' ')}`);
console.log(`frames by share of the samples in long tasks (inclusive) | share of all busy samples:`);
for (const [f, c] of [...inLong.m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${(100 * c / inLong.n).toFixed(1).padStart(5)} % | ${(100 * (all.m.get(f) ?? 0) / all.n).toFixed(1).padStart(5)} %  ${f}`);
if (process.env.EACH) {
  for (const s of long.sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, Number(process.env.EACH))) {
    const c = count([[s.from, s.to]]);
    const leaf = new Map();
    for (let i = s.from; i <= s.to; i++) { const n = name(byId.get(samples[i])); leaf.set(n, (leaf.get(n) ?? 0) + 1); }
    console.log(`task at ${((s.start - p.startTime) / 1e6).toFixed(3)} s, ${((s.end - s.start) / 1000).toFixed(1)} ms: inclusive ${[...c.m].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([f, k]) => `${(100 * k / c.n).toFixed(0)}% ${f}`).join(' | ')}\n    self ${[...leaf].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([f, k]) => `${(100 * k / c.n).toFixed(0)}% ${f}`).join(' | ')}`);
  }
}
