// Goal: the Raft stream's own MessageBatch encoder and decoder (batch-wire.ts) speak the protobuf of
// proto/raft.proto exactly as proto-loader's pair does, so a node of this build and a node of a build
// that uses proto-loader's pair (any before it) read each other's batches during a rolling upgrade;
// and the decoder refuses bytes that are not a batch.
// Method: fast-check over batches of every field (64-bit values up to 2^64 - 1, unknown enum values,
// entries, leases, snapshots, contexts, heartbeat blocks): our bytes decoded by proto-loader's
// deserializer and by ours give the same object; proto-loader's bytes decoded by ours give what
// proto-loader's own deserializer gives (64-bit fields as numbers both); truncations, a wrong wire
// type, unknown fields and a nested length running past its message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeMessageBatch, encodeMessageBatch } from './batch-wire.js';
import { raftDefinitionsAsNumbers, raftProto } from './proto.js';
import * as grpc from '@grpc/grpc-js';
import { BatchBuilder, decodeBatch, type GroupMessage } from './batch-codec.js';
import { makeMessage } from '../raft/index.js';
import { toWireMessage } from './codec.js';
import { proveCall } from './auth.js';
import type { MessageBatch__Output } from './generated/brook/raft/v1/MessageBatch.js';
import { startNodes, stopNodes, testSecurity, until } from './test-support.js';

interface Codec {
  serialize(v: unknown): Buffer;
  deserialize(b: Buffer): unknown;
}
/** proto-loader's pair for MessageBatch, decoding 64-bit fields as numbers (what the stream decoded with before). */
/**
 * A value above 2^53 decodes to an inexact number, which both decoders may round differently; what
 * matters is that it is never a safe integer (the checks after refuse it), so both become 'unsafe'.
 */
function unsafeMarked(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) && v > Number.MAX_SAFE_INTEGER ? 'unsafe' : v;
  if (Array.isArray(v)) return v.map(unsafeMarked);
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unsafeMarked(x)]));
}

const loader = (): Codec => raftDefinitionsAsNumbers()['brook.raft.v1.MessageBatch'] as unknown as Codec;

const u64 = fc.oneof(
  fc.constantFrom(0, 1, 127, 128, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 48, 2 ** 53 - 1),
  fc.integer({ min: 0, max: 2 ** 53 - 1 }),
  // Above 2^53 only a decimal string says the value exactly.
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n }).map((b) => b.toString()),
);
const u32 = fc.oneof(fc.constantFrom(0, 1, 2 ** 31, 2 ** 32 - 1), fc.integer({ min: 0, max: 2 ** 32 - 1 }));
const entry = fc.record({
  term: u64,
  index: u64,
  type: fc.constantFrom<string | number>('ENTRY_TYPE_NORMAL', 'ENTRY_TYPE_CONF_CHANGE', 7),
  data: fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
});
const lease = fc.record({ stamp: fc.oneof(fc.constant(0), fc.double({ noNaN: true })), seq: u64, index: u64, released: u64 });
const snapshot = fc.record({
  metadata: fc.record({ index: u64, term: u64, conf_state: fc.record({ voters: fc.array(u64, { maxLength: 4 }), learners: fc.array(u64, { maxLength: 2 }) }) }),
  data: fc.uint8Array({ maxLength: 30 }).map((a) => Buffer.from(a)),
});
const message = fc.record({
  type: fc.oneof(fc.integer({ min: 0, max: 14 }).map((n) => (raftProto().MessageType as unknown as { type: { value: { name: string }[] } }).type.value[n]!.name), fc.constantFrom<string | number>(0, 3, 99)),
  from: u64,
  to: u64,
  term: u64,
  log_term: u64,
  index: u64,
  entries: fc.array(entry, { maxLength: 3 }),
  commit: u64,
  reject: fc.boolean(),
  reject_hint: u64,
  context: fc.string({ maxLength: 20, unit: 'grapheme' }),
  snapshot: fc.option(snapshot, { nil: null, freq: 4 }),
  group: u32,
  lease: fc.option(lease, { nil: null }),
});
const heartbeat = fc.record({ group: u32, term: u64, commit: u64, context: fc.string({ maxLength: 10 }) });
const batch = fc.record({
  from: u64,
  incarnation: fc.string({ maxLength: 40 }),
  messages: fc.array(message, { maxLength: 4 }),
  heartbeats: fc.array(heartbeat, { maxLength: 4 }),
  heartbeat_responses: fc.array(heartbeat, { maxLength: 4 }),
});

