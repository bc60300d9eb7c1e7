// Goal: a batch for one peer carries messages of many groups, each decoded back with its group;
// heartbeats the core emits are coalesced into small blocks that decode to exactly the messages sent,
// and a heartbeat carrying anything more is never coalesced (it would lose a field); a batch costs
// far fewer bytes with coalescing than with full messages.
// Method: fast-check over groups, terms, commits and contexts through BatchBuilder, protobuf bytes and
// decodeBatch; sizes of the same heartbeats coalesced and as full messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeMessage, type Message } from '../raft/index.js';
import { memberIdOf } from '../core/member-id.js';
import { BatchBuilder, coalescible, decodeBatch } from './batch-codec.js';
import { toWireMessage } from './codec.js';
import { raftProto, raftServiceDefinition } from './proto.js';
import type { MessageBatch__Output } from './generated/brook/raft/v1/MessageBatch.js';

function roundTrip(b: BatchBuilder, from = 1, self = 2) {
  const bytes = raftProto().MessageBatch.serialize(b.toWire(from, 'inc'));
  return decodeBatch(raftProto().MessageBatch.deserialize(bytes), self);
}

test('a heartbeat with a read lease field is not coalesced (a block has no room for it)', () => {
  const hb = makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3 });
  assert.equal(coalescible(hb), true);
  assert.equal(coalescible({ ...hb, lease: { stamp: 1, seq: 0, index: 0, released: 0 } }), false);
});

test('heartbeats and responses of any groups, terms, commits and contexts round-trip exactly', () => {
  const hb = fc.record({
    group: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
    type: fc.constantFrom('heartbeat' as const, 'heartbeatResp' as const),
    term: fc.integer({ min: 0, max: 2 ** 48 }),
    commit: fc.integer({ min: 0, max: 2 ** 48 }),
    context: fc.string({ maxLength: 60 }),
  });
  fc.assert(
    fc.property(fc.array(hb, { maxLength: 50 }), (hbs) => {
      const b = new BatchBuilder();
      const sent = hbs.map((h) => ({ group: h.group, message: makeMessage({ type: h.type, from: 1, to: 2, term: h.term, commit: h.type === 'heartbeat' ? h.commit : 0, context: h.context }) }));
      for (const s of sent) b.add(s.group, s.message);
      assert.equal(b.messages.length, 0, 'all coalesced');
      const d = roundTrip(b);
      assert.deepEqual(d.failures, []);
      assert.equal(d.from, 1);
      const order = (xs: { group: number; message: Message }[]) => [...xs.filter((x) => x.message.type === 'heartbeat'), ...xs.filter((x) => x.message.type === 'heartbeatResp')];
      assert.deepEqual(d.messages, order(sent));
    }),
    { numRuns: 300 },
  );
});

test('a heartbeat carrying more than (term, commit, context) travels as a full message and keeps every field', () => {
  const extra: Message[] = [
    makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3, index: 1 }),
    makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3, logTerm: 2 }),
    makeMessage({ type: 'heartbeatResp', from: 1, to: 2, term: 3, commit: 4 }),
    makeMessage({ type: 'heartbeatResp', from: 1, to: 2, term: 3, reject: true }),
    makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3, rejectHint: 9 }),
  ];
  for (const m of extra) assert.equal(coalescible(m), false, JSON.stringify(m));
  const b = new BatchBuilder();
  extra.forEach((m, k) => b.add(k + 10, m));
  assert.equal(b.messages.length, extra.length);
  const d = roundTrip(b);
  assert.deepEqual(d.messages, extra.map((m, k) => ({ group: k + 10, message: m })));
});

test('messages of many groups keep their group and order; coalescing shrinks a batch of 1,000 heartbeats several times', () => {
  const b = new BatchBuilder();
  const full = new BatchBuilder();
  const sent: { group: number; message: Message }[] = [];
  for (let g = 1; g <= 1000; g++) {
    const m = makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 7, commit: 1000 + g });
    b.add(g, m);
    const w = toWireMessage(m);
    w.group = g;
    full.messages.push(w);
    sent.push({ group: g, message: m });
  }
  const app = makeMessage({ type: 'app', from: 1, to: 2, term: 7, index: 4, logTerm: 7, entries: [{ term: 7, index: 5, type: 'normal', data: Buffer.from('e') }] });
  b.add(3, app);
  const d = roundTrip(b);
  assert.deepEqual(d.messages, [{ group: 3, message: d.messages[0]!.message }, ...sent]);
  assert.equal(d.messages[0]!.message.entries[0]!.index, 5);
  const coalesced = raftProto().MessageBatch.serialize(b.toWire(1, 'inc')).length;
  const plain = raftProto().MessageBatch.serialize(full.toWire(1, 'inc')).length;
  assert.ok(coalesced * 2 < plain, `coalesced ${coalesced} bytes vs ${plain} as full messages`);
});

