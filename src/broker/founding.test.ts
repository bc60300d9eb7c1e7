// Goal: the founding rule of issue 9. An empty node founds a cluster only when every peer has answered
// that it is empty too (and all founders derive the same cluster id); it joins as a new member when a
// peer has a cluster that it did not found with its present disk; a founder that stopped before it
// finished founding founds again with the same id; a silent peer is waited for, never skipped.
// Method: decideFounding with scripted peer answers and a sleep that only counts rounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeId } from '../raft/index.js';
import type { PeerIdentity } from '../transport/index.js';
import { clusterIdOf, decideFounding, foundOrJoin, type FoundingDecision } from './founding.js';

const quiet = { info: () => undefined, warn: () => undefined };

function decide(self: NodeId, diskId: string, peers: Record<number, (round: number) => PeerIdentity | undefined>, rounds = { n: 0 }): Promise<FoundingDecision> {
  return decideFounding({
    self,
    diskId,
    peers: Object.keys(peers).map(Number),
    ask: async (p) => peers[p]!(rounds.n),
    sleep: async () => {
      rounds.n++;
      if (rounds.n > 50) throw new Error('still waiting after 50 rounds');
    },
    retryMs: 1,
    logger: quiet,
  });
}

const emptyPeer = (nodeId: NodeId, diskId: string) => (): PeerIdentity => ({ nodeId, diskId, clusterId: '', founders: [] });

test('a fresh cluster: every node empty, each founds, all with the same founders and cluster id', async () => {
  const disks: Record<number, string> = { 1: 'd1', 2: 'd2', 3: 'd3' };
  const decisions = await Promise.all(
    [1, 2, 3].map((self) => {
      const peers: Record<number, () => PeerIdentity> = {};
      for (const p of [1, 2, 3]) if (p !== self) peers[p] = emptyPeer(p, disks[p]!);
      return decide(self, disks[self]!, peers);
    }),
  );
  const expected = [{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }, { id: 3, diskId: 'd3' }];
  for (const d of decisions) assert.deepEqual(d, { kind: 'found', clusterId: clusterIdOf(expected), founders: expected });
  assert.notEqual(clusterIdOf(expected), clusterIdOf([{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }, { id: 3, diskId: 'd3-wiped' }]), 'another disk, another cluster');
});

test('a wiped node: its peers have a cluster founded without its present disk, so it joins', async () => {
  const founders = [{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }, { id: 3, diskId: 'd3' }];
  const member = (nodeId: NodeId, diskId: string) => (): PeerIdentity => ({ nodeId, diskId, clusterId: 'c-1', founders });
  assert.deepEqual(await decide(3, 'd3-new', { 1: member(1, 'd1'), 2: () => undefined }), { kind: 'join', clusterId: 'c-1', learnedFrom: 1 });
  // A node that joined later answers with the cluster id and no founders of its own: the same.
  const joined = (): PeerIdentity => ({ nodeId: 2, diskId: 'd2-new', clusterId: 'c-1', founders: [] });
  assert.deepEqual(await decide(3, 'd3-new', { 1: () => undefined, 2: joined }), { kind: 'join', clusterId: 'c-1', learnedFrom: 2 });
});

test('a founder that stopped before it finished founding finds itself among the founders and founds', async () => {
  const founders = [{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }];
  const d = await decide(2, 'd2', { 1: () => ({ nodeId: 1, diskId: 'd1', clusterId: 'c-9', founders }) });
  assert.deepEqual(d, { kind: 'found', clusterId: 'c-9', founders });
});

test('a silent peer is waited for: no founding until it answers', async () => {
  const rounds = { n: 0 };
  const d = await decide(1, 'd1', { 2: emptyPeer(2, 'd2'), 3: (round) => (round < 5 ? undefined : { nodeId: 3, diskId: 'd3', clusterId: '', founders: [] }) }, rounds);
  assert.equal(rounds.n, 5, 'asked again until node 3 answered');
  assert.equal(d.kind, 'found');
  // And a peer that never answers keeps it waiting (the test's sleep gives up after 50 rounds).
  await assert.rejects(decide(1, 'd1', { 2: emptyPeer(2, 'd2'), 3: () => undefined }), /still waiting after 50 rounds/);
});

test('an answer from another node id than the one asked does not count', async () => {
  await assert.rejects(decide(1, 'd1', { 2: emptyPeer(3, 'd3') }), /still waiting/);
});

// foundOrJoin: what the composition root does with the decision, on a fake directory.
class FakeDisk {
  identity: { diskId: string; clusterId: string; founders: { id: NodeId; diskId: string }[] };
  writes = 0;
  constructor(diskId: string, clusterId = '', founders: { id: NodeId; diskId: string }[] = []) {
    this.identity = { diskId, clusterId, founders };
  }
  async setCluster(clusterId: string, founders: readonly { id: NodeId; diskId: string }[]): Promise<void> {
    this.writes++;
    this.identity = { ...this.identity, clusterId, founders: [...founders] };
  }
}

test('foundOrJoin: a cluster of one (nobody to ask) founds alone and records it', async () => {
  const disk = new FakeDisk('d1');
  assert.deepEqual(await foundOrJoin(disk, 1, [], undefined, quiet), [1]);
  assert.equal(disk.identity.clusterId, clusterIdOf([{ id: 1, diskId: 'd1' }]));
  assert.equal(disk.writes, 1);
});

test('foundOrJoin: a directory joining an existing cluster records it with no founders and gets no founding voters', async () => {
  const disk = new FakeDisk('d9');
  const existing = [{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }, { id: 3, diskId: 'd3' }];
  const ask = async (p: NodeId): Promise<PeerIdentity> => ({ nodeId: p, diskId: `d${p}`, clusterId: 'c1', founders: existing });
  assert.deepEqual(await foundOrJoin(disk, 3, [1, 2], ask, quiet), []);
  assert.deepEqual(disk.identity, { diskId: 'd9', clusterId: 'c1', founders: [] });
});

test('foundOrJoin: a directory that already belongs to a cluster is not asked about again', async () => {
  const founders = [{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }];
  const founder = new FakeDisk('d2', 'c1', founders);
  const asked: NodeId[] = [];
  const ask = async (p: NodeId): Promise<PeerIdentity | undefined> => { asked.push(p); return undefined; };
  assert.deepEqual(await foundOrJoin(founder, 2, [1], ask, quiet), [1, 2], 'a founder whose group is still empty founds');
  const joined = new FakeDisk('d7', 'c1', founders);
  assert.deepEqual(await foundOrJoin(joined, 2, [1], ask, quiet), [], 'another directory of the same node joins');
  assert.deepEqual(asked, []);
  assert.equal(founder.writes + joined.writes, 0);
});
