/**
 * A three-node Brook cluster as local processes, started with the developers' own scripts (cluster/up,
 * cluster/down) on free ports in a temporary directory, as src/broker/metadata-group.cluster.test.ts
 * does. cluster/up is run asynchronously (not spawnSync) because the clients keep running while a
 * killed node is brought back: blocking the event loop would silently pause the workload.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeClusterBase } from '../src/testing/free-ports.js';

/** dist-jepsen/jepsen-like-tests -> the repository root. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ClusterView {
  id: number;
  role: string;
  metadata: { leader: number | null; term: number; commit_index: number; applied_index: number; last_index: number };
}


export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class LocalCluster {
  readonly nodes = [1, 2, 3];

  private constructor(
    readonly dir: string,
    readonly base: number,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  static async create(extraEnv: Record<string, string>): Promise<LocalCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'brook-jepsen-'));
    const base = await freeClusterBase();
    const env = {
      ...process.env,
      BROOK_CLUSTER_DIR: dir,
      BROOK_CLUSTER_PORT: String(base),
      // The caller built dist/ once; every restart must not rebuild it under the running nodes.
      BROOK_CLUSTER_NO_BUILD: '1',
      ...extraEnv,
    };
    return new LocalCluster(dir, base, env);
  }

  url(i: number): string {
    return `http://127.0.0.1:${this.base + i - 1}`;
  }

  httpPort(i: number): number {
    return this.base + i - 1;
  }

  raftPort(i: number): number {
    return this.base + 1000 + i - 1;
  }

  /** The pid cluster/up wrote for node i (it may have exited since). */
  pidOf(i: number): number | undefined {
    const f = join(this.dir, `node${i}`, 'pid');
    if (!existsSync(f)) return undefined;
    const pid = Number(readFileSync(f, 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  /** Runs cluster/<cmd>; resolves with its output, rejects with output and the nodes' last log lines. */
  run(cmd: 'up' | 'down', ...args: string[]): Promise<string> {
    return new Promise((res, rej) => {
      execFile(join(repoRoot, 'cluster', cmd), args, { env: this.env, encoding: 'utf8', timeout: 90_000 }, (err, stdout, stderr) => {
        if (err) rej(new Error(`cluster/${cmd} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}\n${this.logs()}`));
        else res(stdout);
      });
    });
  }

  up(): Promise<string> {
    return this.run('up', '3');
  }

  /** cluster/down; if it fails, SIGKILL whatever is left so no process outlives the run. */
  async down(): Promise<void> {
    try {
      await this.run('down');
    } catch (err) {
      console.error(`cluster/down failed, killing the nodes: ${(err as Error).message.split('\n')[0]}`);
      for (const i of this.nodes) {
        const pid = this.pidOf(i);
        if (pid === undefined) continue;
        try {
          process.kill(pid, 'SIGCONT');
          process.kill(pid, 'SIGKILL');
        } catch {
          // not running
        }
      }
    }
  }

  removeDir(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  async view(i: number, timeoutMs = 1000): Promise<ClusterView | undefined> {
    try {
      const res = await fetch(`${this.url(i)}/cluster`, { signal: AbortSignal.timeout(timeoutMs) });
      return res.ok ? ((await res.json()) as ClusterView) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The leader every node agrees on now, or undefined. */
  async agreedLeader(): Promise<number | undefined> {
    const vs = await Promise.all(this.nodes.map((i) => this.view(i)));
    const l = vs[0]?.metadata.leader;
    return l !== null && l !== undefined && vs.every((v) => v?.metadata.leader === l) ? l : undefined;
  }

  /** Node ids with their own log lines (request lines drown the rest), for failure messages. */
  logs(lines = 15): string {
    return this.nodes
      .map((i) => {
        const f = join(this.dir, `node${i}`, 'node.log');
        const own = existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter((l) => !l.includes('"req"') && !l.includes('"res"')) : [];
        return `--- node ${i} (last lines)\n${own.slice(-lines).join('\n')}`;
      })
      .join('\n');
  }
}

export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * POSTs a setup request (an event type, a subscription) until it is answered 201, with a deadline. An
 * answer of unknown outcome (5xx, or none) is asked again: e.g. the 503 of a metadata write this node
 * applied but could not confirm visible on every node in time, which a node answers while the group
 * elects (seen under load right after cluster/up, before any fault). After such an answer, the status
 * `existing` (409 for an event type, 200 for a subscription) means an earlier attempt took effect, and
 * counts as done. Any other 4xx fails at once.
 */
export async function createUntilDone(url: string, body: unknown, what: string, existing: number, timeoutMs = 60_000): Promise<{ status: number; text: string; attempts: number }> {
  const deadline = Date.now() + timeoutMs;
  let unknown: string | undefined;
  for (let attempts = 1; ; attempts++) {
    let status: number | undefined;
    let text = '';
    try {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
      status = r.status;
      text = await r.text();
    } catch (err) {
      text = (err as Error).message;
    }
    if (status === 201 || (status === existing && unknown !== undefined)) {
      if (unknown !== undefined) console.log(`${what}: done at attempt ${attempts} (${status}) after ${unknown.slice(0, 200)}`);
      return { status, text, attempts };
    }
    if (status !== undefined && status < 500) throw new Error(`${what}: ${status} ${text}${unknown === undefined ? '' : ` (after ${unknown})`}`);
    unknown = `${status ?? 'no answer'}: ${text}`;
    if (Date.now() > deadline) throw new Error(`${what}: not done within ${timeoutMs} ms (${attempts} attempts); last ${unknown}`);
    await sleep(250);
  }
}

/**
 * Ends the run if it is still going `limitMs` after the start: a run is bounded (--seconds plus its
 * checks), and one that waits on something that never comes must fail, not hold its caller (CI) for
 * ever. Kills the nodes (SIGCONT first: a stopped node cannot die of SIGKILL until continued on some
 * kernels), runs `cleanup` (the partitions' rules) and exits with status 3. Unreferenced: it does not
 * keep a finished run alive.
 */
export function watchdog(cluster: LocalCluster, limitMs: number, cleanup: () => void): void {
  setTimeout(() => {
    console.error(`RUN HUNG: still running ${Math.round(limitMs / 1000)} s after the start; killing the nodes (logs in ${cluster.dir})`);
    for (const i of cluster.nodes) {
      const pid = cluster.pidOf(i);
      if (pid === undefined) continue;
      for (const sig of ['SIGCONT', 'SIGKILL'] as const) {
        try {
          process.kill(pid, sig);
        } catch {
          // gone
        }
      }
    }
    try {
      cleanup();
    } catch {
      // best effort
    }
    process.exit(3);
  }, limitMs).unref();
}