test('our batch bytes decode, by proto-loader and by us, to the same object', () => {
  fc.assert(
    fc.property(batch, (b) => {
      const bytes = encodeMessageBatch(b);
      assert.deepStrictEqual(unsafeMarked(decodeMessageBatch(bytes)), unsafeMarked(loader().deserialize(bytes)));
    }),
    { numRuns: 500 },
  );
});

test("proto-loader's batch bytes decode, by us, to what proto-loader's deserializer gives", () => {
  fc.assert(
    fc.property(batch, (b) => {
      const bytes = loader().serialize(b);
      assert.deepStrictEqual(unsafeMarked(decodeMessageBatch(bytes)), unsafeMarked(loader().deserialize(bytes)));
    }),
    { numRuns: 500 },
  );
});

test('a batch as the builder makes it costs no more bytes than with proto-loader, and decodes to the messages sent', () => {
  const b = new BatchBuilder();
  const app = makeMessage({ type: 'app', from: 1, to: 2, term: 3, logTerm: 3, index: 41, commit: 40, entries: [{ term: 3, index: 42, type: 'normal', data: Buffer.alloc(500, 7) }] });
  const resp = makeMessage({ type: 'appResp', from: 1, to: 2, term: 3, index: 44 });
  b.add(7, app);
  b.add(8, resp);
  b.add(9, makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 5, commit: 9 }));
  const wire = b.toWire(1, 'inc');
  const ours = encodeMessageBatch(wire);
  assert.ok(ours.length <= raftProto().MessageBatch.serialize(wire).length, `${ours.length} bytes`);
  const d = decodeBatch(decodeMessageBatch(ours), 2);
  assert.deepEqual(d.failures, []);
  assert.deepEqual(
    d.messages.map((m) => [m.group, m.message]),
    [
      [7, app],
      [8, resp],
      [9, makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 5, commit: 9 })],
    ],
  );
});

test('bytes that are not a batch are refused: every truncation, a wrong wire type, a nested length past its message', () => {
  const b = new BatchBuilder();
  b.add(7, makeMessage({ type: 'app', from: 1, to: 2, term: 3, logTerm: 3, index: 41, commit: 40, entries: [{ term: 3, index: 42, type: 'normal', data: new Uint8Array([1, 2, 3]) }] }));
  const bytes = encodeMessageBatch(b.toWire(1, 'inc'));
  // A cut inside the batch's last (only) message always leaves that message's length past the end.
  const firstMessage = bytes.indexOf(0x1a); // field 3, length-delimited
  for (let n = firstMessage + 1; n < bytes.length; n++) assert.throws(() => decodeMessageBatch(bytes.subarray(0, n)), RangeError, `cut at ${n}`);
  // from (field 1) sent as length-delimited.
  assert.throws(() => decodeMessageBatch(Buffer.from([0x0a, 0x01, 0x05])), /wire type/);
  // A message of length 2 whose field (term, a 2-byte varint) runs past it, inside the batch's bytes.
  assert.throws(() => decodeMessageBatch(Buffer.from([0x1a, 0x02, 0x20, 0x80, 0x01])), /past its length/);
});

test('unknown fields are skipped, as a later build may add some', () => {
  const w = raftProto().MessageBatch.serialize({ from: '3', incarnation: 'x' });
  // field 15, varint 1; field 16, length-delimited 2 bytes; then the known fields.
  const withUnknown = Buffer.concat([Buffer.from([0x78, 0x01, 0x82, 0x01, 0x02, 0xaa, 0xbb]), w]);
  const got = decodeMessageBatch(withUnknown) as unknown as { from: number; incarnation: string };
  assert.equal(got.from, 3);
  assert.equal(got.incarnation, 'x');
});

