// Goal: the read-ahead of remote reads answers only from a run that holds the event after the cursor
// (never skipping one), within the caller's bounds, and holds no more than its byte budget and its
// runs per partition, the least recently used partition losing its runs first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Offset } from '../core/offset.js';
import { RemoteReadAhead } from './remote-read-ahead.js';

const run = (first: number, n: number, size = 10) => Array.from({ length: n }, (_, k) => ({ offset: (first + k) as Offset, bytes: Buffer.alloc(size) }));
const offsets = (evs: { offset: number }[] | undefined) => evs?.map((e) => e.offset);

test('a run answers reads whose next event it holds, within maxEvents and maxBytes (one event at least)', () => {
  const a = new RemoteReadAhead({ bytesMax: 10_000, runsPerPartition: 2 });
  a.put('1:0', 9, run(10, 10));
  assert.equal(a.take('1:0', 8, 5, 1000), undefined, 'the run starts after 9: event 9 is not in it');
  assert.deepEqual(offsets(a.take('1:0', 9, 3, 1000)), [10, 11, 12]);
  assert.deepEqual(offsets(a.take('1:0', 14, 100, 25)), [15, 16]);
  assert.deepEqual(offsets(a.take('1:0', 14, 100, 1)), [15]);
  assert.equal(a.take('1:0', 19, 5, 1000), undefined, 'the run ends at 19');
  assert.equal(a.take('1:1', 9, 5, 1000), undefined, 'another partition');
  a.put('1:0', 30, []);
  assert.equal(a.bytes, 100);
});

test('runs per partition and the byte budget are kept, the least recently used going first', () => {
  const a = new RemoteReadAhead({ bytesMax: 250, runsPerPartition: 2 });
  a.put('1:0', -1, run(0, 10));
  a.put('1:0', 99, run(100, 10));
  a.put('1:0', 199, run(200, 10));
  assert.equal(a.take('1:0', 0, 1, 100), undefined, 'the oldest run of the partition went');
  assert.equal(a.bytes, 200);
  a.take('1:0', 100, 1, 100);
  a.put('1:1', -1, run(0, 10));
  // 300 bytes > 250: the oldest run of the partition used least recently (1:0's run after 99) goes.
  assert.equal(a.bytes, 200);
  assert.equal(a.take('1:0', 100, 1, 100), undefined);
  assert.deepEqual(offsets(a.take('1:0', 200, 1, 100)), [201]);
  assert.deepEqual(offsets(a.take('1:1', 0, 1, 100)), [1]);
  // A run covered by a newer one goes; a run larger than the budget is not kept.
  a.put('1:1', -1, run(0, 12));
  assert.equal(a.bytes, 220);
  a.put('1:2', -1, run(0, 30));
  assert.equal(a.take('1:2', 0, 1, 100), undefined);
  a.drop('1:1');
  assert.equal(a.bytes, 100);
});
