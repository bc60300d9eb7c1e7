// Goal (issue 10, "keep the metadata snapshot within what the transport can carry"): whatever the
// metadata bounds let clients create, the metadata snapshot fits one message of the node-to-node port,
// so a lagging or new member can always be sent it. The worst cases: schemas whose text grows when it
// is written into the image as a JSON string (quotes and line breaks double), the current schema held
// twice (in the event type and in its versions), subscriptions of many partitions with long names whose
// cursors, sessions and closed sessions (stream churn) are part of the image.
// Method: the pure state machine filled until it refuses, at the default bounds and at the highest
// metadataBytesMax; the encoded image is measured against the transport's message bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MetadataStateMachine } from '../metadata/state-machine.js';
import { defaultMetadataLimits, type MetadataLimits } from '../metadata/limits.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { EventType } from '../metadata/types.js';
import { metadataBytesMaxMax } from '../core/limits.js';
import { messageBytesMaxDefault } from '../transport/limits.js';
import { encodeImage } from './metadata-codec.js';

/** Room left in a message for everything around the snapshot data. */
const fits = (bytes: number) => bytes <= messageBytesMaxDefault - 1024 * 1024;

function machine(limits: Partial<MetadataLimits>): { sm: MetadataStateMachine; apply: (c: MetadataCommand) => ReturnType<MetadataStateMachine['apply']> } {
  const sm = new MetadataStateMachine();
  const apply = (c: MetadataCommand) => sm.apply(sm.appliedIndex + 1, c);
  assert.equal(apply({ op: 'limits.set', limits: { ...defaultMetadataLimits, ...limits } }).ok, true);
  return { sm, apply };
}

function eventType(name: string, schema: string): EventType {
  return {
    name,
    owning_application: 'a',
    category: 'undefined',
    enrichment_strategies: [],
    partition_strategy: 'random',
    compatibility_mode: 'none',
    schema: { type: 'json_schema', schema, version: '1.0.0', created_at: '2026-01-01T00:00:00.000Z' },
    options: { retention_time: 1 },
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };
}

/** About 1 MB of schema text that doubles when written as a JSON string. */
const quoteHeavy = '{"type":"object","description":"' + '\\"'.repeat(240_000) + '"}' + '\n'.repeat(500_000);

for (const metadataBytesMax of [defaultMetadataLimits.metadataBytesMax, metadataBytesMaxMax]) {
  test(`event types with schemas that grow in the image, created until refused (metadataBytesMax ${metadataBytesMax}): the snapshot fits one message`, () => {
    const { sm, apply } = machine({ metadataBytesMax, eventTypesMax: 100_000, schemaVersionsMax: 10_000 });
    let n = 0;
    while (apply({ op: 'event_type.create', eventType: eventType(`q${n}`, quoteHeavy), partitionCount: 1 }).ok) n++;
    // And versions of one of them, until refused.
    let updatedAt = '2026-01-01T00:00:00.000Z';
    for (let v = 1; ; v++) {
      const next = { ...eventType('q0', quoteHeavy + ' '.repeat(v)), updated_at: `${updatedAt}+` };
      if (!apply({ op: 'event_type.update', eventType: next, basedOnUpdatedAt: updatedAt, schemaChanged: true }).ok) break;
      updatedAt = next.updated_at;
    }
    assert.ok(n > 0);
    const image = encodeImage(sm).length;
    assert.ok(fits(image), `${n} event types: a snapshot of ${image} bytes, the message bound is ${messageBytesMaxDefault}`);
  });
}

