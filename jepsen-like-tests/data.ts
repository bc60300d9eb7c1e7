/**
 * Jepsen-like test of the partitions' data (docs: jepsen-like-tests/README.md, "The data workload").
 *
 * Three real node processes (cluster/up on free ports in a temp dir), one event type with 4
 * partitions hashed on a key, producers publishing small batches on random nodes, low-level stream
 * consumers and a subscription consumer on random nodes, a seeded nemesis (kill -9, SIGSTOP, network
 * partitions of one node and bridges, graceful restarts, kill -9 of every node; one at a time and two
 * at once; targets: a node, the metadata leader or a partition's leader); then, after healing: every
 * partition read from BEGIN on every node and the checkers of data-checks.ts over the whole history
 * (lost, phantom, failed-but-stored, duplicate, order, offsets, divergence, consumers, cursors), plus
 * proof that each checker refuses this very history once a violation of its kind is planted in it.
 *
 *   node dist-jepsen/jepsen-like-tests/data.js [--seconds 60] [--seed S] [--producers 6] [--consumers 2]
 *   node dist-jepsen/jepsen-like-tests/data.js --check dist-jepsen/data-history-S.json   (re-check a saved history)
 *
 * Exit code 0 when every check passes, 1 on a violation, 2 when the run itself failed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Prng } from '../src/sim/prng.js';
import { sweep } from '../src/testing/partition.js';
import { createUntilDone, LocalCluster, repoRoot, sleep, until, watchdog } from './cluster-control.js';
import { checkConvergence } from './convergence.js';
import { checkData, checkNames, plants, type CheckName, type DataCheckResult } from './data-checks.js';
import type { CursorRead, DataHistory, FinalRead, PublishOp, SubscriptionDrain } from './data-history.js';
import { DataNemesis, LeaderWatch, planDataFaults, type DataFaultKind } from './data-nemesis.js';
import {
  dataEventTypeBody,
  newestOffsets,
  readCursors,
  readEverything,
  runCursorPoller,
  runProducers,
  runStreamConsumer,
  runSubscriptionConsumer,
  type ConsumerRecord,
  type Endpoints,
} from './data-workload.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string' },
    producers: { type: 'string', default: '6' },
    consumers: { type: 'string', default: '2' },
    check: { type: 'string' },
    faults: { type: 'string', default: 'all' },
  },
});
if (args.check !== undefined) process.exit(checkSaved(args.check));
const seconds = Number(args.seconds);
const seed = args.seed !== undefined ? Number(args.seed) : Math.floor(Math.random() * 2 ** 31);
const producers = Number(args.producers);
const consumers = Number(args.consumers);
const allKinds: readonly DataFaultKind[] = ['kill', 'pause', 'partition', 'bridge', 'restart', 'kill-all'];
const faultKinds = args.faults === 'all' ? allKinds : args.faults === 'none' ? [] : (args.faults.split(',') as DataFaultKind[]);
if (!(seconds > 0) || !Number.isSafeInteger(seed) || seed < 0 || !(producers >= 1) || !(consumers >= 0) || faultKinds.some((k) => !allKinds.includes(k))) {
  console.error(`usage: data.js [--seconds N>0] [--seed S>=0] [--producers N] [--consumers N] [--faults all|none|${allKinds.join(',')}]`);
  process.exit(2);
}
if (!existsSync(join(repoRoot, 'dist', 'main.js'))) {
  console.error('dist/main.js is missing: run `npm run build` first (npm run jepsen:data does)');
  process.exit(2);
}

console.log(`jepsen-like data: seed ${seed}, ${seconds} s of workload, ${producers} producers, ${consumers} stream consumers, 1 subscription consumer, faults: ${faultKinds.length > 0 ? faultKinds.join(', ') : 'none'}`);
console.log(`replay the fault schedule with: npm run jepsen:data -- --seconds ${seconds} --seed ${seed}${args.faults === 'all' ? '' : ` --faults ${args.faults}`}`);

const partitionCount = 4;
const requestTimeoutMs = 8000;
const eventType = 'jepsen.data';
const partitions = Array.from({ length: partitionCount }, (_, p) => String(p));
const cluster = await LocalCluster.create({
  // Appends and metadata writes without quorum fail within the run (also the forwarded appends' deadline).
  BROOK_METADATA_TIMEOUT_MS: '2000',
  BROOK_RAFT_SNAPSHOT_ENTRIES: '256',
  BROOK_LOG_LEVEL: 'info',
});
const e: Endpoints = { nodes: cluster.nodes, url: (i) => cluster.url(i), eventType, partitions };
const started = performance.now();
// The workload, then its checks, take about `seconds` plus a minute: ten minutes more is a hang.
watchdog(cluster, (seconds + 600) * 1000, () => void sweep());
const publishes: PublishOp[] = [];
const rec: ConsumerRecord = { consumed: [], conns: [], commits: [], cursorReads: [], anomalies: [] };
const cursorFailures = new Map<string, number>();
const finals: FinalRead[] = [];
const leaders = new LeaderWatch(cluster, eventType);
let nemesis: DataNemesis | undefined;
let workload: [number, number] = [0, 0];
let subscription: string | undefined;
let interrupted = false;
const onSignal = (): void => {
  interrupted = true;
  nemesis?.stop();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const failures: string[] = [];
let crashed: Error | undefined;
let result: DataCheckResult | undefined;
let selfChecks: string[] = [];
let historyFile: string | undefined;
let subDrain: SubscriptionDrain | undefined;
let finalLeaders = new Map<number, { term: number; leader: number }>();
try {
  await cluster.up();
  await until('a leader agreed on by all nodes', 20_000, () => cluster.agreedLeader());
  await createUntilDone(`${cluster.url(1)}/event-types`, dataEventTypeBody(eventType, partitionCount), `creating ${eventType}`, 409);
  const sub = await createUntilDone(`${cluster.url(1)}/subscriptions`, { owning_application: 'jepsen', event_types: [eventType], consumer_group: 'jepsen-data', read_from: 'begin' }, 'creating the subscription', 200);
  subscription = (JSON.parse(sub.text) as { id: string }).id;
  // Every node serves the event type and every partition group has elected a leader.
  await until('every node to list the partitions', 20_000, async () => ((await Promise.all(cluster.nodes.map((i) => newestOffsets(e, i)))).every((x) => x !== undefined) ? true : undefined));
  await until('a leader for every partition', 20_000, async () => {
    const known = await leaders.known();
    return partitions.every((p) => known.has(Number(p))) ? true : undefined;
  });

  const t0 = performance.now();
  const stopAt = t0 + seconds * 1000;
  nemesis = new DataNemesis(cluster, leaders);
  // --faults keeps the seed's schedule and leaves out the other kinds.
  const plan = planDataFaults(new Prng(seed), 200, partitionCount)
    .map((st) => ({ ...st, faults: st.faults.filter((f) => faultKinds.includes(f.kind)) }))
    .filter((st) => st.faults.length > 0);
  const stream = (k: number): Prng => new Prng((seed + (k + 1) * 0x9e3779b9) % 2 ** 52);
  let aborted = false;
  const stop = (): boolean => interrupted || aborted || performance.now() >= stopAt;
  const nemesisRun = nemesis.run(plan, stopAt - 3000).catch((err: unknown) => {
    aborted = true;
    throw err;
  });
  const runTag = (seed >>> 0).toString(16).padStart(8, '0');
  const clients = [
    runProducers({ ...e, producers, keysPerProducer: 2, batchMax: 5, requestTimeoutMs, thinkMsMax: 20, runTag }, stream, stop, publishes),
    ...Array.from({ length: consumers }, (_, k) => runStreamConsumer(`s${k}`, e, stream(100 + k), stop, rec)),
    runSubscriptionConsumer(e, subscription, stream(200), stop, rec, requestTimeoutMs),
    runCursorPoller(e, subscription, stream(300), stop, rec, cursorFailures),
  ];
  const results = await Promise.allSettled([nemesisRun, ...clients]);
  nemesis.stop();
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  if (interrupted) throw new Error('interrupted');
  workload = [t0, performance.now()];
  console.log(`workload done after ${((performance.now() - t0) / 1000).toFixed(1)} s; healing and waiting for a quiet cluster`);

  // Every node up (a no-op unless one died on its own, a finding), metadata settled, then every
  // node's partitions at the same newest offsets.
  for (const line of (await cluster.up()).split('\n')) if (/: started/.test(line)) failures.push(`crash: ${line.split(' (')[0]} had exited on its own by the end`);
  failures.push(...nemesis.unexpected);
  const quiet = await checkConvergence(cluster, 30_000);
  failures.push(...quiet.failures);
  for (const l of quiet.lines) console.log(l);
  const newest = await settledOffsets(e, 30_000);
  if (newest.problem !== undefined) failures.push(`convergence: ${newest.problem}`);
  for (const node of cluster.nodes) {
    const n = newest.byNode.get(node);
    finals.push(n === undefined ? { node, partitions: {}, newest: {}, error: 'GET partitions did not answer' } : await readEverything(e, node, n, 30_000));
  }
  // The subscription must still be consumable after healing: a consumer like the one of the workload
  // streams and commits until every committed cursor is at the newest offset (or 20 s pass).
  const target = finals.find((f) => f.error === undefined)?.newest ?? newest.byNode.get(1) ?? {};
  const drainStart = performance.now();
  let caughtUp = false;
  const drainStop = (): boolean => interrupted || caughtUp || performance.now() > drainStart + 20_000;
  let lastDrainRead: Record<string, number> = {};
  await Promise.all([
    runSubscriptionConsumer(e, subscription, stream(400), drainStop, rec, requestTimeoutMs, 10_000),
    (async () => {
      while (!drainStop()) {
        const r = await readCursors(e, subscription, cluster.nodes[0]!, 3000);
        if ('cursors' in r) {
          rec.cursorReads.push(r);
          lastDrainRead = r.cursors;
          caughtUp = partitions.every((p) => (r.cursors[p] ?? -1) >= (target[p] ?? -1));
        }
        if (!caughtUp) await sleep(500);
      }
    })(),
  ]);
  let stats: unknown;
  try {
    const res = await fetch(`${cluster.url(1)}/subscriptions/${subscription}/stats`, { signal: AbortSignal.timeout(5000) });
    stats = res.status === 200 ? await res.json() : `${res.status}`;
  } catch (err) {
    stats = String(err);
  }
  subDrain = { newest: target, committed: lastDrainRead, seconds: (performance.now() - drainStart) / 1000, stats };
  // The committed cursors after healing, on every node (reads like the others, marked final).
  for (const node of cluster.nodes) {
    const r = await readCursors(e, subscription, node, 5000);
    if ('cursors' in r) rec.cursorReads.push({ ...r, final: true } satisfies CursorRead);
    else failures.push(`cursors: the final GET /subscriptions/${subscription}/cursors on node ${node} failed (${r.status})`);
  }

  finalLeaders = await leaders.known();
  const history: DataHistory & { anomalies: string[] } = {
    seed,
    seconds,
    eventType,
    partitions,
    subscription,
    workload,
    publishes,
    consumed: rec.consumed,
    conns: rec.conns,
    commits: rec.commits,
    cursorReads: rec.cursorReads,
    finals,
    faults: nemesis.done,
    anomalies: rec.anomalies,
    subDrain,
  };
  const out = join(repoRoot, 'dist-jepsen');
  mkdirSync(out, { recursive: true });
  historyFile = join(out, `data-history-${seed}.json`);
  writeFileSync(historyFile, JSON.stringify(history));

  result = checkData(history);
  for (const v of result.violations) failures.push(`${v.check}: ${v.message}`);
  for (const [c, n] of result.counts) if (n > 8) failures.push(`${c}: ... ${n - 8} more`);
  selfChecks = runSelfChecks(history, failures);
} catch (err) {
  crashed = err as Error;
} finally {
  nemesis?.stop();
  for (const i of cluster.nodes) {
    const pid = cluster.pidOf(i);
    try {
      if (pid !== undefined) process.kill(pid, 'SIGCONT');
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

summary();
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

/** Polls GET partitions on every node until all report the same newest offsets twice in a row. */
async function settledOffsets(ep: Endpoints, timeoutMs: number): Promise<{ byNode: Map<number, Record<string, number>>; problem?: string }> {
  const deadline = performance.now() + timeoutMs;
  let previous = '';
  let byNode = new Map<number, Record<string, number>>();
  for (;;) {
    byNode = new Map();
    for (const node of ep.nodes) {
      const n = await newestOffsets(ep, node);
      if (n !== undefined) byNode.set(node, n);
    }
    const views = ep.nodes.map((i) => JSON.stringify(byNode.get(i) ?? null));
    const same = byNode.size === ep.nodes.length && views.every((v) => v === views[0]);
    if (same && views[0] === previous) return { byNode };
    previous = same ? views[0]! : '';
    if (performance.now() > deadline) {
      return { byNode, problem: `after ${timeoutMs} ms the nodes report different newest offsets: ${ep.nodes.map((i) => `node ${i} ${JSON.stringify(byNode.get(i) ?? 'no answer')}`).join('; ')}` };
    }
    await sleep(300);
  }
}

