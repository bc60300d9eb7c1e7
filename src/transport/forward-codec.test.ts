// Goal: forwarded appends, read requests and read chunks are checked on both sides: the server
// refuses a malformed request before its handler sees it and clamps oversized limits; the client
// accepts an append answer only if it gives one dense offset per event in the term it routed for, and
// a read chunk only if it continues after what was read, within the sizes asked for and the bounds it
// states; the server cuts a handler's chunk into dense runs within the request's limits.
// Method: one hand-made violation per rule; fast-check over chunk splitting against a naive model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DecodeError } from './codec.js';
import {
  fromWireAppendManyReply,
  fromWireAppendManyRequest,
  fromWireAppendReply,
  fromWireAppendRequest,
  fromWireControlReply,
  fromWireControlRequest,
  fromWireReadChunk,
  fromWireReadRequest,
  toWireAppendManyReply,
  toWireAppendManyRequest,
  toWireAppendReply,
  toWireAppendRequest,
  toWireControlReply,
  toWireControlRequest,
  toWireReadChunks,
  toWireReadRequest,
} from './forward-codec.js';
import { forwardProto, forwardServiceDefinition } from './proto.js';
import type { AppendStreamReply__Output } from './generated/brook/forward/v1/AppendStreamReply.js';
import type { AppendStreamRequest__Output } from './generated/brook/forward/v1/AppendStreamRequest.js';
import { appendEventsMax, eventRecordBytesMax, forwardDeadlineMsMax, readChunkBytesMax, readEventsMax, termMax } from './limits.js';
import { TransportError, type AppendRequest, type ControlRequest, type ReadChunk, type ReadRequest } from './types.js';

const append: AppendRequest = { group: 3, topic: 12, partition: 1, epoch: 4, requestId: 'req-1', flowId: 'flow', deadlineMs: 500, events: [Buffer.from('{"a":1}'), Buffer.from('{"a":2}')] };
const P = () => forwardProto();

function viaWire(r: AppendRequest) {
  return fromWireAppendRequest(P().AppendRequest.deserialize(P().AppendRequest.serialize(toWireAppendRequest(r))));
}

test('an append request round-trips; a malformed one is refused naming the field', () => {
  assert.deepEqual(viaWire(append), append);
  assert.equal(viaWire({ ...append, deadlineMs: 10 * forwardDeadlineMsMax }).deadlineMs, forwardDeadlineMsMax);
  assert.equal(viaWire({ ...append, flowId: 'f'.repeat(1000) }).flowId.length, 256);
  const cases: [string, Partial<AppendRequest>, RegExp][] = [
    ['group 0', { group: 0 }, /metadata group/],
    ['no request id', { requestId: '' }, /request_id/],
    ['long request id', { requestId: 'r'.repeat(129) }, /request_id/],
    ['no events', { events: [] }, /events: none/],
    ['an empty event', { events: [Buffer.from('{}'), Buffer.alloc(0)] }, /events\[1\]: empty/],
    ['a huge event', { events: [Buffer.alloc(eventRecordBytesMax + 1, 32)] }, /events\[0\]/],
    ['too many events', { events: Array.from({ length: appendEventsMax + 1 }, () => Buffer.from('1')) }, /more than/],
    ['epoch above the bound', { epoch: termMax + 1 }, /epoch/],
  ];
  for (const [what, over, re] of cases) {
    assert.throws(() => viaWire({ ...append, ...over }), (e: Error) => e instanceof DecodeError && re.test(e.message), what);
  }
});

test('an append answer is accepted only with one dense offset per event, committed in the epoch routed for', () => {
  const wire = (a: Parameters<typeof toWireAppendReply>[0]) => P().AppendReply.deserialize(P().AppendReply.serialize(toWireAppendReply(a)));
  assert.deepEqual(fromWireAppendReply(wire({ status: 'committed', epoch: 4, firstOffset: 10, lastOffset: 11 }), append, 2), { status: 'committed', epoch: 4, firstOffset: 10, lastOffset: 11 });
  assert.deepEqual(fromWireAppendReply(wire({ status: 'notLeader', leaderHint: 3, epoch: 5 }), append, 2), { status: 'notLeader', leaderHint: 3, epoch: 5 });
  assert.deepEqual(fromWireAppendReply(wire({ status: 'refused', detail: 'too big' }), append, 2), { status: 'refused', detail: 'too big' });
  assert.deepEqual(fromWireAppendReply(wire({ status: 'unavailable', detail: 'no quorum' }), append, 2), { status: 'unavailable', detail: 'no quorum' });
  const bad = [
    wire({ status: 'committed', epoch: 4, firstOffset: 10, lastOffset: 12 }), // three offsets for two events
    wire({ status: 'committed', epoch: 5, firstOffset: 10, lastOffset: 11 }), // another term than routed for
    wire({ status: 'committed', epoch: 0, firstOffset: 10, lastOffset: 11 }),
    { ...wire({ status: 'committed', epoch: 4, firstOffset: 10, lastOffset: 11 }), last_offset: '9007199254740993' },
    { ...wire({ status: 'refused', detail: '' }), status: 'APPEND_STATUS_UNSPECIFIED' as const },
  ];
  for (const w of bad) assert.equal(fromWireAppendReply(w, append, 2).status, 'unavailable', JSON.stringify(w));
  // Epoch 0 (any): whatever term the leader committed in.
  assert.equal(fromWireAppendReply(wire({ status: 'committed', epoch: 9, firstOffset: 0, lastOffset: 1 }), { ...append, epoch: 0 }, 2).status, 'committed');
});

