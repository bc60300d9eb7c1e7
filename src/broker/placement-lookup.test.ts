// Goal: the placement a node answers for a partition is kept between lookups (a publish asks for each
// item more than once) and is never stale: a replaced event type record (a move, a timeline) is
// answered anew at the next lookup, and topics created or deleted are seen after topicsChanged.
// Method: a fake metadata source whose records are replaced the way the state machine replaces them
// (copies, never changed in place), counting how often the lookup reads the record list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withTopicPlacement } from '../metadata/placement-of.js';
import type { EventType, EventTypeRecord } from '../metadata/types.js';
import { AppliedPlacements, type PlacementSource } from './placement-lookup.js';

function record(name: string, topic: number, partitions: number): EventTypeRecord {
  return {
    eventType: { name, created_at: 't0' } as EventType,
    schemas: [],
    storage: { topic, partitions: Array.from({ length: partitions }, (_, i) => String(i)), timeline: 1, placement: Array.from({ length: partitions }, (_, i) => ({ group: topic * 10 + i, replicas: [1, 2, 3] })) },
  };
}

class FakeSource implements PlacementSource {
  readonly records = new Map<string, EventTypeRecord>();
  listed = 0;
  eventTypes(): Iterable<EventTypeRecord> {
    this.listed++;
    return this.records.values();
  }
  eventType(name: string): EventTypeRecord | undefined {
    return this.records.get(name);
  }
}

test('an answer is kept while its record is current, with the partition\'s start', () => {
  const src = new FakeSource();
  src.records.set('orders', record('orders', 7, 2));
  const p = new AppliedPlacements(() => src, 1);
  const a = p.lookup(7, 1);
  assert.deepEqual(a, { group: 71, replicas: [1, 2, 3], start: 0 });
  assert.equal(p.lookup(7, 1), a, 'the same answer, not a new one per lookup');
  assert.notEqual(p.lookup(7, 0), a);
  assert.equal(src.listed, 1, 'the topic index is built once');
  assert.equal(p.lookup(7, 2), undefined, 'no such partition');
  assert.equal(p.lookup(8, 0), undefined, 'no such topic');
  assert.equal(new AppliedPlacements(() => undefined, 1).lookup(7, 0), undefined, 'no metadata yet');
});

test('a replaced record (a partition moved) is answered anew at the next lookup', () => {
  const src = new FakeSource();
  const rec = record('orders', 7, 2);
  src.records.set('orders', rec);
  const p = new AppliedPlacements(() => src, 1);
  assert.deepEqual(p.lookup(7, 0)?.replicas, [1, 2, 3]);
  src.records.set('orders', withTopicPlacement(rec, 7, [{ group: 70, replicas: [2, 3, 4] }, { group: 71, replicas: [1, 2, 3] }]));
  assert.deepEqual(p.lookup(7, 0)?.replicas, [2, 3, 4]);
  assert.deepEqual(p.lookup(7, 1)?.replicas, [1, 2, 3]);
});

test('a new timeline\'s topic and a deleted event type are seen after topicsChanged', () => {
  const src = new FakeSource();
  const rec = record('orders', 7, 1);
  src.records.set('orders', rec);
  const p = new AppliedPlacements(() => src, 1);
  assert.ok(p.lookup(7, 0) !== undefined);
  const next = { ...rec, storage: { ...rec.storage, timeline: 2, timelines: [
    { id: 't1', order: 1, storage_id: 'default', topic: 7, starts: [0], created_at: 't', switched_at: 't' },
    { id: 't2', order: 2, storage_id: 'default', topic: 9, starts: [42], created_at: 't', switched_at: 't', placement: [{ group: 90, replicas: [3] }] },
  ] } };
  src.records.set('orders', next);
  p.topicsChanged();
  assert.deepEqual(p.lookup(9, 0), { group: 90, replicas: [3], start: 42 });
  src.records.delete('orders');
  p.topicsChanged();
  assert.equal(p.lookup(9, 0), undefined);
  assert.equal(p.lookup(7, 0), undefined);
});
