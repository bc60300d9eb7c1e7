/**
 * Goal: partition groups on the production Raft host never lose, duplicate or reorder an acknowledged
 * batch, keep offsets dense and replicas identical, and keep Raft's safety properties, under every
 * fault the simulator injects; the metadata group beside them on the same host answers linearizable
 * reads and writes; and all of them recover once faults heal. Method: run the seeded host
 * simulation (host-cluster.ts) for a list of seeds; each run checks after every event. A failing seed
 * is replayed with tracing on; the test prints the seed, the error and the tail of the trace (the
 * whole trace goes to a file).
 *
 *   SEEDS=<n>      run seeds 1..n (default 40: 10 to 30 s on one core; CI runs the default)
 *   SEED=<n>       run exactly seed n (and on failure write its trace)
 *   SEED_FROM=<n>  with SEEDS: run seeds n..n+SEEDS-1
 *   SIM_JOBS=<n>   child processes at a time for more than one seed (default: the cores; seed-shards.ts)
 *   SIM_SEEDS_PER_PROCESS=<n>  seeds per child process at most (default 50)
 *   LOST_TAIL=0    disks never lose fsynced writes (by default they may: a member of a group at a time,
 *                  where its marker file can tell; docs/testing.md)
 *   SIM_RETENTION=0  nodes apply no retention during chaos (on by default; docs/testing.md, "Retention
 *                  seed 20")
 *   SIM_SUBSCRIPTIONS=0  no subscription consumers and cursor tools (on by default)
 *
 * Even seeds run the metadata group with read leases and its clients read as publishing does; their
 * clock skews are kept within the leases' drift bound (HostSimOptions.readLeases).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runHostSimulation } from './host-cluster.js';
import type { HostSimStats } from './host-context.js';
import { runSeedShards, seedsPerProcessFromEnv, simJobsFromEnv } from './seed-shards.js';
import { seedsFromEnv, simRetentionFromEnv, simSubscriptionsFromEnv } from './seeds.js';

const lostTail = process.env['LOST_TAIL'] !== '0';
// Retention during chaos (host-cluster.ts, HostSimOptions.retention): on unless SIM_RETENTION=0.
const retention = simRetentionFromEnv();
// Subscription consumers and cursor tools (host-subscriptions.ts): on unless SIM_SUBSCRIPTIONS=0.
const subscriptions = simSubscriptionsFromEnv();

async function report(failed: { seed: number; error?: string }): Promise<string> {
  const replay = await runHostSimulation({ seed: failed.seed, trace: true, lostTail, retention, subscriptions });
  const file = join(tmpdir(), `brook-host-sim-seed-${failed.seed}.trace`);
  writeFileSync(file, replay.trace.join('\n') + '\n');
  return [
    `seed ${failed.seed} failed: ${failed.error}`,
    `replay: ${lostTail ? '' : 'LOST_TAIL=0 '}${retention ? '' : 'SIM_RETENTION=0 '}${subscriptions ? '' : 'SIM_SUBSCRIPTIONS=0 '}SEED=${failed.seed} node --test dist/sim/host.sim.test.js   (full trace: ${file})`,
    replay.error === failed.error ? '' : `(the traced replay ended differently: ${replay.error ?? 'ok'} — determinism bug)`,
    '--- last events ---',
    replay.trace.slice(-120).join('\n'),
  ].join('\n');
}

test('partition groups on the production host keep every acknowledged batch, once and in order, and the metadata group stays linearizable, on every seed', async () => {
  const seeds = seedsFromEnv(40);
  const started = performance.now();
  const totals: Partial<Record<keyof HostSimStats, number>> = {};
  const failed: { seed: number; error?: string }[] = [];
  // One seed runs here; more run in child processes (seed-shards.ts: SIM_JOBS at a time, at most
  // SIM_SEEDS_PER_PROCESS each), so that what runs leave in a process stays bounded.
  const results = seeds.length === 1
    ? [await runHostSimulation({ seed: seeds[0]!, lostTail, retention, subscriptions })]
    : await runSeedShards(fileURLToPath(new URL('./host-seed-cli.js', import.meta.url)), seeds, simJobsFromEnv(), seedsPerProcessFromEnv(), (lines, ms) => {
        const bad = lines.filter((l) => !l.ok).map((l) => l.seed);
        const rss = lines.map((l) => l.rssMB ?? 0);
        console.log(`host sim: seeds ${lines[0]?.seed}..${lines[lines.length - 1]?.seed} in ${(ms / 1000).toFixed(1)} s (its process ${rss[0]} MB after the first, ${Math.max(...rss)} MB at most)${bad.length === 0 ? '' : `, failed: ${bad.join(',')}`}`);
      });
  for (const r of results) {
    if (!r.ok || r.stats === undefined) {
      // Go on: the other failing seeds tell whether it is one rare run or a pattern.
      failed.push(r);
      continue;
    }
    for (const [k, v] of Object.entries(r.stats) as [keyof HostSimStats, number][]) totals[k] = k === 'recoveryMsMax' ? Math.max(totals[k] ?? 0, v) : (totals[k] ?? 0) + v;
  }
  if (failed.length > 0) {
    const list = failed.map((r) => `  seed ${r.seed}: ${r.error?.split('\n')[0]}`).join('\n');
    assert.fail(`${failed.length} of ${seeds.length} seeds failed:\n${list}\n\n${await report(failed[0]!)}`);
  }
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`host sim: ${seeds.length} seeds passed in ${secs} s; ${JSON.stringify(totals)}`);
  // The workload and the faults must actually happen, or a pass means nothing.
  const n = seeds.length;
  // Even seeds run read leases: some metadata reads must have been served by followers under them,
  // and the scripted lease schedules (host-lease-probe.ts) must have run.
  if (seeds.filter((seed) => seed % 2 === 0).length >= 5) {
    assert.ok((totals.metadataLeaseReads ?? 0) > 0, 'no follower served a metadata read under a read lease');
    assert.ok((totals.leaseProbes ?? 0) > 0, 'no scripted lease schedule ran');
  }
  assert.ok((totals.batchesAcked ?? 0) > n * 20, 'too few acknowledged batches');
  assert.ok((totals.elections ?? 0) > n * 3, 'too few elections');
  assert.ok((totals.crashes ?? 0) > n, 'too few crashes');
  assert.ok((totals.metadataAcked ?? 0) > n * 5, 'too few acknowledged metadata writes');
  assert.ok((totals.metadataReads ?? 0) > n * 5, 'too few metadata reads');
  if (n >= 20) {
    // staleGrants and oldTermQuorums are the chances a broken vote or commit rule gets to show.
    for (const k of ['remoteReads', 'remoteReadsFailed', 'remoteReadResets', 'consumerEvents', 'consumerRemoteEvents', 'consumerResumes', 'consumerErrors', 'midWriteCrashes', 'prefixCrashes', 'lostTailCrashes', 'wipes', 'wipesBesideDeposed', 'wipesOfPromoted', 'metadataLosses', 'membersKept', 'replacementsDone', 'refusedWrites', 'failedSyncs', 'syncSpikes', 'batchesFailed', 'retries', 'forwards', 'groupedForwards', 'storms', 'skews', 'transfers', 'quiesced', 'woken', 'snapshotsStored', 'logFetchesDone', 'staleGrants', 'oldTermQuorums', 'moves', 'movesDone', 'movesCancelled', 'moveTransfers', ...(subscriptions ? (['subStreams', 'subEvents', 'subRemoteEvents', 'subResumes', 'subCommitsAcked', 'subCommitsRefused', 'subLateCommits', 'subCommitsElsewhere', 'subCommitsAfterCrash', 'cursorTools', 'cursorToolsRefused'] as const) : []), ...(retention ? (['retentionPasses', 'retentionRemoved', 'historyFetched', 'historyFetchCrashes', 'historyFetchResumed', 'consumerExpired'] as const) : [])] as const) {
      assert.ok((totals[k] ?? 0) > 0, `no ${k} in ${n} seeds`);
    }
  }
  // Rarer: 29 in seeds 1-100, 11 in seeds 101-200 (a 20-seed window may hold none).
  if (n >= 100) assert.ok((totals.metadataLossesBesideNew ?? 0) > 0, `no metadataLossesBesideNew in ${n} seeds`);
});

test('metadata reads that skip the ReadIndex barrier are caught as not linearizable', async () => {
  // A broken rule on purpose (reads served from a node's state without confirming it is current):
  // the check must see it in most seeds, or a pass of the test above means little.
  const seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const caught: number[] = [];
  for (const seed of seeds) {
    const r = await runHostSimulation({ seed, lostTail, staleMetadataReads: true, readLeases: false });
    if (!r.ok) {
      assert.match(r.error ?? '', /MetadataLinearizable/, `seed ${seed} failed otherwise`);
      caught.push(seed);
    }
  }
  assert.ok(caught.length >= 5, `stale reads caught in ${caught.length} of ${seeds.length} seeds only (${caught.join(', ')})`);
});

test('the same seed replays to the same run', async () => {
  // Seed 11 runs three nodes (its consumers read local replicas); seed 17 five, whose consumers read
  // remote replicas through the simulated Read service (their long-polls wait on virtual timers).
  for (const seed of [11, 17]) {
    const a = await runHostSimulation({ seed, trace: true, rounds: 1, chaosMs: 1500 });
    const b = await runHostSimulation({ seed, trace: true, rounds: 1, chaosMs: 1500 });
    assert.equal(a.ok, true, a.error);
    assert.ok(a.trace.length > 100);
    assert.ok(a.stats.consumerEvents > 0, `seed ${seed}: no consumer read anything`);
    if (seed === 17) assert.ok(a.stats.remoteReads > 0 && a.stats.consumerRemoteEvents > 0, 'seed 17: no remote read');
    assert.deepEqual(a.trace, b.trace);
    assert.deepEqual(a.stats, b.stats);
  }
});

test('seeds that found bugs stay fixed', async () => {
  // Found by longer runs; each fails without its fix (checked when it was added; docs/testing.md,
  // "Bugs the host simulation found"). The simulation may change under them, so they stand beside
  // the seed range, not for it; the fixes have unit tests where one could be written. Those found
  // before the consumers existed run without them (they would change their schedules), and those
  // found before the subscription consumers without these.
  const found = [
    { seed: 124, bug: 'a damaged member committed from a heartbeat an older version of an entry' },
    { seed: 197, bug: 'log shipping applied entries that appends let the group commit meanwhile' },
    { seed: 296, bug: 'log shipping for a snapshot whose last entry the log already held' },
    { seed: 34, bug: 'a quiesced follower never expired a proposal left from its leadership' },
    { seed: 1193, bug: 'a node whose lost WAL tail took its identity and every record of its groups founded them again' },
    { seed: 285, bug: 'a Ready that only repaired a member was not written: damaged again after a restart' },
    { seed: 17, bug: 'the same, once turns stopped writing rows on their own (deferred rows and commit indexes)' },
    { seed: 1014, bug: 'a lost tail took a leader\'s term; back at the older term it acknowledged that term\'s deposed leader (term-ceiling.test.ts)' },
    { seed: 9, retention: true, bug: 'a crash after retention\'s removal was durable but before its new oldest offset was written left a replica refusing reads (partition-retention-crash.test.ts)' },
    { seed: 174, retention: true, bug: 'a read overtaken by a memory compaction missed the batches that left the in-memory index meanwhile, and the replica refused reads for good (partition-read-race.test.ts)' },
    { seed: 292, retention: true, bug: 'a snapshot naming a log start retention had removed (stored before a crash, or taken by a compaction racing retention) sent followers after removed entries for good (partition-retention-crash.test.ts, partition-retention-refresh.test.ts)' },
    { seed: 125, retention: true, bug: 'a fetch of the log before a snapshot whose offsets ran past it (a retry before its start taken for new) left rows past the snapshot, and the replica refused reads (partition-history-rows.test.ts, partition-state.test.ts)' },
    { seed: 418, bug: 'a replica opened again while its drop (a move took it away, the next brought it back) was in flight went on from the data the drop then deleted; the next start found its log with a gap (partition-replicas.test.ts)' },
    { seed: 20, retention: true, bug: 'log shipping applied fetched entries before writing them: a read while the node\'s write waited behind a slow fsync found an index row without its entry, and the replica refused reads for good (partition-catchup-read.test.ts)' },
    { seed: 131, retention: true, bug: 'a leader missed the answer saying a learner became complete (overtaken by an older one) and, quiesced, never asked again: the move never finished (incomplete.test.ts)' },
    { seed: 277, bug: 'a replica a move placed on a node whose disk was full at that moment was never opened again: the move never finished' },
    { seed: 521, bug: 'the CommittedPrefix check missed a leader that committed its own removal and stepped down in one event (a checker bug, once replica moves removed leaders)' },
    { seed: 238, bug: 'the DurableQuorum check counted the voters of a configuration change applied in the event that committed it (a checker bug, once replica moves changed membership)' },
    { seed: 314, bug: 'a voter wiped during a move that was then cancelled asked the learner, gone with its replica, for its term for good' },
    { seed: 1824, bug: 'the same with a move that finished: the old replica\'s node never answered the wiped voter\'s term probe' },
    { seed: 277, retention: true, consumers: true, bug: 'two followers fetching the log before the same snapshot, which the leader\'s retention removed, asked each other for good: each refused while fetching (partition-replicas.multi.test.ts)' },
    { seed: 2187, retention: true, consumers: true, subscriptions: true, bug: 'retention on a replica that log shipping had put ahead of its group (the snapshot\'s install refused by a full disk) cut at a row of an entry the group had not applied and compacted memory beyond applied: the node stopped on the invariant (partition-catchup-refused.test.ts)' },
    { seed: 124, retention: true, consumers: true, subscriptions: true, bug: 'the SubscriptionSkipped check took the keep-alive of a partition that came back to a stream, at the cursor another stream had committed meanwhile, for a skip (a checker bug)' },
    { seed: 136, retention: true, consumers: true, subscriptions: true, bug: 'a leader whose fetch of the log before its snapshot had been given up sent the installed image, naming the start it gave up: a follower did log shipping from there, got nothing from any replica, for good (partition-history-image.test.ts)' },
    { seed: 265, retention: true, consumers: true, subscriptions: true, bug: 'a stream session whose close failed during a metadata outage waited its 4 s retry backoff after the group was back, holding a partition the next stream needed (subscription-hub.test.ts)' },
    { seed: 1339, retention: true, consumers: true, subscriptions: true, bug: 'the RetainedForgotten check compared a restarted replica with the snapshot its memory held at the crash, while a newer one (its leader\'s, without the log before it) was already durable: a checker bug (partition-ledger.test.ts)' },
    { seed: 60, retention: true, consumers: true, subscriptions: true, bug: 'a read between log shipping and the snapshot install took an entry from the memory tail, where the follower still held its uncommitted tail of an older term: "entry holds no events", and the replica refused reads for good (partition-catchup-stale-tail.test.ts)' },
  ];
  for (const { seed, bug, retention: withRetention, consumers, subscriptions: withSubscriptions } of found as { seed: number; bug: string; retention?: boolean; consumers?: boolean; subscriptions?: boolean }[]) {
    // As they were found: without read leases (which an even seed runs with now).
    const r = await runHostSimulation({ seed, lostTail: true, retention: withRetention === true, consumers: consumers === true, subscriptions: withSubscriptions === true, readLeases: false });
    assert.ok(r.ok, `seed ${seed} (${bug}): ${r.error}`);
  }
});

test('the same seed replays to the same run with subscription consumers and cursor tools', async () => {
  // Their streams, commits and the hub's timers run on the nodes' virtual clocks (host-subscriptions.ts).
  const a = await runHostSimulation({ seed: 17, trace: true, rounds: 1, chaosMs: 1500, subscriptions: true });
  const b = await runHostSimulation({ seed: 17, trace: true, rounds: 1, chaosMs: 1500, subscriptions: true });
  assert.equal(a.ok, true, a.error);
  assert.ok(a.stats.subEvents > 0 && a.stats.subCommitsAcked > 0 && a.stats.cursorTools > 0, `seed 17: ${JSON.stringify(a.stats)}`);
  assert.deepEqual(a.trace, b.trace);
  assert.deepEqual(a.stats, b.stats);
});
