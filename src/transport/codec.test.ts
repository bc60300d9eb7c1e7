// Goal: the decoder is the only gate between peers' bytes and the Raft core, which asserts on
// malformed input; every message our core emits must survive the trip, and nothing malformed may get
// through or throw anything but a DecodeError.
// Method: round trips of each message type; one hand-made violation per rule; fast-check over random
// bytes and over mutated valid messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeConfChange, makeMessage, type Message } from '../raft/index.js';
import {
  DecodeError,
  decodeEntry,
  decodeHardState,
  decodeMessage,
  decodeSnapshot,
  encodeEntry,
  encodeHardState,
  encodeMessage,
  encodeSnapshot,
} from './index.js';
import { toWireMessage } from './codec.js';
import { memberIdOf, memberIncarnationMax } from '../core/member-id.js';
import { indexMax, termMax } from './limits.js';
import { raftProto } from './proto.js';
import { recordHeadroomBytes } from '../core/headroom.js';
import { decodeEntryRecord, encodeEntryRecord } from '../broker/raft-records.js';

const key = Buffer.from('0200000007030000000000000009', 'hex');

const app: Message = makeMessage({
  type: 'app',
  from: 1,
  to: 2,
  term: 7,
  logTerm: 6,
  index: 41,
  commit: 40,
  entries: [
    { term: 6, index: 42, type: 'normal', data: Buffer.from('{"op":"x"}') },
    { term: 7, index: 43, type: 'confChange', data: encodeConfChange({ type: 'addLearner', nodeId: 4 }) },
    { term: 7, index: 44, type: 'normal', data: new Uint8Array(0) },
  ],
});
const snap: Message = makeMessage({
  type: 'snap',
  from: 1,
  to: 2,
  term: 9,
  snapshot: { metadata: { index: 1000, term: 8, confState: { voters: [1, 2, 3], learners: [5] } }, data: Buffer.from('image') },
});

/** Bytes as hex (a Buffer and a Uint8Array with the same bytes compare equal), the rest as is. */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

test('every message type our core emits survives encode and decode', () => {
  const types = ['app', 'appResp', 'vote', 'voteResp', 'preVote', 'preVoteResp', 'heartbeat', 'heartbeatResp', 'snap', 'timeoutNow', 'readIndex', 'readIndexResp', 'termProbe', 'termProbeResp'] as const;
  for (const type of types) {
    const m = type === 'app' ? app : type === 'snap' ? snap : makeMessage({ type, from: 3, to: 2, term: 5, index: 9, logTerm: 4, commit: 8, reject: type === 'appResp', rejectHint: 7, context: 'inc/1' });
    assert.deepEqual(plain(decodeMessage(encodeMessage(m), 2)), plain(m), type);
  }
});

test('a read lease field round-trips on the four types that carry it, is absent when not set, and is refused elsewhere or malformed', () => {
  for (const type of ['app', 'appResp', 'heartbeat', 'heartbeatResp'] as const) {
    const m = { ...makeMessage({ type, from: 3, to: 2, term: 5, commit: type === 'heartbeat' ? 4 : 0 }), lease: { stamp: 123456.789, seq: 17, index: 42, released: 40 } };
    assert.deepEqual(plain(decodeMessage(encodeMessage(m), 2)), plain(m), type);
  }
  const bare = decodeMessage(encodeMessage(makeMessage({ type: 'heartbeat', from: 3, to: 2, term: 5 })), 2);
  assert.equal('lease' in bare, false, 'no lease: no field (what a build without leases sends)');
  const wire = (m: Message, over: Record<string, unknown>) => raftProto().Message.serialize({ ...toWireMessage(m), ...over } as never);
  const hb = makeMessage({ type: 'heartbeat', from: 3, to: 2, term: 5 });
  assert.throws(() => decodeMessage(wire(makeMessage({ type: 'vote', from: 3, to: 2, term: 5 }), { lease: { stamp: 1, seq: '0', index: '0' } }), 2), /message\.lease: a vote/);
  assert.throws(() => decodeMessage(wire(hb, { lease: { stamp: -1, seq: '0', index: '0' } }), 2), /message\.lease\.stamp/);
  assert.throws(() => decodeMessage(wire(hb, { lease: { stamp: Infinity, seq: '0', index: '0' } }), 2), /message\.lease\.stamp/);
  assert.throws(() => decodeMessage(wire(hb, { lease: { stamp: 1, seq: '0', index: String(2 ** 50) } }), 2), /message\.lease\.index/);
});

test('decoded entries own their memory: an entry kept in a memory tail does not keep the whole message alive', () => {
  const decoded = decodeMessage(encodeMessage(app), 2);
  assert.equal(decoded.entries.length, 3);
  for (const e of decoded.entries) {
    // An empty entry holds no memory to keep.
    if (e.data.byteLength === 0) continue;
    // Its own memory and the room for its log record's head before it (core/headroom.ts), nothing more.
    assert.equal(e.data.buffer.byteLength, recordHeadroomBytes + e.data.byteLength, `entry ${e.index}: ${e.data.byteLength} bytes keep ${e.data.buffer.byteLength} alive`);
    // Its log record is written around it: the follower's copy out of the message is its only one.
    const record = encodeEntryRecord(key, e);
    assert.equal(record.buffer, e.data.buffer, `entry ${e.index}: its record is framed in place`);
    assert.deepEqual(decodeEntryRecord(key, record), { ...e, data: Buffer.from(e.data) });
  }
});

