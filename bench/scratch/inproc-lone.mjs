// In process, no HTTP: the CPU of a publish alone in its turn on one node (10 events of 526 B hashed
// over 8 one-member partition groups, one request at a time, each awaited) through PartitionReplicas on
// RocksDB in a directory on tmpfs (/dev/shm: the fdatasyncs cost next to nothing), for builds side by
// side (rounds alternate their order). CPU of the whole process (the driver's share is the same for
// every build). What it
// measures is the node host's and the partition groups' path per lone publish (proposal, turn, write
// filling, apply, answer), the part a moderate publish rate does not share between requests.
//   node bench/scratch/inproc-lone.mjs [ROUNDS] [REQUESTS] LABEL=ROOT ...
import { rmSync } from 'node:fs';
import { lonePublisher } from './lone-publisher.mjs';

const args = process.argv.slice(2);
const builds = args.filter((a) => a.includes('=')).map((a) => a.split('='));
const [rounds = '3', requests = '4000'] = args.filter((a) => !a.includes('='));

async function once(label, root) {
  const { n, kv, dir, one } = await lonePublisher(root, 'inproc-lone-');
  for (let i = 0; i < 500; i++) await one();
  const s0 = { ...n.host.stats };
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < Number(requests); i++) await one();
  const c = process.cpuUsage(c0);
  const ms = performance.now() - t0;
  const per = (c.user + c.system) / 1000 / Number(requests);
  const turns = (n.host.stats.turns - s0.turns) / Number(requests);
  await n.close();
  await kv.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(`${label}: ${per.toFixed(3)} ms CPU per lone publish (${(Number(requests) / (ms / 1000)).toFixed(0)}/s), ${turns.toFixed(2)} host turns per publish`);
  return per;
}

const got = new Map();
for (let r = 0; r < Number(rounds); r++) {
  for (const [label, root] of r % 2 === 0 ? builds : [...builds].reverse()) (got.get(label) ?? got.set(label, []).get(label)).push(await once(label, root));
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = med(got.get(builds[0][0]));
console.log(`median CPU per lone publish: ${builds.map(([l]) => `${l} ${med(got.get(l)).toFixed(3)} ms (${(med(got.get(l)) / base).toFixed(2)})`).join(', ')}`);
