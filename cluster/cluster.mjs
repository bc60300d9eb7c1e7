// A local Brook cluster on 127.0.0.1, for developers and for the real-process tests.
//
//   cluster/up N      start nodes 1..N (only those that are down), return once they agree on a leader
//   cluster/down      stop every node of the cluster (SIGTERM, then SIGKILL after 10 s)
//   cluster/status    print each node's pid, role, term and metadata leader
//
// Node i listens for HTTP on BROOK_CLUSTER_PORT + i - 1 (default 8081, 8082, ...) and for Raft on
// that port + 1000 (9081, ...). Its RocksDB and log are under BROOK_CLUSTER_DIR/node<i>/ (default
// ./.brook-cluster in the repository). Other BROOK_* variables in the environment reach every node
// (e.g. BROOK_RAFT_SNAPSHOT_ENTRIES). The scripts build dist/ first unless BROOK_CLUSTER_NO_BUILD=1.
//
// Node-to-node calls are authenticated (docs/security.md): cluster/up makes a random cluster secret in
// BROOK_CLUSTER_DIR/cluster-secret (once; kept for restarts) and gives it to every node with
// BROOK_CLUSTER_SECRET_FILE. With BROOK_CLUSTER_TLS=1 it also makes a cluster CA and a certificate per
// node (openssl, under BROOK_CLUSTER_DIR/tls/) for mutual TLS. Credentials already in the environment
// (BROOK_CLUSTER_SECRET[_FILE], BROOK_TLS_*, BROOK_INSECURE_CLUSTER) are used as they are instead.
//
// With authentication on (BROOK_AUTH), the scripts read GET /cluster with a bearer token: BROOK_TOKEN
// (as the brook tool), else with BROOK_AUTH=static the first token of BROOK_AUTH_TOKENS_FILE (any
// authenticated caller may read /cluster). A node that refuses the token is reported at once.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(process.env.BROOK_CLUSTER_DIR ?? join(repo, '.brook-cluster'));
const basePort = Number(process.env.BROOK_CLUSTER_PORT ?? 8081);
const raftOffset = 1000;
const leaderWaitMs = Number(process.env.BROOK_CLUSTER_WAIT_MS ?? 30_000);

