/**
 * Runs a long list of simulation seeds in child processes, side by side: each child runs a share of
 * at most `perChild` seeds and exits, so whatever a run leaves behind in its process (the host
 * simulation's process grew by about 3 MB per seed) is bounded by the share, not by the list; and
 * `jobs` children at a time use the machine's cores.
 *
 *   SIM_JOBS=<n>             children at a time (default: the machine's cores)
 *   SIM_SEEDS_PER_PROCESS=<n>  seeds per child at most (default 50)
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { HostSimStats } from './host-context.js';

/** What a child prints for each seed it ran (on one line, after the prefix). */
export interface SeedLine {
  readonly seed: number;
  readonly ok: boolean;
  readonly error?: string;
  readonly stats?: HostSimStats;
  /** Wall-clock ms the seed took in its child. */
  readonly ms: number;
  /** The child's resident set size after the seed (MB). */
  readonly rssMB?: number;
}

export const seedLinePrefix = 'SEED-RESULT ';

/**
 * The shares of `seeds`, in order: at most `perChild` each, and small enough that `jobs` children
 * all get one when the list is short (40 seeds, 2 jobs: two shares of 20).
 */
export function shareSeeds(seeds: readonly number[], jobs: number, perChild: number): number[][] {
  const size = Math.max(1, Math.min(perChild, Math.ceil(seeds.length / Math.max(1, jobs))));
  const out: number[][] = [];
  for (let i = 0; i < seeds.length; i += size) out.push(seeds.slice(i, i + size));
  return out;
}

export function simJobsFromEnv(): number {
  const v = process.env['SIM_JOBS'];
  const n = v === undefined || v === '' ? availableParallelism() : Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`bad SIM_JOBS=${v}`);
  return n;
}

export function seedsPerProcessFromEnv(): number {
  const v = process.env['SIM_SEEDS_PER_PROCESS'];
  const n = v === undefined || v === '' ? 50 : Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`bad SIM_SEEDS_PER_PROCESS=${v}`);
  return n;
}

/**
 * Runs `script` (a seed CLI: `node <script> <seed>,<seed>...`, one SeedLine per seed) over shares of
 * `seeds`, `jobs` children at a time; `onShare` hears of each share done. A seed whose line never
 * came (its child died: out of memory, killed) is a failure that says so.
 */
export async function runSeedShards(script: string, seeds: readonly number[], jobs: number, perChild: number, onShare?: (lines: readonly SeedLine[], ms: number) => void): Promise<SeedLine[]> {
  const shares = shareSeeds(seeds, jobs, perChild);
  const lines: SeedLine[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < shares.length) {
      const share = shares[next++]!;
      const started = performance.now();
      const { out, err, code } = await runChild(script, share);
      const got = out.split('\n').filter((l) => l.startsWith(seedLinePrefix)).map((l) => JSON.parse(l.slice(seedLinePrefix.length)) as SeedLine);
      const seen = new Set(got.map((l) => l.seed));
      const why = `its child process ended (exit ${code}) before it: ${err.trim().split('\n').slice(-3).join(' ').slice(0, 300)}`;
      const done = [...got, ...share.filter((s) => !seen.has(s)).map((seed) => ({ seed, ok: false, error: `ChildProcess: ${why}`, ms: 0 }))];
      lines.push(...done);
      onShare?.(done, performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, shares.length) }, worker));
  return lines.sort((a, b) => seeds.indexOf(a.seed) - seeds.indexOf(b.seed));
}

function runChild(script: string, seeds: readonly number[]): Promise<{ out: string; err: string; code: number | null }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script, seeds.join(',')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ out, err, code }));
  });
}
