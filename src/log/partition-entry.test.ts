import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchEvents, batchPayloadBytes, decodeEntryHead, encodeBaseEntry, encodeBatchEntry, encodeSealEntry, PartitionEntryError, requestIdBytesMax, timelineIdBytesMax } from './partition-entry.js';

const ev = (s: string) => Buffer.from(s);

test('a batch entry round-trips its events, request id and append time', () => {
  const data = encodeBatchEntry(1_700_000_000_123, 'req-1', [ev('{"a":1}'), ev(''), ev('{"b":"xyz"}')]);
  assert.deepEqual(decodeEntryHead(data), { kind: 'batch', requestId: 'req-1', count: 3, appendTimeMs: 1_700_000_000_123 });
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
