// Goal: forwarded appends and bounds on real sockets: each answer kind comes back as the leader gave
// it, with the caller's id, request id, flow id and events intact; a leader that does not answer in
// time gives `unavailable` at the deadline (the caller is never left hanging); a malformed request is
// refused before the handler sees it; a malformed answer from a peer becomes `unavailable`.
// Method: two GrpcTransports on 127.0.0.1; a raw gRPC client for malformed requests and a raw gRPC
// server for malformed answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { GrpcTransport, TransportError, type AppendRequest } from './index.js';
import { forwardProto } from './proto.js';
import { toWireAppendRequest } from './forward-codec.js';
import { proveCall } from './auth.js';
import { quietLogger, RecordingHandler, startNodes, stopNodes, testSecurity } from './test-support.js';

const req: AppendRequest = {
  group: 5,
  topic: 12,
  partition: 3,
  epoch: 7,
  requestId: 'batch-1/p3',
  flowId: 'flow-9',
  deadlineMs: 2000,
  events: [Buffer.from('{"n":1}'), Buffer.from('{"n":2}'), Buffer.from('{"n":3}')],
};

test('forwardAppend: committed, notLeader, unavailable and refused come back as the leader answered', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    n2.h.onAppend = async (_from, r) => ({ status: 'committed', epoch: r.epoch, firstOffset: 100, lastOffset: 100 + r.events.length - 1 });
    assert.deepEqual(await n1.t.forwardAppend(2, req), { status: 'committed', epoch: 7, firstOffset: 100, lastOffset: 102 });
    const seen = n2.h.appends[0]!;
    assert.equal(seen.from, 1);
    assert.deepEqual({ ...seen.req, events: seen.req.events.map(String) }, { ...req, deadlineMs: 2000, events: req.events.map(String) });
    n2.h.onAppend = async () => ({ status: 'notLeader', leaderHint: 3, epoch: 8 });
    assert.deepEqual(await n1.t.forwardAppend(2, req), { status: 'notLeader', leaderHint: 3, epoch: 8 });
    n2.h.onAppend = async () => ({ status: 'unavailable', detail: 'no quorum' });
    assert.deepEqual(await n1.t.forwardAppend(2, req), { status: 'unavailable', detail: 'no quorum' });
    n2.h.onAppend = async () => ({ status: 'refused', detail: 'batch too large' });
    assert.deepEqual(await n1.t.forwardAppend(2, req), { status: 'refused', detail: 'batch too large' });
    n2.h.onAppend = async () => {
      throw new Error('disk on fire');
    };
    assert.deepEqual(await n1.t.forwardAppend(2, req), { status: 'unavailable', detail: 'disk on fire' });
    // A committed answer that does not cover the events sent is not believed.
    n2.h.onAppend = async () => ({ status: 'committed', epoch: 7, firstOffset: 100, lastOffset: 100 });
    assert.equal((await n1.t.forwardAppend(2, req)).status, 'unavailable');
    // No such peer.
    assert.equal((await n1.t.forwardAppend(9, req)).status, 'unavailable');
  } finally {
    await stopNodes(nodes);
  }
});

test('forwardAppend: a sealed answer names the timeline switch; forwardControl: a seal or base comes back as the leader applied it', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    n2.h.onAppend = async () => ({ status: 'sealed', timeline: 'tl-2' });
    assert.deepEqual(await n1.t.forwardAppend(2, req), { status: 'sealed', timeline: 'tl-2' });
    const seal = { group: 5, topic: 1, partition: 3, epoch: 7, flowId: 'f', deadlineMs: 2000, command: { kind: 'seal', timeline: 'tl-2', floor: 40 } } as const;
    n2.h.onControl = async (_from, r) => ({ status: 'applied', epoch: r.epoch, next: 57 });
    assert.deepEqual(await n1.t.forwardControl(2, seal), { status: 'applied', epoch: 7, next: 57 });
    assert.deepEqual(n2.h.controls[0], { from: 1, req: seal });
    n2.h.onControl = async () => ({ status: 'refused', detail: 'sealed for another switch', sealedFor: 'tl-1' });
    assert.deepEqual(await n1.t.forwardControl(2, seal), { status: 'refused', detail: 'sealed for another switch', sealedFor: 'tl-1' });
    n2.h.onControl = async () => ({ status: 'notLeader', leaderHint: 3, epoch: 8 });
    assert.deepEqual(await n1.t.forwardControl(2, { ...seal, command: { kind: 'base', base: 12 } }), { status: 'notLeader', leaderHint: 3, epoch: 8 });
    assert.deepEqual(n2.h.controls[2]!.req.command, { kind: 'base', base: 12 });
    // Applied in another term than routed for: not believed.
    n2.h.onControl = async () => ({ status: 'applied', epoch: 9, next: 57 });
    assert.equal((await n1.t.forwardControl(2, seal)).status, 'unavailable');
    assert.equal((await n1.t.forwardControl(9, seal)).status, 'unavailable', 'no such peer');
  } finally {
    await stopNodes(nodes);
  }
});

