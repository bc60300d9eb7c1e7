// Goal: the node-to-node port serves only members that prove themselves, on every RPC (the Raft
// stream, Propose, Identify, FetchLog, Append, Read, Bounds), before any handler runs: a client with no proof,
// with a wrong cluster secret, with a proof made for another node, method or time, or replaying one,
// is refused with UNAUTHENTICATED; a proven node that is not a member with PERMISSION_DENIED. With
// mutual TLS, a client without a certificate from the cluster CA does not get through the handshake, a
// certificate must name the node the call claims to come from, and a client refuses a server whose
// certificate names another node than the one it dialled.
// Method: the authenticator alone on a manual clock; real transports on 127.0.0.1 and raw gRPC clients
// calling each RPC with crafted metadata; certificates made with openssl (test-certs.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { makeMessage } from '../raft/index.js';
import { GrpcTransport, TransportError, type AppendRequest } from './index.js';
import { CallAuthenticator, proveCall, proofAgeMsMax, type TransportSecurity } from './auth.js';
import { toWireMessage } from './codec.js';
import { toWireAppendRequest, toWireReadRequest } from './forward-codec.js';
import { forwardProto, raftProto } from './proto.js';
import { makeTestCa } from './test-certs.js';
import { callsSeen, quietLogger, RecordingHandler, RecordingLogger, startNodes, stopNodes, testSecurity, until, type TestNode } from './test-support.js';

const secret = testSecurity.secret;
const streamPath = '/brook.raft.v1.RaftTransport/Stream';

test('the authenticator accepts a fresh proof once, and refuses every other', () => {
  let now = 1_000_000;
  const members = new Set([1, 3]);
  const auth = new CallAuthenticator({ self: 2, security: { secret }, isMember: (id) => members.has(id), logger: quietLogger, nowMs: () => now });
  const meta = (from: string | undefined, proof: string | undefined) => {
    const m = new grpc.Metadata();
    if (from !== undefined) m.set('x-brook-from', from);
    if (proof !== undefined) m.set('x-brook-auth', proof);
    return m;
  };
  const good = proveCall(secret, 1, 2, streamPath, now);
  assert.deepEqual(auth.check(meta('1', good), streamPath, undefined), { ok: true, from: 1 });
  const refusals: [string, grpc.Metadata, grpc.status, RegExp][] = [
    ['the same proof again', meta('1', good), grpc.status.UNAUTHENTICATED, /already used/],
    ['no caller', meta(undefined, proveCall(secret, 1, 2, streamPath, now)), grpc.status.UNAUTHENTICATED, /names no calling node/],
    ['no proof', meta('1', undefined), grpc.status.UNAUTHENTICATED, /no proof/],
    ['another secret', meta('1', proveCall(Buffer.from('another secret, also 32 bytes long!'), 1, 2, streamPath, now)), grpc.status.UNAUTHENTICATED, /wrong proof/],
    ['made by node 3, claimed by node 1', meta('1', proveCall(secret, 3, 2, streamPath, now)), grpc.status.UNAUTHENTICATED, /wrong proof/],
    ['made for node 3', meta('1', proveCall(secret, 1, 3, streamPath, now)), grpc.status.UNAUTHENTICATED, /wrong proof/],
    ['made for another method', meta('1', proveCall(secret, 1, 2, '/brook.raft.v1.RaftTransport/Propose', now)), grpc.status.UNAUTHENTICATED, /wrong proof/],
    ['too old', meta('1', proveCall(secret, 1, 2, streamPath, now - proofAgeMsMax - 1)), grpc.status.UNAUTHENTICATED, /clock/],
    ['from the future', meta('1', proveCall(secret, 1, 2, streamPath, now + proofAgeMsMax + 1)), grpc.status.UNAUTHENTICATED, /clock/],
    ['malformed', meta('1', 'v1.x.y.z'), grpc.status.UNAUTHENTICATED, /malformed/],
    ['a short mac', meta('1', good.slice(0, -8)), grpc.status.UNAUTHENTICATED, /wrong proof/],
    ['this node itself', meta('2', proveCall(secret, 2, 2, streamPath, now)), grpc.status.UNAUTHENTICATED, /not a peer/],
    ['proven but not a member', meta('4', proveCall(secret, 4, 2, streamPath, now)), grpc.status.PERMISSION_DENIED, /not a member/],
  ];
  for (const [what, m, code, re] of refusals) {
    const v = auth.check(m, streamPath, undefined);
    assert.ok(!v.ok && v.code === code && re.test(v.details), `${what}: ${JSON.stringify(v)}`);
  }
  // Within the freshness window from either side is fine; the nonce memory forgets with time.
  now += 10 * proofAgeMsMax;
  assert.equal(auth.check(meta('3', proveCall(secret, 3, 2, streamPath, now - proofAgeMsMax + 10)), streamPath, undefined).ok, true);
  assert.equal(auth.check(meta('3', proveCall(secret, 3, 2, streamPath, now + proofAgeMsMax - 10)), streamPath, undefined).ok, true);
  assert.throws(() => new CallAuthenticator({ self: 2, security: { secret: Buffer.from('short') }, isMember: () => true, logger: quietLogger }), /at least/);
});

