/**
 * Jepsen-like test of the metadata Raft group (docs: jepsen-like-tests/README.md).
 *
 * Three real node processes (cluster/up on free ports in a temp dir), a few event types used as
 * registers (value: owning_application), concurrent clients on random nodes, a seeded nemesis (kill -9,
 * SIGSTOP/SIGCONT, network partition), then, after healing and a quiet period: linearizability of the
 * whole history, convergence of every node, agreement on one leader with applied = commit; plus proof
 * that the checker refuses this very history once a stale read is planted in it.
 *
 *   node dist-jepsen/jepsen-like-tests/metadata-register.js [--seconds 60] [--seed S] [--clients 5] [--keys 4]
 *   node dist-jepsen/jepsen-like-tests/metadata-register.js --check dist-jepsen/history-S.json   (re-check a saved history)
 *
 * Exit code 0 when every check passes, 1 on a violation, 2 when the run itself failed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { KvOp } from '../src/sim/linearizability.js';
import { Prng } from '../src/sim/prng.js';
import { corruptWithStaleRead, excerpt, linearizable } from './checks.js';
import { checkConvergence } from './convergence.js';
import { createUntilDone, LocalCluster, repoRoot, until, watchdog } from './cluster-control.js';
import { Nemesis, planFaults } from './nemesis.js';
import { sweep } from '../src/testing/partition.js';
import { eventTypeBody, read, runClients, type Recorded } from './workload.js';
import { checkLinearizable } from '../src/sim/linearizability.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string' },
    clients: { type: 'string', default: '5' },
    keys: { type: 'string', default: '4' },
    check: { type: 'string' },
  },
});
if (args.check !== undefined) process.exit(checkSaved(args.check));
const seconds = Number(args.seconds);
const seed = args.seed !== undefined ? Number(args.seed) : Math.floor(Math.random() * 2 ** 31);
const clients = Number(args.clients);
const keyCount = Number(args.keys);
if (!(seconds > 0) || !Number.isSafeInteger(seed) || seed < 0 || !(clients >= 1) || !(keyCount >= 1)) {
  console.error('usage: metadata-register.js [--seconds N>0] [--seed S>=0] [--clients N] [--keys N]');
  process.exit(2);
}
if (!existsSync(join(repoRoot, 'dist', 'main.js'))) {
  console.error('dist/main.js is missing: run `npm run build` first (npm run jepsen does)');
  process.exit(2);
}

console.log(`jepsen-like metadata-register: seed ${seed}, ${seconds} s of workload, ${clients} clients, ${keyCount} keys`);
console.log(`replay the fault schedule with: npm run jepsen -- --seconds ${seconds} --seed ${seed}`);

const requestTimeoutMs = 6000;
const keys = Array.from({ length: keyCount }, (_, k) => `jepsen.reg${k}`);
const cluster = await LocalCluster.create({
  // Short enough that a write without quorum answers within the run, as in the cluster test.
  BROOK_METADATA_TIMEOUT_MS: '2000',
  // Small, so that restarted nodes catch up through snapshots and logs are compacted during the run.
  BROOK_RAFT_SNAPSHOT_ENTRIES: '256',
  BROOK_LOG_LEVEL: 'info',
});
const started = performance.now();
// The workload, then its checks, take about `seconds` plus a minute: ten minutes more is a hang.
watchdog(cluster, (seconds + 600) * 1000, () => void sweep());
const recorded: Recorded[] = [];
let nemesis: Nemesis | undefined;
/** When the workload ran; every time printed is performance.now() of this process (ms, or s). */
let workload: [number, number] = [0, 0];
let interrupted = false;
const onSignal = (): void => {
  interrupted = true;
  nemesis?.stop();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const failures: string[] = [];
let crashed: Error | undefined;
try {
  await cluster.up();
  await until('a leader agreed on by all nodes', 20_000, () => cluster.agreedLeader());

  // The registers' first values: each create is a write in the history (no faults yet).
  for (const key of keys) {
    // Asked again after an answer of unknown outcome: the write took effect once, somewhere between
    // the first request and the last answer, which is what the history records.
    const invoke = performance.now();
    await createUntilDone(`${cluster.url(1)}/event-types`, eventTypeBody(key, 'init'), `creating ${key}`, 409);
    recorded.push({ op: { client: -1, kind: 'write', key, value: 'init', invoke, complete: performance.now() }, node: 1, outcome: 'ok', status: '201' });
  }

  const t0 = performance.now();
  const stopAt = t0 + seconds * 1000;
  nemesis = new Nemesis(cluster);
  const plan = planFaults(new Prng(seed), 200);
  const streams = (c: number): Prng => new Prng((seed + (c + 1) * 0x9e3779b9) % 2 ** 52);
  // No new fault in the last 3 s: the tail of the history is where healing shows. A nemesis that
  // fails (a node that does not come back) stops the clients too.
  let aborted = false;
  const nemesisRun = nemesis.run(plan, stopAt - 3000).catch((err: unknown) => {
    aborted = true;
    throw err;
  });
  const clientsRun = runClients(
    { keys, nodes: cluster.nodes, url: (i) => cluster.url(i), clients, writeRatio: 0.5, requestTimeoutMs, thinkMsMax: 10 },
    streams,
    () => interrupted || aborted || performance.now() >= stopAt,
    recorded,
  );
  const results = await Promise.allSettled([nemesisRun, clientsRun]);
  nemesis.stop();
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  if (interrupted) throw new Error('interrupted');

  // Quiet period: all nodes up, one leader, everything applied.
  workload = [t0, performance.now()];
  console.log(`workload done after ${((performance.now() - t0) / 1000).toFixed(1)} s; healing and waiting for a quiet cluster`);
  // A no-op unless a node died on its own, which is a finding in itself.
  for (const line of (await cluster.up()).split('\n')) if (/: started/.test(line)) failures.push(`crash: ${line.split(' (')[0]} had exited on its own by the end`);
  failures.push(...nemesis.unexpected);
  const quiet = await checkConvergence(cluster, 30_000);
  failures.push(...quiet.failures);

  // Final reads on every node go into the history too: they must see the last write like any other read.
  for (const key of keys) {
    for (const node of cluster.nodes) {
      const r = await read(1000 + node, key, node, { url: (i) => cluster.url(i), requestTimeoutMs });
      recorded.push(r);
      if (r.outcome !== 'ok') failures.push(`convergence: final read of ${key} on node ${node} failed (${r.status})`);
    }
    const finals = recorded.filter((r) => r.op.client >= 1000 && r.op.key === key).map((r) => r.op.value);
    if (new Set(finals).size !== 1) failures.push(`convergence: nodes disagree on ${key}: ${finals.join(', ')}`);
  }

  const history: KvOp[] = recorded.filter((r) => r.outcome === 'ok' || r.outcome === 'indeterminate').map((r) => r.op);
  const lin = linearizable(history);
  if (!lin.ok) {
    failures.push(`linearizability: no linearization for key ${lin.badKey ?? '?'} (explored ${lin.explored} states)`);
    if (lin.badKey !== undefined) console.log(`history of ${lin.badKey} up to the first operation (>>) that no linearization admits (times in ms):\n${excerpt(history, lin.badKey, nodeOf(recorded))}`);
  }

  // The checker must catch a planted stale read in this real history.
  const corrupt = corruptWithStaleRead(history);
  let selfCheck: string;
  if (corrupt === undefined) {
    selfCheck = 'not possible (no write, later write, later read on one key)';
    failures.push('self-check: the history has no triple to corrupt');
  } else if (checkLinearizable(corrupt.ops).ok) {
    selfCheck = `FAILED: accepted ${corrupt.description}`;
    failures.push(`self-check: the checker accepted a corrupted history (${corrupt.description})`);
  } else {
    selfCheck = `refused as it must: ${corrupt.description}`;
  }

  const out = join(repoRoot, 'dist-jepsen');
  mkdirSync(out, { recursive: true });
  const file = join(out, `history-${seed}.json`);
  writeFileSync(file, JSON.stringify({ seed, seconds, faults: nemesis.done, ops: recorded }, (_k, v) => (v === Infinity ? 'Infinity' : v)));

  summary(recorded, nemesis, lin, selfCheck, quiet.lines, file);
} catch (err) {
  crashed = err as Error;
} finally {
  nemesis?.stop();
  for (const i of cluster.nodes) {
    const pid = cluster.pidOf(i);
    try {
      if (pid !== undefined) process.kill(pid, 'SIGCONT'); // a stopped node cannot shut down
    } catch {
      // not running
    }
  }
  const swept = sweep();
  if (swept.rules + swept.cgroups > 0) console.log(`cleanup: removed ${swept.rules} iptables rules and ${swept.cgroups} cgroups left behind`);
  await cluster.down();
  if (crashed === undefined && failures.length === 0) cluster.removeDir();
  else console.log(`node logs kept in ${cluster.dir}`);
}

const tookS = ((performance.now() - started) / 1000).toFixed(1);
if (crashed !== undefined) {
  console.error(`RUN FAILED (seed ${seed}, ${tookS} s): ${crashed.stack ?? crashed.message}`);
  process.exit(2);
}
if (failures.length > 0) {
  console.error(`VIOLATIONS (seed ${seed}, ${tookS} s):\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`PASS (seed ${seed}, ${tookS} s)`);
process.exit(0);

function summary(rec: Recorded[], n: Nemesis, lin: ReturnType<typeof linearizable>, selfCheck: string, quietLines: string[], file: string): void {
  const table = new Map<string, number>();
  const statuses = new Map<string, number>();
  for (const r of rec) {
    const k = `${r.op.kind} ${r.outcome}`;
    table.set(k, (table.get(k) ?? 0) + 1);
    const s = `${r.op.kind} ${r.status}`;
    statuses.set(s, (statuses.get(s) ?? 0) + 1);
  }
  const faults = new Map<string, number>();
  for (const f of n.done) faults.set(f.kind, (faults.get(f.kind) ?? 0) + 1);
  console.log('--- summary');
  console.log(`seed: ${seed}`);
  console.log(`workload: ${(workload[0] / 1000).toFixed(1)}-${(workload[1] / 1000).toFixed(1)} s (all times: since this process started)`);
  console.log(`ops: ${rec.length} (${[...table].sort().map(([k, v]) => `${k}: ${v}`).join(', ')})`);
  console.log(`statuses: ${[...statuses].sort().map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  console.log(`faults: ${n.done.length} (${[...faults].map(([k, v]) => `${k}: ${v}`).join(', ')})${n.skipped.length > 0 ? `; skipped: ${n.skipped.join(', ')}` : ''}`);
  for (const f of n.done) console.log(`  ${f.kind} node ${f.node}${f.target === 'leader' ? ' (leader)' : ''} ${(f.startMs / 1000).toFixed(1)}-${(f.endMs / 1000).toFixed(1)} s${f.note ? ` [${f.note}]` : ''}`);
  console.log(`linearizability: ${lin.ok ? 'ok' : `VIOLATION on ${lin.badKey}`} (${lin.explored} states, ${lin.ms.toFixed(0)} ms)`);
  console.log(`checker self-check: ${selfCheck}`);
  for (const l of quietLines) console.log(l);
  console.log(`history: ${file}`);
}

/** Re-runs the linearizability checker over a history written by an earlier run. */
function checkSaved(file: string): number {
  const saved = JSON.parse(readFileSync(file, 'utf8'), (_k, v) => (v === 'Infinity' ? Infinity : v)) as { seed: number; ops: Recorded[] };
  const history = saved.ops.filter((r) => r.outcome === 'ok' || r.outcome === 'indeterminate').map((r) => r.op);
  const lin = linearizable(history);
  console.log(`${file} (seed ${saved.seed}): ${history.length} operations, linearizability ${lin.ok ? 'ok' : `VIOLATION on ${lin.badKey}`} (${lin.explored} states)`);
  if (!lin.ok && lin.badKey !== undefined) console.log(excerpt(history, lin.badKey, nodeOf(saved.ops)));
  const corrupt = corruptWithStaleRead(history);
  const caught = corrupt !== undefined && !checkLinearizable(corrupt.ops).ok;
  console.log(`checker self-check: ${corrupt === undefined ? 'nothing to corrupt' : `${caught ? 'refused' : 'ACCEPTED'} ${corrupt.description}`}`);
  return lin.ok && caught ? 0 : 1;
}

/** Which node served an operation, for the excerpt of a violation (c = client, n = node). */
function nodeOf(rec: readonly Recorded[]): (op: KvOp) => number | undefined {
  const m = new Map<KvOp, number>(rec.map((r) => [r.op, r.node]));
  return (op) => m.get(op);
}
