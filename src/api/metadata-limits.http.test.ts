// Goal (issue 10): metadata is bounded by documented, configurable settings with clear 422 Problems:
// event types (eventTypesMax), subscriptions (subscriptionsMax), schema versions per event type
// (schemaVersionsMax), timelines per event type (timelinesMax). The bounds come from the node's configuration into the replicated state, so a
// restart with other settings moves them.
// Method: a real broker with small bounds; then a restart with larger ones on the same data.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEventType, call, startTestBroker, type TestBroker } from '../testing/broker-harness.js';

let broker: TestBroker;
let base: string;

before(async () => {
  broker = await startTestBroker({ eventTypesMax: 3, subscriptionsMax: 2, schemaVersionsMax: 3, timelinesMax: 2 });
  base = `http://127.0.0.1:${broker.port}`;
});
after(async () => {
  await broker.destroy();
});

function assert422(r: { status: number; headers: Headers; body: unknown; text: string }, detail: RegExp): void {
  assert.equal(r.status, 422, r.text);
  assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
  assert.match((r.body as { detail: string }).detail, detail);
}

test('issue 10: event types, subscriptions, schema versions and timelines are bounded with 422, and a restart with other settings moves the bounds', async () => {
  for (const n of ['ml.a', 'ml.b', 'ml.c']) assert.equal((await call(base, 'POST', '/event-types', businessEventType(n))).status, 201);
  assert422(await call(base, 'POST', '/event-types', businessEventType('ml.d')), /3 event types.*eventTypesMax 3/);

  assert.equal((await call(base, 'POST', '/subscriptions', { owning_application: 'x', event_types: ['ml.a'] })).status, 201);
  assert.equal((await call(base, 'POST', '/subscriptions', { owning_application: 'y', event_types: ['ml.a'] })).status, 201);
  assert422(await call(base, 'POST', '/subscriptions', { owning_application: 'z', event_types: ['ml.a'] }), /subscriptionsMax 2/);
  assert.equal((await call(base, 'POST', '/subscriptions', { owning_application: 'x', event_types: ['ml.a'] })).status, 200, 'an existing subscription is still found');

  const withTitle = (title: string) => businessEventType('ml.b', {
    schema: { type: 'json_schema', schema: JSON.stringify({ type: 'object', title, properties: { order_number: { type: 'string' }, amount: { type: 'number' } }, required: ['order_number'] }) },
  });
  assert.equal((await call(base, 'PUT', '/event-types/ml.b', withTitle('v2'))).status, 200);
  assert.equal((await call(base, 'PUT', '/event-types/ml.b', withTitle('v3'))).status, 200);
  assert422(await call(base, 'PUT', '/event-types/ml.b', withTitle('v4')), /3 schema versions.*schemaVersionsMax 3/);
  assert.equal(((await call(base, 'GET', '/event-types/ml.b/schemas')).body as { items: unknown[] }).items.length, 3);

  // The first timeline counts: one switch makes two.
  assert.equal((await call(base, 'POST', '/event-types/ml.c/timelines', { storage_id: 'default' })).status, 201);
  assert422(await call(base, 'POST', '/event-types/ml.c/timelines', { storage_id: 'default' }), /"ml.c" has 2 timelines.*timelinesMax 2/);
  assert.equal(((await call(base, 'GET', '/event-types/ml.c/timelines')).body as unknown[]).length, 2);

  await broker.close();
  broker = await startTestBroker({ eventTypesMax: 4, subscriptionsMax: 2, schemaVersionsMax: 3, timelinesMax: 3 }, broker.dataDir);
  base = `http://127.0.0.1:${broker.port}`;
  assert.equal((await call(base, 'POST', '/event-types', businessEventType('ml.d'))).status, 201);
  assert422(await call(base, 'POST', '/event-types', businessEventType('ml.e')), /eventTypesMax 4/);
  assert.equal((await call(base, 'POST', '/event-types/ml.c/timelines', { storage_id: 'default' })).status, 201);
  assert422(await call(base, 'POST', '/event-types/ml.c/timelines', { storage_id: 'default' }), /timelinesMax 3/);
});
