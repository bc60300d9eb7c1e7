// Do ArrayBuffers that die young start mark-compacts? In one process: a 20 MB old generation, then for 8 s,
// every 20 ms, N Buffers of 5,272 B (a batch of 10 events) that die at once, beside the same small heap
// garbage and one large object (an old-space allocation, where V8 checks its limits) whatever N is.
// --heap-growing-percent=10 gives the tight limit a broker of (b) runs with (V8 picked factor 1.1 there;
// a fresh process gets 4.0). Count the mark-compacts (3 are the forced ones at the start):
//   for n in 100 0; do node --expose-gc --heap-growing-percent=10 --min-semi-space-size=16 --max-semi-space-size=16 \
//     --trace-gc --trace-incremental-marking bench/scratch/external-mc.mjs $n | grep -c Mark-Compact; done
// (docs/benchmarks.md, "Three nodes, 2026-11-28 morning: what starts the mark-compacts, per role").
const keep = [];
for (let i = 0; i < 250_000; i++) keep.push({ i, s: 'x' + i });
for (let k = 0; k < 3; k++) gc();
const n = Number(process.argv[2] ?? 100);
const t0 = Date.now();
let sink = 0;
while (Date.now() - t0 < 8_000) {
  for (let i = 0; i < n; i++) {
    const b = Buffer.allocUnsafe(5272);
    b[0] = i;
    sink += b[0];
  }
  for (let i = 0; i < 1600; i++) sink += [i, { i }].length;
  sink += new Array(20_000).fill(0).length;
  await new Promise((r) => setTimeout(r, 20));
}
console.log(`N=${n}: done (${keep.length + (sink > 0 ? 0 : 1)} kept)`);
