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
import { sweep } from './partition.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Raft port of a node is its HTTP port + 1000 (cluster/cluster.mjs). */
const raftOffset = 1000;

export class LocalCluster {
  readonly dir: string;
  readonly base: number;
  readonly env: Record<string, string | undefined>;
  /** The nodes whose logs a failure message shows (1..3 unless create() was told otherwise). */
  readonly nodes: readonly number[];
  #destroyed = false;

  private constructor(dir: string, base: number, env: Record<string, string>, nodes: number) {
    this.dir = dir;
    this.base = base;
    this.nodes = Array.from({ length: nodes }, (_, k) => k + 1);
    this.env = { ...process.env, BROOK_CLUSTER_DIR: dir, BROOK_CLUSTER_PORT: String(base), BROOK_CLUSTER_NO_BUILD: '1', BROOK_LOG_LEVEL: 'info', ...env };
  }

  /** A cluster directory and free ports; no node runs until up(). `env` reaches every node. */
  static async create(prefix: string, env: Record<string, string> = {}, o: { nodes?: number } = {}): Promise<LocalCluster> {
    return new LocalCluster(mkdtempSync(join(tmpdir(), prefix)), await freeClusterBase(), env, o.nodes ?? 3);
  }

  url(i: number): string {
    return `http://127.0.0.1:${this.base + i - 1}`;
  }

  raftPort(i: number): number {
    return this.base + raftOffset + i - 1;
  }

  /** Starts the nodes 1..n that are down; returns once they agree on a metadata leader (cluster/up). */
  up(n: number): string {
    return this.run('up', String(n));
  }