test('a batch without its snapshots, for a peer that is not connected, keeps everything else in order', () => {
  const b = new BatchBuilder();
  const snap = makeMessage({ type: 'snap', from: 1, to: 2, term: 2, snapshot: { metadata: { index: 5, term: 1, confState: { voters: [1, 2], learners: [] } }, data: Buffer.from('x') } });
  b.add(1, makeMessage({ type: 'vote', from: 1, to: 2, term: 2 }));
  b.add(4, snap);
  b.add(1, makeMessage({ type: 'timeoutNow', from: 1, to: 2, term: 2 }));
  assert.deepEqual(b.snapshotGroups, [4]);
  assert.equal(b.count(false), 2);
  const d = decodeBatch(raftProto().MessageBatch.deserialize(raftProto().MessageBatch.serialize(b.toWire(1, 'i', false))), 2);
  assert.deepEqual(d.messages.map((x) => [x.group, x.message.type]), [[1, 'vote'], [1, 'timeoutNow']]);
});

test("a batch names its sender's incarnation (how a peer's restart is seen); an implausibly long one is dropped", () => {
  const wire = (incarnation: string) => decodeBatch(raftProto().MessageBatch.deserialize(raftProto().MessageBatch.serialize(new BatchBuilder().toWire(1, incarnation))), 2);
  const id = '0b6f1c9e-3a51-4c1e-9d8e-6a2f3c1b7e40';
  assert.equal(wire(id).incarnation, id);
  assert.equal(wire('').incarnation, '');
  assert.equal(wire('x'.repeat(65)).incarnation, '');
});

test('messages between member ids of other incarnations travel whole and keep their ids; a member of another node is refused', () => {
  // Node 1 writes to node 2, whose metadata member is incarnation 7 (core/member-id.ts).
  const to = memberIdOf(2, 7);
  const from = memberIdOf(1, 3);
  const sent = [
    makeMessage({ type: 'heartbeat', from: 1, to, term: 3, commit: 5 }),
    makeMessage({ type: 'heartbeatResp', from, to: 2, term: 3 }),
    makeMessage({ type: 'appResp', from, to, term: 3, index: 9 }),
  ];
  const b = new BatchBuilder();
  for (const m of sent) b.add(0, m);
  assert.equal(b.heartbeats.length + b.heartbeatResponses.length, 0, 'a block would name the nodes, not the members');
  const d = roundTrip(b, 1, 2);
  assert.deepEqual(d.failures, []);
  assert.deepEqual(d.messages.map((x) => x.message), sent);
  // A message naming a member of node 4 in a batch from node 1: not the sender's to speak for.
  const forged = new BatchBuilder();
  forged.add(0, makeMessage({ type: 'appResp', from: memberIdOf(4, 1), to: 2, term: 3, index: 9 }));
  forged.add(0, makeMessage({ type: 'appResp', from: 1, to: memberIdOf(3, 1), term: 3, index: 9 }));
  const f = roundTrip(forged, 1, 2);
  assert.equal(f.messages.length, 0);
  assert.equal(f.failures.length, 2);
});

// The Raft stream's server decodes batches with 64-bit fields as numbers (proto.ts
// raftServiceDefinition; decimal strings cost a Long conversion per field), and what arrives must be
// checked exactly as before: a field above 2^53, which decodes to an inexact number, is refused.
test('the Raft stream decodes 64-bit fields as numbers; above 2^53 a message is still refused', () => {
  const deserialize = raftServiceDefinition()['Stream']!.requestDeserialize;
  const b = new BatchBuilder();
  b.add(7, makeMessage({ type: 'app', from: 1, to: 2, term: 3, logTerm: 3, index: 41, commit: 40, entries: [{ term: 3, index: 42, type: 'normal', data: new Uint8Array([1, 2]) }] }));
  b.add(8, makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 5, commit: 9 }));
  const w = deserialize(raftProto().MessageBatch.serialize(b.toWire(1, 'inc'))) as MessageBatch__Output;
  assert.equal(w.messages[0]!.term, 3 as unknown as string, 'a number, not a decimal string');
  assert.equal(w.heartbeats[0]!.commit, 9 as unknown as string);
  const d = decodeBatch(w, 2);
  assert.deepEqual(d.failures, []);
  assert.deepEqual(
    d.messages.map((m) => [m.group, m.message.type, m.message.term, m.message.index, m.message.commit, m.message.entries.map((e) => e.index)]),
    [
      [7, 'app', 3, 41, 40, [42]],
      [8, 'heartbeat', 5, 0, 9, []],
    ],
  );
  // The same fields above 2^53, as a peer could send them (only a string says them exactly).
  const huge = '18446744073709551615';
  const forged = { from: '1', incarnation: 'inc', messages: [{ ...toWireMessage(makeMessage({ type: 'appResp', from: 1, to: 2, term: 3, index: 4 })), group: 7, index: huge }], heartbeats: [{ group: 8, term: '9007199254740993', commit: '0', context: '' }], heartbeat_responses: [] };
  const got = decodeBatch(deserialize(raftProto().MessageBatch.serialize(forged)) as MessageBatch__Output, 2);
  assert.equal(got.messages.length, 0);
  assert.equal(got.failures.length, 2, 'both refused');
});
