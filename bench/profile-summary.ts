/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof DIR`): self time per function and
 * per package/file, so hot spots can be read without DevTools.
 *
 *   node dist-bench/bench/profile-summary.js DIR/file.cpuprofile [top=40] [--window FROM_US TO_US | --last FROM_S TO_S] [--requests N]
 *
 * --last FROM_S TO_S keeps the samples between FROM_S and TO_S seconds before the profile's end (a
 * bench's last phase, e.g. `--last 11 2` for (b) of `npm run bench:cluster -- --only b --cpu-prof DIR`).
 * --requests N adds the busy (non-idle) time per request: the profile's clock is wall time, so on a
 * loaded machine a function's share includes the time its thread waited to be scheduled again.
 *
 * --window keeps only the samples taken between two instants of the monotonic clock in microseconds
 * (V8's profile clock; a bench prints `process.hrtime.bigint() / 1000n` around a phase), so one phase of
 * a broker's life can be read apart from the rest. Besides self time it prints inclusive ("total")
 * time per function: the share of samples whose stack holds the function.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const file = process.argv[2];
if (file === undefined) {
  console.error('usage: profile-summary.js FILE.cpuprofile [top]');
  process.exit(2);
}
const top = Number(process.argv[3] !== undefined && !process.argv[3].startsWith('--') ? process.argv[3] : '40');
const w = process.argv.indexOf('--window');
const l = process.argv.indexOf('--last');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const windowUs =
  w !== -1
    ? [Number(process.argv[w + 1]), Number(process.argv[w + 2])]
    : l !== -1
      ? [profile.endTime - Number(process.argv[l + 1]) * 1e6, profile.endTime - Number(process.argv[l + 2]) * 1e6]
      : undefined;
// Busy time per request, when the number of requests in the window is given (--requests N).
const rq = process.argv.indexOf('--requests');
const requests = rq === -1 ? undefined : Number(process.argv[rq + 1]);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const selfUs = new Map<number, number>();
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0;
  if (windowUs !== undefined && (t < windowUs[0]! || t > windowUs[1]!)) continue;
  const id = profile.samples[i]!;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) return url.slice(nm + 'node_modules/'.length);
  const src = url.indexOf('/src/');
  if (src !== -1) return url.slice(src + 1);
  return url.replace(/^file:\/\//, '');
}
function bucket(url: string): string {
  if (url === '') return '(native/VM)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  if (src !== -1) return url.slice(src + 1);
  return url;
}

const fn = new Map<string, number>();
const pkg = new Map<string, number>();
for (const [id, us] of selfUs) {
  const cf = byId.get(id)!.callFrame;
  const key = `${cf.functionName || '(anonymous)'}  ${shortUrl(cf.url)}:${cf.lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + us);
  const b = bucket(cf.url);
  pkg.set(b, (pkg.get(b) ?? 0) + us);
}
const pct = (us: number) => ((100 * us) / total).toFixed(1).padStart(5) + '%';
let idleUs = 0;
for (const [id, us] of selfUs) if (byId.get(id)!.callFrame.functionName === '(idle)') idleUs += us;
if (requests !== undefined) console.log(`busy ${((total - idleUs) / 1e6).toFixed(2)} s: ${((total - idleUs) / 1000 / requests).toFixed(2)} ms per request`);
console.log(`profile ${file}: ${(total / 1e6).toFixed(1)} s sampled${windowUs === undefined ? '' : ` in the window ${windowUs[0]}-${windowUs[1]} us (profile ${profile.startTime}-${profile.endTime})`}`);
console.log('\nself time by package / file:');
for (const [k, us] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(us)}  ${k}`);
console.log(`\nself time by function (top ${top}):`);
for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);

// Inclusive time: each sample's time counts once for every distinct function on its stack.
const incl = new Map<string, number>();
for (const [id, us] of selfUs) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const cf = byId.get(cur)!.callFrame;
    if (cf.functionName === '(root)') continue;
    const key = `${cf.functionName || '(anonymous)'}  ${shortUrl(cf.url)}:${cf.lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    incl.set(key, (incl.get(key) ?? 0) + us);
  }
}
console.log(`\ntotal (inclusive) time by function (top ${top}):`);
for (const [k, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
