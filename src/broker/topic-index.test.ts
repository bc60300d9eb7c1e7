// Goal: the topic -> event type index answers from the applied metadata, is built once, and sees
// event types created or deleted only after invalidate() (which the metadata reactions call).
// Method: a fake metadata source that counts how often the index lists the event types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventType, EventTypeRecord } from '../metadata/types.js';
import { TopicIndex } from './topic-index.js';

function record(name: string, topic: number): EventTypeRecord {
  return { eventType: { name, created_at: 't0' } as EventType, schemas: [], storage: { topic, partitions: ['0'], timeline: 1 } };
}

test('a topic is found, the list is read once, and a new event type is seen after invalidate', () => {
  const records = new Map([['orders', record('orders', 3)]]);
  let listed = 0;
  const state = { eventTypes: () => { listed++; return records.values(); }, eventType: (n: string) => records.get(n) };
  const index = new TopicIndex(() => state);
  assert.equal(index.lookup(3)?.eventType.name, 'orders');
  assert.equal(index.lookup(4), undefined);
  assert.equal(listed, 1);
  records.set('payments', record('payments', 4));
  assert.equal(index.lookup(4), undefined, 'not seen before invalidate: the index is a cache');
  index.invalidate();
  assert.equal(index.lookup(4)?.eventType.name, 'payments');
  records.delete('orders');
  assert.equal(index.lookup(3), undefined, 'a deleted event type is not answered even before invalidate');
  assert.equal(listed, 2);
});

test('nothing is found before the metadata group is open', () => {
  assert.equal(new TopicIndex(() => undefined).lookup(1), undefined);
});
