// The lone publisher of inproc-lone.mjs and inproc-lone-min.mjs: one node's PartitionReplicas of a build
// on RocksDB in a directory on tmpfs (/dev/shm), and `one()`, a publish of 10 events of 526 B hashed
// over 8 one-member partition groups (a fixed pseudo-random sequence, the same for every build).
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';

const ev = Buffer.from(`{"metadata":{"eid":"x"},"order_number":"${'x'.repeat(480)}"}`);

export async function lonePublisher(root, dirPrefix) {
  const { openRocksKv } = await import(`${root}/dist/log/index.js`);
  const { oneNodeReplicas } = await import(`${root}/dist/testing/one-node-replicas.js`);
  const dir = mkdtempSync(join('/dev/shm', dirPrefix));
  const kv = await openRocksKv(dir);
  const n = oneNodeReplicas(kv);
  let seed = 1;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const one = async () => {
    const by = new Map();
    for (let i = 0; i < 10; i++) {
      const p = Math.floor(rnd() * 8);
      (by.get(p) ?? by.set(p, []).get(p)).push(ev);
    }
    const res = await n.replicas.append([...by].map(([partition, events]) => ({ topic: 1, partition, events })));
    if (!res.every((r) => r.ok)) throw new Error('append failed');
  };
  return { n, kv, dir, one };
}
