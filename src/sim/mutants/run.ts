/**
 * The mutant run: applies each known-bad change of catalog.ts to a temporary copy of the tree, builds
 * it (incrementally, from a copy of dist/), runs the chosen simulations for a number of seeds against
 * it, and reports which seeds catch each mutant. A mutant no seed catches fails the run: the checks or
 * the workload are too weak to see that bug.
 *
 *   npm run test:mutants                              every mutant, default seed counts
 *   npm run test:mutants -- --raft 300 --host 60      seeds per simulation
 *   npm run test:mutants -- --only dedup-off,offsets-at-propose
 *   npm run test:mutants -- --from 1000               first seed
 *   npm run test:mutants -- --step 2 --from 2         every other seed (e.g. only the seeds that
 *                                                     run metadata read leases: the even ones)
 *   npm run test:mutants -- --consequences            also run each with the rule checks off, to see
 *                                                     how often lost or diverging data alone shows it
 *
 * A mutant may also name test files (catalog.ts, `tests`) that script its hazard: each is run once
 * against the patched tree (`node --test`), reported as its own row ("test <file>": caught when it
 * fails), and counts as a catcher like a seed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mutants, type Mutant, type SimName } from './catalog.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** Wall-clock limit of one simulation run over all its seeds (a mutant may make a run hang). */
const runTimeoutMs = 20 * 60 * 1000;

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log('usage: node dist/sim/mutants/run.js [--only a,b] [--raft N] [--host N] [--from SEED] [--step N] [--consequences]\n(see the head of src/sim/mutants/run.ts)');
  process.exit(0);
}

const seeds: Record<SimName, number> = { raft: Number(option('raft') ?? '200'), host: Number(option('host') ?? '40') };
const from = Number(option('from') ?? '1');
const step = Number(option('step') ?? '1');
const only = option('only')?.split(',');
const consequences = process.argv.includes('--consequences');

interface SeedLine {
  seed: number;
  ok: boolean;
  error?: string;
}

interface Row {
  mutant: string;
  sim: string;
  run: number;
  caught: number[];
  kinds: Map<string, number>;
  note: string;
}

/** A patched copy of the tree with node_modules linked and dist/ copied for an incremental build. */
function prepare(m: Mutant): string {
  const dir = mkdtempSync(join(tmpdir(), `brook-mutant-${m.name}-`));
  for (const f of ['src', 'dist', 'proto', 'tsconfig.json', 'package.json']) cpSync(join(root, f), join(dir, f), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const file = join(dir, m.file);
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(m.find);
  if (at < 0 || text.indexOf(m.find, at + 1) >= 0) throw new Error(`mutant ${m.name}: the text to replace is not in ${m.file} exactly once`);
  writeFileSync(file, text.slice(0, at) + m.replace + text.slice(at + m.find.length));
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: dir, stdio: 'inherit' });
  return dir;
}

/** Runs a child process to its end (or kills it after runTimeoutMs): what it wrote, its exit code, a note if it was stopped. */
function runChild(args: string[], dir: string, env: NodeJS.ProcessEnv = process.env): Promise<{ out: string; err: string; code: number | null; note: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let note = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      note = `stopped after ${runTimeoutMs / 60000} min`;
      child.kill('SIGKILL');
    }, runTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ out, err, code, note });
    });
  });
}

async function runSeeds(dir: string, sim: SimName, count: number, rules: boolean, retention: boolean, subscriptions: boolean): Promise<{ lines: SeedLine[]; note: string }> {
  const args = [join(dir, 'dist', 'sim', 'mutants', 'seeds-cli.js'), sim, String(from), String(count), ...(rules ? [] : ['consequences']), `step=${step}`];
  const env = { ...process.env, ...(retention ? { SIM_RETENTION: '1' } : {}), ...(subscriptions ? { SIM_SUBSCRIPTIONS: '1' } : {}) };
  const { out, err, code, note } = await runChild(args, dir, env);
  const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as SeedLine);
  return { lines, note: code !== 0 && note === '' ? `exit ${code}: ${err.split('\n').slice(-3).join(' ').slice(0, 200)}` : note };
}

