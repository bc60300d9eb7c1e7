// Goal: AppendMany on real sockets. The parts of one call each come back with their own answer, in
// order, as the leader gave them (one refused part does not spoil the others; a part whose leader
// never answers is unavailable at its deadline while the others keep their answers); an answer with
// the wrong number of replies is believed for no part. Rolling upgrades: a node of an older build
// (no AppendMany: UNIMPLEMENTED) is sent the parts as single Appends, and a node of this build still
// accepts the single Append an older node sends.
// Method: GrpcTransports on 127.0.0.1; the "older build" is this build's Forward service served
// without its AppendMany handler, and the forged peer a raw gRPC server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { GrpcTransport, type AppendRequest } from './index.js';
import { forwardProto } from './proto.js';
import { TransportServer } from './server.js';
import { toWireAppendRequest } from './forward-codec.js';
import { proveCall } from './auth.js';
import { quietLogger, RecordingHandler, startNodes, stopNodes, testSecurity } from './test-support.js';

const part = (partition: number, n: number): AppendRequest => ({
  group: 10 + partition,
  topic: 1,
  partition,
  epoch: 4,
  requestId: `req-1.${partition}`,
  flowId: 'flow-1',
  deadlineMs: 2000,
  events: Array.from({ length: n }, (_, k) => Buffer.from(`{"p":${partition},"k":${k}}`)),
});

test('forwardAppendMany: every part gets the answer its own leader gave, in order', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    n2.h.onAppend = async (_from, r) => {
      switch (r.partition) {
        case 0:
          return { status: 'committed', epoch: r.epoch, firstOffset: 10, lastOffset: 10 + r.events.length - 1 };
        case 1:
          return { status: 'notLeader', leaderHint: 3, epoch: 5 };
        case 2:
          return { status: 'sealed', timeline: 'tl-9' };
        default:
          return { status: 'unavailable', detail: 'no quorum' };
      }
    };
    const sent = [part(0, 2), part(1, 1), part(2, 3), part(3, 1)];
    const answers = await n1.t.forwardAppendMany(2, sent);
    assert.deepEqual(answers, [
      { status: 'committed', epoch: 4, firstOffset: 10, lastOffset: 11 },
      { status: 'notLeader', leaderHint: 3, epoch: 5 },
      { status: 'sealed', timeline: 'tl-9' },
      { status: 'unavailable', detail: 'no quorum' },
    ]);
    // Each part reached the handler whole, from node 1, with its own request id, epoch and events.
    const seen = n2.h.appends.map((a) => ({ from: a.from, ...a.req, events: a.req.events.map(String) }));
    assert.deepEqual(seen, sent.map((p) => ({ from: 1, ...p, events: p.events.map(String) })));
    // A committed answer that does not cover its part's events is not believed, for that part alone.
    n2.h.onAppend = async (_from, r) => ({ status: 'committed', epoch: r.epoch, firstOffset: 0, lastOffset: r.partition === 1 ? 5 : r.events.length - 1 });
    assert.deepEqual((await n1.t.forwardAppendMany(2, sent)).map((a) => a.status), ['committed', 'unavailable', 'committed', 'committed']);
    // No such peer: every part unavailable.
    assert.deepEqual((await n1.t.forwardAppendMany(9, sent)).map((a) => a.status), ['unavailable', 'unavailable', 'unavailable', 'unavailable']);
  } finally {
    await stopNodes(nodes);
  }
});