test('forwardAppend: a leader that never answers gives unavailable at the deadline, on both sides', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    n2.h.onAppend = () => new Promise(() => {});
    const t0 = Date.now();
    const answer = await n1.t.forwardAppend(2, { ...req, deadlineMs: 300 });
    const took = Date.now() - t0;
    assert.equal(answer.status, 'unavailable');
    assert.ok(took >= 250 && took < 3000, `answered after ${took} ms`);
    assert.equal(n2.h.appends.length, 1);
  } finally {
    await stopNodes(nodes);
  }
});

test('a malformed append is refused before the handler; so is a call that names no caller', async () => {
  const nodes = await startNodes(2);
  const n2 = nodes[1]!;
  const client = new (forwardProto().Forward)(`127.0.0.1:${n2.t.port}`, grpc.credentials.createInsecure());
  const call = (body: object, from: string | undefined) =>
    new Promise<{ err: grpc.ServiceError | null; reply: { status: string; detail: string } | undefined }>((resolve) => {
      const meta = new grpc.Metadata();
      if (from !== undefined) meta.set('x-brook-from', from);
      if (from !== undefined && /^\d+$/.test(from)) meta.set('x-brook-auth', proveCall(testSecurity.secret, Number(from), 2, '/brook.forward.v1.Forward/Append', Date.now()));
      client.Append(body, meta, (err, reply) => resolve({ err, reply: reply as never }));
    });
  try {
    const good = toWireAppendRequest(req);
    for (const [what, body] of [
      ['metadata group', { ...good, group: 0 }],
      ['no request id', { ...good, request_id: '' }],
      ['no events', { ...good, events: [] }],
      ['epoch 2^53', { ...good, epoch: '9007199254740993' }],
    ] as const) {
      const { reply } = await call(body, '1');
      assert.equal(reply?.status, 'APPEND_STATUS_REFUSED', what);
    }
    assert.equal((await call(good, undefined)).err?.code, grpc.status.UNAUTHENTICATED);
    assert.equal((await call(good, '2')).err?.code, grpc.status.UNAUTHENTICATED, 'the node itself');
    assert.equal((await call(good, 'x')).err?.code, grpc.status.UNAUTHENTICATED);
    assert.equal(n2.h.appends.length, 0);
    assert.equal((await call(good, '1')).reply?.status, 'APPEND_STATUS_COMMITTED');
  } finally {
    client.close();
    await stopNodes(nodes);
  }
});

test('bounds: the answer as the replica gives it; a refusal or an unknown group fails with a TransportError', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    n2.h.onBounds = async (from, r) => ({ oldest: 4, newest: 99 + r.partition, epoch: 3, leader: from });
    assert.deepEqual(await n1.t.bounds(2, { group: 5, topic: 1, partition: 1 }), { oldest: 4, newest: 100, epoch: 3, leader: 1 });
    n2.h.onBounds = async () => {
      throw new TransportError('unavailable', 'group 5 is not hosted on this node');
    };
    await assert.rejects(n1.t.bounds(2, { group: 5, topic: 1, partition: 1 }), (e: TransportError) => e.kind === 'unavailable' && /not hosted/.test(e.message));
    await assert.rejects(n1.t.bounds(2, { group: 0, topic: 1, partition: 1 }), (e: TransportError) => e.kind === 'refused');
    n2.h.onBounds = async () => ({ oldest: -5, newest: 1, epoch: 1, leader: 0 });
    await assert.rejects(n1.t.bounds(2, { group: 5, topic: 1, partition: 1 }), (e: TransportError) => e.kind === 'unavailable' && /malformed/.test(e.message));
  } finally {
    await stopNodes(nodes);
  }
});

test('a malformed answer from a peer (a forged server) is never believed', async () => {
  const server = new grpc.Server();
  server.addService(forwardProto().Forward.service, {
    Append: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { status: 'APPEND_STATUS_COMMITTED', epoch: '7', first_offset: '0', last_offset: '99' }),
    Bounds: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { oldest: '0', newest: '9007199254740993', epoch: '1', leader: '0' }),
    Read: (call: grpc.ServerWritableStream<unknown, object>) => {
      call.write({ first_offset: '5', events: [Buffer.from('a')], oldest: '0', newest: '9', epoch: '1' });
      call.write({ first_offset: '3', events: [Buffer.from('b')], oldest: '0', newest: '9', epoch: '1' }); // goes back
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  const t = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${port}` }], handler: new RecordingHandler(), logger: quietLogger, security: testSecurity });
  try {
    assert.equal((await t.forwardAppend(2, req)).status, 'unavailable');
    await assert.rejects(t.bounds(2, { group: 5, topic: 1, partition: 0 }), TransportError);
    const got: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const c of t.read(2, { group: 5, topic: 1, partition: 0, afterOffset: -1, maxEvents: 10, maxBytes: 100, waitMs: 0, follow: false, flowId: '' })) {
          got.push(...c.events.map((e) => e.offset));
        }
      })(),
      (e: TransportError) => e.kind === 'unavailable' && /malformed read chunk/.test(e.message),
    );
    assert.deepEqual(got, [5]);
  } finally {
    await t.close();
    server.forceShutdown();
  }
});
