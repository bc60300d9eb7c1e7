/**
 * Three-node clusters on loopback for the metadata-commit benchmark (bench/metadata.ts): Brook nodes
 * started exactly as cluster/cluster.mjs starts them (node dist/main.js with BROOK_NODE_ID, BROOK_PORT,
 * BROOK_RAFT_PORT, BROOK_DATA_DIR and the same BROOK_PEERS list), but on free ports in a temp dir and as
 * children of the bench so their pids are known; and etcd members (the `etcd` binary of the
 * etcd-server package) with separate data dirs and a static --initial-cluster.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokerEntry, freePort } from './broker.js';
import { sleep } from './stats.js';

export interface ClusterMember {
  readonly id: number;
  readonly url: string;
  /** The member's current pid (a Brook member restarted with restart() gets a new one). */
  pid: number;
  readonly logFile: string;
}

export interface LocalCluster {
  readonly kind: 'brook' | 'etcd' | 'nats';
  readonly dir: string;
  readonly members: readonly ClusterMember[];
  /** The member that is leader now (waits until the members agree on one). */
  leader(timeoutMs?: number): Promise<ClusterMember>;
  /** SIGTERM each member, SIGKILL after 15 s; removes the temp dir unless keepDir. */
  stop(keepDir?: boolean): Promise<void>;
}

interface Child {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  dead: boolean;
}

function spawnLogged(cmd: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): Child {
  const fd = openSync(logFile, 'a');
  const child = spawn(cmd, args, { env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const c: Child = { child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))), dead: false };
  void c.exited.then(() => (c.dead = true));
  return c;
}

async function stopAll(children: readonly Child[]): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      if (c.dead) return;
      c.child.kill('SIGTERM');
      const timer = setTimeout(() => c.child.kill('SIGKILL'), 15_000);
      await c.exited;
      clearTimeout(timer);
    }),
  );
}

async function getJson(url: string, init?: RequestInit): Promise<unknown> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(1000) });
    if (!res.ok) return undefined;
    return await res.json();
  } catch {
    return undefined;
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-3000);
  } catch {
    return '';
  }
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** A Brook cluster whose members can be killed and started again on the same data dir. */
export interface BrookCluster extends LocalCluster {
  /** Sends the signal (default SIGKILL) to member id; resolves once it has exited. */
  kill(id: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts member id again (same id, ports, data dir, peers); does not wait for it to answer. */
  restart(id: number): void;
  isDead(id: number): boolean;
}

/**
 * Three (or n) Brook nodes, as cluster/up starts them; resolves once every node names the same leader.
 * `entry` runs another build (default dist/main.js of this checkout).
 */
export async function startBrookCluster(opts: { n?: number; nodeArgs?: string[]; env?: Record<string, string>; entry?: string } = {}): Promise<BrookCluster> {
  const n = opts.n ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'brook-bench-cluster-'));
  const ports = await distinctFreePorts(2 * n);
  const http = (i: number) => ports[i - 1]!;
  const raft = (i: number) => ports[n + i - 1]!;
  const peers = Array.from({ length: n }, (_, k) => `${k + 1}=127.0.0.1:${raft(k + 1)}/${http(k + 1)}`).join(',');
  const children: Child[] = [];
  // Node-to-node calls are authenticated, as cluster/up sets them up: one random secret for all nodes.
  const secretFile = join(dir, 'cluster-secret');
  writeFileSync(secretFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  const members: ClusterMember[] = [];
  const spawnNode = (i: number): Child => {
    const nodeDir = join(dir, `node${i}`);
    mkdirSync(join(nodeDir, 'data'), { recursive: true });
    const logFile = join(nodeDir, 'node.log');
    return spawnLogged(
      process.execPath,
      [...(opts.nodeArgs ?? []), opts.entry ?? brokerEntry],
      {
        ...process.env,
        BROOK_LOG_LEVEL: 'warn',
        ...opts.env,
        BROOK_NODE_ID: String(i),
        BROOK_HOST: '127.0.0.1',
        BROOK_PORT: String(http(i)),
        BROOK_RAFT_PORT: String(raft(i)),
        BROOK_DATA_DIR: join(nodeDir, 'data'),
        BROOK_PEERS: peers,
        BROOK_CLUSTER_SECRET_FILE: secretFile,
      },
      logFile,
    );
  };
  for (let i = 1; i <= n; i++) {
    const c = spawnNode(i);
    children.push(c);
    members.push({ id: i, url: `http://127.0.0.1:${http(i)}`, pid: c.child.pid!, logFile: join(dir, `node${i}`, 'node.log') });
  }
  const cluster: BrookCluster = {
    kind: 'brook',
    dir,
    members,
    async kill(id, signal = 'SIGKILL') {
      const c = children[id - 1]!;
      if (c.dead) return;
      c.child.kill(signal);
      await c.exited;
    },
    restart(id) {
      if (!children[id - 1]!.dead) throw new Error(`brook node ${id} is still running`);
      const c = spawnNode(id);
      children[id - 1] = c;
      members[id - 1]!.pid = c.child.pid!;
    },
    isDead(id) {
      return children[id - 1]!.dead;
    },
    async leader(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const dead = members.filter((_, k) => children[k]!.dead);
        if (dead.length > 0) throw new Error(`brook node(s) ${dead.map((m) => m.id).join(', ')} exited:\n${dead.map((m) => tail(m.logFile)).join('\n')}`);
        const views = (await Promise.all(members.map((m) => getJson(`${m.url}/cluster`)))) as ({ metadata: { leader: number | null } } | undefined)[];
        const leaders = views.map((v) => v?.metadata.leader);
        const l = leaders[0];
        if (typeof l === 'number' && leaders.every((x) => x === l)) return members.find((m) => m.id === l)!;
        if (Date.now() > deadline) throw new Error(`no brook leader agreed on within ${timeoutMs} ms (views: ${JSON.stringify(leaders)})`);
        await sleep(100);
      }
    },
    async stop(keepDir = false) {
      await stopAll(children);
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await cluster.leader();
  } catch (err) {
    await cluster.stop(true);
    throw err;
  }
  return cluster;
}