test('a replay is refused also after its nonce was forgotten for room: proofs not newer than the forgotten ones are refused', () => {
  let now = 5_000_000;
  const auth = new CallAuthenticator({ self: 2, security: { secret }, isMember: () => true, logger: quietLogger, nowMs: () => now, noncesMax: 10 });
  const meta = (proof: string) => {
    const m = new grpc.Metadata();
    m.set('x-brook-from', '1');
    m.set('x-brook-auth', proof);
    return m;
  };
  const proofs = Array.from({ length: 25 }, () => proveCall(secret, 1, 2, streamPath, now++));
  for (const p of proofs) assert.equal(auth.check(meta(p), streamPath, undefined).ok, true);
  // The first 15 nonces were forgotten (room for 10): their replays are refused by time, the rest by memory.
  for (const p of proofs) {
    const v = auth.check(meta(p), streamPath, undefined);
    assert.ok(!v.ok && /already used/.test(v.details));
  }
  assert.equal(auth.check(meta(proveCall(secret, 1, 2, streamPath, now)), streamPath, undefined).ok, true);
});

const append: AppendRequest = { group: 5, topic: 1, partition: 0, epoch: 0, requestId: 'r1', flowId: '', deadlineMs: 2000, events: [Buffer.from('{}')] };
const read = { group: 5, topic: 1, partition: 0, afterOffset: -1, maxEvents: 10, maxBytes: 1000, waitMs: 0, follow: false, flowId: '' };

/** Calls each of the eight RPCs of the node at `port` once, with `meta(path)`; the gRPC status of each. */
async function callEach(port: number, creds: grpc.ChannelCredentials, meta: (path: string) => grpc.Metadata): Promise<Record<string, number>> {
  // A host name as TLS server name (the certificates carry DNS:localhost; an IP address is not allowed).
  const raft = new (raftProto().RaftTransport)(`127.0.0.1:${port}`, creds, { 'grpc.ssl_target_name_override': 'localhost' });
  const fwd = new (forwardProto().Forward)(`127.0.0.1:${port}`, creds, { channelOverride: raft.getChannel() });
  const deadline = () => ({ deadline: Date.now() + 3000 });
  const unary = (f: (cb: (err: grpc.ServiceError | null) => void) => void) => new Promise<number>((resolve) => f((err) => resolve(err?.code ?? 0)));
  const streamed = (call: grpc.ClientReadableStream<unknown>) =>
    new Promise<number>((resolve) => {
      call.on('data', () => {});
      call.on('error', (err: grpc.ServiceError) => resolve(err.code));
      call.on('end', () => resolve(0));
    });
  try {
    const hb = toWireMessage(makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3 }));
    return {
      Stream: await unary((cb) => {
        const call = raft.Stream(meta(streamPath), deadline(), cb);
        call.write({ from: '1', messages: [hb] });
        call.end();
      }),
      Propose: await unary((cb) => raft.Propose({ from: '1', command: Buffer.from('{}'), deadline_ms: 1000 }, meta('/brook.raft.v1.RaftTransport/Propose'), deadline(), cb)),
      Identify: await unary((cb) => raft.Identify({ from: '1', disk_id: 'disk-1' }, meta('/brook.raft.v1.RaftTransport/Identify'), deadline(), cb)),
      FetchLog: await streamed(raft.FetchLog({ group: 5, from_index: '1', to_index: '2' }, meta('/brook.raft.v1.RaftTransport/FetchLog'), deadline())),
      Append: await unary((cb) => fwd.Append(toWireAppendRequest(append), meta('/brook.forward.v1.Forward/Append'), deadline(), cb)),
      Read: await streamed(fwd.Read(toWireReadRequest(read), meta('/brook.forward.v1.Forward/Read'), deadline())),
      Bounds: await unary((cb) => fwd.Bounds({ group: 5, topic: 1, partition: 0 }, meta('/brook.forward.v1.Forward/Bounds'), deadline(), cb)),
      Control: await unary((cb) => fwd.Control({ group: 5, topic: 1, partition: 0, epoch: '0', deadline_ms: 1000, seal: { timeline: 'T', floor: '0' } }, meta('/brook.forward.v1.Forward/Control'), deadline(), cb)),
    };
  } finally {
    raft.close();
  }
}

