/**
 * The broker under test as a separate child process (`node dist/main.js`, built by `npm run build`;
 * run.ts rebuilds it incrementally first so it is never stale), on a temporary data directory, with
 * helpers to read its resident memory and CPU time from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
/** dist-bench/bench/lib -> the repository root. */
export const repoRoot = join(here, '..', '..', '..');
/**
 * dist/main.js, not dist-bench/src/main.js: the broker finds run-time files (proto/raft.proto) relative
 * to its own location, which only the main build's layout (dist/ two levels below the root) satisfies.
 */
export const brokerEntry = join(repoRoot, 'dist', 'main.js');

/** Incremental `tsc -p tsconfig.json` (what `npm run build` does) so dist/ matches src/. */
export function buildBroker(): void {
  execFileSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(repoRoot, 'tsconfig.json')], { stdio: 'inherit' });
}

export interface BrokerProcess {
  url: string;
  port: number;
  pid: number;
  dataDir: string;
  child: ChildProcess;
  stop(): Promise<number | null>;
}

export async function freePort(): Promise<number> {
  // Below 32768 so it never collides with ephemeral client ports (measurements.md).
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const ok = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (ok) return port;
  }
  throw new Error('no free port found');
}

/**
 * The entry of another build of the broker: `<root>/dist/main.js` of a checkout built with `npm ci &&
 * npm run build` (e.g. an older commit unpacked with `git archive` into a temp dir), for A/B runs.
 */
export function brokerEntryOf(root: string): string {
  return join(root, 'dist', 'main.js');
}

export async function startBroker(opts: { nodeArgs?: string[]; env?: Record<string, string>; logFile?: string; entry?: string } = {}): Promise<BrokerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-bench-data-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.entry ?? brokerEntry], {
    env: { ...process.env, BROOK_PORT: String(port), BROOK_HOST: '127.0.0.1', BROOK_DATA_DIR: dataDir, BROOK_LOG_LEVEL: 'warn', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const logStream = opts.logFile === undefined ? undefined : createWriteStream(opts.logFile);
  const keep = (d: Buffer) => {
    logStream?.write(d);
    output += d.toString();
    if (output.length > 20_000) output = output.slice(-10_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let dead = false;
  void exited.then(() => (dead = true));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (dead) throw new Error(`broker exited during start:\n${output}`);
    try {
      const res = await fetch(`${url}/event-types`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`broker did not answer within 20 s:\n${output}`);
    }
    await sleep(100);
  }
  return {
    url,
    port,
    pid: child.pid!,
    dataDir,
    child,
    async stop() {
      if (!dead) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      logStream?.end();
      if (output.trim() !== '') process.stderr.write(`[broker output]\n${output.slice(-4000)}\n`);
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** VmRSS of a process in bytes. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Number(m[1]) * 1024;
}

const ticksPerSecond = 100; // USER_HZ on Linux

/** user+system CPU seconds consumed by a process so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** Samples a process's RSS periodically. */
export class RssSampler {
  readonly samples: { tMs: number; rss: number }[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #t0 = performance.now();
  constructor(readonly pid: number, readonly intervalMs = 200) {}
  start(): this {
    this.sample();
    this.#timer = setInterval(() => this.sample(), this.intervalMs);
    return this;
  }
  sample(): number {
    const rss = rssBytes(this.pid);
    this.samples.push({ tMs: performance.now() - this.#t0, rss });
    return rss;
  }
  stop(): { min: number; max: number; first: number; last: number; count: number } {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.sample();
    const v = this.samples.map((s) => s.rss);
    return { min: Math.min(...v), max: Math.max(...v), first: v[0]!, last: v[v.length - 1]!, count: v.length };
  }
}

/** CPU used by the broker and by this (load generator) process over a phase, as cores busy. */
export class CpuMeter {
  readonly #t0 = performance.now();
  readonly #broker0: number;
  readonly #self0 = process.cpuUsage();
  constructor(readonly pid: number) {
    this.#broker0 = cpuSeconds(pid);
  }
  read(): { brokerCores: number; benchCores: number } {
    const wall = (performance.now() - this.#t0) / 1000;
    const self = process.cpuUsage(this.#self0);
    return {
      brokerCores: (cpuSeconds(this.pid) - this.#broker0) / wall,
      benchCores: (self.user + self.system) / 1e6 / wall,
    };
  }
}