/** `etcd --version`'s first line, or undefined when etcd is not installed. */
export function etcdVersion(bin = 'etcd'): string | undefined {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8' }).split('\n').filter((l) => l.trim() !== '').join('; ');
  } catch {
    return undefined;
  }
}

/**
 * Three (or n) etcd members on loopback (client and peer URLs on free ports, data dirs under one temp
 * dir, default heartbeat 100 ms / election 1000 ms, default snapshot count); resolves once they agree
 * on a leader.
 */
export async function startEtcdCluster(opts: { n?: number; bin?: string; extraArgs?: string[] } = {}): Promise<LocalCluster> {
  const n = opts.n ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'etcd-bench-cluster-'));
  const ports = await distinctFreePorts(2 * n);
  const client = (i: number) => ports[i - 1]!;
  const peer = (i: number) => ports[n + i - 1]!;
  const initial = Array.from({ length: n }, (_, k) => `m${k + 1}=http://127.0.0.1:${peer(k + 1)}`).join(',');
  const children: Child[] = [];
  const members: ClusterMember[] = [];
  for (let i = 1; i <= n; i++) {
    const logFile = join(dir, `m${i}.log`);
    const c = spawnLogged(
      opts.bin ?? 'etcd',
      [
        `--name=m${i}`,
        `--data-dir=${join(dir, `m${i}.etcd`)}`,
        `--listen-client-urls=http://127.0.0.1:${client(i)}`,
        `--advertise-client-urls=http://127.0.0.1:${client(i)}`,
        `--listen-peer-urls=http://127.0.0.1:${peer(i)}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer(i)}`,
        `--initial-cluster=${initial}`,
        '--initial-cluster-token=brook-bench',
        '--initial-cluster-state=new',
        '--logger=zap',
        '--log-level=warn',
        ...(opts.extraArgs ?? []),
      ],
      { ...process.env, ETCD_UNSUPPORTED_ARCH: process.env.ETCD_UNSUPPORTED_ARCH ?? '' },
      logFile,
    );
    children.push(c);
    members.push({ id: i, url: `http://127.0.0.1:${client(i)}`, pid: c.child.pid!, logFile });
  }
  const cluster: LocalCluster = {
    kind: 'etcd',
    dir,
    members,
    async leader(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const dead = members.filter((_, k) => children[k]!.dead);
        if (dead.length > 0) throw new Error(`etcd member(s) ${dead.map((m) => m.id).join(', ')} exited:\n${dead.map((m) => tail(m.logFile)).join('\n')}`);
        // Maintenance/Status answers the member's own id and the leader's id (uint64s as strings).
        const st = (await Promise.all(members.map((m) => getJson(`${m.url}/v3/maintenance/status`, { method: 'POST', body: '{}' })))) as
          | ({ header?: { member_id?: string }; leader?: string } | undefined)[];
        const leaderIds = st.map((s) => s?.leader);
        const l = leaderIds[0];
        if (l !== undefined && l !== '0' && leaderIds.every((x) => x === l)) {
          const k = st.findIndex((s) => s?.header?.member_id === l);
          if (k >= 0) return members[k]!;
        }
        if (Date.now() > deadline) throw new Error(`no etcd leader agreed on within ${timeoutMs} ms`);
        await sleep(100);
      }
    },
    async stop(keepDir = false) {
      await stopAll(children);
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await cluster.leader();
  } catch (err) {
    await cluster.stop(true);
    throw err;
  }
  return cluster;
}