const every = (code: number) => ({ Stream: code, Propose: code, Identify: code, FetchLog: code, Append: code, Read: code, Bounds: code, Control: code });

/** Identify answers come from the transport's `identify` option, not the handler: counted here. */
let identifyCalls = 0;
const identifying = () => ({
  identify: () => {
    identifyCalls++;
    return { nodeId: 2, diskId: 'disk-2', clusterId: '', founders: [] };
  },
});

function serveEverything(h: RecordingHandler): void {
  h.onRead = async function* () {};
  h.onFetchLog = async function* () {};
}

test('every RPC refuses a client with no proof, a wrong secret, or a proof for another node; and a proven node that is not a member', async () => {
  const nodes = await startNodes(2, identifying);
  identifyCalls = 0;
  const n2 = nodes[1]!;
  serveEverything(n2.h);
  const insecure = grpc.credentials.createInsecure();
  const from = (id: number, proof?: (path: string) => string) => (path: string) => {
    const m = new grpc.Metadata();
    m.set('x-brook-from', String(id));
    if (proof) m.set('x-brook-auth', proof(path));
    return m;
  };
  try {
    const other = Buffer.from('not the cluster secret, but as long');
    assert.deepEqual(await callEach(n2.t.port, insecure, from(1)), every(grpc.status.UNAUTHENTICATED), 'no proof');
    assert.deepEqual(await callEach(n2.t.port, insecure, from(1, (p) => proveCall(other, 1, 2, p, Date.now()))), every(grpc.status.UNAUTHENTICATED), 'wrong secret');
    assert.deepEqual(await callEach(n2.t.port, insecure, from(1, (p) => proveCall(secret, 1, 3, p, Date.now()))), every(grpc.status.UNAUTHENTICATED), 'made for node 3');
    assert.deepEqual(await callEach(n2.t.port, insecure, from(7, (p) => proveCall(secret, 7, 2, p, Date.now()))), every(grpc.status.PERMISSION_DENIED), 'node 7 is not a member');
    assert.equal(callsSeen(n2.h), 0, 'no handler saw any of them');
    assert.equal(identifyCalls, 0, 'no identity was given out');
    assert.equal(n2.t.refusedCalls(), 32);
    // The control: the same calls with a good proof from a member reach the handler.
    assert.deepEqual(await callEach(n2.t.port, insecure, from(1, (p) => proveCall(secret, 1, 2, p, Date.now()))), every(grpc.status.OK));
    await until('the heartbeat', () => n2.h.received.length === 1);
    assert.deepEqual([n2.h.proposals.length, n2.h.appends.length, n2.h.reads.length, n2.h.fetches.length, n2.h.boundsAsked.length, identifyCalls, n2.h.controls.length], [1, 1, 1, 1, 1, 1, 1]);
  } finally {
    await stopNodes(nodes);
  }
});

