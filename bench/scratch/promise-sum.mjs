// Sums the files bench/scratch/promise-count.cjs wrote in DIR per build (by entry script): promises
// created per publish request received, over all the nodes of that build's clusters.
//   node bench/scratch/promise-sum.mjs DIR
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const byEntry = new Map();
for (const f of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const r = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  const s = byEntry.get(r.entry) ?? { nodes: 0, promises: 0, posts: 0 };
  s.nodes++;
  s.promises += r.promises;
  s.posts += r.posts;
  byEntry.set(r.entry, s);
}
for (const [entry, s] of byEntry) console.log(`${entry}: ${s.nodes} nodes, ${s.posts} publishes, ${(s.promises / s.posts).toFixed(1)} promises per publish`);
