// Goal: the Raft stream on real sockets: messages of many groups arrive in order per group, tagged with
// their group, one batch per peer per send; coalesced heartbeats come back as exactly the messages
// sent; forwarded proposals carry the flow id; malformed input never reaches the handler; a peer that
// is down is reported unreachable (and a lost snapshot as not delivered to its group); the metadata
// group's single-group view still works through the dispatcher.
// Method: two or three GrpcTransports on 127.0.0.1 with port 0; recording handlers; a raw gRPC client
// for malformed input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { makeMessage, type Message } from '../raft/index.js';
import { GroupDispatcher, GrpcTransport, type GroupMessages, type TransportHandler } from './index.js';
import { raftProto } from './proto.js';
import { toWireMessage } from './codec.js';
import { proveCall } from './auth.js';
import { quietLogger, RecordingHandler, startNodes, stopNodes, testSecurity, until } from './test-support.js';

/** Bytes as hex (a Buffer and a Uint8Array with the same bytes compare equal), the rest as is. */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

test('messages of several groups reach each peer in one batch per send, in order per group, tagged with their group', async () => {
  const nodes = await startNodes(3);
  const [n1, n2, n3] = nodes as [(typeof nodes)[0], (typeof nodes)[0], (typeof nodes)[0]];
  try {
    const groups = [0, 1, 7, 4_294_967_295];
    const sends: GroupMessages[][] = [];
    for (let round = 0; round < 20; round++) {
      sends.push(
        groups.map((group, gi) => ({
          group,
          messages: [
            makeMessage({
              type: 'app',
              from: 1,
              to: 2,
              term: 5,
              logTerm: 5,
              index: round * 2,
              commit: round,
              entries: [
                { term: 5, index: round * 2 + 1, type: 'normal', data: Buffer.from(`g${group}r${round}a`) },
                { term: 5, index: round * 2 + 2, type: 'normal', data: Buffer.from(`g${group}r${round}b`) },
              ],
            }),
            makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 5 + gi, commit: round }),
            makeMessage({ type: 'vote', from: 1, to: 3, term: 6 + round, index: gi, logTerm: 5 }),
          ],
        })),
      );
    }
    for (const s of sends) n1.t.send(s);
    await until('every message', () => n2.h.received.length === 20 * 4 * 2 && n3.h.received.length === 20 * 4);
    assert.equal(n2.t.receivedBatches(), 20, 'one batch per send for node 2');
    assert.equal(n3.t.receivedBatches(), 20, 'one batch per send for node 3');
    for (const [node, to] of [[n2, 2], [n3, 3]] as const) {
      for (const group of groups) {
        const got = node.h.received.filter((r) => r.group === group).map((r) => plain(r.m));
        const sent = sends.flatMap((s) => s.filter((g) => g.group === group).flatMap((g) => g.messages.filter((m) => m.to === to))).map(plain);
        assert.deepEqual(got, sent, `group ${group} to node ${to}`);
      }
    }
  } finally {
    await stopNodes(nodes);
  }
});

test('coalesced heartbeats and responses of a thousand groups come back as exactly the messages sent', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    const sent: { group: number; m: Message }[] = [];
    for (let g = 0; g < 1000; g++) {
      sent.push({ group: g, m: makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 1 + (g % 17), commit: g * 3, context: g % 50 === 0 ? `inc/${g}` : '' }) });
      sent.push({ group: g, m: makeMessage({ type: 'heartbeatResp', from: 1, to: 2, term: 2 ** 40 + g, context: g % 7 === 0 ? 'x'.repeat(256) : '' }) });
    }
    n1.t.send(sent.map(({ group, m }) => ({ group, messages: [m] })));
    await until('2000 heartbeats', () => n2.h.received.length === 2000);
    assert.equal(n2.t.receivedBatches(), 1);
    const key = (r: { group: number; m: Message }) => `${r.group}/${r.m.type}`;
    const got = new Map(n2.h.received.map((r) => [key(r), r.m]));
    for (const r of sent) assert.deepEqual(got.get(key(r)), r.m, key(r));
  } finally {
    await stopNodes(nodes);
  }
});

