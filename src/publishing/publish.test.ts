// Goal: the publish pipeline's batch rules (interface.md "Publishing"): validate -> enrich -> partition
// in that order over the whole batch, whole-batch 422 with per-item failed/aborted and the step
// semantics of the original service, 207 when storage of some partitions fails (never half a
// partition), nothing appended unless every event passed.
// Method: the real pipeline with a fake validator and an in-memory writer that can fail partitions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Publisher } from './publish.js';
import type { PartitionAppend } from './ports.js';
import type { EventType, EventTypeRecord } from '../metadata/types.js';

function record(over: Partial<EventType> = {}, partitions = ['0', '1']): EventTypeRecord {
  const eventType: EventType = {
    name: 'orders', owning_application: 'shop', category: 'business', enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: 'hash', partition_key_fields: ['id'], compatibility_mode: 'forward',
    schema: { type: 'json_schema', schema: '{}', version: '1.2.0', created_at: '' },
    options: { retention_time: 1000 }, created_at: '', updated_at: '', ...over,
  };
  return { eventType, schemas: [eventType.schema], storage: { topic: 7, partitions, timeline: 1 } };
}

function setup(rec: EventTypeRecord, failPartitions: number[] = []) {
  const appended: PartitionAppend[] = [];
  const publisher = new Publisher({
    eventTypes: { eventType: (n) => (n === rec.eventType.name ? rec : undefined) },
    validators: { validatorFor: () => (ev) => ((ev as { bad?: boolean }).bad ? '#/bad: must not be true' : null) },
    writer: {
      async append(items) {
        return items.map((it) => {
          if (failPartitions.includes(it.partition)) return { ok: false as const, error: new Error('disk on fire') };
          appended.push(it);
          return { ok: true as const };
        });
      },
    },
    clock: { nowMs: () => Date.UTC(2026, 0, 2, 3, 4, 5), monotonicMs: () => 0 },
    random: { next: () => 0, int: () => 0, uuid: () => '' },
  });
  return { publisher, appended };
}

const ev = (id: string, extra: Record<string, unknown> = {}, md: Record<string, unknown> = {}) =>
  ({ id, ...extra, metadata: { eid: `00000000-0000-4000-8000-00000000000${id}`, occurred_at: '2026-01-01T00:00:00Z', ...md } });
const body = (x: unknown) => Buffer.from(JSON.stringify(x));

test('all stored: 200, events enriched and grouped per partition in batch order', async () => {
  const { publisher, appended } = setup(record());
  const r = await publisher.publish('orders', body([ev('1'), ev('2'), ev('3'), ev('4')]), 'flow-1');
  assert.equal(r.status, 200);
  const stored = appended.flatMap((a) => a.events.map((b) => ({ p: a.partition, e: JSON.parse(b.toString()) })));
  assert.equal(stored.length, 4);
  for (const { p, e } of stored) {
    assert.equal(e.metadata.event_type, 'orders');
    assert.equal(e.metadata.received_at, '2026-01-02T03:04:05.000Z');
    assert.equal(e.metadata.version, '1.2.0');
    assert.equal(e.metadata.flow_id, 'flow-1');
    assert.equal(e.metadata.partition, String(p));
  }
  for (const a of appended) {
    const ids = a.events.map((b) => Number(JSON.parse(b.toString()).id));
    assert.deepEqual(ids, [...ids].sort());
  }
});

test('a producer flow_id is kept', async () => {
  const { publisher, appended } = setup(record());
  await publisher.publish('orders', body([ev('1', {}, { flow_id: 'mine' })]), 'flow-1');
  assert.equal(JSON.parse(appended[0]!.events[0]!.toString()).metadata.flow_id, 'mine');
});

