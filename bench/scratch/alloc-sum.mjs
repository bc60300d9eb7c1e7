// Self bytes per function of a sampling heap profile written by bench/scratch/alloc-preload.cjs.
//   node bench/scratch/alloc-sum.mjs FILE.heapprofile [top]
// self bytes per function of a sampling heap profile (top N)
import { readFileSync } from 'node:fs';
const [file, n = '40'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const self = new Map(); let total = 0;
const walk = (node) => { const f = node.callFrame; const k = `${f.functionName || '(anon)'} ${f.url.replace(/.*(node_modules|dist)\//, '')}:${f.lineNumber}`; const b = node.selfSize; total += b; self.set(k, (self.get(k) ?? 0) + b); for (const c of node.children) walk(c); };
walk(p.head);
console.log(`total sampled ${(total / 1e6).toFixed(1)} MB`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, +n)) console.log(`${(v / 1e6).toFixed(1).padStart(8)} MB ${(100 * v / total).toFixed(1).padStart(5)}%  ${k}`);