/** Plants one violation per checker in copies of the history; each must be caught by its checker. */
function runSelfChecks(h: DataHistory, fails: string[]): string[] {
  const lines: string[] = [];
  // A plant counts as caught when its checker reports more than it does on the real history (which
  // may itself violate that check already).
  const base = checkData(h).counts;
  for (const pl of plants(h)) {
    if ('impossible' in pl) {
      lines.push(`  ${pl.check}: NOT POSSIBLE (${pl.impossible})`);
      fails.push(`self-check: no ${pl.check} violation could be planted (${pl.impossible})`);
      continue;
    }
    const r = checkData(pl.history);
    const caught = (r.counts.get(pl.check) ?? 0) > (base.get(pl.check) ?? 0);
    lines.push(`  ${pl.check}: ${caught ? 'caught' : 'NOT CAUGHT'}: ${pl.description}`);
    if (!caught) fails.push(`self-check: the ${pl.check} checker accepted ${pl.description}`);
  }
  return lines;
}

function summary(): void {
  console.log('--- summary');
  console.log(`seed: ${seed}`);
  console.log(`workload: ${(workload[0] / 1000).toFixed(1)}-${(workload[1] / 1000).toFixed(1)} s (all times: since this process started)`);
  const statuses = new Map<string, number>();
  for (const p of publishes) statuses.set(p.status, (statuses.get(p.status) ?? 0) + 1);
  console.log(`publishes: ${publishes.length} batches (${[...statuses].sort().map(([k, v]) => `${k}: ${v}`).join(', ')})`);
  const conns = new Map<string, number>();
  for (const c of rec.conns) {
    const k = `${c.consumer === 'sub' ? 'subscription' : 'stream'} ${c.status} ${c.end.split(':')[0]}`;
    conns.set(k, (conns.get(k) ?? 0) + 1);
  }
  console.log(`consumer connections: ${rec.conns.length} (${[...conns].sort().map(([k, v]) => `${k}: ${v}`).join(', ')})`);
  const commits = new Map<string, number>();
  for (const c of rec.commits) commits.set(c.status, (commits.get(c.status) ?? 0) + 1);
  console.log(`commits: ${rec.commits.length} (${[...commits].sort().map(([k, v]) => `${k}: ${v}`).join(', ')}); cursor reads: ${rec.cursorReads.length} answered${cursorFailures.size > 0 ? `, failed: ${[...cursorFailures].map(([k, v]) => `${k}: ${v}`).join(', ')}` : ''}`);
  const subBatches = rec.consumed.filter((b) => b.consumer === 'sub');
  const finalCursors = rec.cursorReads.find((r) => r.final)?.cursors;
  const newestAtEnd = finals.find((f) => f.error === undefined)?.newest;
  console.log(
    `subscription: last batch received at ${subBatches.length > 0 ? `${(subBatches.at(-1)!.at / 1000).toFixed(1)} s` : 'never'}; committed cursors after healing ${JSON.stringify(finalCursors ?? {})}, newest offsets ${JSON.stringify(newestAtEnd ?? {})}`,
  );
  if (nemesis !== undefined) {
    const kinds = new Map<string, number>();
    for (const f of nemesis.done) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
    console.log(`faults: ${nemesis.done.length} (${[...kinds].map(([k, v]) => `${k}: ${v}`).join(', ')})${nemesis.skipped.length > 0 ? `; skipped: ${nemesis.skipped.join(', ')}` : ''}`);
    for (const f of nemesis.done) console.log(`  ${f.kind} node ${f.nodes.join('+')} (${f.target}) ${(f.startMs / 1000).toFixed(1)}-${(f.endMs / 1000).toFixed(1)} s${f.note ? ` [${f.note}]` : ''}`);
  }
  console.log(`partition leaders at the end: ${[...finalLeaders].sort(([a], [b]) => a - b).map(([p, l]) => `${p}: node ${l.leader} term ${l.term}`).join(', ')}`);
  if (result !== undefined) {
    console.log(`stats: ${Object.entries(result.stats).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    console.log(`checks: ${checkNames.map((c: CheckName) => `${c} ${result!.counts.get(c) ?? 0 ? `VIOLATED (${result!.counts.get(c)})` : 'ok'}`).join(', ')}`);
  }
  if (selfChecks.length > 0) console.log(`checker self-checks (a planted violation must be caught):\n${selfChecks.join('\n')}`);
  if (historyFile !== undefined) console.log(`history: ${historyFile}`);
}

/** Re-runs the checkers and self-checks over a history written by an earlier run. */
function checkSaved(file: string): number {
  const h = JSON.parse(readFileSync(file, 'utf8')) as DataHistory & { anomalies?: string[] };
  const r = checkData(h);
  console.log(`${file} (seed ${h.seed}): ${h.publishes.length} publishes, ${h.consumed.length} consumed batches, ${h.commits.length} commits, ${h.cursorReads.length} cursor reads`);
  console.log(`stats: ${Object.entries(r.stats).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(`checks: ${checkNames.map((c) => `${c} ${r.counts.get(c) ?? 0 ? `VIOLATED (${r.counts.get(c)})` : 'ok'}`).join(', ')}`);
  for (const v of r.violations) console.log(`  ${v.check}: ${v.message}`);
  const fails: string[] = [];
  const lines = runSelfChecks(h, fails);
  console.log(`checker self-checks (a planted violation must be caught):\n${lines.join('\n')}`);
  return r.violations.length === 0 && fails.length === 0 ? 0 : 1;
}
