// Goal: AppendMany and the append stream on real sockets. The parts of one call each come back with their own answer, in
// order, as the leader gave them (one refused part does not spoil the others; a part whose leader
// never answers is unavailable at its deadline while the others keep their answers); an answer with
// the wrong number of replies is believed for no part. Rolling upgrades: a node of an older build
// (no append stream, or no AppendMany either: UNIMPLEMENTED) is sent unary AppendMany calls or single
// Appends, and a node of this build still accepts the single Append an older node sends. The stream
// answers by id in any order, ends each request at its own deadline, and a broken stream fails only
// what waited on it. Requests made together share a message each way once the peer said it reads
// them (`batches`); a peer of a build before that gets one message per request, and an older
// client's requests are answered one message each.
// Method: GrpcTransports on 127.0.0.1; the "older build" is this build's Forward service served
// without its AppendMany handler, and the forged peer a raw gRPC server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { GrpcTransport, type AppendRequest } from './index.js';
import { forwardProto } from './proto.js';
import { TransportServer } from './server.js';
import { toWireAppendManyRequest, toWireAppendRequest } from './forward-codec.js';
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
 * This build's Forward service as node 2, counting the calls (and the requests on append streams);
 * `without` leaves handlers out, as a node of an older build lacks them. `onStreamRequest` may break
 * the stream (it is given the call).
 */
