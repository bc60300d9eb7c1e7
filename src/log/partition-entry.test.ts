import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordHeadroomBytes } from '../core/headroom.js';
import { batchEvents, batchPayloadBytes, decodeEntryHead, encodeBaseEntry, encodeBatchEntry, encodeBatchesEntry, encodeSealEntry, isEncodedHere, PartitionEntryError, requestIdBytesMax, timelineIdBytesMax } from './partition-entry.js';

const ev = (s: string) => Buffer.from(s);

test('a batch entry round-trips its events, request id and append time', () => {
  const data = encodeBatchEntry(1_700_000_000_123, 'req-1', [ev('{"a":1}'), ev(''), ev('{"b":"xyz"}')]);
  assert.deepEqual(decodeEntryHead(data), { kind: 'batches', batches: [{ requestId: 'req-1', count: 3 }], count: 3, appendTimeMs: 1_700_000_000_123 });
  assert.deepEqual(batchEvents(data).map(String), ['{"a":1}', '', '{"b":"xyz"}']);
  assert.equal(batchPayloadBytes(data), 7 + 0 + 11);
});

test('the empty payload is the no-op; a base entry carries its offset', () => {
  assert.deepEqual(decodeEntryHead(Buffer.alloc(0)), { kind: 'noop' });
  assert.deepEqual(decodeEntryHead(encodeBaseEntry(123_456_789_012)), { kind: 'base', base: 123_456_789_012 });
});

test('a seal entry carries its timeline id and floor; ids are 1 to 64 bytes', () => {
  const id = '0b6c2f4e-5d1a-4c1e-9a55-3f1d2e7b9c10';
  assert.deepEqual(decodeEntryHead(encodeSealEntry(id, 9_007_199_254_740_991)), { kind: 'seal', timeline: id, floor: 9_007_199_254_740_991 });
  // Kind 3 is a batches entry: a seal must never be read as one (or the reverse).
  assert.equal(encodeSealEntry(id, 0)[0], 4);
  assert.throws(() => encodeSealEntry('', 0), /timeline id/);
  assert.throws(() => encodeSealEntry('x'.repeat(timelineIdBytesMax + 1), 0), /timeline id/);
});

test('every flipped bit is detected by the checksum', () => {
  for (const data of [encodeBatchEntry(5, 'id', [ev('hello'), ev('world')]), encodeSealEntry('T-1', 7)]) {
    for (let i = 0; i < data.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const bad = Buffer.from(data);
        bad[i]! ^= bit;
        assert.throws(() => decodeEntryHead(bad), PartitionEntryError, `byte ${i} bit ${bit}`);
      }
    }
  }
});

test('unknown kinds, empty batches and oversized request ids are refused', () => {
  const data = encodeBaseEntry(1);
  const unknown = Buffer.from(data);
  unknown[0] = 9;
  assert.throws(() => decodeEntryHead(unknown), /unknown partition entry kind|checksum/);
  assert.throws(() => encodeBatchEntry(1, '', []), /at least one event/);
  assert.throws(() => encodeBatchEntry(1, 'x'.repeat(requestIdBytesMax + 1), [ev('a')]), /request id/);
});

test('only the very buffers this process encoded count as encoded here; a copy of one is checked again', () => {
  const data = encodeBatchEntry(5, 'id', [ev('hello')]);
  assert.equal(isEncodedHere(data), true);
  assert.equal(isEncodedHere(encodeBaseEntry(7)), true);
  const copy = Buffer.from(data);
  assert.equal(isEncodedHere(copy), false);
  copy[copy.length - 1]! ^= 1;
  assert.throws(() => decodeEntryHead(copy, isEncodedHere(copy)), PartitionEntryError);
  // Without the checksum the structure is still checked.
  assert.throws(() => decodeEntryHead(Buffer.from([1, 0, 0]), true), /entry of 3 bytes/);
});

test('a batches entry (kind 3) holds several publish batches, each with its request id, events in order', () => {
  const data = encodeBatchesEntry(1_700_000_000_999, [
    { requestId: 'a', events: [ev('1'), ev('22')] },
    { requestId: '', events: [ev('333')] },
    { requestId: 'ccc', events: [ev(''), ev('4444'), ev('5')] },
  ]);
  assert.equal(data[0], 3);
  assert.deepEqual(decodeEntryHead(data), {
    kind: 'batches',
    batches: [{ requestId: 'a', count: 2 }, { requestId: '', count: 1 }, { requestId: 'ccc', count: 3 }],
    count: 6,
    appendTimeMs: 1_700_000_000_999,
  });
  assert.deepEqual(batchEvents(data).map(String), ['1', '22', '333', '', '4444', '5']);
  assert.equal(batchPayloadBytes(data), 1 + 2 + 3 + 0 + 4 + 1);
  for (let i = 0; i < data.length; i++) {
    const bad = Buffer.from(data);
    bad[i]! ^= 0x20;
    assert.throws(() => decodeEntryHead(bad), PartitionEntryError, `byte ${i}`);
  }
  assert.throws(() => encodeBatchesEntry(1, []), /1 to 65535 batches/);
  assert.throws(() => encodeBatchesEntry(1, [{ requestId: 'x', events: [] }]), /at least one event/);
  assert.throws(() => encodeBatchesEntry(1, [{ requestId: 'x'.repeat(requestIdBytesMax + 1), events: [ev('a')] }]), /request id/);
  // A truncated head is refused even when the checksum is not checked.
  assert.throws(() => decodeEntryHead(data.subarray(0, 20), true), PartitionEntryError);
});

test('an encoded entry owns its memory: a small one is no slice of the shared Buffer pool (the memory tail counts its bytes)', () => {
  const small = [Buffer.from('{"a":1}')];
  const entries = [
    encodeBatchEntry(1, 'r', small),
    encodeBatchesEntry(1, [{ requestId: 'r1', events: small }, { requestId: 'r2', events: small }]),
    encodeBaseEntry(5),
    encodeSealEntry('t1', 9),
    encodeBatchEntry(1, 'big', [Buffer.alloc(10_000, 0x61)]),
  ];
  for (const e of entries) {
    // Its own ArrayBuffer, with room before it for its log record's head (core/headroom.ts) and nothing else.
    assert.equal(e.byteOffset, recordHeadroomBytes, 'starts its own ArrayBuffer after the room for a record head');
    assert.equal(e.buffer.byteLength, recordHeadroomBytes + e.byteLength, `an entry of ${e.byteLength} bytes keeps ${e.buffer.byteLength} alive`);
  }
});
