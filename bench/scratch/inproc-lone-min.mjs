// In process, no HTTP, no disk: the CPU of a publish alone in its turn on one node (10 events of 526 B
// hashed over 8 one-member partition groups, one request at a time, each awaited) through
// PartitionReplicas on RocksDB in a directory on tmpfs (/dev/shm: fdatasyncs cost next to nothing; the
// in-memory KV of the tests is a sorted array, slower per write the more it holds), for builds side by side. Short rounds, builds alternating, and
// the MINIMUM per build is the figure: on a shared machine a round is only ever slowed down by others,
// so the fastest of many short rounds is the closest to the build's own cost (the median is printed
// too). What it measures is the JavaScript of the partition path per lone publish (proposal, turn,
// write filling, apply, answer), the part (b)'s moderate rate does not share between requests.
//   node bench/scratch/inproc-lone-min.mjs [ROUNDS=15] [REQUESTS=400] LABEL=ROOT ...
import { rmSync } from 'node:fs';
import { lonePublisher } from './lone-publisher.mjs';

const args = process.argv.slice(2);
const builds = args.filter((a) => a.includes('=')).map((a) => a.split('='));
const [rounds = '15', requests = '400'] = args.filter((a) => !a.includes('='));

const nodes = new Map();
for (const [label, root] of builds) {
  const { n, kv, dir, one } = await lonePublisher(root, 'inproc-lone-min-');
  for (let i = 0; i < 3000; i++) await one(); // warm: compiled, tails at their steady size
  nodes.set(label, { n, kv, dir, one });
}
const got = new Map(builds.map(([l]) => [l, []]));
for (let r = 0; r < Number(rounds); r++) {
  for (const [label] of r % 2 === 0 ? builds : [...builds].reverse()) {
    const { one } = nodes.get(label);
    const c0 = process.cpuUsage();
    for (let i = 0; i < Number(requests); i++) await one();
    const c = process.cpuUsage(c0);
    got.get(label).push((c.user + c.system) / Number(requests));
  }
}
for (const { n, kv, dir } of nodes.values()) {
  await n.close();
  await kv.close();
  rmSync(dir, { recursive: true, force: true });
}
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const base = sorted(got.get(builds[0][0]));
for (const [label] of builds) {
  const xs = sorted(got.get(label));
  console.log(`${label}: min ${xs[0].toFixed(1)} µs, median ${xs[xs.length >> 1].toFixed(1)} µs CPU per lone publish (min ${(xs[0] / base[0]).toFixed(3)}, median ${(xs[xs.length >> 1] / base[base.length >> 1]).toFixed(3)} of ${builds[0][0]})`);
}
