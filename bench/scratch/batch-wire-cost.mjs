// CPU of one Raft stream batch at both ends, without the network: encode (the client's serializer)
// plus decode (the server's deserializer) of a MessageBatch, with proto-loader's pair (fromObject +
// encode, decode + toObject with 64-bit fields as numbers: what builds before batch-wire.ts used) and
// with batch-wire.ts's. Shapes from a small publish on three nodes: an append of one entry of 10
// events (~5 KB) with its commit, an append response, a heartbeat; and a batch of 1,000 heartbeats.
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
try {
  wire = await imp('dist/transport/batch-wire.js');
} catch {}

const numbers = loadSync([proto.raftProtoPath], { ...proto.loaderOptions, longs: Number });
const loaderPair = { encode: proto.raftProto().MessageBatch.serialize, decode: numbers['brook.raft.v1.MessageBatch'].deserialize };
const pairs = { 'proto-loader': loaderPair, ...(wire === undefined ? {} : { 'batch-wire': { encode: wire.encodeMessageBatch, decode: wire.decodeMessageBatch } }) };

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
    if (o.messages.length + o.heartbeats.length === 0) throw new Error('empty');
  }
  const c = process.cpuUsage(t0);
  return { usPer: (c.user + c.system) / n, bytes: bytes / n };
}

for (const [shape, make, n] of [['small (app 5 KB + appResp + heartbeat)', small, 200_000], ['1,000 heartbeats', heartbeats, 2_000]]) {
  const batch = make();
  for (const [name, pair] of Object.entries(pairs)) run(pair, batch, n / 10); // warm up
  for (let round = 1; round <= 3; round++) {
    for (const [name, pair] of Object.entries(pairs)) {
      const r = run(pair, batch, n);
      console.log(`${shape}: ${name} round ${round}: ${r.usPer.toFixed(2)} us CPU per batch (encode + decode), ${r.bytes} bytes`);
    }
  }
}