/** `nats-server --version`, or undefined when nats-server is not installed. */
export function natsServerVersion(bin = 'nats-server'): string | undefined {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** A NATS member: `url` is its monitoring endpoint (HTTP), `natsUrl` the client URL. */
export interface NatsMember extends ClusterMember {
  readonly natsUrl: string;
}

export interface NatsCluster extends LocalCluster {
  readonly members: readonly NatsMember[];
}

/**
 * Three (or n) nats-servers with JetStream on loopback: client, cluster (route) and monitoring ports
 * free, one store dir each, a static route list, everything else default (in 2.9: file store synced
 * to disk every 2 minutes, not per message). Resolves once every server names the same JetStream meta
 * leader (GET /jsz on the monitoring port); `leader()` returns that member.
 */
export async function startNatsCluster(opts: { n?: number; bin?: string } = {}): Promise<NatsCluster> {
  const n = opts.n ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'nats-bench-cluster-'));
  const ports = await distinctFreePorts(3 * n);
  const client = (i: number) => ports[i - 1]!;
  const route = (i: number) => ports[n + i - 1]!;
  const monitor = (i: number) => ports[2 * n + i - 1]!;
  const routes = Array.from({ length: n }, (_, k) => `nats://127.0.0.1:${route(k + 1)}`).join(',');
  const children: Child[] = [];
  const members: NatsMember[] = [];
  for (let i = 1; i <= n; i++) {
    const logFile = join(dir, `n${i}.log`);
    const c = spawnLogged(
      opts.bin ?? 'nats-server',
      [
        '-a', '127.0.0.1',
        '-p', String(client(i)),
        '-m', String(monitor(i)),
        '-n', `n${i}`,
        '-js',
        '-sd', join(dir, `n${i}`),
        '--cluster_name', 'brook-bench',
        '--cluster', `nats://127.0.0.1:${route(i)}`,
        '--routes', routes,
      ],
      process.env,
      logFile,
    );
    children.push(c);
    members.push({ id: i, url: `http://127.0.0.1:${monitor(i)}`, natsUrl: `nats://127.0.0.1:${client(i)}`, pid: c.child.pid!, logFile });
  }
  const cluster: NatsCluster = {
    kind: 'nats',
    dir,
    members,
    async leader(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const dead = members.filter((_, k) => children[k]!.dead);
        if (dead.length > 0) throw new Error(`nats-server(s) ${dead.map((m) => m.id).join(', ')} exited:\n${dead.map((m) => tail(m.logFile)).join('\n')}`);
        const jsz = (await Promise.all(members.map((m) => getJson(`${m.url}/jsz`)))) as ({ meta_cluster?: { leader?: string } } | undefined)[];
        const leaders = jsz.map((j) => j?.meta_cluster?.leader);
        const l = leaders[0];
        if (l !== undefined && l !== '' && leaders.every((x) => x === l)) return members.find((m) => `n${m.id}` === l)!;
        if (Date.now() > deadline) throw new Error(`no JetStream meta leader agreed on within ${timeoutMs} ms (views: ${JSON.stringify(leaders)})`);
        await sleep(200);
      }
    },
    async stop(keepDir = false) {
      await stopAll(children);
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await cluster.leader();
  } catch (err) {
    await cluster.stop(true);
    throw err;
  }
  return cluster;
}
