// Goal: the gRPC transport on real sockets: messages arrive in order as the core's values, forwarded
// proposals carry the flow id and come back with the leader's answer, malformed input never reaches
// the handler, and a peer that is down is reported unreachable (and a lost snapshot as not delivered).
// Method: two or three GrpcTransports on 127.0.0.1 with port 0; recording handlers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { makeMessage, type Message, type NodeId } from '../raft/index.js';
import { GrpcTransport, type ForwardedProposal, type TransportHandler } from './index.js';
import { raftProto } from './proto.js';
import { toWireMessage } from './codec.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

class Recorder implements TransportHandler {
  received: Message[] = [];
  proposals: ForwardedProposal[] = [];
  unreachables: NodeId[] = [];
  snapshots: [NodeId, boolean][] = [];
  receive(m: Message): void {
    this.received.push(m);
  }
  async propose(p: ForwardedProposal) {
    this.proposals.push(p);
    return { status: 'applied' as const, index: 42, result: Buffer.from('{"ok":true}') };
  }
  unreachable(id: NodeId): void {
    this.unreachables.push(id);
  }
  snapshotStatus(id: NodeId, delivered: boolean): void {
    this.snapshots.push([id, delivered]);
  }
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function pair(): Promise<{ a: GrpcTransport; b: GrpcTransport; ha: Recorder; hb: Recorder }> {
  const ha = new Recorder();
  const hb = new Recorder();
  const b = await GrpcTransport.start({ self: 2, incarnation: 'b', listen: '127.0.0.1:0', peers: [], handler: hb, logger: quiet });
  const a = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${b.port}` }], handler: ha, logger: quiet });
  b.addPeer({ id: 1, raftAddress: `127.0.0.1:${a.port}` });
  return { a, b, ha, hb };
}

test('messages arrive in order, decoded; a forwarded proposal carries its flow id and returns the answer', async () => {
  const { a, b, hb } = await pair();
  try {
    const msgs = Array.from({ length: 200 }, (_, k) => makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3, commit: k }));
    for (let k = 0; k < msgs.length; k += 10) a.send(msgs.slice(k, k + 10));
    await until('200 messages', () => hb.received.length === 200);
    assert.deepEqual(hb.received.map((m) => m.commit), msgs.map((m) => m.commit));
    assert.equal(hb.received[0]!.type, 'heartbeat');
    const answer = await a.forward(2, { command: Buffer.from('{"op":"x"}'), flowId: 'flow-123', deadlineMs: 2000 });
    assert.deepEqual(answer, { status: 'applied', index: 42, result: Buffer.from('{"ok":true}') });
    assert.equal(hb.proposals[0]!.flowId, 'flow-123');
    assert.equal(hb.proposals[0]!.from, 1);
    assert.ok(a.reachable(2));
  } finally {
    await a.close();
    await b.close();
  }
});

test('malformed messages from a peer are dropped before the handler; good ones in the same batch pass', async () => {
  const { a, b, hb } = await pair();
  try {
    const client = new (raftProto().RaftTransport)(`127.0.0.1:${b.port}`, grpc.credentials.createInsecure());
    const good = toWireMessage(makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3 }));
    await new Promise<void>((resolve, reject) => {
      const call = client.Stream((err) => (err ? reject(err) : resolve()));
      call.write({ from: '1', incarnation: 'x', messages: [{ ...good, to: '3' }, { ...good, term: '99999999999999999' }, { ...good, from: '4' }, good] });
      call.write({ from: 'zero', messages: [good] });
      call.end();
    });
    await until('the good message', () => hb.received.length >= 1);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(hb.received.length, 1);
    client.close();
  } finally {
    await a.close();
    await b.close();
  }
});

test('a peer that is down is reported unreachable, and a snapshot sent to it as not delivered', async () => {
  const ha = new Recorder();
  // Find a port with nobody listening: start and stop a transport on it.
  const gone = await GrpcTransport.start({ self: 9, incarnation: 'g', listen: '127.0.0.1:0', peers: [], handler: new Recorder(), logger: quiet });
  const port = gone.port;
  await gone.close();
  const a = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 9, raftAddress: `127.0.0.1:${port}` }], handler: ha, logger: quiet });
  try {
    a.send([
      makeMessage({
        type: 'snap',
        from: 1,
        to: 9,
        term: 2,
        snapshot: { metadata: { index: 5, term: 1, confState: { voters: [1, 9], learners: [] } }, data: Buffer.from('x') },
      }),
    ]);
    await until('unreachable', () => ha.unreachables.includes(9));
    await until('snapshot status', () => ha.snapshots.length > 0);
    assert.ok(ha.snapshots.every(([id]) => id === 9));
    assert.ok(!a.reachable(9));
    const answer = await a.forward(9, { command: Buffer.from('{}'), flowId: 'f', deadlineMs: 500 });
    assert.equal(answer.status, 'unavailable');
  } finally {
    await a.close();
  }
});
