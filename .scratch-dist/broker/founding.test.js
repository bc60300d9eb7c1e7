// Goal: the founding rule of issue 9. An empty node founds a cluster only when every peer has answered
// that it is empty too (and all founders derive the same cluster id); it joins as a new member when a
// peer has a cluster that it did not found with its present disk; a founder that stopped before it
// finished founding founds again with the same id; a silent peer is waited for, never skipped.
// Method: decideFounding with scripted peer answers and a sleep that only counts rounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterIdOf, decideFounding } from './founding.js';
const quiet = { info: () => undefined, warn: () => undefined };
function decide(self, diskId, peers, rounds = { n: 0 }) {
    return decideFounding({
        self,
        diskId,
        peers: Object.keys(peers).map(Number),
        ask: async (p) => peers[p](rounds.n),
        sleep: async () => {
            rounds.n++;
            if (rounds.n > 50)
                throw new Error('still waiting after 50 rounds');
        },
        retryMs: 1,
        logger: quiet,
    });
}
const emptyPeer = (nodeId, diskId) => () => ({ nodeId, diskId, clusterId: '', founders: [] });
test('a fresh cluster: every node empty, each founds, all with the same founders and cluster id', async () => {
    const disks = { 1: 'd1', 2: 'd2', 3: 'd3' };
    const decisions = await Promise.all([1, 2, 3].map((self) => {
        const peers = {};
        for (const p of [1, 2, 3])
            if (p !== self)
                peers[p] = emptyPeer(p, disks[p]);
        return decide(self, disks[self], peers);
    }));
    const expected = [{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }, { id: 3, diskId: 'd3' }];
    for (const d of decisions)
        assert.deepEqual(d, { kind: 'found', clusterId: clusterIdOf(expected), founders: expected });
    assert.notEqual(clusterIdOf(expected), clusterIdOf([{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }, { id: 3, diskId: 'd3-wiped' }]), 'another disk, another cluster');
});
test('a wiped node: its peers have a cluster founded without its present disk, so it joins', async () => {
    const founders = [{ id: 1, diskId: 'd1' }, { id: 2, diskId: 'd2' }, { id: 3, diskId: 'd3' }];
    const member = (nodeId, diskId) => () => ({ nodeId, diskId, clusterId: 'c-1', founders });
    assert.deepEqual(await decide(3, 'd3-new', { 1: member(1, 'd1'), 2: () => undefined }), { kind: 'join', clusterId: 'c-1', learnedFrom: 1 });
    // A node that joined later answers with the cluster id and no founders of its own: the same.
    const joined = () => ({ nodeId: 2, diskId: 'd2-new', clusterId: 'c-1', founders: [] });
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
//# sourceMappingURL=founding.test.js.map