test('forwardAppendMany: a malformed part is refused alone; a part whose leader never answers is unavailable at its deadline, the others keep their answers', async () => {
  const nodes = await startNodes(2);
  const [n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
  try {
    n2.h.onAppend = async (_from, r) => (r.partition === 2 ? new Promise(() => {}) : { status: 'committed', epoch: r.epoch, firstOffset: 0, lastOffset: r.events.length - 1 });
    const t0 = Date.now();
    const answers = await n1.t.forwardAppendMany(2, [part(0, 1), { ...part(1, 1), requestId: '' }, { ...part(2, 1), deadlineMs: 300 }, { ...part(3, 1), group: 0 }]);
    const took = Date.now() - t0;
    assert.deepEqual(answers.map((a) => a.status), ['committed', 'refused', 'unavailable', 'refused']);
    assert.match((answers[1] as { detail: string }).detail, /request_id/);
    assert.ok(took >= 250 && took < 1900, `answered after ${took} ms (the held part's 300 ms deadline, not the others' 2000 ms)`);
    assert.deepEqual(n2.h.appends.map((a) => a.req.partition), [0, 2], 'the refused parts never reached the handler');
  } finally {
    await stopNodes(nodes);
  }
});

/**
 * This build's Forward service as node 2, counting the calls; `older`: without its AppendMany handler
 * (a node of an older build).
 */
async function countedServer(handler: RecordingHandler, older: boolean): Promise<{ port: number; appends: () => number; many: () => number; close: () => void }> {
  const services = new TransportServer({ self: 2, handler, logger: quietLogger });
  const { AppendMany, ...rest } = services.forwardService();
  let appends = 0;
  let many = 0;
  const server = new grpc.Server();
  server.addService(forwardProto().Forward.service, {
    ...rest,
    Append: (call: Parameters<typeof rest.Append>[0], cb: Parameters<typeof rest.Append>[1]) => {
      appends++;
      rest.Append(call, cb);
    },
    ...(older
      ? {}
      : {
          AppendMany: (call: Parameters<typeof AppendMany>[0], cb: Parameters<typeof AppendMany>[1]) => {
            many++;
            AppendMany(call, cb);
          },
        }),
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { port, appends: () => appends, many: () => many, close: () => server.forceShutdown() };
}

test('forwardAppendMany: the parts for one peer travel in one AppendMany call; a single part in a single Append', async () => {
  const h = new RecordingHandler();
  const peer = await countedServer(h, false);
  const t = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${peer.port}` }], handler: new RecordingHandler(), logger: quietLogger, security: testSecurity });
  try {
    assert.deepEqual((await t.forwardAppendMany(2, [part(0, 1), part(1, 2), part(2, 1), part(3, 1)])).map((a) => a.status), ['committed', 'committed', 'committed', 'committed']);
    assert.deepEqual([peer.many(), peer.appends(), h.appends.length], [1, 0, 4]);
    assert.deepEqual((await t.forwardAppendMany(2, [part(0, 1)])).map((a) => a.status), ['committed']);
    assert.deepEqual([peer.many(), peer.appends(), h.appends.length], [1, 1, 5]);
  } finally {
    await t.close();
    peer.close();
  }
});

test('rolling upgrade: a peer of an older build (AppendMany unknown) is sent the parts as single Appends, each answered', async () => {
  const h = new RecordingHandler();
  h.onAppend = async (_from, r) => ({ status: 'committed', epoch: r.epoch, firstOffset: r.partition * 100, lastOffset: r.partition * 100 + r.events.length - 1 });
  const old = await countedServer(h, true);
  const t = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${old.port}` }], handler: new RecordingHandler(), logger: quietLogger, security: testSecurity });
  try {
    const sent = [part(0, 1), part(1, 2), part(2, 1)];
    const expected = sent.map((p) => ({ status: 'committed', epoch: 4, firstOffset: p.partition * 100, lastOffset: p.partition * 100 + p.events.length - 1 }));
    assert.deepEqual(await t.forwardAppendMany(2, sent), expected);
    assert.equal(old.appends(), 3, 'one single Append per part');
    assert.deepEqual(h.appends.map((a) => a.req.requestId), sent.map((p) => p.requestId), 'each part once: the refused AppendMany appended nothing');
    // Later calls go to it as single Appends at once.
    assert.deepEqual(await t.forwardAppendMany(2, sent), expected);
    assert.equal(old.appends(), 6);
  } finally {
    await t.close();
    old.close();
  }
});

test('rolling upgrade: a node of this build accepts the single Append a node of an older build sends', async () => {
  const nodes = await startNodes(2);
  const n2 = nodes[1]!;
  const client = new (forwardProto().Forward)(`127.0.0.1:${n2.t.port}`, grpc.credentials.createInsecure());
  try {
    const meta = new grpc.Metadata();
    meta.set('x-brook-from', '1');
    meta.set('x-brook-auth', proveCall(testSecurity.secret, 1, 2, '/brook.forward.v1.Forward/Append', Date.now()));
    const reply = await new Promise<{ status: string; first_offset: string; last_offset: string }>((resolve, reject) =>
      client.Append(toWireAppendRequest(part(1, 2)), meta, (err, r) => (err ? reject(err) : resolve(r as never))),
    );
    assert.deepEqual([reply.status, reply.first_offset, reply.last_offset], ['APPEND_STATUS_COMMITTED', '0', '1']);
    assert.deepEqual(n2.h.appends.map((a) => [a.from, a.req.requestId, a.req.events.length]), [[1, 'req-1.1', 2]]);
  } finally {
    client.close();
    await stopNodes(nodes);
  }
});

test('forwardAppendMany: an answer with another number of replies than parts is believed for no part', async () => {
  const server = new grpc.Server();
  server.addService(forwardProto().Forward.service, {
    AppendMany: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { replies: [{ status: 'APPEND_STATUS_COMMITTED', epoch: '4', first_offset: '0', last_offset: '0' }] }),
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  const t = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${port}` }], handler: new RecordingHandler(), logger: quietLogger, security: testSecurity });
  try {
    const answers = await t.forwardAppendMany(2, [part(0, 1), part(1, 1)]);
    assert.deepEqual(answers.map((a) => a.status), ['unavailable', 'unavailable']);
    assert.match((answers[0] as { detail: string }).detail, /1 answers for 2 parts/);
  } finally {
    await t.close();
    server.forceShutdown();
  }
});
