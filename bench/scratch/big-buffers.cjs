// --require preload for the broker: counts the Buffers of MIN bytes or more (default 64 KiB) that Buffer's
// own functions allocate (alloc, allocUnsafe, allocUnsafeSlow, concat, copying forms of from), by call
// site, and writes the table to $BIG_DIR/<pid>.big-buffers.txt at SIGTERM or exit. Large buffers are the
// ones glibc may serve from its heaps rather than separate mappings (docs/benchmarks.md, "where the
// RSS of (a) batch 1000 goes"); buffers made by native code (sockets, addons) are not seen here.
//   BIG_DIR=DIR node bench/scratch/rss-by-count.mjs ... with --require added to the broker's node args,
//   or: npm run bench -- --only a --broker-node-args "-r $PWD/bench/scratch/big-buffers.cjs"
const fs = require('node:fs');
const min = Number(process.env.MIN ?? 65536);
const sites = new Map();
let total = 0;
let count = 0;
function note(buf) {
  const n = buf?.byteLength ?? 0;
  if (n < min) return buf;
  total += n;
  count++;
  const at = new Error().stack
    .split('\n')
    .slice(3, 7)
    .map((l) => l.trim().replace(/^at /, '').replace(/\(file:.*\/dist\//, '(').replace(/\(node:.*\)/, '(node)'))
    .join(' < ');
  const s = sites.get(at) ?? { n: 0, bytes: 0 };
  s.n++;
  s.bytes += n;
  sites.set(at, s);
  return buf;
}
for (const f of ['alloc', 'allocUnsafe', 'allocUnsafeSlow', 'concat', 'copyBytesFrom']) {
  const orig = Buffer[f];
  if (typeof orig !== 'function') continue;
  Buffer[f] = function (...a) {
    return note(orig.apply(this, a));
  };
}
const from = Buffer.from;
Buffer.from = function (v, ...a) {
  const b = from.call(this, v, ...a);
  // A view of an ArrayBuffer copies nothing; a string, array or another buffer is copied.
  return v instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && v instanceof SharedArrayBuffer) ? b : note(b);
};
let done = false;
const dump = () => {
  if (done) return;
  done = true;
  const rows = [...sites].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 30);
  const text = [`${count} buffers of >= ${min} B, ${(total / 1e6).toFixed(1)} MB`, ...rows.map(([at, s]) => `${(s.bytes / 1e6).toFixed(1).padStart(8)} MB ${String(s.n).padStart(6)} x  ${at}`)].join('\n');
  fs.writeFileSync(`${process.env.BIG_DIR || '/tmp'}/${process.pid}.big-buffers.txt`, text + '\n');
};
process.prependListener('SIGTERM', () => {
  dump();
});
process.on('exit', dump);
