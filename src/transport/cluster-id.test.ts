// Goal: a node of another cluster (a peer address that points at it by mistake: same node ids, same
// secret, groups numbered alike) is refused on every node-to-node call, Raft stream and forwarded
// proposal alike, with a log line on both sides that names the two clusters; nodes of one cluster,
// and a node that has no cluster id yet (it asks Identify before it founds or joins one), are not.
// Method: two GrpcTransports on 127.0.0.1 proving the same secret, each with an identity naming a
// cluster id; recording handlers and loggers; the authenticator on its own for the rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { makeMessage } from '../raft/index.js';
import { CallAuthenticator, clusterKey, fromKey, proveCall } from './auth.js';
import type { PeerIdentity } from './index.js';
import { quietLogger, RecordingLogger, startNodes, stopNodes, testSecurity, until } from './test-support.js';

const identity = (nodeId: number, clusterId: string): PeerIdentity => ({ nodeId, diskId: `disk-${nodeId}`, clusterId, founders: [] });

test('the authenticator refuses a call naming another cluster, and takes one naming none or its own', () => {
  let ours = 'cluster-a';
  const auth = new CallAuthenticator({ self: 2, security: { secret: testSecurity.secret }, isMember: () => true, clusterId: () => ours, logger: quietLogger });
  const call = (path: string, cluster: string | undefined) => {
    const m = new grpc.Metadata();
    m.set(fromKey, '1');
    m.set('x-brook-auth', proveCall(testSecurity.secret, 1, 2, path, Date.now()));
    if (cluster !== undefined) m.set(clusterKey, cluster);
    return auth.check(m, path, undefined);
  };
  const stream = '/brook.raft.v1.RaftTransport/Stream';
  assert.equal(call(stream, 'cluster-a').ok, true);
  assert.equal(call(stream, undefined).ok, true, 'a caller without a cluster id yet (or of an older version)');
  const v = call(stream, 'cluster-b');
  assert.ok(!v.ok && v.code === grpc.status.PERMISSION_DENIED && /node 1 belongs to cluster cluster-b, this node to cluster cluster-a/.test(v.details), JSON.stringify(v));
  assert.equal(call('/brook.forward.v1.Forward/Append', 'cluster-b').ok, false);
  assert.equal(call('/brook.raft.v1.RaftTransport/Identify', 'cluster-b').ok, true, 'Identify tells a node which cluster the other belongs to');
  assert.equal(auth.otherClusterCalls(), 2);
  // A node that has no cluster id itself refuses nothing for it.
  ours = '';
  assert.equal(call(stream, 'cluster-b').ok, true);
});

test('a node of another cluster is refused on the Raft stream and on forwarded calls, with a log line on both sides', async () => {
  const logs = new Map<number, RecordingLogger>();
  const clusters = new Map([
    [1, 'cluster-a'],
    [2, 'cluster-b'],
  ]);
  const nodes = await startNodes(2, (id) => {
    const logger = new RecordingLogger();
    logs.set(id, logger);
    return { logger, identify: () => identity(id, clusters.get(id)!), clusterId: () => clusters.get(id)! };
  });
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    const vote = (term: number) => [{ group: 0, messages: [makeMessage({ type: 'vote', from: 1, to: 2, term, index: 0, logTerm: 0 })] }];
    n1.t.send(vote(7));
    await until('node 2 to refuse node 1', () => logs.get(2)!.lines.some((l) => /another cluster/.test(l.msg)));
    await until('node 1 to say it is refused', () => logs.get(1)!.lines.some((l) => l.msg === 'the peer refuses this node\'s calls'));
    const said = logs.get(1)!.lines.find((l) => l.msg === 'the peer refuses this node\'s calls')!;
    assert.match(JSON.stringify(said.obj), /belongs to cluster cluster-a, this node to cluster cluster-b/);
    const refused = await n1.t.forward(2, { command: Buffer.from('{}'), flowId: 'f', deadlineMs: 2000 });
    assert.equal(refused.status, 'unavailable');
    assert.equal(n2.h.received.length, 0, 'a Raft message of another cluster reached the handler');
    assert.equal(n2.h.proposals.length, 0, 'a proposal of another cluster reached the handler');
    // Identify still answers: it is how a node learns which cluster another belongs to.
    assert.equal((await n1.t.identify(2, 'disk-1', 2000))?.clusterId, 'cluster-b');

    // The same cluster (node 2 was pointed right): the next stream is taken.
    clusters.set(2, 'cluster-a');
    await until('a message of the same cluster', () => {
      n1.t.send(vote(8));
      return n2.h.received.length > 0;
    });
    assert.equal(n2.h.received[0]!.group, 0);
    assert.equal((await n1.t.forward(2, { command: Buffer.from('{}'), flowId: 'f', deadlineMs: 2000 })).status, 'applied');
  } finally {
    await stopNodes(nodes);
  }
});