test('validation failure: 422, failed item at validating, earlier aborted at validating, later at none', async () => {
  const { publisher, appended } = setup(record());
  const r = await publisher.publish('orders', body([ev('1'), ev('2', { bad: true }), ev('3')]), 'f');
  assert.equal(r.status, 422);
  const items = (r as { items: { publishing_status: string; step: string; eid?: string; detail: string }[] }).items;
  assert.deepEqual(items.map((i) => [i.publishing_status, i.step]), [['aborted', 'validating'], ['failed', 'validating'], ['aborted', 'none']]);
  assert.equal(items[1]!.eid, '00000000-0000-4000-8000-000000000002');
  assert.match(items[1]!.detail, /#\/bad/);
  assert.equal(appended.length, 0);
});

test('enrichment failures: received_at sent, event_type mismatch', async () => {
  for (const md of [{ received_at: '2026-01-01T00:00:00Z' }, { event_type: 'other' }, { version: '9.9.9' }]) {
    const { publisher, appended } = setup(record());
    const r = await publisher.publish('orders', body([ev('1'), ev('2', {}, md)]), 'f');
    assert.equal(r.status, 422);
    const items = (r as { items: { publishing_status: string; step: string }[] }).items;
    assert.deepEqual(items.map((i) => [i.publishing_status, i.step]), [['aborted', 'enriching'], ['failed', 'enriching']]);
    assert.equal(appended.length, 0);
  }
});

test('matching metadata.event_type is accepted', async () => {
  const { publisher } = setup(record());
  assert.equal((await publisher.publish('orders', body([ev('1', {}, { event_type: 'orders' })]), 'f')).status, 200);
});

test('partitioning failure: user_defined without or with an unknown partition', async () => {
  const { publisher, appended } = setup(record({ partition_strategy: 'user_defined', partition_key_fields: [] }));
  const r = await publisher.publish('orders', body([ev('1', {}, { partition: '1' }), ev('2', {}, { partition: '9' }), ev('3')]), 'f');
  assert.equal(r.status, 422);
  const items = (r as { items: { publishing_status: string; step: string }[] }).items;
  assert.deepEqual(items.map((i) => [i.publishing_status, i.step]), [['aborted', 'partitioning'], ['failed', 'partitioning'], ['aborted', 'enriching']]);
  assert.equal(appended.length, 0);
});

test('an event over 999,000 bytes, measured on the submitted text, fails validation', async () => {
  const { publisher } = setup(record());
  const big = 'x'.repeat(999_000);
  const r = await publisher.publish('orders', body([ev('1'), ev('2', { big })]), 'f');
  assert.equal(r.status, 422);
  const items = (r as { items: { publishing_status: string; step: string; detail: string }[] }).items;
  assert.equal(items[1]!.publishing_status, 'failed');
  assert.match(items[1]!.detail, /too large/);
  // Whitespace counts: an event just under the limit as JSON but over it with padding is rejected.
  const e = JSON.stringify(ev('3', { pad: 'y'.repeat(998_800) }));
  assert.ok(Buffer.byteLength(e) < 999_000);
  const padded = Buffer.from('[' + e + ' '.repeat(999_001 - Buffer.byteLength(e)) + ']');
  assert.equal((await publisher.publish('orders', padded, 'f')).status, 422);
  assert.equal((await publisher.publish('orders', Buffer.from('[' + e + ']'), 'f')).status, 200);
});

test('storage failure of one partition: 207, its items failed at publishing, the others submitted', async () => {
  const { publisher, appended } = setup(record({ partition_strategy: 'user_defined' }), [1]);
  const r = await publisher.publish('orders', body([ev('1', {}, { partition: '0' }), ev('2', {}, { partition: '1' }), ev('3', {}, { partition: '0' })]), 'f');
  assert.equal(r.status, 207);
  const items = (r as { items: { publishing_status: string; step: string; eid?: string }[] }).items;
  assert.deepEqual(items.map((i) => [i.publishing_status, i.step]), [['submitted', 'publishing'], ['failed', 'publishing'], ['submitted', 'publishing']]);
  // Each item names its own event (the parsed batch is not kept while the appends wait: read again).
  assert.deepEqual(items.map((i) => i.eid), ['1', '2', '3'].map((id) => ev(id).metadata.eid));
  assert.equal(appended.length, 1);
  assert.equal(appended[0]!.events.length, 2);
});

test('unknown event type is 404, malformed JSON 400, a non-array 400', async () => {
  const { publisher } = setup(record());
  await assert.rejects(publisher.publish('nope', body([]), 'f'), (e: { status: number }) => e.status === 404);
  await assert.rejects(publisher.publish('orders', Buffer.from('[{"a":'), 'f'), (e: { status: number }) => e.status === 400);
  await assert.rejects(publisher.publish('orders', body({ a: 1 }), 'f'), (e: { status: number }) => e.status === 400);
});

test('category undefined: not enriched, partition not written into the event', async () => {
  const { publisher, appended } = setup(record({ category: 'undefined', enrichment_strategies: [], partition_strategy: 'random', partition_key_fields: [] }));
  assert.equal((await publisher.publish('orders', body([{ anything: 1 }]), 'f')).status, 200);
  assert.deepEqual(JSON.parse(appended[0]!.events[0]!.toString()), { anything: 1 });
});

// Issue 10: validating a large batch must not hold the event loop. Validation pauses (lets other work
// run) after every chunk of events, and a change of the event type during a pause is never missed: the
// batch is validated again against the record that is then appended to.
function pausingSetup(records: (EventTypeRecord | undefined)[], onPause: (n: number) => void = () => undefined) {
  let current = 0;
  const appended: PartitionAppend[] = [];
  let pauses = 0;
  const validated: string[] = [];
  const publisher = new Publisher({
    eventTypes: { eventType: () => records[current] },
    validators: {
      validatorFor: (rec) => (e) => {
        validated.push(rec.eventType.schema.version);
        return rec.eventType.schema.version === '2.0.0' && (e as { id: string }).id === '1' ? '#/id: refused by 2.0.0' : null;
      },
    },
    writer: { async append(items) { appended.push(...items); return items.map(() => ({ ok: true as const })); } },
    clock: { nowMs: () => 0, monotonicMs: () => 0 },
    random: { next: () => 0, int: () => 0, uuid: () => '' },
    pause: async () => {
      pauses++;
      onPause(pauses);
      if (current < records.length - 1) current++;
      await new Promise((r) => setImmediate(r));
    },
  });
  return { publisher, appended, pauses: () => pauses, validated };
}

const many = (n: number) => body(Array.from({ length: n }, (_, i) => ev(String(i + 2))));

test('issue 10: validation pauses after every 500 events and other work runs meanwhile', async () => {
  const rec = record({}, ['0']);
  let ranDuringPublish = 0;
  const { publisher, appended, pauses } = pausingSetup([rec, rec, rec, rec]);
  const other = setInterval(() => ranDuringPublish++, 0);
  const r = await publisher.publish('orders', many(1_200), 'f');
  clearInterval(other);
  assert.equal(r.status, 200);
  assert.equal(pauses(), 2, '1,200 events: pauses after 500 and 1,000');
  assert.equal(appended[0]!.events.length, 1_200);
  assert.ok(ranDuringPublish > 0, 'a timer ran while the batch was being validated');
  const small = pausingSetup([rec]);
  assert.equal((await small.publisher.publish('orders', many(500), 'f')).status, 200);
  assert.equal(small.pauses(), 0, 'no pause for a batch of one chunk');
});

test('issue 10: an event type changed during a pause is validated again with its new schema', async () => {
  const v1 = record({}, ['0']);
  const v2 = record({ schema: { type: 'json_schema', schema: '{}', version: '2.0.0', created_at: '' } }, ['0']);
  const batch = body([...Array.from({ length: 600 }, (_, i) => ev(String(i + 2))), ev('1')]);
  const changed = pausingSetup([v1, v2]);
  const r = await changed.publisher.publish('orders', batch, 'f');
  assert.equal(r.status, 422, 'the new schema refuses event 1');
  assert.equal(changed.appended.length, 0);
  const deleted = pausingSetup([v1, undefined]);
  await assert.rejects(deleted.publisher.publish('orders', batch, 'f'), (err: { status?: number }) => err.status === 404);
  assert.equal(deleted.appended.length, 0);
});

test('issue 10: an event with invalid UTF-8 is refused at validating (it would make every stream carrying it invalid); nothing is stored', async () => {
  const { publisher, appended } = setup(record());
  const good = (id: string) => Buffer.from(JSON.stringify(ev(id)));
  const bad = Buffer.concat([Buffer.from('{"id":"2","note":"'), Buffer.from([0xc3, 0x28]), Buffer.from('","metadata":{"eid":"00000000-0000-4000-8000-000000000002","occurred_at":"2026-01-01T00:00:00Z"}}')]);
  for (const [invalid, at] of [[bad, 1], [Buffer.from(bad.toString('latin1').replace('\u00c3(', '\u00ed\u00a0\u0080'), 'latin1'), 1]] as const) {
    const r = await publisher.publish('orders', Buffer.concat([Buffer.from('[ '), good('1'), Buffer.from(' ,\n'), invalid, Buffer.from(','), good('3'), Buffer.from(']')]), 'f');
    assert.equal(r.status, 422);
    const items = (r as { items: { publishing_status: string; detail: string }[] }).items;
    assert.equal(items[at]!.publishing_status, 'failed');
    assert.equal(items[at]!.detail, 'The event is not valid UTF-8');
  }
  assert.equal(appended.length, 0);
  const fine = await publisher.publish('orders', Buffer.from(JSON.stringify([ev('1', { note: 'é 😀 \u2028' })])), 'f');
  assert.equal(fine.status, 200);
});

test('the partitioner follows the event type: a changed record (more partitions, another strategy) and the check_partitions_keys toggle apply to the next batch', async () => {
  let rec = record({}, ['0']);
  let strict = false;
  const appended: PartitionAppend[] = [];
  const publisher = new Publisher({
    eventTypes: { eventType: () => rec },
    validators: { validatorFor: () => () => null },
    writer: {
      async append(items) {
        appended.push(...items);
        return items.map(() => ({ ok: true as const }));
      },
    },
    clock: { nowMs: () => 0, monotonicMs: () => 0 },
    random: { next: () => 0, int: (n) => n - 1, uuid: () => '' },
    features: { isEnabled: () => strict },
  });
  const partitionsOf = async (batch: unknown[]) => {
    appended.length = 0;
    const r = await publisher.publish('orders', body(batch), 'f');
    assert.equal(r.status, 200);
    return appended.map((a) => a.partition).sort();
  };
  const batch = Array.from({ length: 8 }, (_, i) => ev(String(i)));
  assert.deepEqual(await partitionsOf(batch), [0]);
  rec = record({}, ['0', '1', '2', '3']);
  assert.deepEqual(await partitionsOf(batch), [0, 1, 2, 3], 'four partitions once the record has four');
  rec = record({ partition_strategy: 'random', partition_key_fields: [] }, ['0', '1', '2', '3']);
  assert.deepEqual(await partitionsOf(batch), [3], 'random (the last partition, as the injected randomness says)');
  rec = record({}, ['0', '1']);
  const objectKey = [ev('1', { id: { nested: true } })];
  assert.equal((await publisher.publish('orders', body(objectKey), 'f')).status, 200, 'an object key is hashed by its text');
  strict = true;
  assert.equal((await publisher.publish('orders', body(objectKey), 'f')).status, 422, 'refused once the toggle is on, with the same record');
});