/** Runs one test file of the patched tree; caught when it fails (or outlives the run's limit). */
async function runTest(dir: string, file: string): Promise<{ failed: boolean; note: string; kind: string }> {
  const js = join(dir, file.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js'));
  const r = await runChild(['--test', js], dir);
  const out = r.out + r.err;
  // The first failed assertion's message names the check that fired.
  const kind = /^\s*(?:error: |AssertionError \[ERR_ASSERTION\]: )'?([^'\n]{1,60})/m.exec(out)?.[1] ?? (r.code === 0 ? '' : `exit ${r.code}`);
  return { failed: r.code !== 0, note: r.note, kind };
}

const rows: Row[] = [];
const started = Date.now();
for (const m of mutants.filter((x) => only === undefined || only.includes(x.name))) {
  console.log(`\n== ${m.name}: ${m.why}`);
  const dir = prepare(m);
  try {
    for (const [sim, rules] of m.sims.flatMap((x) => (consequences ? [[x, true], [x, false]] : [[x, true]]) as [SimName, boolean][])) {
      const t = Date.now();
      const { lines, note } = await runSeeds(dir, sim, seeds[sim], rules, m.retention === true, m.subscriptions === true);
      const label = rules ? sim : `${sim} (consequences only)`;
      const caught = lines.filter((l) => !l.ok);
      const kinds = new Map<string, number>();
      for (const l of caught) {
        const kind = (l.error ?? '').replace(/^InvariantViolation: |^InvariantError: /, '').split(':')[0]!.slice(0, 40);
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      rows.push({ mutant: m.name, sim: label, run: lines.length, caught: caught.map((l) => l.seed), kinds, note });
      console.log(`   ${label}: ${caught.length}/${lines.length} seeds caught it in ${((Date.now() - t) / 1000).toFixed(0)} s${note ? ` (${note})` : ''}; first: ${caught.slice(0, 8).map((l) => l.seed).join(',')}; ${[...kinds].map(([k, n]) => `${k} x${n}`).join(', ')}`);
    }
    for (const file of m.tests ?? []) {
      const t = Date.now();
      const { failed, note, kind } = await runTest(dir, file);
      rows.push({ mutant: m.name, sim: `test ${file}`, run: 1, caught: failed ? [1] : [], kinds: new Map(failed ? [[kind, 1]] : []), note });
      console.log(`   test ${file}: ${failed ? 'fails (caught it)' : 'passes (missed it)'} in ${((Date.now() - t) / 1000).toFixed(0)} s${note ? ` (${note})` : ''}${failed ? `; ${kind}` : ''}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`\n| mutant | simulation or test | seeds run | seeds that caught it | catch rate | checks that fired |`);
console.log(`| --- | --- | --- | --- | --- | --- |`);
for (const r of rows) {
  const list = r.caught.length <= 12 ? r.caught.join(', ') : `${r.caught.slice(0, 12).join(', ')}, … (${r.caught.length})`;
  const rate = r.run === 0 ? '-' : `${((100 * r.caught.length) / r.run).toFixed(1)} %`;
  console.log(`| ${r.mutant} | ${r.sim} | ${r.run} | ${list || 'none'} | ${rate} | ${[...r.kinds].map(([k, n]) => `${k} (${n})`).join(', ')} |`);
}
console.log(`\nseeds from ${from}${step === 1 ? '' : `, every ${step}`}; ${((Date.now() - started) / 1000).toFixed(0)} s in all`);
const missed = [...new Set(rows.map((r) => r.mutant))].filter((name) => rows.filter((r) => r.mutant === name && !r.sim.includes('consequences')).every((r) => r.caught.length === 0));
if (missed.length > 0) {
  console.log(`NOT CAUGHT: ${missed.join(', ')}`);
  process.exitCode = 1;
}
