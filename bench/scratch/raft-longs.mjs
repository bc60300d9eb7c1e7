// The cost of a Raft MessageBatch's 64-bit fields as decimal strings against numbers (docs/benchmarks.md,
// "Three nodes, 2026-11-27 afternoon"): encode and decode of a batch of 4 appends of one 1.5 KB entry
// each, in process, with the loader's longs: String and longs: Number; and a chain of promises with an
// AsyncLocalStorage never run, run once, and disabled again.
//   npm run build && node bench/scratch/raft-longs.mjs
import { AsyncLocalStorage } from 'node:async_hooks';
import { loadSync } from '@grpc/proto-loader';
import { loadPackageDefinition } from '@grpc/grpc-js';
import { raftProtoPath, loaderOptions } from '../../dist/transport/proto.js';

const asStrings = loadPackageDefinition(loadSync([raftProtoPath], loaderOptions)).brook.raft.v1.MessageBatch;
const asNumbers = loadPackageDefinition(loadSync([raftProtoPath], { ...loaderOptions, longs: Number })).brook.raft.v1.MessageBatch;
const batch = (num) => {
  const v = (n) => (num ? n : String(n));
  const messages = [];
  for (let k = 0; k < 4; k++) {
    messages.push({ type: 'MESSAGE_TYPE_APP', from: v(1), to: v(2), term: v(7), log_term: v(7), index: v(123456 + k), entries: [{ term: v(7), index: v(123457 + k), type: 'ENTRY_TYPE_NORMAL', data: Buffer.alloc(1500) }], commit: v(123450), reject: false, reject_hint: v(0), context: '', snapshot: null, group: 3 + k });
  }
  return { from: v(1), incarnation: 'abcdef', messages, heartbeats: [], heartbeat_responses: [] };
};
const us = (n, f) => {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return (Number(process.hrtime.bigint() - t) / n / 1000).toFixed(1);
};
for (let round = 1; round <= 3; round++) {
  const s = batch(false);
  const n = batch(true);
  const bytes = asStrings.serialize(s);
  console.log(
    `round ${round}, per batch of 4: encode from strings ${us(20000, () => asStrings.serialize(s))} us, from numbers ${us(20000, () => asStrings.serialize(n))} us; ` +
      `decode to strings ${us(20000, () => asStrings.deserialize(bytes))} us, to numbers ${us(20000, () => asNumbers.deserialize(bytes))} us`,
  );
}
const chain = async (label) => {
  const t = process.hrtime.bigint();
  let p = Promise.resolve();
  for (let i = 0; i < 300000; i++) p = p.then(() => i);
  await p;
  console.log(`300,000 chained promises, ${label}: ${(Number(process.hrtime.bigint() - t) / 1e6).toFixed(0)} ms`);
};
const storage = new AsyncLocalStorage();
await chain('AsyncLocalStorage never run');
storage.run({}, () => undefined);
await chain('after one run()');
storage.disable();
await chain('after disable()');