test('a forwarded proposal carries its flow id and caller and returns the answer', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    const answer = await n1.t.forward(2, { command: Buffer.from('{"op":"x"}'), flowId: 'flow-123', deadlineMs: 2000 });
    assert.deepEqual(answer, { status: 'applied', index: 42, result: Buffer.from('{"ok":true}') });
    assert.equal(n2.h.proposals[0]!.flowId, 'flow-123');
    assert.equal(n2.h.proposals[0]!.from, 1);
    n2.h.onPropose = async () => ({ status: 'notLeader', leaderHint: 3 });
    assert.deepEqual(await n1.t.forward(2, { command: Buffer.from('{}'), flowId: '', deadlineMs: 2000 }), { status: 'notLeader', leaderHint: 3 });
    assert.ok(n1.t.reachable(2));
  } finally {
    await stopNodes(nodes);
  }
});

test('malformed messages are dropped before the handler, good ones in the same batch pass; a call without a sender is refused', async () => {
  const nodes = await startNodes(2);
  const n2 = nodes[1]!;
  const client = new (raftProto().RaftTransport)(`127.0.0.1:${n2.t.port}`, grpc.credentials.createInsecure());
  try {
    const good = { ...toWireMessage(makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3 })), group: 9, commit: '1' };
    const hb = { group: 4, term: '3', commit: '2', context: '' };
    const meta = new grpc.Metadata();
    meta.set('x-brook-from', '1');
    meta.set('x-brook-auth', proveCall(testSecurity.secret, 1, 2, '/brook.raft.v1.RaftTransport/Stream', Date.now()));
    await new Promise<void>((resolve, reject) => {
      const call = client.Stream(meta, (err) => (err ? reject(err) : resolve()));
      call.write({
        from: '1',
        incarnation: 'x',
        messages: [
          { ...good, to: '3' }, // for another node
          { ...good, term: String(2 ** 48 + 1) }, // a term above the bound
          { ...good, from: '4' }, // not the batch's sender
          good,
        ],
        heartbeats: [
          { ...hb, term: '9007199254740991' }, // above the bound
          { ...hb, context: 'y'.repeat(300) }, // context too long
          hb,
        ],
        heartbeat_responses: [{ ...hb, commit: '5' }], // a response carries no commit
      });
      call.write({ from: 'zero', messages: [good] }); // unreadable sender: the whole batch
      call.write({ from: '3', messages: [{ ...good, from: '3' }] }); // not the caller
      call.end();
    });
    await until('the good messages', () => n2.h.received.length >= 2);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      n2.h.received.map((r) => [r.group, r.m.type, r.m.commit]),
      [
        [9, 'heartbeat', 1],
        [4, 'heartbeat', 2],
      ],
    );
    assert.equal(n2.t.decodeFailures(), 8);
    // No x-brook-from: refused before anything is decoded.
    const refused = await new Promise<grpc.ServiceError | null>((resolve) => {
      const call = client.Stream((err) => resolve(err));
      call.write({ from: '1', messages: [good] });
      call.end();
    });
    assert.equal(refused?.code, grpc.status.UNAUTHENTICATED);
    assert.equal(n2.h.received.length, 2);
    assert.equal(n2.t.decodeFailures(), 8);
  } finally {
    client.close();
    await stopNodes(nodes);
  }
});

