// Goal: the on-disk codec of Raft records (raft-records.ts) gives back exactly what was written, and
// reports every damaged record as corruption (RaftRecordCorruptError naming the key), never as an
// assertion: a flipped bit anywhere, a truncated value, a record under another key, a record of
// another kind, an unknown format version.
// Method: round trips over generated values (fast-check); then every single-bit flip of one encoded
// record of each kind, and hand-made malformed values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocWithHeadroom, recordHeadroomBytes } from '../core/headroom.js';
import { checkArrived, encodeBaseEntry, encodeBatchEntry, encodeBatchesEntry, knownCrc32c } from '../log/partition-entry.js';
import fc from 'fast-check';
import { encodeConfChange } from '../raft/index.js';
import type { Entry, Snapshot } from '../raft/index.js';
import {
  decodeDamageRecord,
  decodeEntryRecord,
  decodeHardStateRecord,
  decodeSnapshotRecord,
  decodeU64Record,
  encodeDamageRecord,
  encodeEntryRecord,
  encodeHardStateRecord,
  encodeSnapshotRecord,
  encodeU64Record,
  entryHeadBytes,
  RaftRecordCorruptError,
} from './raft-records.js';

const key = Buffer.from('02000000000301', 'hex');
const otherKey = Buffer.from('02000000000302', 'hex');
const u53 = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const ids = fc.uniqueArray(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), { maxLength: 5 }).map((a) => a.sort((x, y) => x - y));

const plain = (e: Entry) => ({ ...e, data: [...e.data] });

test('entries, hard states, snapshots, damage marks and sequences come back as written', () => {
  fc.assert(
    fc.property(u53, u53, fc.uint8Array({ maxLength: 64 }), (term, index, data) => {
      const e: Entry = { term, index, type: 'normal', data };
      assert.deepEqual(plain(decodeEntryRecord(key, encodeEntryRecord(key, e))), plain(e));
    }),
  );
  const cc: Entry = { term: 1, index: 2, type: 'confChange', data: encodeConfChange({ type: 'addLearner', nodeId: 7 }) };
  assert.deepEqual(plain(decodeEntryRecord(key, encodeEntryRecord(key, cc))), plain(cc));
  fc.assert(
    fc.property(u53, u53, u53, (term, vote, commit) => {
      assert.deepEqual(decodeHardStateRecord(key, encodeHardStateRecord(key, { term, vote, commit })), { term, vote, commit });
    }),
  );
  fc.assert(
    fc.property(u53, u53, ids, ids, fc.uint8Array({ maxLength: 64 }), (index, term, voters, learners, data) => {
      const s: Snapshot = { metadata: { index, term, confState: { voters, learners } }, data };
      const back = decodeSnapshotRecord(key, encodeSnapshotRecord(key, s));
      assert.deepEqual({ ...back, data: [...back.data] }, { ...s, data: [...data] });
    }),
  );
  const d = { term: 9, index: 41, reason: 'the raft log ends before the marker: écrit' };
  assert.deepEqual(decodeDamageRecord(key, encodeDamageRecord(key, d)), d);
  assert.equal(decodeU64Record('writeSeq', key, encodeU64Record('writeSeq', key, 2 ** 53 - 1)), 2 ** 53 - 1);
});

function assertCorrupt(f: () => unknown, reason: RegExp, what: string): void {
  assert.throws(f, (err: unknown) => {
    assert.ok(err instanceof RaftRecordCorruptError, `${what}: ${String(err)}`);
    assert.equal(err.key.toString('hex'), key.toString('hex'));
    assert.match(err.message, /corrupt raft record under key 02000000000301/);
    assert.match(err.reason, reason, what);
    return true;
  });
}