// Rolling upgrade on real sockets: every build before batch-wire.ts wrote and read the Raft stream with
// proto-loader's pair (raftProto().RaftTransport, as loaded); a node of this build and such a node
// must hear each other.
test('rolling upgrade: a node of this build and a peer using proto-loader\'s pair hear each other on the Raft stream', { timeout: 20_000 }, async () => {
  const nodes = await startNodes(1);
  const n1 = nodes[0]!;
  // The older peer, node 2: its server decodes with proto-loader's pair and checks as this build does.
  const heardByOld: GroupMessage[] = [];
  const oldServer = new grpc.Server();
  oldServer.addService(raftProto().RaftTransport.service, {
    Stream: (call: grpc.ServerReadableStream<MessageBatch__Output, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      call.on('data', (b: MessageBatch__Output) => heardByOld.push(...decodeBatch(b, 2).messages));
      call.on('end', () => cb(null, { batches: '0' }));
    },
  });
  const oldPort = await new Promise<number>((resolve, reject) => oldServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  const oldClient = new (raftProto().RaftTransport)(`127.0.0.1:${n1.t.port}`, grpc.credentials.createInsecure());
  try {
    const entry = { term: 4, index: 812_346, type: 'normal' as const, data: Buffer.alloc(300, 9) };
    // This build to the older peer.
    n1.t.addPeer({ id: 2, raftAddress: `127.0.0.1:${oldPort}` });
    const app = makeMessage({ type: 'app', from: 1, to: 2, term: 4, logTerm: 4, index: 812_345, commit: 812_344, entries: [entry] });
    n1.t.send([{ group: 3, messages: [app, makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 4, commit: 9 })] }]);
    await until('the older peer hears both', () => heardByOld.length === 2, 10_000);
    assert.deepEqual(heardByOld, [
      { group: 3, message: app },
      { group: 3, message: makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 4, commit: 9 }) },
    ]);
    // The older peer to this build.
    const meta = new grpc.Metadata();
    meta.set('x-brook-from', '2');
    meta.set('x-brook-auth', proveCall(testSecurity.secret, 2, 1, '/brook.raft.v1.RaftTransport/Stream', Date.now()));
    const call = oldClient.Stream(meta, () => {});
    const resp = makeMessage({ type: 'appResp', from: 2, to: 1, term: 4, index: 812_346 });
    call.write({ from: '2', incarnation: 'old', messages: [{ ...toWireMessage(resp), group: 3 }], heartbeats: [], heartbeat_responses: [{ group: 5, term: '4', commit: '0', context: '' }] });
    await until('this build hears both', () => n1.h.received.length === 2, 10_000);
    assert.deepEqual(n1.h.received, [
      { group: 3, m: resp },
      { group: 5, m: makeMessage({ type: 'heartbeatResp', from: 2, to: 1, term: 4 }) },
    ]);
    call.end();
  } finally {
    oldClient.close();
    oldServer.forceShutdown();
    await stopNodes(nodes);
  }
});

test('the generators above make every field of every message type the codec writes (a field added to raft.proto fails here until the codec and these tests carry it)', () => {
  const defs = raftDefinitionsAsNumbers() as unknown as Record<string, { type: { field: { name: string }[] } }>;
  const fieldsOf = (name: string): string[] => defs[`brook.raft.v1.${name}`]!.type.field.map((f) => f.name).sort();
  const keysOf = (value: unknown): string[] => Object.keys(value as object).sort();
  const one = <T>(arb: fc.Arbitrary<T>): T => fc.sample(arb, { numRuns: 1, seed: 7 })[0]!;
  const s = one(snapshot);
  for (const [name, value] of [
    ['MessageBatch', one(batch)],
    ['Message', one(message)],
    ['Entry', one(entry)],
    ['Lease', one(lease)],
    ['Snapshot', s],
    ['SnapshotMetadata', s.metadata],
    ['ConfState', s.metadata.conf_state],
    ['GroupHeartbeat', one(heartbeat)],
  ] as const) {
    assert.deepEqual(keysOf(value), fieldsOf(name), `${name}: the generator's fields against raft.proto's`);
  }
});
