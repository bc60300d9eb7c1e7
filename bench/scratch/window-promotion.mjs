// What the de-duplication window of PartitionState (build at ROOT) promotes to V8's old generation:
// 8 partitions, 1.6 M batches with request ids as the publish path makes them (a uuid, then uuid.1 ..
// uuid.7, decoded from the entry), beside short-lived garbage as requests make. Sum the GC trace:
//   node --trace-gc-nvp bench/scratch/window-promotion.mjs ROOT 2>&1 | awk '/pause=/{ if (match($0,/ promoted=[0-9]+/)) p+=substr($0,RSTART+10,RLENGTH-10); if ($0 !~ /gc=s /) m++ } END { print p/1e6 " MB promoted, " m " mark-compacts" }'

const root = process.argv[2];
const { PartitionState } = await import(root + '/dist/replication/partition-state.js');
const { randomUUID } = await import('node:crypto');
const states = Array.from({ length: 8 }, () => new PartitionState());
let idx = Array(8).fill(0);
const t0 = performance.now();
for (let r = 0; r < 200_000; r++) {
  const base = randomUUID();
  for (let i = 0; i < 8; i++) {
    const garbage = Array.from({ length: 20 }, (_, k) => ({ k, s: 'x' + k })); // request garbage
    const id = Buffer.from(i === 0 ? base : `${base}.${i}`).toString('utf8'); // decoded from the entry
    states[i].applyBatches(++idx[i], [{ requestId: id, count: 1 + (garbage.length & 1) }]);
  }
}
console.error('ms', (performance.now() - t0).toFixed(0));
