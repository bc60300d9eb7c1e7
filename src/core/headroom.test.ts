// Goal: the room before an entry's bytes (headroom.ts) is handed out once, only for buffers allocated
// with it, and never reaches into memory that is not the buffer's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocWithHeadroom, recordHeadroomBytes, takeHeadroom } from './headroom.js';

test('the room before a buffer allocated with it is taken once, over the same memory', () => {
  const data = allocWithHeadroom(100);
  assert.equal(data.length, 100);
  assert.equal(data.byteOffset, recordHeadroomBytes);
  assert.equal(data.buffer.byteLength, recordHeadroomBytes + 100, 'memory of its own, not a pool slab');
  data.fill(9);
  assert.equal(takeHeadroom(data, recordHeadroomBytes + 1), undefined, 'more room than there is');
  const around = takeHeadroom(data, 10)!;
  assert.equal(around.length, 110);
  assert.equal(around.buffer, data.buffer);
  assert.equal(around.byteOffset, recordHeadroomBytes - 10);
  assert.deepEqual(around.subarray(10), data);
  assert.equal(takeHeadroom(data, 10), undefined, 'taken once');
});

test('no room for buffers allocated otherwise, views and copies included', () => {
  const data = allocWithHeadroom(50);
  assert.equal(takeHeadroom(Buffer.from(data), 1), undefined);
  assert.equal(takeHeadroom(data.subarray(1), 1), undefined);
  assert.equal(takeHeadroom(Buffer.from(data.buffer, data.byteOffset, data.length), 1), undefined, 'another view of the same bytes');
  assert.equal(takeHeadroom(Buffer.allocUnsafeSlow(64).subarray(30), 23), undefined);
  assert.notEqual(takeHeadroom(data, recordHeadroomBytes), undefined, 'the buffer itself still has its room');
});