test('every single flipped bit of a stored record is reported as corruption of its key', () => {
  const records: Array<[string, Buffer, (v: Buffer) => unknown]> = [
    ['entry', encodeEntryRecord(key, { term: 3, index: 17, type: 'normal', data: Buffer.from('{"op":"x"}') }), (v) => decodeEntryRecord(key, v)],
    ['hard state', encodeHardStateRecord(key, { term: 3, vote: 2, commit: 16 }), (v) => decodeHardStateRecord(key, v)],
    ['snapshot', encodeSnapshotRecord(key, { metadata: { index: 16, term: 3, confState: { voters: [1, 2, 3], learners: [] } }, data: Buffer.from('{}') }), (v) => decodeSnapshotRecord(key, v)],
    ['damage', encodeDamageRecord(key, { term: 3, index: 16, reason: 'x' }), (v) => decodeDamageRecord(key, v)],
  ];
  for (const [what, value, decode] of records) {
    for (let bit = 0; bit < value.length * 8; bit++) {
      const bad = Buffer.from(value);
      bad[bit >> 3]! ^= 1 << (bit & 7);
      // The format byte has its own message; every other flip is a checksum mismatch.
      assertCorrupt(() => decode(bad), bit < 8 ? /unknown record format/ : /CRC32C mismatch/, `${what}, bit ${bit}`);
    }
  }
});

test('a record under another key, of another kind, truncated or of an unknown format is corruption', () => {
  const hs = encodeHardStateRecord(otherKey, { term: 3, vote: 2, commit: 16 });
  assertCorrupt(() => decodeHardStateRecord(key, hs), /CRC32C mismatch/, 'a hard state moved to another key');
  const entry = encodeEntryRecord(key, { term: 3, index: 17, type: 'normal', data: new Uint8Array(24) });
  assertCorrupt(() => decodeHardStateRecord(key, entry), /kind 1 where hardState/, 'an entry read as a hard state');
  assertCorrupt(() => decodeEntryRecord(key, entry.subarray(0, 4)), /shorter than a record header/, 'a torn value');
  const future = Buffer.from(entry);
  future[0] = 2;
  assertCorrupt(() => decodeEntryRecord(key, future), /unknown record format 2/, 'a newer format');
  // Well framed (the checksum matches) but inconsistent inside: caught by the structural checks.
  const badConf = encodeEntryRecord(key, { term: 1, index: 1, type: 'confChange', data: new Uint8Array([1, 2, 3]) });
  assertCorrupt(() => decodeEntryRecord(key, badConf), /conf change entry 1 does not decode/, 'a conf change that does not decode');
  const unsorted = encodeSnapshotRecord(key, { metadata: { index: 1, term: 1, confState: { voters: [3, 1], learners: [] } }, data: new Uint8Array() });
  assertCorrupt(() => decodeSnapshotRecord(key, unsorted), /not sorted/, 'voters out of order');
});

test('the record of a partition entry this node encoded is byte for byte the one computed from scratch', () => {
  const key = Buffer.from('0200000007030000000000000009', 'hex');
  const entries = [
    encodeBatchesEntry(1_700_000_000_000, [{ requestId: 'a', events: [Buffer.from('{"x":1}'), Buffer.alloc(3000, 7)] }, { requestId: '', events: [Buffer.from('z')] }]),
    encodeBatchEntry(5, 'id', [Buffer.from('hello')]),
    encodeBaseEntry(123),
  ];
  for (const data of entries) {
    assert.notEqual(knownCrc32c(data), undefined);
    const copy = Buffer.from(data);
    assert.equal(knownCrc32c(copy), undefined, 'a copy is not known');
    const e = { term: 3, index: 9, type: 'normal' as const };
    const derived = encodeEntryRecord(key, { ...e, data });
    assert.deepEqual(derived, encodeEntryRecord(key, { ...e, data: copy }));
    assert.deepEqual(Buffer.from(decodeEntryRecord(key, derived).data), copy);
  }
});