const read: ReadRequest = { group: 3, topic: 12, partition: 1, afterOffset: -1, maxEvents: 100, maxBytes: 1000, waitMs: 200, follow: true, flowId: 'f' };

test('a control request round-trips (seal, base); one without a command, with a bad timeline id or offset is refused', () => {
  const seal: ControlRequest = { group: 3, topic: 12, partition: 1, epoch: 4, flowId: 'flow', deadlineMs: 500, command: { kind: 'seal', timeline: 'tl-uuid', floor: 99 } };
  const via = (r: ControlRequest) => fromWireControlRequest(P().ControlRequest.deserialize(P().ControlRequest.serialize(toWireControlRequest(r))));
  assert.deepEqual(via(seal), seal);
  assert.deepEqual(via({ ...seal, command: { kind: 'base', base: 7 } }).command, { kind: 'base', base: 7 });
  const raw = (w: object) => fromWireControlRequest(P().ControlRequest.deserialize(P().ControlRequest.serialize(w)));
  assert.throws(() => raw({ group: 3, topic: 1, partition: 0, epoch: '1', deadline_ms: 5 }), /control.command/);
  assert.throws(() => raw({ group: 3, epoch: '1', deadline_ms: 5, seal: { timeline: '', floor: '1' } }), /timeline/);
  assert.throws(() => raw({ group: 3, epoch: '1', deadline_ms: 5, seal: { timeline: 'x'.repeat(65), floor: '1' } }), /timeline/);
  assert.throws(() => raw({ group: 0, epoch: '1', deadline_ms: 5, base: { base: '1' } }), /metadata group/);
  assert.throws(() => raw({ group: 3, epoch: '1', deadline_ms: 5, base: { base: '9007199254740993' } }), /base/);
});

test('a control answer is accepted only in the term routed for; a sealed append answer names its timeline', () => {
  const seal: ControlRequest = { group: 3, topic: 12, partition: 1, epoch: 4, flowId: '', deadlineMs: 500, command: { kind: 'seal', timeline: 'T', floor: 0 } };
  const wire = (a: Parameters<typeof toWireControlReply>[0]) => P().AppendReply.deserialize(P().AppendReply.serialize(toWireControlReply(a)));
  assert.deepEqual(fromWireControlReply(wire({ status: 'applied', epoch: 4, next: 77 }), seal, 2), { status: 'applied', epoch: 4, next: 77 });
  assert.deepEqual(fromWireControlReply(wire({ status: 'refused', detail: 'no', sealedFor: 'U' }), seal, 2), { status: 'refused', detail: 'no', sealedFor: 'U' });
  assert.deepEqual(fromWireControlReply(wire({ status: 'refused', detail: 'no' }), seal, 2), { status: 'refused', detail: 'no' });
  assert.equal(fromWireControlReply(wire({ status: 'applied', epoch: 5, next: 77 }), seal, 2).status, 'unavailable');
  assert.equal(fromWireControlReply(wire({ status: 'applied', epoch: 0, next: 77 }), { ...seal, epoch: 0 }, 2).status, 'unavailable');
  const sealedReply = P().AppendReply.deserialize(P().AppendReply.serialize(toWireAppendReply({ status: 'sealed', timeline: 'T' })));
  assert.deepEqual(fromWireAppendReply(sealedReply, append, 2), { status: 'sealed', timeline: 'T' });
  assert.equal(fromWireAppendReply(P().AppendReply.deserialize(P().AppendReply.serialize({ status: 'APPEND_STATUS_SEALED' })), append, 2).status, 'unavailable', 'a sealed answer naming no switch is not believed');
  assert.equal(fromWireControlReply(sealedReply, seal, 2).status, 'unavailable', 'sealed is no answer to a control command');
});

test('a read request round-trips, oversized limits are clamped, nonsense is refused', () => {
  const viaWireR = (r: ReadRequest) => fromWireReadRequest(P().ReadRequest.deserialize(P().ReadRequest.serialize(toWireReadRequest(r))));
  assert.deepEqual(viaWireR(read), read);
  const clamped = viaWireR({ ...read, maxEvents: 2 ** 31, maxBytes: 2 ** 31, waitMs: 2 ** 31 });
  assert.deepEqual([clamped.maxEvents, clamped.maxBytes, clamped.waitMs], [readEventsMax, readChunkBytesMax, 60_000]);
  for (const over of [{ afterOffset: -2 }, { maxEvents: 0 }, { maxBytes: 0 }, { group: 0 }]) {
    assert.throws(() => viaWireR({ ...read, ...over }), DecodeError, JSON.stringify(over));
  }
});

