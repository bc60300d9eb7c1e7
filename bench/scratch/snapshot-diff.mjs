// Self bytes and counts by object kind (V8's node type and name) in two heap snapshots, and the difference:
// what grew between them. Pairs with tail-retained.mjs (SNAPSHOTS=DIR).
//   node --max-old-space-size=4096 bench/scratch/snapshot-diff.mjs DIR/before.heapsnapshot DIR/after.heapsnapshot [top=25]
import { readFileSync } from 'node:fs';
const [a, b, top = '25'] = process.argv.slice(2);
function kinds(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const f = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const iType = f.indexOf('type'), iName = f.indexOf('name'), iSize = f.indexOf('self_size');
  const out = new Map();
  const n = snap.nodes;
  for (let i = 0; i < n.length; i += f.length) {
    const type = types[n[i + iType]];
    let name = snap.strings[n[i + iName]];
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '(string)';
    if (type === 'number') name = '(number)';
    if (name.length > 60) name = name.slice(0, 60);
    const k = `${type} ${name}`;
    const e = out.get(k) ?? { n: 0, bytes: 0 };
    e.n++;
    e.bytes += n[i + iSize];
    out.set(k, e);
  }
  return out;
}
const A = kinds(a), B = kinds(b);
const rows = [];
for (const [k, e] of B) {
  const o = A.get(k) ?? { n: 0, bytes: 0 };
  rows.push([k, e.n - o.n, e.bytes - o.bytes]);
}
rows.sort((x, y) => y[2] - x[2]);
let total = 0;
for (const r of rows) total += r[2];
console.log(`grew by ${(total / 1024).toFixed(0)} KB of self size in all`);
for (const [k, dn, db] of rows.slice(0, Number(top))) console.log(`${(db / 1024).toFixed(1).padStart(9)} KB ${String(dn).padStart(7)} objects  ${k}`);
