// Goal: the append stream's own encoder and decoder (append-wire.ts) speak the protobuf of
// proto/forward.proto exactly as proto-loader's pair does, in both directions and for requests and
// replies, so nodes of this build and of builds before it (proto-loader's pair) read each other's
// append stream messages during a rolling upgrade; and bytes that are not a message are refused.
// Method: fast-check over requests (parts, events, ids up to 2^64 - 1, `more`, `batches`) and replies
// (every status, an unknown one, offsets, details): our bytes decoded by proto-loader's deserializer
// and by ours give the same object; proto-loader's bytes decoded by ours give what proto-loader's own
// deserializer gives (64-bit fields as numbers both); truncations and a wrong wire type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSync } from '@grpc/proto-loader';
import fc from 'fast-check';
import { decodeAppendStreamReply, decodeAppendStreamRequest, encodeAppendStreamReply, encodeAppendStreamRequest } from './append-wire.js';
import { forwardProtoPath, loaderOptions } from './proto.js';

interface Codec {
  serialize(v: unknown): Buffer;
  deserialize(b: Buffer): unknown;
}
const numbers = loadSync([forwardProtoPath], { ...loaderOptions, longs: Number });
const loaderOf = (name: string): Codec => numbers[`brook.forward.v1.${name}`] as unknown as Codec;

/** Values above 2^53 decode inexact, possibly rounded differently: both sides become 'unsafe' (refused after). */
function unsafeMarked(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) && v > Number.MAX_SAFE_INTEGER ? 'unsafe' : v;
  if (Array.isArray(v)) return v.map(unsafeMarked);
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unsafeMarked(x)]));
}

const u64 = fc.oneof(
  fc.constantFrom(0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1),
  fc.integer({ min: 0, max: 2 ** 53 - 1 }),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n }).map((b) => b.toString()),
);
const u32 = fc.oneof(fc.constantFrom(0, 1, 2 ** 32 - 1), fc.integer({ min: 0, max: 2 ** 32 - 1 }));
const part = fc.record({
  group: u32,
  topic: u32,
  partition: u32,
  epoch: u64,
  request_id: fc.string({ maxLength: 30 }),
  flow_id: fc.string({ maxLength: 30, unit: 'grapheme' }),
  deadline_ms: u32,
  events: fc.array(fc.uint8Array({ maxLength: 30 }).map((a) => Buffer.from(a)), { maxLength: 4 }),
});
const manyRequest = fc.record({ parts: fc.array(part, { maxLength: 3 }), flow_id: fc.string({ maxLength: 10 }) });
const leafRequest = fc.record({ id: u64, request: fc.option(manyRequest, { nil: null }), batches: fc.boolean() });
const request = fc.record({ id: u64, request: fc.option(manyRequest, { nil: null }), batches: fc.boolean(), more: fc.array(leafRequest.map((r) => ({ ...r, more: [] })), { maxLength: 3 }) });
const reply1 = fc.record({
  status: fc.constantFrom<string | number>('APPEND_STATUS_UNSPECIFIED', 'APPEND_STATUS_COMMITTED', 'APPEND_STATUS_NOT_LEADER', 'APPEND_STATUS_UNAVAILABLE', 'APPEND_STATUS_REFUSED', 'APPEND_STATUS_SEALED', 42),
  epoch: u64,
  first_offset: u64,
  last_offset: u64,
  leader_hint: u64,
  detail: fc.string({ maxLength: 20 }),
  sealed_for: fc.string({ maxLength: 10 }),
});
const manyReply = fc.record({ replies: fc.array(reply1, { maxLength: 3 }) });
const leafReply = fc.record({ id: u64, reply: fc.option(manyReply, { nil: null }), batches: fc.boolean() });
const reply = fc.record({ id: u64, reply: fc.option(manyReply, { nil: null }), batches: fc.boolean(), more: fc.array(leafReply.map((r) => ({ ...r, more: [] })), { maxLength: 3 }) });

const cases = [
  { name: 'AppendStreamRequest', arb: request as fc.Arbitrary<unknown>, encode: encodeAppendStreamRequest, decode: decodeAppendStreamRequest },
  { name: 'AppendStreamReply', arb: reply as fc.Arbitrary<unknown>, encode: encodeAppendStreamReply, decode: decodeAppendStreamReply },
];

for (const c of cases) {
  test(`${c.name}: our bytes decode, by proto-loader and by us, to the same object`, () => {
    fc.assert(
      fc.property(c.arb, (m) => {
        const bytes = c.encode(m as object);
        assert.deepStrictEqual(unsafeMarked(c.decode(bytes)), unsafeMarked(loaderOf(c.name).deserialize(bytes)));
      }),
      { numRuns: 400 },
    );
  });

  test(`${c.name}: proto-loader's bytes decode, by us, to what proto-loader's deserializer gives`, () => {
    fc.assert(
      fc.property(c.arb, (m) => {
        const bytes = loaderOf(c.name).serialize(m);
        assert.deepStrictEqual(unsafeMarked(c.decode(bytes)), unsafeMarked(loaderOf(c.name).deserialize(bytes)));
      }),
      { numRuns: 400 },
    );
  });
}

test('a request as the client sends it decodes as sent; truncated or mistyped bytes are refused', () => {
  const events = [Buffer.from('{"a":1}'), Buffer.from('{"b":2}')];
  const req = { id: 7, request: { parts: [{ group: 3, topic: 1, partition: 2, epoch: 4, request_id: 'r-1', flow_id: 'f', deadline_ms: 5000, events }], flow_id: 'f' }, more: [], batches: true };
  const bytes = encodeAppendStreamRequest(req);
  assert.deepStrictEqual(decodeAppendStreamRequest(bytes), req);
  // Field 1 (the id) takes the first two bytes; a cut anywhere inside field 2 (the request) is refused,
  // up to the last one (field 4, batches).
  assert.equal(bytes[2], 0x12);
  for (let n = 3; n < bytes.length - 2; n++) assert.throws(() => decodeAppendStreamRequest(bytes.subarray(0, n)), Error, `cut at ${n}`);
  // id (field 1) as length-delimited.
  assert.throws(() => decodeAppendStreamReply(Buffer.from([0x0a, 0x01, 0x05])), /wire type/);
});

test('the generators above make every field of every message type the codec writes (a field added to forward.proto fails here until the codec and these tests carry it)', () => {
  const defs = numbers as unknown as Record<string, { type: { field: { name: string }[] } }>;
  const fieldsOf = (name: string): string[] => defs[`brook.forward.v1.${name}`]!.type.field.map((f) => f.name).sort();
  const keysOf = (value: unknown): string[] => Object.keys(value as object).sort();
  const one = <T>(arb: fc.Arbitrary<T>): T => fc.sample(arb, { numRuns: 1, seed: 7 })[0]!;
  for (const [name, value] of [
    ['AppendStreamRequest', one(request)],
    ['AppendManyRequest', one(manyRequest)],
    ['AppendRequest', one(part)],
    ['AppendStreamReply', one(reply)],
    ['AppendManyReply', one(manyReply)],
    ['AppendReply', one(reply1)],
  ] as const) {
    assert.deepEqual(keysOf(value), fieldsOf(name), `${name}: the generator's fields against forward.proto's`);
  }
});
