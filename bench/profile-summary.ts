/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof DIR`): self time per function and
 * per package/file, so hot spots can be read without DevTools.
 *
 *   node dist-bench/bench/profile-summary.js DIR/file.cpuprofile [top=40]
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
const top = Number(process.argv[3] ?? '40');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
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
console.log(`profile ${file}: ${(total / 1e6).toFixed(1)} s sampled`);
console.log('\nself time by package / file:');
for (const [k, us] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(us)}  ${k}`);
console.log(`\nself time by function (top ${top}):`);
for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
