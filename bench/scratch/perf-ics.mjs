// Which JavaScript functions the V8 slow paths run for, in a `perf record -g` file of Brook nodes run
// with --perf-basic-prof (cluster-cpu.mjs PERF=DIR): for each sample whose innermost non-kernel frame is
// one of the inline-cache / lazy-compile / generic-call builtins (Builtins_LoadIC_Megamorphic,
// Builtins_KeyedLoadIC_Megamorphic, Builtins_LoadIC, GetProperty, CompileLazy, ...), the nearest
// JavaScript frame above it, counted per builtin. Also the tier of the innermost JavaScript frame of
// every sample (perf map prefixes: * TurboFan, + Maglev, ^ Sparkplug baseline, ~ interpreter) and
// the hottest functions still running unoptimized (^ or ~).
//   node bench/scratch/perf-ics.mjs PERF.data [top=15]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const [file, topArg] = process.argv.slice(2);
const top = Number(topArg ?? 15);
const slow = /^(Builtins_(LoadIC\w*|KeyedLoadIC\w*|StoreIC\w*|KeyedStoreIC\w*|DefineKeyedOwnIC\w*|DefineNamedOwnIC\w*|CallFunction\w*|Call_ReceiverIs\w*|GetProperty\w*|SetProperty\w*|ObjectPrototypeHasOwnProperty|CompileLazy\w*|BaselineOutOfLinePrologue\w*|InterpreterEntryTrampoline|CallIC\w*|HasIC\w*|KeyedHasIC\w*)|v8::internal::StringTable::LookupKey.*|v8::internal::Runtime_\w+)/;
const p = spawn('perf', ['script', '-i', file, '-F', 'comm,tid,ip,sym'], { stdio: ['ignore', 'pipe', 'ignore'] });
const rl = createInterface({ input: p.stdout });
let total = 0;
let frames = [];
const byBuiltin = new Map(); // builtin -> Map(js caller -> n)
const tiers = new Map();
const unopt = new Map();
const bump = (m, k, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
const clean = (s) => s.replace(/(file:\/\/)?\/[^ ]*\/(dist|node_modules)\//, '$2/');
function flush() {
  if (frames.length === 0) return;
  total++;
  const user = frames.filter((f) => !/^(0x)?ffffffff/.test(f.ip));
  const js = user.find((f) => f.sym.startsWith('JS:'));
  if (js !== undefined) {
    const tier = js.sym[3];
    bump(tiers, tier);
    if (tier === '^' || tier === '~') bump(unopt, clean(js.sym.slice(3)));
  } else bump(tiers, 'no JS frame');
  const leaf = user[0];
  if (leaf !== undefined) {
    const m = slow.exec(leaf.sym);
    if (m) {
      const b = m[1].replace(/^v8::internal::(StringTable::LookupKey).*/, '$1');
      if (!byBuiltin.has(b)) byBuiltin.set(b, new Map());
      bump(byBuiltin.get(b), js === undefined ? '(no JS frame)' : clean(js.sym.slice(3)));
    }
  }
  frames = [];
}
rl.on('line', (line) => {
  if (line.length === 0) return flush();
  const m = /^\s+([0-9a-f]+)\s+(.*)$/.exec(line);
  if (m) frames.push({ ip: m[1].length >= 16 ? m[1] : m[1], sym: m[2] });
  else flush();
});
await new Promise((r) => rl.on('close', r));
flush();
const pct = (n) => `${((100 * n) / total).toFixed(2)} %`;
console.log(`${total} samples`);
console.log('innermost JavaScript frame tier (* TurboFan, + Maglev, ^ baseline, ~ interpreter):');
for (const [k, v] of [...tiers].sort((a, b) => b[1] - a[1])) console.log(`  ${pct(v).padStart(8)}  ${k}`);
console.log('hottest functions running unoptimized (innermost JS frame, ^ or ~):');
for (const [k, v] of [...unopt].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v).padStart(8)}  ${k}`);
const list = [...byBuiltin].map(([b, m]) => [b, m, [...m.values()].reduce((s, x) => s + x, 0)]).sort((a, b) => b[2] - a[2]);
for (const [b, m, n] of list.slice(0, 14)) {
  console.log(`${b}: ${pct(n)} self; callers:`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v).padStart(8)}  ${k}`);
}