test('a peer that is down is reported unreachable, and a snapshot sent to it as not delivered to its group', async () => {
  const h = new RecordingHandler();
  // A port with nobody listening: start and stop a transport on it.
  const gone = await GrpcTransport.start({ self: 9, incarnation: 'g', listen: '127.0.0.1:0', peers: [], handler: new RecordingHandler(), logger: quietLogger, security: testSecurity });
  const port = gone.port;
  await gone.close();
  const a = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 9, raftAddress: `127.0.0.1:${port}` }], handler: h, logger: quietLogger, security: testSecurity });
  try {
    const snap = (group: number) => ({
      group,
      messages: [
        makeMessage({
          type: 'snap',
          from: 1,
          to: 9,
          term: 2,
          snapshot: { metadata: { index: 5, term: 1, confState: { voters: [1, 9], learners: [] } }, data: Buffer.from('x') },
        }),
      ],
    });
    a.send([snap(3), snap(5)]);
    // A member without an address: reported at once.
    a.send([{ group: 6, messages: [makeMessage({ type: 'snap', from: 1, to: 8, term: 2, snapshot: snap(6).messages[0]!.snapshot })] }]);
    await until('unreachable', () => h.unreachables.includes(9) && h.unreachables.includes(8));
    await until('snapshot statuses', () => h.snapshots.length >= 3);
    assert.deepEqual(
      h.snapshots.map(([g, p, d]) => `${g}/${p}/${d}`).sort(),
      ['3/9/false', '5/9/false', '6/8/false'],
    );
    assert.ok(!a.reachable(9));
    assert.equal((await a.forward(9, { command: Buffer.from('{}'), flowId: 'f', deadlineMs: 500 })).status, 'unavailable');
  } finally {
    await a.close();
  }
});

test('the metadata group is group 0: its messages and forwarded proposals go through the dispatcher, other groups elsewhere', async () => {
  const got: Message[] = [];
  const meta: TransportHandler = {
    receive: (m) => got.push(m),
    unreachable: () => {},
    snapshotStatus: () => {},
    propose: async () => ({ status: 'applied', index: 7, result: Buffer.from('{}') }),
  };
  const other: Message[] = [];
  const d2 = new GroupDispatcher({ logger: quietLogger });
  d2.register(0, meta);
  d2.register(12, { receive: (m) => other.push(m), unreachable: () => {}, snapshotStatus: () => {} });
  const b = await GrpcTransport.start({ self: 2, incarnation: 'b', listen: '127.0.0.1:0', peers: [], handler: d2, logger: quietLogger, security: testSecurity });
  const a = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${b.port}` }], handler: new GroupDispatcher({ logger: quietLogger }), logger: quietLogger, security: testSecurity });
  b.addPeer({ id: 1, raftAddress: `127.0.0.1:${a.port}` });
  try {
    a.send([{ group: 0, messages: [makeMessage({ type: 'vote', from: 1, to: 2, term: 4 }), makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 4, commit: 3 })] }]);
    a.send([{ group: 12, messages: [makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 9 })] }]);
    await until('both groups', () => got.length === 2 && other.length === 1);
    assert.deepEqual(got.map((m) => m.type), ['vote', 'heartbeat']);
    assert.equal(other[0]!.term, 9);
    assert.deepEqual(await a.forward(2, { command: Buffer.from('{}'), flowId: 'f', deadlineMs: 1000 }), { status: 'applied', index: 7, result: Buffer.from('{}') });
    assert.ok(a.reachable(2));
  } finally {
    await a.close();
    await b.close();
  }
});

// A node shuts its transport down while its host may still be sending (a Ready in flight, the
// node-level ping, a forward begun before the close): a gRPC call on the closed channel throws
// ("Channel has been shut down"), and an exception there is uncaught and fatal at shutdown.
test('a closed transport drops sends and pings and answers calls as unavailable, without throwing', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    await n1.t.close();
    const msg = makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3, commit: 0 });
    assert.doesNotThrow(() => n1.t.send([{ group: 1, messages: [msg] }]));
    assert.doesNotThrow(() => n1.t.ping(0));
    const req = { group: 5, topic: 1, partition: 0, epoch: 0, requestId: 'r1', flowId: '', deadlineMs: 500, events: [Buffer.from('{}')] };
    assert.equal((await n1.t.forwardAppend(2, req)).status, 'unavailable');
    assert.deepEqual((await n1.t.forwardAppendMany(2, [req])).map((a) => a.status), ['unavailable']);
    assert.equal((await n1.t.forward(2, { command: Buffer.from('x'), flowId: '', deadlineMs: 500 })).status, 'unavailable');
    assert.equal(await n1.t.identify(2, 'disk', 500), undefined);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(n2.h.received.length, 0, 'nothing reached the peer after the close');
  } finally {
    await n2.t.close();
  }
});
