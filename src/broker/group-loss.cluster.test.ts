// Goal: issue 9 on three real node processes: a partition of three replicas whose every replica is
// damaged (each node's raft state of the group carries a damage mark, as a lost write-ahead-log tail
// leaves) takes no writes and nobody can repair it; the operator accepts its loss on one node (POST
// /cluster/partitions/{group}/accept-loss, as `brook cluster accept-loss` does): that node asks the two
// others for their replicas' reports over HTTP, the newest replica keeps its log, and afterwards the
// partition takes writes through every node, every node reads the same offsets, the two others are
// voters again, and every node lists the record. Before, with nothing damaged, the same request is
// refused with 409 naming the healthy replicas.
// Method: cluster/up 3 in a temporary directory on free ports, one partition per event type; kill -9
// of every node; while they are down, a damage mark put in each node's RocksDB for the partition's
// group (term 50, index 1000: what a lost tail leaves); cluster/up 3 again; GET /cluster and the
// replica reports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeOfMember } from '../core/member-id.js';
import { openRocksKv } from '../log/index.js';
import { businessEvent, businessEventType, call } from '../testing/broker-harness.js';
import { LocalCluster } from '../testing/local-cluster.js';
import { groupKey, kindDamage } from './raft-keys.js';
import { encodeDamageRecord } from './raft-records.js';

interface View {
  partitions?: { event_type: string; partition: string; group: number; replicas: number[]; learners: number[] }[];
  accepted_losses: { id: string; group: number; node: number; recorded: boolean; kept: { newest_offset?: string; last_index: number }; damage: { reason: string } }[];
}

let cluster: LocalCluster;
const url = (i: number) => cluster.url(i);
const view = (i: number) => cluster.view<View>(i);
const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>) => cluster.until(what, timeoutMs, probe);

async function newest(i: number, name: string): Promise<string | undefined> {
  const r = await call(url(i), 'GET', `/event-types/${name}/partitions`);
  return r.status === 200 ? (r.body as { newest_available_offset: string }[])[0]?.newest_available_offset : undefined;
}

test('a partition whose three replicas are all damaged: its loss accepted on one node, it takes writes through every node and every node reads the kept log', { timeout: 240_000 }, (t) => scenario(t, [1, 2, 3]));

// Two of three damaged: the healthy one cannot be elected (a damaged member does not vote), so the
// partition is stuck alike and the same lever takes it; the operator names the healthy one to keep.
test('a partition with two of three replicas damaged is stuck alike, and its loss is accepted alike', { timeout: 240_000 }, (t) => scenario(t, [1, 3], 2));