test('subscriptions of 100 partitions with long names, streamed, committed and churned, created until refused: the snapshot fits one message', () => {
  const { sm, apply } = machine({ metadataBytesMax: metadataBytesMaxMax, subscriptionsMax: 1_000_000, eventTypesMax: 100_000 });
  const long = (s: string) => s + 'x'.repeat(255 - s.length);
  const names: string[] = [];
  for (let i = 0; i < 50; i++) {
    assert.equal(apply({ op: 'event_type.create', eventType: eventType(long(`e${i}.`), '{}'), partitionCount: 100 }).ok, true);
    names.push(long(`e${i}.`));
  }
  // The image grows by each subscription and its runtime; measured as it grows (encoding the whole
  // state each time would be slow), stopping as soon as it is past the bound.
  let image = encodeImage(sm).length;
  let subs = 0;
  while (fits(image)) {
    const id = `00000000-0000-4000-8000-${String(subs).padStart(12, '0')}`;
    const et = names[subs % names.length]!;
    const subscription = { id, owning_application: long('app'), event_types: [et], consumer_group: long(`g${subs}`), read_from: 'begin' as const, created_at: '2026-01-01T00:00:00.000Z' };
    if (!apply({ op: 'subscription.create', subscription }).ok) break;
    subs++;
    const partitions = Array.from({ length: 100 }, (_, p) => ({ event_type: et, partition: String(p) }));
    // Stream churn: sessions that open, commit everything and close, each leaving a closed session.
    for (let k = 0; k < 20; k++) {
      const session = { id: `${id}-s${String(k).padStart(4, '0')}`, node: 2 ** 31 - 1, incarnation: 'i'.repeat(36), openedAtMs: 10 ** 13, commitTimeoutMs: 60_000 };
      assert.equal(apply({ op: 'stream.open', subscription: id, session, starts: partitions.map((p) => ({ ...p, offset: -1 })) }).ok, true);
      apply({ op: 'cursor.commit', subscription: id, session: session.id, atMs: 10 ** 13, cursors: partitions.map((p) => ({ ...p, offset: 2 ** 53 - 2 })) });
      if (k < 19) apply({ op: 'stream.close', subscription: id, session: session.id, atMs: 10 ** 13 });
    }
    image += JSON.stringify(subscription).length + JSON.stringify(sm.runtime(id)!.image()).length + 2;
  }
  assert.ok(subs > 10, `${subs} subscriptions`);
  if (fits(image)) image = encodeImage(sm).length;
  assert.ok(fits(image), `${subs} subscriptions: a snapshot of ${image} bytes, the message bound is ${messageBytesMaxDefault}`);
});

test('event types of 100 partitions switched to new timelines until refused (timelinesMax 1000, metadataBytesMax at its highest): the snapshot fits one message', () => {
  const { sm, apply } = machine({ metadataBytesMax: metadataBytesMaxMax, eventTypesMax: 100_000, timelinesMax: 1000 });
  // Long member ids and offsets: each timeline's placement and starts at their widest.
  const members = [2 ** 31 - 1, 2 ** 31 - 2, 2 ** 31 - 3, 2 ** 31 - 4, 2 ** 31 - 5, 2 ** 31 - 6, 2 ** 31 - 7];
  const placement = { replicas: Array.from({ length: 100 }, () => members), members };
  const starts = Array.from({ length: 100 }, () => 2 ** 53 - 2);
  let timelines = 0;
  for (let e = 0; ; e++) {
    const name = `t${e}`;
    if (!apply({ op: 'event_type.create', eventType: eventType(name, '{}'), partitionCount: 100, placement }).ok) break;
    let switched = 0;
    for (;;) {
      const id = `10000000-0000-4000-8000-${String(switched).padStart(12, '0')}`;
      if (!apply({ op: 'timeline.prepare', eventType: name, id, storage_id: 'default', at: '2026-01-01T00:00:00.000Z', placement }).ok) break;
      assert.equal(apply({ op: 'timeline.commit', eventType: name, id, starts, at: '2026-01-01T00:00:00.000Z' }).ok, true);
      switched++;
    }
    timelines += switched;
    // Refused before its bound per event type: the bytes are full. (A stop for a build whose bytes
    // never fill: ten thousand timelines of this size are far past one message.)
    if (switched < 999 || timelines >= 10_000) break;
  }
  assert.ok(timelines > 1000, `${timelines} timelines`);
  const image = encodeImage(sm).length;
  assert.ok(fits(image), `${timelines} timelines: a snapshot of ${image} bytes, the message bound is ${messageBytesMaxDefault}`);
});