async function countedServer(
  handler: RecordingHandler,
  without: readonly ('AppendMany' | 'AppendStream' | 'batches')[] = [],
  onStreamRequest?: (call: grpc.ServerDuplexStream<unknown, unknown>) => boolean,
): Promise<{ port: number; appends: () => number; many: () => number; streamed: () => number; streams: () => number; replies: () => number; close: () => void }> {
  const services = new TransportServer({ self: 2, handler, logger: quietLogger });
  const { AppendMany, AppendStream, ...rest } = services.forwardService();
  let appends = 0;
  let many = 0;
  let streamed = 0;
  let streams = 0;
  let replies = 0;
  const server = new grpc.Server();
  server.addService(forwardProto().Forward.service, {
    ...rest,
    Append: (call: Parameters<typeof rest.Append>[0], cb: Parameters<typeof rest.Append>[1]) => {
      appends++;
      rest.Append(call, cb);
    },
    ...(without.includes('AppendMany')
      ? {}
      : {
          AppendMany: (call: Parameters<typeof AppendMany>[0], cb: Parameters<typeof AppendMany>[1]) => {
            many++;
            AppendMany(call, cb);
          },
        }),
    ...(without.includes('AppendStream')
      ? {}
      : {
          AppendStream: (call: Parameters<typeof AppendStream>[0]) => {
            streams++;
            // Counted before the service's own listener sees the message.
            call.prependListener('data', (m: { more?: unknown[]; batches?: boolean }) => {
              streamed++;
              // A build before `more` and `batches` does not see them (unknown fields).
              if (without.includes('batches')) Object.assign(m, { more: [], batches: false });
              if (onStreamRequest?.(call as never) === true) call.emit('data', { id: 'x' }); // an undecodable id: dropped
            });
            const write = call.write.bind(call);
            call.write = ((m: object) => {
              replies++;
              // ... and never says it reads them, nor sends them.
              return write((without.includes('batches') ? { ...m, more: [], batches: false } : m) as never);
            }) as typeof call.write;
            AppendStream(call);
          },
        }),
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { port, appends: () => appends, many: () => many, streamed: () => streamed, streams: () => streams, replies: () => replies, close: () => server.forceShutdown() };
}

async function clientOf(port: number): Promise<GrpcTransport> {
  return GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${port}` }], handler: new RecordingHandler(), logger: quietLogger, security: testSecurity });
}

/** A part of `n` events of about 40 KiB each (over the append stream's byte bound together). */
const bigPart = (partition: number, n: number): AppendRequest => ({ ...part(partition, 1), events: Array.from({ length: n }, () => Buffer.from(JSON.stringify({ p: partition, pad: 'x'.repeat(40_000) }))) });

test('forwardAppendMany: small parts for one peer travel as one request on its append stream (one stream for all); large ones in one AppendMany call', async () => {
  const h = new RecordingHandler();
  const peer = await countedServer(h);
  const t = await clientOf(peer.port);
  try {
    assert.deepEqual((await t.forwardAppendMany(2, [part(0, 1), part(1, 2), part(2, 1), part(3, 1)])).map((a) => a.status), ['committed', 'committed', 'committed', 'committed']);
    assert.deepEqual([peer.streamed(), peer.many(), peer.appends(), h.appends.length], [1, 0, 0, 4]);
    assert.equal(peer.replies(), 1);
    // Many requests at once share the stream, and (the peer said it reads them) one message each way; a single part takes it too.
    const answers = await Promise.all(Array.from({ length: 20 }, (_, k) => t.forwardAppendMany(2, [{ ...part(k % 4, 1), requestId: `many-${k}` }])));
    assert.ok(answers.every((a) => a.length === 1 && a[0]!.status === 'committed'));
    assert.deepEqual(h.appends.slice(4).map((a) => a.req.requestId), Array.from({ length: 20 }, (_, k) => `many-${k}`), 'each request once');
    assert.deepEqual([peer.streams(), peer.streamed(), peer.replies(), peer.many(), peer.appends()], [1, 2, 2, 0, 0], 'one stream, one message each way for the 20, no unary call');
    assert.deepEqual((await t.forwardAppendMany(2, [bigPart(0, 1), bigPart(1, 1)])).map((a) => a.status), ['committed', 'committed']);
    assert.deepEqual([peer.streamed(), peer.many(), peer.appends()], [2, 1, 0], 'over the stream bound: one unary AppendMany');
  } finally {
    await t.close();
    peer.close();
  }
});

test('append stream: answers by id in any order; a request past its deadline is unavailable alone; a broken stream fails what waits on it and the next request opens another', async () => {
  const h = new RecordingHandler();
  let breakNext = false;
  const peer = await countedServer(h, [], (call) => {
    if (!breakNext) return false;
    breakNext = false;
    call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'connection reset' });
    return false;
  });
  const t = await clientOf(peer.port);
  try {
    // Partition 0 answers last, partition 1 never: the others are not held back by either.
    h.onAppend = async (_from, r) => {
      if (r.partition === 1) return new Promise(() => {});
      await new Promise((res) => setTimeout(res, r.partition === 0 ? 150 : 1));
      return { status: 'committed', epoch: r.epoch, firstOffset: r.partition, lastOffset: r.partition + r.events.length - 1 };
    };
    const order: number[] = [];
    const t0 = Date.now();
    const [a0, a1, a2, a3] = await Promise.all(
      [0, 1, 2, 3].map((p) =>
        t.forwardAppendMany(2, [{ ...part(p, 1), deadlineMs: p === 1 ? 400 : 2000 }]).then((a) => {
          order.push(p);
          return a[0]!;
        }),
      ),
    );
    assert.deepEqual([a0, a2, a3], [0, 2, 3].map((p) => ({ status: 'committed', epoch: 4, firstOffset: p, lastOffset: p })));
    assert.equal(a1!.status, 'unavailable');
    assert.deepEqual(order.slice(0, 3), [2, 3, 0], 'answered as each finished, not in the order sent');
    assert.ok(Date.now() - t0 < 1500, 'the held request ended at its own deadline');
    // A stream that breaks: the request on it is unavailable (retriable), the next one opens a new stream.
    h.onAppend = async (_from, r) => ({ status: 'committed', epoch: r.epoch, firstOffset: 0, lastOffset: r.events.length - 1 });
    breakNext = true;
    const broken = await t.forwardAppendMany(2, [part(0, 1), part(2, 1)]);
    assert.deepEqual(broken.map((a) => a.status), ['unavailable', 'unavailable']);
    assert.match((broken[0] as { detail: string }).detail, /append stream to node 2/);
    assert.deepEqual((await t.forwardAppendMany(2, [part(0, 1)])).map((a) => a.status), ['committed']);
    assert.equal(peer.streams(), 2);
  } finally {
    await t.close();
    peer.close();
  }
});

test('rolling upgrade: a peer without the append stream is sent unary AppendMany calls; one without AppendMany too, single Appends; each part answered once', async () => {
  for (const without of [['AppendStream'], ['AppendStream', 'AppendMany']] as const) {
    const h = new RecordingHandler();
    h.onAppend = async (_from, r) => ({ status: 'committed', epoch: r.epoch, firstOffset: r.partition * 100, lastOffset: r.partition * 100 + r.events.length - 1 });
    const old = await countedServer(h, without);
    const t = await clientOf(old.port);
    try {
      const sent = [part(0, 1), part(1, 2), part(2, 1)];
      const expected = sent.map((p) => ({ status: 'committed', epoch: 4, firstOffset: p.partition * 100, lastOffset: p.partition * 100 + p.events.length - 1 }));
      assert.deepEqual(await t.forwardAppendMany(2, sent), expected, without.join('+'));
      const calls = without.length === 1 ? { many: 1, appends: 0 } : { many: 0, appends: 3 };
      assert.deepEqual({ many: old.many(), appends: old.appends() }, calls, without.join('+'));
      assert.deepEqual(h.appends.map((a) => a.req.requestId), sent.map((p) => p.requestId), 'each part once: what the peer did not know ran nothing');
      // Later requests go to it the way it understands at once.
      assert.deepEqual(await t.forwardAppendMany(2, sent), expected);
      assert.deepEqual({ many: old.many(), appends: old.appends() }, { many: calls.many * 2, appends: calls.appends * 2 });
      assert.equal(h.appends.length, 6);
    } finally {
      await t.close();
      old.close();
    }
  }
});

test('rolling upgrade: a peer whose append stream does not read `more` (never says `batches`) is sent one message per request, each answered once', async () => {
  const h = new RecordingHandler();
  const old = await countedServer(h, ['batches']);
  const t = await clientOf(old.port);
  try {
    assert.deepEqual((await t.forwardAppendMany(2, [part(0, 1)])).map((a) => a.status), ['committed']);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, k) => t.forwardAppendMany(2, [{ ...part(k % 4, 1), requestId: `many-${k}` }])));
    assert.ok(answers.every((a) => a.length === 1 && a[0]!.status === 'committed'));
    assert.deepEqual([old.streams(), old.streamed(), old.replies(), old.many(), old.appends()], [1, 21, 21, 0, 0]);
    assert.deepEqual(h.appends.map((a) => a.req.requestId), ['req-1.0', ...Array.from({ length: 20 }, (_, k) => `many-${k}`)], 'each request once');
  } finally {
    await t.close();
    old.close();
  }
});

test('rolling upgrade: a node of this build answers an older client (no `batches`) one message per request, and a newer one in shared messages', async () => {
  const nodes = await startNodes(2);
  const n2 = nodes[1]!;
  const client = new (forwardProto().Forward)(`127.0.0.1:${n2.t.port}`, grpc.credentials.createInsecure());
  const open = () => {
    const meta = new grpc.Metadata();
    meta.set('x-brook-from', '1');
    meta.set('x-brook-auth', proveCall(testSecurity.secret, 1, 2, '/brook.forward.v1.Forward/AppendStream', Date.now()));
    const call = client.AppendStream(meta);
    const got: { id: string; more: { id: string }[]; batches: boolean; reply: { replies: { status: string }[] } }[] = [];
    call.on('data', (m) => got.push(m as never));
    return { call, got };
  };
  const request = (id: number, p: number) => ({ id, request: toWireAppendManyRequest([{ ...part(p, 1), requestId: `r-${id}` }], 'flow-1') });
  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  try {
    // An older client: three messages, three replies, none with `more`.
    const a = open();
    for (const id of [1, 2, 3]) a.call.write(request(id, id));
    await until(() => a.got.length >= 3);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(a.got.map((m) => [m.id, m.more.length, m.reply.replies[0]!.status]).sort(), [['1', 0, 'APPEND_STATUS_COMMITTED'], ['2', 0, 'APPEND_STATUS_COMMITTED'], ['3', 0, 'APPEND_STATUS_COMMITTED']]);
    assert.ok(a.got.every((m) => m.batches), 'every reply says the server reads `more`');
    a.call.end();
    // A client that reads `more`: three requests in one message, answered in one.
    const b = open();
    b.call.write({ ...request(7, 0), more: [request(8, 1), request(9, 2)], batches: true });
    await until(() => b.got.reduce((n, m) => n + 1 + m.more.length, 0) >= 3);
    assert.deepEqual(b.got.map((m) => [m.id, ...m.more.map((r) => r.id)]), [['7', '8', '9']]);
    b.call.end();
    assert.deepEqual(n2.h.appends.map((x) => x.req.requestId), ['r-1', 'r-2', 'r-3', 'r-7', 'r-8', 'r-9']);
  } finally {
    client.close();
    await stopNodes(nodes);
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
  const one = { replies: [{ status: 'APPEND_STATUS_COMMITTED', epoch: '4', first_offset: '0', last_offset: '0' }] };
  server.addService(forwardProto().Forward.service, {
    AppendMany: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, one),
    AppendStream: (call: grpc.ServerDuplexStream<{ id: string }, object>) => {
      call.on('data', (m) => {
        call.write({ id: '999', reply: one }); // an id never sent: ignored
        call.write({ id: m.id, reply: one });
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  const t = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${port}` }], handler: new RecordingHandler(), logger: quietLogger, security: testSecurity });
  try {
    for (const parts of [[part(0, 1), part(1, 1)], [bigPart(0, 1), bigPart(1, 1)]]) {
      const answers = await t.forwardAppendMany(2, parts);
      assert.deepEqual(answers.map((a) => a.status), ['unavailable', 'unavailable']);
      assert.match((answers[0] as { detail: string }).detail, /1 answers for 2 parts/);
    }
  } finally {
    await t.close();
    server.forceShutdown();
  }
});
