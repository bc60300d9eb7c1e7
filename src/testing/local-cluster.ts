/**
 * TEST-ONLY: a cluster of real node processes on loopback, started and stopped with the developers'
 * scripts (cluster/up, cluster/down) in a temporary directory on free ports, as the *.cluster.test.ts
 * files do.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeClusterBase } from './free-ports.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export class LocalCluster {
  readonly dir: string;
  readonly base: number;
  readonly env: Record<string, string | undefined>;

  private constructor(dir: string, base: number, env: Record<string, string>) {
    this.dir = dir;
    this.base = base;
    this.env = { ...process.env, BROOK_CLUSTER_DIR: dir, BROOK_CLUSTER_PORT: String(base), BROOK_CLUSTER_NO_BUILD: '1', BROOK_LOG_LEVEL: 'info', ...env };
  }

  /** A cluster directory and free ports; no node runs until up(). `env` reaches every node. */
  static async create(prefix: string, env: Record<string, string> = {}): Promise<LocalCluster> {
    return new LocalCluster(mkdtempSync(join(tmpdir(), prefix)), await freeClusterBase(), env);
  }

  url(i: number): string {
    return `http://127.0.0.1:${this.base + i - 1}`;
  }

  /** Starts the nodes 1..n that are down; returns once they agree on a metadata leader (cluster/up). */
  up(n: number): string {
    return this.cmd('up', String(n));
  }

  /** Stops every node and removes the directory. */
  destroy(): void {
    try {
      this.cmd('down');
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  kill9(i: number): void {
    process.kill(Number(readFileSync(join(this.dir, `node${i}`, 'pid'), 'utf8')), 'SIGKILL');
  }

  /** The nodes' own log lines (not the request lines), the last `n` of each: for failure messages. */
  logs(nodes: readonly number[], n = 20): string {
    const own = (i: number) => {
      const f = join(this.dir, `node${i}`, 'node.log');
      return (existsSync(f) ? readFileSync(f, 'utf8') : '').split('\n').filter((l) => !l.includes('"req"') && !l.includes('"res"'));
    };
    return nodes.map((i) => `--- node ${i} (last lines)\n${own(i).slice(-n).join('\n')}`).join('\n');
  }

  private cmd(cmd: string, ...args: string[]): string {
    const r = spawnSync(join(repo, 'cluster', cmd), args, { env: this.env, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`cluster/${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  }
}