function wireChunks(c: ReadChunk, req: ReadRequest, after: number) {
  return toWireReadChunks(c, req, after).map((w) => P().ReadChunk.deserialize(P().ReadChunk.serialize(w)));
}

test('the server cuts a chunk into dense runs within maxEvents and maxBytes, and the client reads back the same events', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 40 })), { minLength: 1, maxLength: 60 }),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 1, max: 120 }),
      (steps, maxEvents, maxBytes) => {
        let offset = 4;
        const events = steps.map(([gap, size]) => ({ offset: (offset += gap), bytes: Buffer.alloc(size, 97) }));
        const req = { ...read, afterOffset: 4, maxEvents, maxBytes };
        const chunk = { events, oldest: 0, newest: offset, epoch: 2 };
        let after = 4;
        const back = wireChunks(chunk, req, 4).map((w) => {
          const c = fromWireReadChunk(w, req, after);
          assert.ok(c.events.length <= maxEvents);
          const bytes = c.events.reduce((n, e) => n + e.bytes.length, 0);
          assert.ok(c.events.length === 1 || bytes <= maxBytes);
          after = c.events[c.events.length - 1]!.offset;
          return c;
        });
        assert.deepEqual(back.flatMap((c) => c.events), events);
      },
    ),
    { numRuns: 300 },
  );
});

test('the client refuses a chunk that goes back, passes its newest, or is larger than asked', () => {
  const events = [10, 11, 12].map((offset) => ({ offset, bytes: Buffer.from('{"x":1}') }));
  const [w] = wireChunks({ events, oldest: 0, newest: 12, epoch: 1 }, read, -1);
  assert.equal(fromWireReadChunk(w!, read, 9).events.length, 3);
  assert.throws(() => fromWireReadChunk(w!, read, 10), /not after/);
  assert.throws(() => fromWireReadChunk({ ...w!, newest: '11' }, read, 9), /beyond the committed/);
  assert.throws(() => fromWireReadChunk(w!, { ...read, maxEvents: 2 }, 9), /more than/);
  assert.throws(() => fromWireReadChunk(w!, { ...read, maxBytes: 10 }, 9), /bytes/);
  assert.throws(() => fromWireReadChunk({ ...w!, epoch: String(termMax + 1) }, read, 9), /epoch/);
  assert.throws(() => fromWireReadChunk({ ...w!, oldest: '-1' }, read, 9), /oldest/);
  // An empty chunk is a keep-alive with the bounds.
  assert.deepEqual(fromWireReadChunk({ ...w!, events: [] }, read, 9), { events: [], oldest: 0, newest: 12, epoch: 1 });
  // The server refuses to send offsets that do not increase or pass newest (a bug on its side).
  assert.throws(() => toWireReadChunks({ events: [events[1]!, events[0]!], oldest: 0, newest: 12, epoch: 1 }, read, -1), TransportError);
  assert.throws(() => toWireReadChunks({ events, oldest: 0, newest: 11, epoch: 1 }, read, -1), TransportError);
});

// The append stream's messages are decoded with 64-bit fields as numbers (proto.ts
// forwardServiceDefinition: a decimal string costs a Long conversion per field), and checked exactly
// as before: a request's epoch above its bound is refused, a reply's offsets above 2^53 are no answer.
test('the append stream decodes 64-bit fields as numbers, both ways, and refuses what it refused', () => {
  const stream = forwardServiceDefinition()['AppendStream']!;
  const req = stream.requestDeserialize(P().AppendStreamRequest.serialize({ id: 7, request: toWireAppendManyRequest([append], 'flow') })) as AppendStreamRequest__Output;
  assert.equal(req.id, 7 as unknown as string, 'a number, not a decimal string');
  assert.deepEqual(fromWireAppendManyRequest(req.request!), [append]);
  const forged = stream.requestDeserialize(P().AppendStreamRequest.serialize({ id: '7', request: { parts: [{ ...toWireAppendRequest(append), epoch: String(termMax + 1) }], flow_id: '' } })) as AppendStreamRequest__Output;
  assert.ok(fromWireAppendManyRequest(forged.request!)[0] instanceof DecodeError, 'an epoch above the bound is refused');
  const reply = stream.responseDeserialize(P().AppendStreamReply.serialize({ id: 9, reply: toWireAppendManyReply([{ status: 'committed', epoch: 4, firstOffset: 10, lastOffset: 11 }]) })) as AppendStreamReply__Output;
  assert.equal(reply.id, 9 as unknown as string);
  assert.deepEqual(fromWireAppendManyReply(reply.reply!, [append], 2), [{ status: 'committed', epoch: 4, firstOffset: 10, lastOffset: 11 }]);
  const huge = stream.responseDeserialize(P().AppendStreamReply.serialize({ id: '9', reply: { replies: [{ status: 'APPEND_STATUS_COMMITTED', epoch: '4', first_offset: '18446744073709551614', last_offset: '18446744073709551615' }] } })) as AppendStreamReply__Output;
  assert.equal(fromWireAppendManyReply(huge.reply!, [append], 2)[0]!.status, 'unavailable');
});