test('terms and indexes up to the bound 2^48 pass exactly; above it (and beyond 2^53) they are refused', () => {
  const big = makeMessage({ type: 'heartbeat', from: 1, to: 2, term: termMax, commit: indexMax });
  assert.equal(decodeMessage(encodeMessage(big), 2).term, termMax);
  assert.equal(decodeMessage(encodeMessage(big), 2).commit, indexMax);
  for (const over of [{ term: String(termMax + 1) }, { commit: String(indexMax + 1) }, { log_term: String(termMax + 1) }, { index: String(indexMax + 1) }, { reject_hint: String(indexMax + 1) }, { term: '9007199254740991' }, { term: '9007199254740993' }]) {
    const w = { ...toWireMessage(big), ...over };
    assert.throws(() => decodeMessage(raftProto().Message.serialize(w), 2), (e: Error) => e instanceof DecodeError && /bound|exceeds/.test(e.message), JSON.stringify(over));
  }
  // A term probe's answer carries in `index` the member it answers for: any member id (below 2^53).
  const forFormer = makeMessage({ type: 'termProbeResp', from: 3, to: 2, term: 5, index: memberIdOf(1, memberIncarnationMax) });
  assert.equal(decodeMessage(encodeMessage(forFormer), 2).index, memberIdOf(1, memberIncarnationMax));
  // Entries that would run past the index bound.
  const app = makeMessage({ type: 'app', from: 1, to: 2, term: 3, index: indexMax, entries: [{ term: 3, index: indexMax + 1, type: 'normal', data: new Uint8Array(0) }] });
  assert.throws(() => decodeMessage(encodeMessage(app), 2), DecodeError);
});

test('each malformed message is refused with a DecodeError naming the field', () => {
  const wire = (m: Message, over: Record<string, unknown>) => raftProto().Message.serialize({ ...toWireMessage(m), ...over } as never);
  const cases: [string, Buffer, RegExp][] = [
    ['unspecified type', wire(app, { type: 'MESSAGE_TYPE_UNSPECIFIED' }), /message\.type/],
    ['for another node', encodeMessage(app), /message\.to/],
    ['from ourselves', wire(app, { from: '2' }), /message\.from/],
    ['from node 0', wire(app, { from: '0' }), /node id 0/],
    ['gap in entries', wire(app, { index: '40' }), /entries\[0\]\.index/],
    ['entry above the message term', wire(app, { term: '6' }), /above the message term/],
    ['entries on a heartbeat', wire(app, { type: 'MESSAGE_TYPE_HEARTBEAT' }), /carries none/],
    ['broken conf change', wire(app, { entries: [{ term: '7', index: '42', type: 'ENTRY_TYPE_CONF_CHANGE', data: Buffer.from([9]) }] }), /not a conf change/],
    ['snap without snapshot', wire(snap, { snapshot: null }), /snapshot: missing/],
    ['snapshot on a heartbeat', wire(snap, { type: 'MESSAGE_TYPE_HEARTBEAT' }), /carries none/],
    ['unsorted voters', wire(snap, { snapshot: { metadata: { index: '5', term: '1', conf_state: { voters: ['3', '1'], learners: [] } }, data: Buffer.alloc(0) } }), /sorted/],
    ['voter and learner', wire(snap, { snapshot: { metadata: { index: '5', term: '1', conf_state: { voters: ['1'], learners: ['1'] } }, data: Buffer.alloc(0) } }), /both/],
    ['empty snapshot', wire(snap, { snapshot: { metadata: { index: '0', term: '0', conf_state: { voters: ['1'], learners: [] } }, data: Buffer.alloc(0) } }), /empty snapshot/],
    ['huge context', wire(app, { entries: [], type: 'MESSAGE_TYPE_READ_INDEX', context: 'x'.repeat(300) }), /context/],
    ['not protobuf', Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), /not a protobuf/],
  ];
  for (const [what, bytes, re] of cases) {
    assert.throws(() => decodeMessage(bytes, what === 'for another node' ? 3 : 2), (e: Error) => e instanceof DecodeError && re.test(e.message), what);
  }
});

test('random bytes and mutated messages either decode to a valid message or fail with a DecodeError', () => {
  const valid = [encodeMessage(app), encodeMessage(snap)];
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }),
        fc.tuple(fc.constantFrom(...valid), fc.nat(), fc.integer({ min: 0, max: 255 })).map(([b, at, v]) => {
          const copy = Buffer.from(b);
          copy[at % copy.length] = v;
          return copy;
        }),
      ),
      (bytes) => {
        try {
          const m = decodeMessage(Buffer.from(bytes), 2);
          assert.equal(m.to, 2);
          assert.ok(Number.isSafeInteger(m.term) && m.from > 0 && m.from !== 2);
          m.entries.forEach((e, k) => assert.equal(e.index, m.index + 1 + k));
        } catch (err) {
          assert.ok(err instanceof DecodeError, `threw ${(err as Error).name}: ${(err as Error).message}`);
        }
      },
    ),
    { numRuns: 2000 },
  );
});

test('disk records (entry, hard state, snapshot) round-trip', () => {
  const e = app.entries[1]!;
  assert.deepEqual(plain(decodeEntry(encodeEntry(e))), plain(e));
  assert.deepEqual(decodeHardState(encodeHardState({ term: 3, vote: 2, commit: 17 })), { term: 3, vote: 2, commit: 17 });
  assert.deepEqual(plain(decodeSnapshot(encodeSnapshot(snap.snapshot!))), plain(snap.snapshot));
});
