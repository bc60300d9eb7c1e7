// Goal: which logs a node drops as those of deleted event types (only topics handed out and no longer
// used by any timeline on the default storage, never a topic of an event type not applied here yet),
// which replicas it opens for an event type (every timeline's storage, one failing partition not
// keeping the others closed), and that a replica a failed open left closed is opened again.
// Method: NodeReplicaSet over fake replicas of two storages and a fake metadata view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { EventType, EventTypeRecord, TimelineRecord } from '../metadata/types.js';
import type { PartitionReplicas } from './partition-replicas.js';
import { NodeReplicaSet, type AppliedEventTypes } from './node-replica-set.js';

const logger = pino({ level: 'silent' });

function timeline(storage_id: string, topic: number, order: number): TimelineRecord {
  return { id: `t${topic}`, order, storage_id, topic, starts: [0, 0], created_at: 't0', switched_at: 't0' };
}

function record(name: string, topic: number, timelines?: TimelineRecord[]): EventTypeRecord {
  return { eventType: { name, created_at: 't0' } as EventType, schemas: [], storage: { topic, partitions: ['0', '1'], timeline: 1, ...(timelines === undefined ? {} : { timelines }) } };
}

class FakeReplicas {
  opened: string[] = [];
  missing = new Set<string>();
  failing = new Set<string>();
  constructor(readonly held: number[] = [], readonly stored: number[] = []) {}
  topics(): number[] { return this.held; }
  async storedTopics(): Promise<Map<number, number[]>> { return new Map(this.stored.map((t) => [t, [1]])); }
  async ensure(topic: number, partition: number): Promise<void> {
    if (this.failing.has(`${topic}/${partition}`)) throw new Error('corrupt');
    this.opened.push(`${topic}/${partition}`);
    this.missing.delete(`${topic}/${partition}`);
  }
  missingHere(topic: number, partition: number): boolean { return this.missing.has(`${topic}/${partition}`); }
}

function view(records: EventTypeRecord[], nextTopic: number): AppliedEventTypes {
  const byName = new Map(records.map((r) => [r.eventType.name, r]));
  return { eventTypes: () => byName.values(), eventType: (n: string) => byName.get(n), nextTopic } as AppliedEventTypes;
}

function setOf(def: FakeReplicas, state: AppliedEventTypes, others: Record<string, FakeReplicas> = {}): { set: NodeReplicaSet; ensured: string[] } {
  const ensured: string[] = [];
  const set = new NodeReplicaSet(def as unknown as PartitionReplicas, {
    state: () => state,
    ensureStorage: async (id) => { ensured.push(id); if (others[id] !== undefined) set.add(id, others[id] as unknown as PartitionReplicas); },
    dropLogs: async () => undefined,
    legacyReplica: 1,
    logger,
  });
  return { set, ensured };
}

test('deleted topics: handed out, held here and used by no timeline on the default storage', async () => {
  // orders: topic 3, then timelines 3 (default) and 8 (default); payments: topic 5 moved to storage s2 as topic 9.
  const state = view([record('orders', 3, [timeline('default', 3, 1), timeline('default', 8, 2)]), record('payments', 5, [timeline('default', 5, 1), timeline('s2', 9, 2)])], 10);
  const def = new FakeReplicas([3, 4, 5, 8, 12], [6, 3]);
  const { set } = setOf(def, state);
  assert.deepEqual(set.deletedTopics(state), [4], '12 is not handed out yet here: an event type this node has not applied');
  assert.deepEqual((await set.deletedTopicsStored(state)).sort((a, b) => a - b), [4, 6]);
});

test('an event type\'s replicas open on every storage of its timelines; one failing partition does not keep the others closed', async () => {
  const def = new FakeReplicas();
  const s2 = new FakeReplicas();
  const orders = record('orders', 3, [timeline('default', 3, 1), timeline('s2', 9, 2)]);
  const { set, ensured } = setOf(def, view([orders], 10), { s2 });
  def.failing.add('3/0');
  await set.open(orders);
  assert.deepEqual(ensured, ['default', 's2']);
  assert.deepEqual(def.opened, ['3/1']);
  assert.deepEqual(s2.opened, ['9/0', '9/1']);
  assert.deepEqual([...set.all()].length, 2);
});

test('a replica a failed open left closed is opened again by reopenMissing, and only that event type', async () => {
  const def = new FakeReplicas();
  const orders = record('orders', 3);
  const payments = record('payments', 4);
  const { set } = setOf(def, view([orders, payments], 10));
  def.missing.add('4/1');
  set.reopenMissing();
  await new Promise((res) => setImmediate(res));
  assert.deepEqual(def.opened, ['4/0', '4/1']);
  def.opened = [];
  set.reopenMissing();
  await new Promise((res) => setImmediate(res));
  assert.deepEqual(def.opened, [], 'nothing missing: nothing opened');
});
