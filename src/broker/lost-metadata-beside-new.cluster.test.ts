// Goal: a node that lost every record of its metadata raft group but kept its partition records keeps
// its member id and learns a term floor, asking the other nodes under their node ids. When another
// node's directory was wiped before, that node runs a new member, and the id asked there is its
// former member: in a group of three both others must answer, and before, nobody answered for it, so
// the node stayed damaged for good (host simulation seed 15 on f5faece). Now the new member answers in
// its former member's place once it is in the configuration (docs/metadata-raft.md, "A wiped
// directory is a new member").
// Method: cluster/up 3 in a temporary directory on free ports; an event type with events on every
// node; node W (not the metadata leader) killed, its data directory removed, restarted: it joins as a
// new member, which the leader puts in its former member's place; then node L (neither W nor the
// leader) killed, every key of its metadata group deleted from its RocksDB and its raft marker file
// removed, restarted; its GET /cluster (raft_damaged, applied index) and log lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openRocksKv } from '../log/index.js';
import { businessEvent, businessEventType, call } from '../testing/broker-harness.js';
import { LocalCluster } from '../testing/local-cluster.js';
import { markerFileName } from './node-disk.js';
import { groupStart } from './raft-keys.js';

interface View {
  metadata: { applied_index: number; commit_index: number; raft_damaged: boolean; member: number; members: { id: number; node: number; suffrage: string }[] };
}

const cluster = await LocalCluster.create('brook-lost-metadata-beside-new-test-', { BROOK_METADATA_TIMEOUT_MS: '2000' });
const url = (i: number) => cluster.url(i);
const view = (i: number) => cluster.view<View>(i);
const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>) => cluster.until(what, timeoutMs, probe);

test('a node that lost its metadata records after another node was wiped and replaced is repaired', { timeout: 150_000 }, async (t) => {
  cluster.destroyWhenDone(t);
  try {
    cluster.run('up', '3');
    const leader = await cluster.agreedMetadataLeader([1, 2, 3], 10_000);
    await cluster.created(leader, '/event-types', businessEventType('pair'));
    const publish = async (tag: string) => {
      const r = await call(url(leader), 'POST', '/event-types/pair/events', Array.from({ length: 10 }, (_, k) => businessEvent(`${tag}${k}`)));
      assert.equal(r.status, 200, r.text);
    };
    await until('events accepted', 20_000, async () => {
      const r = await call(url(leader), 'POST', '/event-types/pair/events', [businessEvent('first')]);
      return r.status === 200 ? true : undefined;
    });
    await publish('a');

    // Node W's directory is wiped: it joins as a new member, which replaces its former one.
    const wiped = [1, 2, 3].find((i) => i !== leader)!;
    await cluster.killAndWait(wiped);
    rmSync(cluster.dataDir(wiped), { recursive: true, force: true });
    cluster.restartDown(wiped);
    const member = await until(`node ${wiped} to run a new member`, 30_000, async () => {
      const v = await view(wiped);
      return v !== undefined && v.metadata.member !== wiped ? v.metadata.member : undefined;
    });
    await until('the replacement: the new member a voter, the former one gone', 60_000, async () => {
      const ms = (await view(leader))?.metadata.members;
      return ms !== undefined && ms.length === 3 && ms.every((m) => m.suffrage === 'voter') && ms.some((m) => m.id === member) && !ms.some((m) => m.id === wiped) ? true : undefined;
    });
    await publish('b');

    // Node L loses every record of its metadata group (and its marker file): it keeps its member id
    // (it holds partition records) and starts the group empty and damaged.
    const lost = [1, 2, 3].find((i) => i !== leader && i !== wiped)!;
    await new Promise((r) => setTimeout(r, 300)); // the marker follows the last durable write
    await cluster.killAndWait(lost);
    const kv = await openRocksKv(cluster.dataDir(lost));
    await kv.write((b) => b.delRange(groupStart(0), groupStart(1)), { durable: true });
    await kv.close();
    rmSync(join(cluster.dataDir(lost), markerFileName));
    const run = cluster.restartDown(lost);
    await until(`node ${lost} to learn its floor, be repaired and apply the metadata`, 30_000, async () => {
      const [l, v] = await Promise.all([view(leader), view(lost)]);
      return l !== undefined && v !== undefined && !v.metadata.raft_damaged && v.metadata.applied_index >= l.metadata.commit_index ? true : undefined;
    });
    const said = run();
    t.diagnostic(`wiped ${wiped} (now ${member}), lost ${lost}; it said: ${said.split('\n').filter((l) => /member|damaged|floor/.test(l)).map((l) => (JSON.parse(l) as { msg: string }).msg).join(' | ')}`);
    assert.match(said, /keeps its member id/, 'it kept its member id');
    assert.equal((await view(lost))!.metadata.member, lost);
    // The group commits with it: a metadata write through it.
    const more = await call(url(lost), 'POST', '/event-types', businessEventType('after'));
    assert.equal(more.status, 201, more.text);
  } finally {
    const said = cluster.destroy();
    if (said !== undefined) t.diagnostic(said);
  }
});