const httpPort = (i) => basePort + i - 1;
const raftPort = (i) => basePort + raftOffset + i - 1;
const nodeDir = (i) => join(root, `node${i}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function die(msg) {
  process.stderr.write(`cluster: ${msg}\n`);
  process.exit(1);
}

function readSize() {
  const f = join(root, 'size');
  return existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) : 0;
}

/** The pid of node i if it is running (checked against /proc, so a recycled pid is not taken for it). */
function livePid(i) {
  const f = join(nodeDir(i), 'pid');
  if (!existsSync(f)) return undefined;
  const pid = Number(readFileSync(f, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmd.includes('main.js')) return undefined;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.split(') ')[1]?.startsWith('Z')) return undefined; // a zombie is down
    return pid;
  } catch {
    return undefined;
  }
}

/** The bearer token for the scripts' own requests, when authentication is on; undefined when off. */
function scriptToken() {
  const given = process.env.BROOK_TOKEN ?? '';
  if (given !== '') return given;
  const mode = process.env.BROOK_AUTH ?? 'off';
  if (mode === 'off') return undefined;
  const file = process.env.BROOK_AUTH_TOKENS_FILE ?? '';
  if (mode === 'static' && file !== '') {
    try {
      const first = Object.keys(JSON.parse(readFileSync(file, 'utf8')).tokens ?? {})[0];
      if (first !== undefined) return first;
    } catch (err) {
      die(`cannot read a token from BROOK_AUTH_TOKENS_FILE ${file}: ${err.message}`);
    }
  }
  die(`authentication is on (BROOK_AUTH=${mode}): set BROOK_TOKEN to a token the nodes accept, so the scripts can read GET /cluster`);
}

let tokenRefused = false;

/**
 * Node i's GET /cluster, or undefined (no answer within timeoutMs, refused, not 200). With node:http
 * and no connection reuse, not fetch: four times in about twenty loaded cluster-test runs cluster/up
 * exited with 13 (Node's unsettled top-level await: nothing was left to run) in the middle of its wait
 * for a leader, with every node running; bounding each fetch with a referenced timer and an abort did
 * not change that, so a fetch must have stayed pending past its abort. Here the timer settles the
 * answer itself, whatever the request does.
 */
function clusterView(i, timeoutMs = 1000) {
  const token = scriptToken();
  return new Promise((resolve) => {
    let done = false;
    const finish = (v) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const req = http.get(
      { host: '127.0.0.1', port: httpPort(i), path: '/cluster', agent: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } },
      (res) => {
        if (res.statusCode === 401 || res.statusCode === 403) tokenRefused = true;
        if (res.statusCode !== 200) {
          res.resume();
          finish(undefined);
          return;
        }
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => {
          try {
            finish(JSON.parse(body));
          } catch {
            finish(undefined);
          }
        });
        res.on('error', () => finish(undefined));
      },
    );
    req.on('error', () => finish(undefined));
  });
}

function peers(n) {
  return Array.from({ length: n }, (_, k) => `${k + 1}=127.0.0.1:${raftPort(k + 1)}/${httpPort(k + 1)}`).join(',');
}

/** The cluster secret file, made once with 32 random bytes (hex) and readable by its owner only. */
function clusterSecretFile() {
  const file = join(root, 'cluster-secret');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
  return file;
}

function openssl(args, cwd) {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) die(`openssl ${args[0]} failed (BROOK_CLUSTER_TLS=1 needs openssl): ${r.error?.message ?? r.stderr}`);
}

/** A cluster CA and node i's certificate (subject CN brook-node-<i>), made once under root/tls. */
function tlsFiles(i) {
  const dir = join(root, 'tls');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  if (!existsSync(join(dir, 'ca.pem'))) {
    openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '3650', '-subj', '/CN=brook-local-cluster-ca', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  }
  const base = `node${i}`;
  if (!existsSync(join(dir, `${base}.pem`))) {
    writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
    openssl(['req', ...ec, '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=brook-node-${i}`], dir);
    openssl(['x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${base}.pem`, '-days', '3650', '-extfile', 'ext'], dir);
  }
  return { BROOK_TLS_CERT: join(dir, `${base}.pem`), BROOK_TLS_KEY: join(dir, `${base}.key`), BROOK_TLS_CA: join(dir, 'ca.pem') };
}

/** The node-to-node credentials of node i: those of the environment, or made here. */
function securityEnv(i) {
  const given = ['BROOK_CLUSTER_SECRET', 'BROOK_CLUSTER_SECRET_FILE', 'BROOK_TLS_CERT', 'BROOK_INSECURE_CLUSTER'].some((k) => (process.env[k] ?? '') !== '');
  if (given) return {};
  return { BROOK_CLUSTER_SECRET_FILE: clusterSecretFile(), ...(process.env.BROOK_CLUSTER_TLS === '1' ? tlsFiles(i) : {}) };
}

function startNode(i, n) {
  const dir = nodeDir(i);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const log = openSync(join(dir, 'node.log'), 'a');
  const child = spawn(process.execPath, [join(repo, 'dist', 'main.js')], {
    cwd: repo,
    env: {
      ...process.env,
      BROOK_NODE_ID: String(i),
      BROOK_HOST: '127.0.0.1',
      BROOK_PORT: String(httpPort(i)),
      BROOK_RAFT_PORT: String(raftPort(i)),
      BROOK_DATA_DIR: join(dir, 'data'),
      BROOK_PEERS: peers(n),
      ...securityEnv(i),
    },
    stdio: ['ignore', log, log],
    detached: true,
  });
  child.unref();
  writeFileSync(join(dir, 'pid'), String(child.pid));
  return child.pid;
}