test('the record of a partition entry checked on arrival is byte for byte the one computed from scratch; a damaged one is never known', () => {
  const key = Buffer.from('0200000007030000000000000009', 'hex');
  const e = { term: 3, index: 9, type: 'normal' as const };
  for (const encoded of [encodeBatchesEntry(1_700_000_000_000, [{ requestId: 'a', events: [Buffer.from('{"x":1}'), Buffer.alloc(3000, 7)] }]), encodeBatchEntry(5, 'id', [Buffer.from('hello')]), encodeBaseEntry(123)]) {
    // What arrives from another node: other buffers with the same bytes.
    const arrived = Buffer.from(encoded);
    const scratch = Buffer.from(encoded);
    assert.equal(knownCrc32c(arrived), undefined, 'not known before its check');
    checkArrived(arrived);
    assert.notEqual(knownCrc32c(arrived), undefined, 'known once checked');
    assert.deepEqual(encodeEntryRecord(key, { ...e, data: arrived }), encodeEntryRecord(key, { ...e, data: scratch }));
    // A damaged arrival fails its check and stays unknown: its record is checksummed from its bytes.
    const damaged = Buffer.from(encoded);
    damaged[damaged.length - 1]! ^= 1;
    assert.throws(() => checkArrived(damaged));
    assert.equal(knownCrc32c(damaged), undefined);
  }
});

test('an entry allocated with headroom is framed in place once: the same bytes, no second buffer, the first record never changed after', () => {
  assert.ok(entryHeadBytes <= recordHeadroomBytes, `the entry head (${entryHeadBytes} bytes) fits the room left before an entry (${recordHeadroomBytes})`);
  const e = { term: 3, index: 9, type: 'normal' as const };
  const encoded = encodeBatchesEntry(1_700_000_000_000, [{ requestId: 'a', events: [Buffer.from('{"x":1}'), Buffer.alloc(3000, 7)] }]);
  // What a follower keeps of a received entry: a copy of it, made with room (transport/codec.ts).
  const arrived = allocWithHeadroom(encoded.length);
  arrived.set(encoded);
  checkArrived(arrived);
  const unknown = allocWithHeadroom(encoded.length);
  unknown.set(encoded);
  for (const data of [encoded, arrived, unknown]) {
    const scratch = encodeEntryRecord(key, { ...e, data: Buffer.from(data) });
    const first = encodeEntryRecord(key, { ...e, data });
    assert.equal(first.buffer, data.buffer, 'the record is written around the entry, in its memory');
    assert.equal(first.byteOffset + entryHeadBytes, data.byteOffset);
    assert.deepEqual(first, scratch);
    const kept = Buffer.from(first);
    // A second record of the same data (another key) gets a buffer of its own and leaves the first as it was.
    const second = encodeEntryRecord(otherKey, { ...e, data });
    assert.notEqual(second.buffer, data.buffer);
    assert.deepEqual(second, encodeEntryRecord(otherKey, { ...e, data: Buffer.from(data) }));
    assert.deepEqual(first, kept);
    assert.deepEqual(Buffer.from(data), encoded, 'the entry bytes are untouched');
    assert.deepEqual(Buffer.from(decodeEntryRecord(key, first).data), encoded);
  }
});

test('a damage mark keeps the termUnknown flag; marks written before the flag existed read without it', () => {
  const key = Buffer.from([2, 0, 0, 0, 7, 4]);
  const d = { term: 0, index: 0, reason: 'wiped', termUnknown: true };
  assert.deepEqual(decodeDamageRecord(key, encodeDamageRecord(key, d)), d);
  // The earlier layout: term, index, reason (what a mark without the flag still is, byte for byte).
  const plain = encodeDamageRecord(key, { term: 4, index: 9, reason: 'lost tail' });
  assert.equal(plain.length, 6 + 16 + 'lost tail'.length);
  assert.deepEqual(decodeDamageRecord(key, plain), { term: 4, index: 9, reason: 'lost tail' });
  const flagged = encodeDamageRecord(key, d);
  assert.equal(flagged.length, 6 + 18 + 'wiped'.length);
});