async function scenario(t: { after(fn: () => void): void; diagnostic(s: string): void }, damagedNodes: number[], replica?: number): Promise<void> {
  cluster = (await LocalCluster.create('brook-group-loss-test-', { BROOK_PARTITIONS_DEFAULT: '1', BROOK_METADATA_TIMEOUT_MS: '2000' })).destroyWhenDone(t);
  try {
    cluster.run('up', '3');
    const leader = await cluster.agreedMetadataLeader([1, 2, 3], 10_000);
    await cluster.created(leader, '/event-types', businessEventType('gl.a'));
    const placed = await until('the placement of gl.a', 10_000, async () => (await view(leader))?.partitions?.find((p) => p.event_type === 'gl.a'));
    assert.equal(placed.replicas.length, 3, JSON.stringify(placed));
    for (let k = 0; k < 3; k++) {
      const r = await call(url(1 + k), 'POST', '/event-types/gl.a/events', Array.from({ length: 5 }, (_, j) => businessEvent(`e${k}-${j}`)));
      assert.equal(r.status, 200, r.text);
    }
    const before = await until('every node to read the 15 events', 10_000, async () => {
      const n = await Promise.all([1, 2, 3].map((i) => newest(i, 'gl.a')));
      return n.every((x) => x !== undefined && x === n[0]) && n[0] !== 'BEGIN' ? n[0] : undefined;
    });
    // Nothing damaged: refused, naming why.
    const healthy = await call(url(2), 'POST', `/cluster/partitions/${placed.group}/accept-loss`);
    assert.equal(healthy.status, 409, healthy.text);
    assert.match((healthy.body as { detail: string }).detail, /has a replica that is not damaged/);

    await new Promise((r) => setTimeout(r, 300));
    for (const i of [1, 2, 3]) await cluster.killAndWait(i);
    for (const i of damagedNodes) {
      const kv = await openRocksKv(cluster.dataDir(i));
      const k = groupKey(placed.group, kindDamage);
      await kv.write((b) => b.put(k, encodeDamageRecord(k, { term: 50, index: 1_000, reason: 'test: a lost tail' })), { durable: true });
      await kv.close();
    }
    cluster.run('up', '3');
    await cluster.agreedMetadataLeader([1, 2, 3], 20_000);
    const reports = await until('the replicas to report their damage', 20_000, async () => {
      const rs = await Promise.all([1, 2, 3].map((i) => call(url(i), 'GET', `/cluster/partitions/${placed.group}/replica`)));
      return rs.every((r, k) => r.status === 200 && ((r.body as { damage: string | null }).damage !== null) === damagedNodes.includes(k + 1)) ? rs.map((r) => r.body) : undefined;
    });
    t.diagnostic(`reports: ${JSON.stringify(reports)}`);
    const stuck = await call(url(1), 'POST', '/event-types/gl.a/events', [businessEvent('stuck')]);
    assert.notEqual(stuck.status, 200, 'a partition whose every replica is damaged takes no writes');

    const accepted = await until('the acceptance (its replicas may still learn their term floor)', 20_000, async () => {
      const r = await call(url(2), 'POST', `/cluster/partitions/${placed.group}/accept-loss${replica === undefined ? '' : `?replica=${replica}`}`);
      if (r.status === 409 && /term floor/.test(r.text)) return undefined;
      return r;
    });
    assert.equal(accepted.status, 200, accepted.text);
    const loss = accepted.body as { id: string; node: number; rejoin: number[]; kept: { newest_offset: string } };
    assert.equal(loss.kept.newest_offset, before, 'the kept replica held every event');
    assert.deepEqual([loss.node, ...loss.rejoin].sort(), [1, 2, 3]);
    if (replica !== undefined) assert.equal(loss.node, replica, 'the named replica keeps its log');
    t.diagnostic(`kept on node ${loss.node}; rejoin ${loss.rejoin.join(', ')}`);
    for (const i of [1, 2, 3]) {
      await until(`a write through node ${i}`, 30_000, async () => ((await call(url(i), 'POST', '/event-types/gl.a/events', [businessEvent(`after-${i}`)])).status === 200 ? true : undefined));
    }
    const after = await until('every node to read the same offsets again', 30_000, async () => {
      const n = await Promise.all([1, 2, 3].map((i) => newest(i, 'gl.a')));
      return n.every((x) => x !== undefined && x === n[0]) && n[0] !== before ? n[0] : undefined;
    });
    t.diagnostic(`newest before ${before}, after ${after}`);
    await until('the two others voters again', 60_000, async () => {
      const p = (await view(leader))?.partitions?.find((x) => x.group === placed.group);
      return p !== undefined && p.replicas.length === 3 && p.learners.length === 0 ? p : undefined;
    });
    for (const i of [1, 2, 3]) {
      const v = (await view(i))!;
      const rec = v.accepted_losses.find((l) => l.id === loss.id);
      assert.ok(rec?.recorded === true, `node ${i} lists the record`);
      assert.equal(nodeOfMember(rec.node), loss.node);
    }
    // Every replica healthy again: the lever refuses.
    const again = await call(url(3), 'POST', `/cluster/partitions/${placed.group}/accept-loss`);
    assert.equal(again.status, 409, again.text);
  } catch (err) {
    t.diagnostic(cluster.logs([1, 2, 3], 40));
    throw err;
  } finally {
    cluster.destroy();
  }
}