async function up(n) {
  if (!Number.isInteger(n) || n < 1 || n > 9) die('usage: cluster/up N (1 <= N <= 9)');
  const size = readSize();
  if (size !== 0 && size !== n) die(`the cluster in ${root} has ${size} nodes; run cluster/down and remove it to change its size`);
  scriptToken(); // a missing token is reported before any node starts
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'size'), String(n));
  if (process.env.BROOK_CLUSTER_NO_BUILD !== '1') {
    const b = spawnSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'inherit' });
    if (b.status !== 0) die('build failed');
  }
  for (let i = 1; i <= n; i++) {
    const pid = livePid(i);
    if (pid !== undefined) {
      console.log(`node ${i}: already running (pid ${pid})`);
      continue;
    }
    const started = startNode(i, n);
    console.log(`node ${i}: started (pid ${started}) http 127.0.0.1:${httpPort(i)} raft 127.0.0.1:${raftPort(i)}`);
  }
  const deadline = Date.now() + leaderWaitMs;
  for (;;) {
    const views = await Promise.all(Array.from({ length: n }, (_, k) => (livePid(k + 1) === undefined ? undefined : clusterView(k + 1))));
    const leaders = views.filter((v) => v !== undefined).map((v) => v.metadata.leader);
    const running = Array.from({ length: n }, (_, k) => livePid(k + 1)).filter((p) => p !== undefined).length;
    if (running < n) {
      const down = Array.from({ length: n }, (_, k) => k + 1).filter((i) => livePid(i) === undefined);
      die(`node(s) ${down.join(', ')} exited; see ${down.map((i) => join(nodeDir(i), 'node.log')).join(', ')}`);
    }
    if (leaders.length === n && leaders[0] !== null && leaders.every((l) => l === leaders[0])) {
      console.log(`leader: node ${leaders[0]} (term ${views[0].metadata.term})`);
      return;
    }
    if (tokenRefused) die('a node refused the token for GET /cluster (401/403): set BROOK_TOKEN to a token it accepts');
    if (Date.now() > deadline) die(`no leader agreed on by all ${n} nodes within ${leaderWaitMs} ms; see the node.log files in ${root}`);
    await sleep(100);
  }
}

async function down() {
  const n = readSize();
  const dirs = existsSync(root) ? readdirSync(root).filter((d) => /^node\d+$/.test(d)).map((d) => Number(d.slice(4))) : [];
  const ids = [...new Set([...Array.from({ length: n }, (_, k) => k + 1), ...dirs])].sort((a, b) => a - b);
  const pids = new Map();
  for (const i of ids) {
    const pid = livePid(i);
    if (pid === undefined) continue;
    process.kill(pid, 'SIGTERM');
    pids.set(i, pid);
  }
  const deadline = Date.now() + 10_000;
  while ([...pids.keys()].some((i) => livePid(i) !== undefined) && Date.now() < deadline) await sleep(100);
  for (const [i, pid] of pids) {
    if (livePid(i) !== undefined) {
      process.kill(pid, 'SIGKILL');
      console.log(`node ${i}: killed (pid ${pid}) after 10 s`);
    } else {
      console.log(`node ${i}: stopped (pid ${pid})`);
    }
    rmSync(join(nodeDir(i), 'pid'), { force: true });
  }
  if (pids.size === 0) console.log('no node was running');
}

async function status() {
  const n = readSize();
  if (n === 0) {
    console.log(`no cluster in ${root}`);
    return;
  }
  console.log('node  pid      role          term  leader  commit  applied  http');
  for (let i = 1; i <= n; i++) {
    const pid = livePid(i);
    const v = pid === undefined ? undefined : await clusterView(i);
    const cols = [
      String(i).padEnd(5),
      String(pid ?? 'down').padEnd(8),
      String(v?.role ?? (pid === undefined ? '-' : 'no answer')).padEnd(13),
      String(v?.metadata.term ?? '-').padEnd(5),
      String(v?.metadata.leader ?? '-').padEnd(7),
      String(v?.metadata.commit_index ?? '-').padEnd(7),
      String(v?.metadata.applied_index ?? '-').padEnd(8),
      `127.0.0.1:${httpPort(i)}`,
    ];
    console.log(cols.join(' '));
  }
}

const [cmd, arg] = process.argv.slice(2);
if (cmd === 'up') await up(Number(arg ?? 3));
else if (cmd === 'down') await down();
else if (cmd === 'status') await status();
else die('usage: cluster/up N | cluster/down | cluster/status');
