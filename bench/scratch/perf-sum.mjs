// Reads a `perf record -g` file of Brook nodes (run with --perf-basic-prof) and prints where the
// samples are: by thread kind, the functions with the most self samples, and the functions (or source
// files, with FILES=1) with the most inclusive samples, each counted once per stack. Only the main
// threads' stacks count for the inclusive list.
//   node bench/scratch/perf-sum.mjs PERF.data [top=40] [filter regexp for inclusive names]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const [file, topArg, filterArg] = process.argv.slice(2);
const top = Number(topArg ?? 40);
const filter = filterArg === undefined ? undefined : new RegExp(filterArg);
const byFile = process.env.FILES === '1';
const p = spawn('perf', ['script', '-i', file, '-F', 'comm,pid,tid,ip,sym,dso'], { stdio: ['ignore', 'pipe', 'ignore'] });
const rl = createInterface({ input: p.stdout });
let total = 0;
const threads = new Map();
const self = new Map();
const incl = new Map();
let mainTotal = 0;
const byOwner = new Map();
let cur;
const name = (sym, dso) => {
  let s = sym.replace(/^(JS|LazyCompile|Function):/, '').replace(/\s+\(.*\)$/, '');
  if (byFile) {
    const m = /\s(\S+?\.js):\d+/.exec(s) ?? /(\S+\.js)/.exec(s);
    if (m) return m[1].replace(/^.*\/(dist|node_modules)\//, '$1/');
  }
  s = s.replace(/(file:\/\/)?\/[^ ]*\/(dist|node_modules)\//, '$2/');
  if (s === '[unknown]' || s === '') return `[${dso.replace(/^.*\//, '')}]`;
  return s;
};
const flush = () => {
  if (cur === undefined) return;
  total++;
  const kind = cur.comm;
  threads.set(kind, (threads.get(kind) ?? 0) + 1);
  const frames = cur.frames;
  if (frames.length > 0) self.set(`${kind === 'main' ? '' : `(${kind}) `}${frames[0]}`, (self.get(`${kind === 'main' ? '' : `(${kind}) `}${frames[0]}`) ?? 0) + 1);
  if (kind === 'main') {
    mainTotal++;
    // The first JavaScript frame with a source file (its module), else the native frame on top.
    let owner = frames.find((f) => / (dist|node_modules)\/|node:/.test(f));
    if (owner !== undefined) owner = (/((dist|node_modules)\/(@[^/]+\/)?[^/ ]+(\/[^ :]+)?|node:[^ :]+)/.exec(owner)?.[1] ?? owner).replace(/^(node_modules\/(@[^/]+\/)?[^/]+)\/.*$/, '$1');
    else owner = `(native) ${frames[0] ?? '?'}`;
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
    for (const f of new Set(frames)) incl.set(f, (incl.get(f) ?? 0) + 1);
  }
  cur = undefined;
};
rl.on('line', (line) => {
  if (line === '') return flush();
  if (!line.startsWith('\t') && !line.startsWith(' ')) {
    flush();
    const m = /^(.*?)\s+(\d+)\/(\d+)\s*$/.exec(line.trim());
    cur = { comm: m === null ? '?' : m[2] === m[3] ? 'main' : m[1].trim(), frames: [] };
    return;
  }
  const m = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$/.exec(line);
  if (m && cur) cur.frames.push(name(m[1].replace(/\+0x[0-9a-f]+$/, ''), m[2]));
});
await new Promise((r) => rl.on('close', r));
flush();
const pct = (n, of = total) => `${((100 * n) / of).toFixed(1)}%`.padStart(6);
console.log(`${file}: ${total} samples; main threads ${pct(mainTotal)}`);
for (const [k, v] of [...threads].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  thread ${k}: ${pct(v)}`);
console.log(`\nself (of all samples):`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)} ${k.slice(0, 150)}`);
console.log(`\ninclusive (of all samples; main threads):`);
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).filter(([k]) => filter === undefined || filter.test(k)).slice(0, top)) console.log(`  ${pct(v)} ${k.slice(0, 150)}`);
console.log(`\nmain threads by the nearest JavaScript module on the stack (of all samples):`);
for (const [k, v] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)} ${k.slice(0, 150)}`);
