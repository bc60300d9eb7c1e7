// Goal: a node that lost every record of its metadata raft group but kept its partition records (a
// loss its raft marker finds: here the marker file is gone) must not orphan or drop those partition
// records. With replication factor 1 they are the only copy of every event acknowledged on the
// partitions it holds (DESIGN.md, invariant 1: the partition's replica survived). Before, the node
// took a new metadata member id at start (as a wiped directory does), its partition groups followed
// that id, the placement still listed the former member, and the replacement move could never run
// (its only replica, the leader it needed, was the former member nobody ran any more).
// Method: cluster/up 3 with BROOK_REPLICATION_FACTOR=1 in a temporary directory on free ports; events
// published; kill -9 of a node holding a partition; while it is down, every key of its metadata group
// (group 0) deleted from its RocksDB and its raft marker file removed; restarted twice; its log lines,
// GET /cluster (members, placement) and, with the node down, its RocksDB (the partition's records).
// Then the operator accepts the loss of the damaged partition (POST .../accept-loss) and it takes writes;
// the record of that is in the metadata, listed by every node's GET /cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { nodeOfMember } from '../core/member-id.js';
import { openRocksKv } from '../log/index.js';
import { businessEvent, businessEventType, call } from '../testing/broker-harness.js';
import { LocalCluster } from '../testing/local-cluster.js';
import { markerFileName } from './node-disk.js';
import { groupStart } from './raft-keys.js';

interface View {
  metadata: { applied_index: number; commit_index: number; raft_damaged: boolean; member: number; members: { id: number; node: number; suffrage: string }[] };
  partitions?: { event_type: string; partition: string; group: number; replicas: number[]; learners: number[]; moving: { from: number; to: number } | null }[];
}

const cluster = await LocalCluster.create('brook-lost-metadata-test-', { BROOK_REPLICATION_FACTOR: '1', BROOK_PARTITIONS_DEFAULT: '3', BROOK_METADATA_TIMEOUT_MS: '2000' });
const url = (i: number) => cluster.url(i);
const view = (i: number) => cluster.view<View>(i);
const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>) => cluster.until(what, timeoutMs, probe);

/** Each partition's newest offset, as node i answers it (undefined when it does not answer 200). */
async function newest(i: number, name: string): Promise<Map<string, string> | undefined> {
  const r = await call(url(i), 'GET', `/event-types/${name}/partitions`);
  if (r.status !== 200) return undefined;
  return new Map((r.body as { partition: string; newest_available_offset: string }[]).map((p) => [p.partition, p.newest_available_offset]));
}

/** How many raft records of `group` the node's RocksDB holds (the node must be down). */
async function recordsOf(i: number, group: number): Promise<number> {
  const kv = await openRocksKv(cluster.dataDir(i));
  try {
    let n = 0;
    for await (const _ of kv.iterate({ gte: groupStart(group), lt: groupStart(group + 1) })) n++;
    return n;
  } finally {
    await kv.close();
  }
}