  /**
   * Stops every node (cluster/down; if that fails, kill -9 of every node left) and removes the
   * directory, unless KEEP is set in the environment. Returns what a test should report: why down
   * failed, or where the kept directory is.
   */
  destroy(): string | undefined {
    if (this.#destroyed) return undefined;
    this.#destroyed = true;
    let said: string | undefined;
    try {
      // Rules and cgroups of a cut that a failed or timed-out test did not heal.
      sweep();
    } catch {
      // nothing to remove
    }
    try {
      this.run('down');
    } catch (err) {
      for (const i of this.nodes) {
        try {
          this.kill9(i);
        } catch {
          // not running
        }
      }
      said = `cluster/down failed: ${(err as Error).message}`;
    }
    if (process.env['KEEP'] !== undefined) return [said, `cluster directory kept: ${this.dir}`].filter((x) => x !== undefined).join('\n');
    rmSync(this.dir, { recursive: true, force: true });
    return said;
  }

  /**
   * Destroys the cluster when test `t` ends, also when it times out. node:test does not stop a test
   * function that timed out: its `finally` blocks run only once what it awaits settles, which, for a
   * request to a node that never answers, is never; and the pending request keeps the test file's
   * process alive after its tests end, so `node --test` waits for it for ever. An after hook runs at
   * the timeout: killing the nodes makes every pending request fail, and the test function unwinds.
   */
  destroyWhenDone(t: { after(fn: () => void): void; diagnostic(message: string): void }): this {
    t.after(() => {
      const said = this.destroy();
      if (said !== undefined) t.diagnostic(said);
    });
    return this;
  }

  pid(i: number): number {
    return Number(readFileSync(join(this.dir, `node${i}`, 'pid'), 'utf8'));
  }

  /** Kills node i with SIGKILL; returns its pid. */
  kill9(i: number): number {
    const pid = this.pid(i);
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /** Kills node i with SIGKILL and waits until its process is gone (its RocksDB lock with it). */
  async killAndWait(i: number): Promise<void> {
    const pid = this.kill9(i);
    await this.until(`node ${i} (pid ${pid}) to be gone`, 10_000, async () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
  }

  /** Starts the nodes that are down with cluster/up (node i among them); returns node i's log lines from the new run only. */
  restartDown(i: number): () => string {
    const from = this.nodeLog(i).length;
    const out = this.run('up', String(this.nodes.length));
    if (!new RegExp(`node ${i}: started`).test(out)) throw new Error(`cluster/up did not start node ${i}:\n${out}`);
    return () => this.nodeLog(i).slice(from);
  }

  /** The node's RocksDB directory. */
  dataDir(i: number): string {
    return join(this.dir, `node${i}`, 'data');
  }

  /** Node i's whole log file (every run of it), '' before its first start. */
  nodeLog(i: number): string {
    const f = join(this.dir, `node${i}`, 'node.log');
    return existsSync(f) ? readFileSync(f, 'utf8') : '';
  }

  /** The nodes' own log lines (not the request lines), the last `n` of each: for failure messages. */
  logs(nodes: readonly number[] = this.nodes, n = 20): string {
    const own = (i: number) => this.nodeLog(i).split('\n').filter((l) => !l.includes('"req"') && !l.includes('"res"'));
    return nodes.map((i) => `--- node ${i} (last lines)\n${own(i).slice(-n).join('\n')}`).join('\n');
  }

  /** Runs a cluster script (cluster/<cmd>) on this cluster; a failure names its output and the nodes' logs. */
  run(cmd: string, ...args: string[]): string {
    // A test function that timed out goes on once its requests fail; it must not start nodes again.
    if (this.#destroyed && cmd !== 'down') throw new Error(`cluster/${cmd}: the cluster was destroyed (the test ended)`);
    const r = spawnSync(join(repo, 'cluster', cmd), args, { env: this.env, encoding: 'utf8', timeout: 90_000 });
    if (r.status !== 0) throw new Error(`cluster/${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}\n${this.logs()}`);
    return r.stdout;
  }

  /**
   * POSTs a test's setup request (an event type, a subscription) to node i until it is answered 201,
   * for at most `timeoutMs`. A 5xx or no answer is asked again: e.g. the 503 of a metadata write the
   * node applied but could not confirm visible on every node within a short BROOK_METADATA_TIMEOUT_MS,
   * which a loaded machine gives right after cluster/up when a node misses a heartbeat and starts a
   * pre-vote (seen in a jepsen-like run's setup). After such an answer, the status `existing` (409 for
   * an event type, 200 for a subscription) means an earlier attempt took effect. Anything else fails.
   */
  async created(i: number, path: string, body: unknown, existing = 409, timeoutMs = 30_000): Promise<{ status: number; text: string }> {
    const deadline = Date.now() + timeoutMs;
    let unknown: string | undefined;
    for (;;) {
      let status: number | undefined;
      let text = '';
      try {
        const res = await fetch(this.url(i) + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
        status = res.status;
        text = await res.text();
      } catch (err) {
        text = (err as Error).message;
      }
      if (status === 201 || (status === existing && unknown !== undefined)) return { status, text };
      if (status !== undefined && status < 500) throw new Error(`POST ${path} on node ${i}: ${status} ${text}${unknown === undefined ? '' : ` (after ${unknown})`}`);
      unknown = `${status ?? 'no answer'}: ${text}`;
      if (Date.now() > deadline) throw new Error(`POST ${path} on node ${i}: not done within ${timeoutMs} ms; last ${unknown}\n${this.logs()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Probes every `pauseMs` until the probe returns something; fails after `timeoutMs` with the nodes' logs. */
  async until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, pauseMs = 50): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${this.logs()}`);
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }

  /** Node i's GET /cluster, or undefined when it does not answer 200 within a second. */
  async view<T>(i: number): Promise<T | undefined> {
    try {
      const res = await fetch(`${this.url(i)}/cluster`, { signal: AbortSignal.timeout(1000) });
      return res.ok ? ((await res.json()) as T) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The metadata leader every node in `nodes` names. */
  agreedMetadataLeader(nodes: readonly number[], timeoutMs: number): Promise<number> {
    return this.until(`a metadata leader agreed on by nodes ${nodes.join(', ')}`, timeoutMs, async () => {
      const vs = await Promise.all(nodes.map((i) => this.view<{ metadata: { leader: number | null } }>(i)));
      const l = vs[0]?.metadata.leader;
      return l !== null && l !== undefined && nodes.includes(l) && vs.every((v) => v?.metadata.leader === l) ? l : undefined;
    });
  }
}
