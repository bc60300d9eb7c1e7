/** TEST-ONLY: set-up shared by the subscription HTTP tests (event types with chosen partitions, events, subscriptions, stats). */
import assert from 'node:assert/strict';
import { businessEventType, call } from './broker-harness.js';
import { createEventType, eventIn, publish, sleep, statisticFor } from './stream-client.js';

/** Creates a user_defined event type with `partitions` partitions ("0".."n-1"). */
export async function userDefinedEventType(base: string, name: string, partitions: number): Promise<string> {
  await createEventType(base, businessEventType(name, { partition_strategy: 'user_defined', default_statistic: statisticFor(partitions) }));
  return name;
}

/** Publishes events with the given order numbers into one partition, in this order. */
export async function putEvents(base: string, name: string, partition: string, orders: string[]): Promise<void> {
  await publish(base, name, orders.map((o) => eventIn(partition, o)));
}

/** ["p0", "p1", ...]: order numbers. */
export const orderRange = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** POST /subscriptions (read_from begin unless overridden); the id of the created subscription. */
export async function createSubscription(base: string, owner: string, eventTypes: string[], over: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, 'POST', '/subscriptions', { owning_application: owner, event_types: eventTypes, read_from: 'begin', ...over });
  assert.equal(r.status, 201, r.text);
  return (r.body as { id: string }).id;
}

export interface PartitionStat {
  event_type: string;
  partition: string;
  state: string;
  stream_id?: string;
  unconsumed_events?: number;
}

/** GET /subscriptions/{id}/stats, one element per partition. */
export async function subscriptionStats(base: string, id: string): Promise<PartitionStat[]> {
  const r = await call(base, 'GET', `/subscriptions/${id}/stats`);
  assert.equal(r.status, 200, r.text);
  const items = (r.body as { items: { event_type: string; partitions: Omit<PartitionStat, 'event_type'>[] }[] }).items;
  return items.flatMap((it) => it.partitions.map((p) => ({ event_type: it.event_type, ...p })));
}

/** Polls `cond` until it holds; fails after timeoutMs naming `what`. */
export async function waitUntil(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}