test('a node that lost its metadata raft state but kept its partition records keeps them: the only copy of a partition is not orphaned or dropped', { timeout: 150_000 }, async (t) => {
  cluster.destroyWhenDone(t);
  try {
    cluster.run('up', '3');
    const leader = await cluster.agreedMetadataLeader([1, 2, 3], 10_000);
    await cluster.created(leader, '/event-types', businessEventType('solo'));
    const placed = await until('the placement of solo', 10_000, async () => (await view(leader))?.partitions?.filter((p) => p.event_type === 'solo'));
    assert.equal(placed.length, 3);
    assert.ok(placed.every((p) => p.replicas.length === 1), 'one replica each');
    const held = placed.find((p) => nodeOfMember(p.replicas[0]!) !== leader)!;
    const victim = nodeOfMember(held.replicas[0]!);
    // Events on every partition (random partitioning), until the victim's holds some.
    await until(`events on partition ${held.partition}`, 20_000, async () => {
      const r = await call(url(leader), 'POST', '/event-types/solo/events', Array.from({ length: 10 }, (_, k) => businessEvent(`o${k}`)));
      assert.equal(r.status, 200, r.text);
      const n = await newest(leader, 'solo');
      return n !== undefined && n.get(held.partition) !== 'BEGIN' ? n : undefined;
    });
    // As its own node answers (another node's bounds of a partition it holds no replica of may trail).
    const before = (await newest(victim, 'solo'))!.get(held.partition);
    await new Promise((r) => setTimeout(r, 300)); // the marker follows the last durable write
    await cluster.killAndWait(victim);
    assert.ok((await recordsOf(victim, held.group)) > 0, 'the partition has records on its node');
    // Every record of the metadata group goes, and the marker with it: the node finds a loss.
    const kv = await openRocksKv(cluster.dataDir(victim));
    await kv.write((b) => b.delRange(groupStart(0), groupStart(1)), { durable: true });
    await kv.close();
    rmSync(join(cluster.dataDir(victim), markerFileName));
    assert.equal(await recordsOf(victim, 0), 0);

    const firstRun = cluster.restartDown(victim);
    await until(`node ${victim} to apply the metadata again`, 20_000, async () => {
      const [l, v] = await Promise.all([view(leader), view(victim)]);
      return l !== undefined && v !== undefined && !v.metadata.raft_damaged && v.metadata.applied_index >= l.metadata.commit_index ? true : undefined;
    });
    // Time for the metadata leader's replacement rounds (every 250 ms) to act, if they would.
    await new Promise((r) => setTimeout(r, 3000));
    const first = firstRun();
    t.diagnostic(`victim ${victim}, group ${held.group}; its first run said: ${first.split('\n').filter((l) => /member|damaged|dropping|registered|lost/.test(l)).map((l) => (JSON.parse(l) as { msg: string }).msg).join(' | ')}`);
    const v1 = (await view(leader))!;
    const p1 = v1.partitions!.find((p) => p.group === held.group)!;
    t.diagnostic(`after the first restart: metadata members ${JSON.stringify(v1.metadata.members)}; placement ${JSON.stringify(p1)}`);

    // Once more: a restart after the node applied the metadata (the start drops replicas its member is not placed on).
    await cluster.killAndWait(victim);
    const secondRun = cluster.restartDown(victim);
    await until(`node ${victim} to apply the metadata again`, 20_000, async () => {
      const [l, v] = await Promise.all([view(leader), view(victim)]);
      return l !== undefined && v !== undefined && v.metadata.applied_index >= l.metadata.commit_index ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 1000));
    const second = secondRun();
    await cluster.killAndWait(victim);
    const left = await recordsOf(victim, held.group);
    cluster.run('up', '3');
    const all = first + second;
    assert.doesNotMatch(all, /dropping a partition replica/, 'the only copy of the partition was dropped');
    assert.ok(left > 0, 'the partition\'s records are gone from its only replica');
    const v2 = (await view(leader))!;
    const p2 = v2.partitions!.find((p) => p.group === held.group)!;
    assert.deepEqual(p2.replicas.map(nodeOfMember), [victim], 'the partition is placed on its node');
    assert.deepEqual(p2.learners, [], `no replacement waits for a member nobody runs: ${JSON.stringify(p2)}`);
    assert.match(first, /keeps its member id/, 'the node says why it did not take a new member id');
    // What it had acknowledged is there. (Its replica is damaged, as every group of a node whose raft
    // marker is gone: with no other replica to repair it from, the partition takes no writes, but its
    // records are kept and read.)
    await until(`node ${victim} to answer the partition's bounds as before (${before})`, 20_000, async () => ((await newest(victim, 'solo'))?.get(held.partition) === before ? true : undefined));

    // The operator accepts the loss (docs/replication.md, "Accepting the loss of a sole replica"): on
    // a node that holds no replica it is refused, naming the node that does; on the victim the
    // partition leads again, keeps what it held, and takes writes.
    const elsewhere = await call(url(leader), 'POST', `/cluster/partitions/${held.group}/accept-loss`);
    assert.equal(elsewhere.status, 409, elsewhere.text);
    assert.match((elsewhere.body as { detail: string }).detail, new RegExp(`holds no replica of group ${held.group}; node\\(s\\) ${victim} do`));
    const accepted = await call(url(victim), 'POST', `/cluster/partitions/${held.group}/accept-loss`);
    assert.equal(accepted.status, 200, accepted.text);
    const loss = accepted.body as { kept: { newest_offset: string }; term: number; term_before: number };
    assert.equal(loss.kept.newest_offset, before, 'it keeps every event it held');
    assert.ok(loss.term > loss.term_before, `it leads at term ${loss.term}, above ${loss.term_before}`);
    await until(`partition ${held.partition} to take writes again`, 20_000, async () => {
      const r = await call(url(leader), 'POST', '/event-types/solo/events', Array.from({ length: 10 }, (_, k) => businessEvent(`n${k}`)));
      assert.equal(r.status, 200, r.text);
      const now = (await newest(victim, 'solo'))?.get(held.partition);
      return now !== undefined && now > before! ? true : undefined;
    });
    type Listed = View & { accepted_losses: { id: string; group: number; node: number; scope: string; recorded: boolean }[] };
    const listed = (await view(victim)) as Listed;
    assert.deepEqual(listed.accepted_losses.map((l) => l.group), [held.group], 'GET /cluster on its node lists the accepted loss');
    // The record is in the metadata: every other node lists it too, the same record.
    for (const other of [1, 2, 3].filter((i) => i !== victim)) {
      const there = await until(`node ${other} to list the accepted loss`, 10_000, async () => {
        const v = (await view(other)) as Listed | undefined;
        return v !== undefined && v.accepted_losses.length > 0 ? v.accepted_losses : undefined;
      });
      assert.deepEqual(there.map((l) => [l.id, l.group, l.node, l.scope, l.recorded]), [[listed.accepted_losses[0]!.id, held.group, victim, 'partition', true]], `node ${other} lists the loss accepted on node ${victim}`);
    }
  } finally {
    const said = cluster.destroy();
    if (said !== undefined) t.diagnostic(said);
  }
});
