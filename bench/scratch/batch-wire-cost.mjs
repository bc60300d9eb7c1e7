// CPU of one message of the Raft stream and of the append stream at both ends, without the network:
// encode (the sender's serializer) plus decode (the receiver's deserializer), with proto-loader's pair
// (fromObject + encode, decode + toObject with 64-bit fields as numbers: what builds before
// batch-wire.ts and append-wire.ts used) and with theirs. Shapes from a small publish on three nodes:
// a MessageBatch of an append of one entry of 10 events (~5 KB) with its commit, an append response
// and a heartbeat; one of 1,000 coalesced heartbeats; an append stream request of 3 parts of 3
// ~500-byte events (a batch of 10 over 4 partitions forwarded to one node) and its reply.
//   npm run build && node bench/scratch/batch-wire-cost.mjs [ROOT=.]   (ROOT: a built checkout)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(process.argv[2] ?? '.');
const imp = (p) => import(pathToFileURL(resolve(root, p)).href);
const { BatchBuilder } = await imp('dist/transport/batch-codec.js');
const proto = await imp('dist/transport/proto.js');
const { makeMessage } = await imp('dist/raft/index.js');
const { loadSync } = await import('@grpc/proto-loader');
let wire;
let appendWire;
try {
  wire = await imp('dist/transport/batch-wire.js');
  appendWire = await imp('dist/transport/append-wire.js');
} catch {}
const { toWireAppendManyRequest, toWireAppendManyReply } = await imp('dist/transport/forward-codec.js');

const numbers = loadSync([proto.raftProtoPath], { ...proto.loaderOptions, longs: Number });
const loaderPair = { encode: proto.raftProto().MessageBatch.serialize, decode: numbers['brook.raft.v1.MessageBatch'].deserialize };
const pairs = { 'proto-loader': loaderPair, ...(wire === undefined ? {} : { 'batch-wire': { encode: wire.encodeMessageBatch, decode: wire.decodeMessageBatch } }) };
const fwdNumbers = loadSync([proto.forwardProtoPath], { ...proto.loaderOptions, longs: Number });
const fwdLoaded = proto.forwardProto();
const requestPairs = {
  'proto-loader': { encode: fwdLoaded.AppendStreamRequest.serialize, decode: fwdNumbers['brook.forward.v1.AppendStreamRequest'].deserialize },
  ...(appendWire === undefined ? {} : { 'append-wire': { encode: appendWire.encodeAppendStreamRequest, decode: appendWire.decodeAppendStreamRequest } }),
};
const replyPairs = {
  'proto-loader': { encode: fwdLoaded.AppendStreamReply.serialize, decode: fwdNumbers['brook.forward.v1.AppendStreamReply'].deserialize },
  ...(appendWire === undefined ? {} : { 'append-wire': { encode: appendWire.encodeAppendStreamReply, decode: appendWire.decodeAppendStreamReply } }),
};
const ev = (i) => Buffer.from(JSON.stringify({ metadata: { eid: `4a7b2c1e-9d3f-4e8a-b5c6-${String(i).padStart(12, '0')}`, event_type: 'order.created' }, note: 'x'.repeat(420) }));
const part = (p) => ({ group: 10 + p, topic: 1, partition: p, epoch: 4, requestId: `req-123456.${p}`, flowId: 'JMOSBeWfPuEtOMoG7nCrQkbm', deadlineMs: 5000, events: [ev(3 * p), ev(3 * p + 1), ev(3 * p + 2)] });
const streamRequest = () => ({ id: 123_457, request: toWireAppendManyRequest([part(0), part(1), part(2)], 'JMOSBeWfPuEtOMoG7nCrQkbm'), more: [], batches: true });
const streamReply = () => ({ id: 123_457, reply: toWireAppendManyReply([0, 1, 2].map((p) => ({ status: 'committed', epoch: 4, firstOffset: 1_234_567 + p * 3, lastOffset: 1_234_569 + p * 3 }))), more: [], batches: true });

const small = () => {
  const b = new BatchBuilder();
  b.add(3, makeMessage({ type: 'app', from: 1, to: 2, term: 4, logTerm: 4, index: 812_345, commit: 812_344, entries: [{ term: 4, index: 812_346, type: 'normal', data: Buffer.alloc(5000, 7) }] }));
  b.add(5, makeMessage({ type: 'appResp', from: 1, to: 2, term: 4, index: 901_234 }));
  b.add(0, makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 9, commit: 1234 }));
  return b.toWire(1, '6f9a0c1e-2b7d-4c1a-9e55-0d3b8f7a6c21');
};
const heartbeats = () => {
  const b = new BatchBuilder();
  for (let g = 1; g <= 1000; g++) b.add(g, makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3, commit: 100 + g }));
  return b.toWire(1, '6f9a0c1e-2b7d-4c1a-9e55-0d3b8f7a6c21');
};

function run(pair, batch, n) {
  let bytes = 0;
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const buf = pair.encode(batch);
    bytes += buf.length;
    const o = pair.decode(buf);
    if (o === undefined || o === null) throw new Error('empty');
  }
  const c = process.cpuUsage(t0);
  return { usPer: (c.user + c.system) / n, bytes: bytes / n };
}

for (const [shape, make, n, ps] of [
  ['MessageBatch, small (app 5 KB + appResp + heartbeat)', small, 200_000, pairs],
  ['MessageBatch, 1,000 heartbeats', heartbeats, 2_000, pairs],
  ['AppendStreamRequest, 3 parts of 3 events', streamRequest, 200_000, requestPairs],
  ['AppendStreamReply, 3 answers', streamReply, 200_000, replyPairs],
]) {
  const batch = make();
  for (const [name, pair] of Object.entries(ps)) run(pair, batch, n / 10); // warm up
  for (let round = 1; round <= 3; round++) {
    for (const [name, pair] of Object.entries(ps)) {
      const r = run(pair, batch, n);
      console.log(`${shape}: ${name} round ${round}: ${r.usPer.toFixed(2)} us CPU per batch (encode + decode), ${r.bytes} bytes`);
    }
  }
}
