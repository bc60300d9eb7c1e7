// Who holds the ArrayBuffer backing stores of a heap snapshot: for every backing store of at least MIN
// bytes, the chain of retainers (first strong one each step, DEPTH steps up), bytes summed per chain.
//   node bench/scratch/snapshot-buffers.mjs FILE.heapsnapshot [depth=7] [min=1024]
import { readFileSync } from 'node:fs';
const [file, depthArg = '7', minArg = '1024'] = process.argv.slice(2);
const snap = JSON.parse(readFileSync(file, 'utf8'));
const m = snap.snapshot.meta;
const nf = m.node_fields.length;
const ef = m.edge_fields.length;
const nType = m.node_fields.indexOf('type');
const nName = m.node_fields.indexOf('name');
const nSelf = m.node_fields.indexOf('self_size');
const nEdges = m.node_fields.indexOf('edge_count');
const eType = m.edge_fields.indexOf('type');
const eName = m.edge_fields.indexOf('name_or_index');
const eTo = m.edge_fields.indexOf('to_node');
const nodeTypes = m.node_types[0];
const edgeTypes = m.edge_types[0];
const { nodes, edges, strings } = snap;
const count = nodes.length / nf;
// Reverse edges: for each node, its first strong retainer (node index, edge name).
const retainer = new Int32Array(count).fill(-1);
const retainerEdge = new Array(count);
let e = 0;
for (let i = 0; i < count; i++) {
  const ec = nodes[i * nf + nEdges];
  for (let k = 0; k < ec; k++, e += ef) {
    const t = edgeTypes[edges[e + eType]];
    if (t === 'weak' || t === 'shortcut') continue;
    const to = edges[e + eTo] / nf;
    if (retainer[to] !== -1) continue;
    retainer[to] = i;
    retainerEdge[to] = t === 'element' || t === 'hidden' ? "[n]" : strings[edges[e + eName]];
  }
}
const label = (i) => `${nodeTypes[nodes[i * nf + nType]]}:${String(strings[nodes[i * nf + nName]]).slice(0, 40)}`;
const sums = new Map();
let total = 0;
for (let i = 0; i < count; i++) {
  const name = strings[nodes[i * nf + nName]];
  const size = nodes[i * nf + nSelf];
  if (nodeTypes[nodes[i * nf + nType]] !== 'native' || !/ArrayBufferData|backing_store/i.test(name) || size < Number(minArg)) continue;
  total += size;
  const chain = [];
  for (let j = i, d = 0; d < Number(depthArg) && retainer[j] !== -1; d++) {
    chain.push(`${retainerEdge[j]}<-${label(retainer[j])}`);
    j = retainer[j];
  }
  const k = chain.join(' | ');
  const s = sums.get(k) ?? { bytes: 0, n: 0 };
  s.bytes += size;
  s.n++;
  sums.set(k, s);
}
console.log(`backing stores >= ${minArg} B: ${(total / 1048576).toFixed(1)} MB`);
for (const [k, s] of [...sums].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 25)) console.log(`${(s.bytes / 1048576).toFixed(1).padStart(7)} MB ${String(s.n).padStart(6)}x  ${k}`);