test('a node with another secret or outside the member list gets nothing through the transport API either', async () => {
  const nodes = await startNodes(2, identifying);
  identifyCalls = 0;
  const n2 = nodes[1]!;
  serveEverything(n2.h);
  const outsiders: [string, TransportSecurity, number][] = [
    ['another secret', { secret: Buffer.from('another secret of 32 or more bytes') }, 1],
    ['not a member', testSecurity, 7],
  ];
  try {
    for (const [what, security, id] of outsiders) {
      const h = new RecordingHandler();
      const logger = new RecordingLogger();
      const t = await GrpcTransport.start({ self: id, incarnation: 'x', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${n2.t.port}` }], handler: h, logger, security });
      try {
        t.send([{ group: 0, messages: [makeMessage({ type: 'vote', from: id, to: 2, term: 2 ** 40 })] }]);
        await until(`${what}: unreachable`, () => h.unreachables.includes(2));
        // The refused node says so where an operator looks.
        assert.ok(logger.lines.some((l) => l.level === 'warn' && /refuses this node/.test(l.msg)), what);
        assert.equal((await t.forward(2, { command: Buffer.from('{}'), flowId: '', deadlineMs: 1000 })).status, 'unavailable', what);
        const a = await t.forwardAppend(2, append);
        assert.ok(a.status === 'unavailable' && /refused this node/.test(a.detail), `${what}: ${JSON.stringify(a)}`);
        await assert.rejects(t.bounds(2, { group: 5, topic: 1, partition: 0 }), (e: TransportError) => e.kind === 'unavailable');
        await assert.rejects(t.read(2, read)[Symbol.asyncIterator]().next(), (e: TransportError) => e.kind === 'unavailable');
        await assert.rejects(t.fetchLog(2, { group: 5, fromIndex: 1, toIndex: 2, maxBytes: 0 })[Symbol.asyncIterator]().next(), (e: TransportError) => e.kind === 'unavailable');
        assert.equal(await t.identify(2, 'disk-x', 2000), undefined, `${what}: no identity`);
      } finally {
        await t.close();
      }
    }
    assert.equal(callsSeen(n2.h), 0);
    assert.equal(identifyCalls, 0);
  } finally {
    await stopNodes(nodes);
  }
});

function tlsNodes(ca: ReturnType<typeof makeTestCa>, withSecret: boolean): (id: number) => { security: TransportSecurity } {
  return (id) => ({ security: { ...(withSecret ? { secret } : {}), tls: { ca: ca.ca, ...ca.issue(`brook-node-${id}`) } } });
}

async function exchange(nodes: TestNode[]): Promise<void> {
  const [n1, n2] = nodes as [TestNode, TestNode];
  n1.t.send([{ group: 3, messages: [makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 4, commit: 1 })] }]);
  n2.t.send([{ group: 3, messages: [makeMessage({ type: 'heartbeatResp', from: 2, to: 1, term: 4 })] }]);
  await until('both ways', () => n2.h.received.length === 1 && n1.h.received.length === 1);
  assert.equal((await n1.t.forwardAppend(2, append)).status, 'committed');
  n2.h.onRead = async function* () {
    yield { events: [{ offset: 0, bytes: Buffer.from('{}') }], oldest: 0, newest: 0, epoch: 1 };
  };
  let events = 0;
  for await (const c of n1.t.read(2, read)) events += c.events.length;
  assert.equal(events, 1);
}

test('mutual TLS (alone, and with the secret): members talk; a certificate must come from the cluster CA and name the calling node', async () => {
  const ca = makeTestCa();
  const stranger = makeTestCa('another-ca');
  try {
    for (const withSecret of [false, true]) {
      const nodes = await startNodes(2, tlsNodes(ca, withSecret));
      try {
        await exchange(nodes);
      } finally {
        await stopNodes(nodes);
      }
    }
    const nodes = await startNodes(2, tlsNodes(ca, false));
    const n2 = nodes[1]!;
    serveEverything(n2.h);
    const before = callsSeen(n2.h);
    try {
      const as = (id: number) => (path: string) => {
        const m = new grpc.Metadata();
        m.set('x-brook-from', String(id));
        void path;
        return m;
      };
      // A valid certificate of node 3, used to claim calls from node 1 (a member).
      const node3 = ca.issue('brook-node-3');
      assert.deepEqual(await callEach(n2.t.port, grpc.credentials.createSsl(ca.ca, node3.key, node3.cert), as(1)), every(grpc.status.UNAUTHENTICATED));
      // A certificate naming no node.
      const plain = ca.issue('some-service');
      assert.deepEqual(await callEach(n2.t.port, grpc.credentials.createSsl(ca.ca, plain.key, plain.cert), as(1)), every(grpc.status.UNAUTHENTICATED));
      // No client certificate, or one from another CA: the handshake fails, nothing is served.
      assert.deepEqual(await callEach(n2.t.port, grpc.credentials.createSsl(ca.ca), as(1)), every(grpc.status.UNAVAILABLE));
      const forged = stranger.issue('brook-node-1');
      assert.deepEqual(await callEach(n2.t.port, grpc.credentials.createSsl(ca.ca, forged.key, forged.cert), as(1)), every(grpc.status.UNAVAILABLE));
      // Plain text against a TLS port.
      assert.deepEqual(await callEach(n2.t.port, grpc.credentials.createInsecure(), as(1)), every(grpc.status.UNAVAILABLE));
      assert.equal(callsSeen(n2.h), before);
    } finally {
      await stopNodes(nodes);
    }
    // A server whose certificate names node 3, dialled as node 2: the client refuses it.
    const h = new RecordingHandler();
    const impostor = await GrpcTransport.start({ self: 2, incarnation: 'i', listen: '127.0.0.1:0', peers: [], handler: h, logger: quietLogger, security: tlsNodes(ca, false)(3).security, isMember: () => true });
    const client = await GrpcTransport.start({ self: 1, incarnation: 'c', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${impostor.port}` }], handler: new RecordingHandler(), logger: quietLogger, security: tlsNodes(ca, false)(1).security });
    try {
      assert.equal((await client.forwardAppend(2, append)).status, 'unavailable');
      assert.equal(h.appends.length, 0);
    } finally {
      await client.close();
      await impostor.close();
    }
  } finally {
    ca.remove();
    stranger.remove();
  }
});
