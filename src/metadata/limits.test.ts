// Goal (issue 10): metadata is bounded where commands are applied, so no member, however buggy, can
// take it past its bounds: event types, subscriptions, schema versions per event type, schema size,
// timelines per event type, partitions (a 20,000,000-partition event type once ran every node out of memory), and the bytes of
// everything together (a snapshot must fit one message between nodes). Refusals are results, never
// exceptions; the bounds are replicated (limits.set), and the state stays the same on every node.
// Method: the pure state machine, with small bounds set by a command; a property that two machines,
// and a snapshot restored midway, agree on results and state whatever the commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MetadataStateMachine } from './state-machine.js';
import { defaultMetadataLimits, type MetadataLimits } from './limits.js';
import type { MetadataCommand } from './commands.js';
import type { EventType, Subscription } from './types.js';
import { storedEventType } from '../testing/metadata-fixtures.js';

const small: MetadataLimits = { eventTypesMax: 3, subscriptionsMax: 2, schemaVersionsMax: 3, schemaBytesMax: 1000, partitionsMax: 8, subscriptionPartitionsMax: 10, metadataBytesMax: 20_000, timelinesMax: 3 };

function machine(limits: MetadataLimits = small): { sm: MetadataStateMachine; apply: (cmd: MetadataCommand) => ReturnType<MetadataStateMachine['apply']> } {
  const sm = new MetadataStateMachine();
  let index = 0;
  const apply = (cmd: MetadataCommand) => sm.apply(++index, cmd);
  assert.deepEqual(apply({ op: 'limits.set', limits }), { ok: true });
  return { sm, apply };
}

const create = (name: string, partitionCount = 1, over: Partial<EventType> = {}): MetadataCommand => ({ op: 'event_type.create', eventType: storedEventType(name, over), partitionCount });
const sub = (id: string, eventTypes: string[]): Subscription => ({ id, owning_application: `app-${id}`, event_types: eventTypes, consumer_group: 'default', read_from: 'end', created_at: 't0' });

function refusedWith(r: ReturnType<MetadataStateMachine['apply']>, reason: string, detail: RegExp): void {
  assert.equal(r.ok, false, JSON.stringify(r));
  if (r.ok) return;
  assert.equal(r.reason, reason);
  assert.match(r.detail, detail);
}

test('the defaults hold until limits.set; a malformed limits.set is refused and changes nothing', () => {
  const sm = new MetadataStateMachine();
  assert.deepEqual({ ...sm.limits }, { ...defaultMetadataLimits });
  refusedWith(sm.apply(1, { op: 'limits.set', limits: { ...small, eventTypesMax: 0 } }), 'invalid', /positive integer/);
  refusedWith(sm.apply(2, { op: 'limits.set', limits: { eventTypesMax: 5 } as unknown as MetadataLimits }), 'invalid', /positive integer/);
  assert.deepEqual({ ...sm.limits }, { ...defaultMetadataLimits });
  assert.deepEqual(sm.apply(3, { op: 'limits.set', limits: small }), { ok: true });
  assert.deepEqual({ ...sm.limits }, small);
});

test('issue 10: 20,000,000 partitions, or none, are refused without allocating anything or throwing', () => {
  const { sm, apply } = machine({ ...defaultMetadataLimits });
  refusedWith(apply(create('huge', 20_000_000)), 'limit', /at most 100 partitions/);
  refusedWith(apply(create('none', 0)), 'invalid', /at least one partition/);
  refusedWith(apply(create('nan', Number.NaN)), 'invalid', /at least one partition/);
  assert.equal(sm.eventTypeCount(), 0);
});

test('event types: at most eventTypesMax; a deletion makes room again', () => {
  const { apply } = machine();
  for (const n of ['a', 'b', 'c']) assert.equal(apply(create(n)).ok, true);
  refusedWith(apply(create('d')), 'limit', /3 event types.*eventTypesMax 3/);
  refusedWith(apply(create('a')), 'exists', /already exists/);
  assert.equal(apply({ op: 'event_type.delete', name: 'b' }).ok, true);
  assert.equal(apply(create('d')).ok, true);
});

test('schema versions: at most schemaVersionsMax per event type; an update keeping the schema is not refused', () => {
  const { sm, apply } = machine();
  apply(create('a'));
  let updatedAt = 't0';
  const update = (version: string, schemaChanged: boolean) => {
    const next = storedEventType('a', { updated_at: `${updatedAt}+`, schema: { type: 'json_schema', schema: `{"title":"${version}"}`, version, created_at: 't' } });
    const r = apply({ op: 'event_type.update', eventType: next, basedOnUpdatedAt: updatedAt, schemaChanged });
    if (r.ok) updatedAt = next.updated_at;
    return r;
  };
  assert.equal(update('1.0.1', true).ok, true);
  assert.equal(update('1.0.2', true).ok, true);
  refusedWith(update('1.0.3', true), 'limit', /3 schema versions.*schemaVersionsMax 3/);
  assert.equal(update('1.0.2', false).ok, true, 'other fields may still change');
  assert.deepEqual(sm.eventType('a')!.schemas.map((s) => s.version), ['1.0.0', '1.0.1', '1.0.2']);
});

test('schema size and the bytes of all metadata are bounded; deleting frees them', () => {
  const { sm, apply } = machine();
  const big = (n: number) => ({ schema: { type: 'json_schema' as const, schema: `{"description":"${'x'.repeat(n)}"}`, version: '1.0.0', created_at: 't0' } });
  refusedWith(apply(create('too-big', 1, big(2000))), 'limit', /at most 1000 bytes/);
  // Many owners' names (authorization lists are not bounded one by one) fill the byte budget.
  const wide = { authorization: { admins: [{ data_type: 'user', value: 'x'.repeat(9000) }], readers: [{ data_type: '*', value: '*' }], writers: [{ data_type: '*', value: '*' }] } };
  assert.equal(apply(create('w1', 1, wide)).ok, true);
  assert.equal(apply(create('w2', 1, wide)).ok, true);
  const before = sm.metadataBytes;
  assert.ok(before > 18_000 && before <= 20_000, `${before} bytes`);
  refusedWith(apply(create('w3', 1, wide)), 'limit', /metadataBytesMax/);
  assert.equal(sm.metadataBytes, before, 'a refused command changes nothing');
  apply({ op: 'event_type.delete', name: 'w1' });
  assert.ok(sm.metadataBytes < before - 9000);
  assert.equal(apply(create('w3', 1, wide)).ok, true);
});

const prepare = (name: string, id: string, storage_id = 'default'): MetadataCommand => ({ op: 'timeline.prepare', eventType: name, id, storage_id, at: 't1' });
const commit = (name: string, id: string, starts: number[]): MetadataCommand => ({ op: 'timeline.commit', eventType: name, id, starts, at: 't2' });

test('timelines: at most timelinesMax per event type, the first included; a pending switch still commits after the bound was lowered', () => {
  const { sm, apply } = machine({ ...small, metadataBytesMax: 1_000_000 });
  apply(create('a', 2));
  apply(create('b', 2));
  assert.equal(apply(prepare('a', 'T2')).ok, true);
  assert.equal(apply(commit('a', 'T2', [1, 1])).ok, true);
  assert.equal(apply(prepare('a', 'T3')).ok, true);
  assert.equal(apply(commit('a', 'T3', [2, 2])).ok, true);
  refusedWith(apply(prepare('a', 'T4')), 'limit', /"a" has 3 timelines.*timelinesMax 3/);
  assert.equal(sm.eventType('a')!.storage.pendingTimeline, undefined, 'a refused switch leaves nothing pending');
  // The bound is per event type.
  assert.equal(apply(prepare('b', 'U2')).ok, true);
  // Lowered while b's switch is pending: its seals have closed the current logs, so the commit that
  // ends the switch is never refused; the next switch is.
  assert.equal(apply({ op: 'limits.set', limits: { ...small, metadataBytesMax: 1_000_000, timelinesMax: 1 } }).ok, true);
  assert.equal(apply(commit('b', 'U2', [0, 0])).ok, true);
  assert.equal(sm.eventType('b')!.storage.timelines!.length, 2);
  refusedWith(apply(prepare('b', 'U3')), 'limit', /timelinesMax 1/);
  // The one-step timeline.create only earlier versions proposed applies as it did (replaying their log).
  assert.equal(apply({ op: 'timeline.create', eventType: 'a', id: 'T4', storage_id: 'default', starts: [3, 3], at: 't3' }).ok, true);
});

test('each further timeline counts toward the metadata bytes (its start and placement per partition); prepare is refused when they would not fit', () => {
  const { sm, apply } = machine({ ...small, metadataBytesMax: 1_000_000, timelinesMax: 10 });
  apply(create('a', 8));
  const one = sm.metadataBytes;
  assert.equal(apply(prepare('a', 'T2')).ok, true);
  const two = sm.metadataBytes;
  assert.ok(two - one >= 8 * 160, `a pending switch counts its log (${two - one} bytes more)`);
  assert.equal(apply(commit('a', 'T2', [0, 0, 0, 0, 0, 0, 0, 0])).ok, true);
  assert.equal(sm.metadataBytes, two, 'the commit turns the pending log into a timeline: no more bytes');
  const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
  assert.equal(restored.metadataBytes, two, 'a restored machine counts the same bytes');
  assert.equal(apply({ op: 'limits.set', limits: { ...small, timelinesMax: 10, metadataBytesMax: two + 100 } }).ok, true);
  refusedWith(apply(prepare('a', 'T3')), 'limit', /metadataBytesMax/);
  assert.equal(sm.metadataBytes, two, 'a refused command changes nothing');
  apply({ op: 'event_type.delete', name: 'a' });
  assert.equal(sm.metadataBytes, 0);
});

test('a limits.set or snapshot of an earlier version, without timelinesMax, keeps its other bounds and takes the default for it', () => {
  const { timelinesMax: _absent, ...older } = small;
  const sm = new MetadataStateMachine();
  assert.deepEqual(sm.apply(1, { op: 'limits.set', limits: older as MetadataLimits }), { ok: true });
  assert.deepEqual({ ...sm.limits }, { ...small, timelinesMax: defaultMetadataLimits.timelinesMax });
  const snap = JSON.parse(JSON.stringify(sm.snapshot())) as ReturnType<MetadataStateMachine['snapshot']>;
  delete (snap.limits as unknown as Record<string, unknown>)['timelinesMax'];
  assert.deepEqual({ ...MetadataStateMachine.restore(snap, 1).limits }, { ...small, timelinesMax: defaultMetadataLimits.timelinesMax });
  refusedWith(sm.apply(2, { op: 'limits.set', limits: { ...small, timelinesMax: 0 } }), 'invalid', /positive integer/);
});

test('subscriptions: at most subscriptionsMax, and at most subscriptionPartitionsMax partitions each', () => {
  // Bytes are not the bound under test here (a subscription counts room for its runtime per partition).
  const { apply } = machine({ ...small, metadataBytesMax: 1_000_000 });
  apply(create('a', 8));
  apply(create('b', 3));
  refusedWith(apply({ op: 'subscription.create', subscription: sub('s0', ['a', 'b']) }), 'limit', /at most 10 partitions together; these have 11/);
  assert.equal(apply({ op: 'subscription.create', subscription: sub('s1', ['a']) }).ok, true);
  assert.equal(apply({ op: 'subscription.create', subscription: sub('s2', ['b']) }).ok, true);
  refusedWith(apply({ op: 'subscription.create', subscription: sub('s3', ['b']) }), 'limit', /subscriptionsMax 2/);
  // The same key triple is not a new subscription: answered with the existing one, as before.
  assert.equal(apply({ op: 'subscription.create', subscription: { ...sub('s4', ['b']), owning_application: 'app-s2' } }).ok, true);
  apply({ op: 'subscription.delete', id: 's1' });
  assert.equal(apply({ op: 'subscription.create', subscription: sub('s3', ['b']) }).ok, true);
});

test('an unknown op (from a newer member) is refused, not thrown', () => {
  const { apply } = machine();
  refusedWith(apply({ op: 'event_type.rename' } as unknown as MetadataCommand), 'invalid', /Unknown metadata command/);
});

test('property: the bounds keep the state the same everywhere: two machines, and one restored from a snapshot midway, agree', () => {
  const names = ['a', 'b', 'c', 'd', 'e'];
  const command = fc.oneof(
    fc.record({ name: fc.constantFrom(...names), partitions: fc.integer({ min: 0, max: 12 }), pad: fc.integer({ min: 0, max: 6000 }) })
      .map(({ name, partitions, pad }) => create(name, partitions, { owning_application: 'o'.repeat(pad) })),
    fc.constantFrom(...names).map((name): MetadataCommand => ({ op: 'event_type.delete', name })),
    fc.record({ id: fc.constantFrom('s1', 's2', 's3'), ets: fc.subarray(names, { minLength: 1 }) })
      .map(({ id, ets }): MetadataCommand => ({ op: 'subscription.create', subscription: sub(id, ets) })),
    fc.constantFrom('s1', 's2', 's3').map((id): MetadataCommand => ({ op: 'subscription.delete', id })),
    fc.record({ eventTypesMax: fc.integer({ min: 1, max: 5 }), metadataBytesMax: fc.integer({ min: 2000, max: 30_000 }), timelinesMax: fc.integer({ min: 1, max: 4 }) })
      .map((l): MetadataCommand => ({ op: 'limits.set', limits: { ...small, ...l } })),
    fc.record({ name: fc.constantFrom(...names), id: fc.constantFrom('T1', 'T2', 'T3', 'T4', 'T5', 'T6') }).map(({ name, id }) => prepare(name, id)),
    // Starts: one per partition, filled in from the state when applied (every machine holds the same).
    fc.record({ name: fc.constantFrom(...names), id: fc.constantFrom('T1', 'T2', 'T3', 'T4', 'T5', 'T6') }).map(({ name, id }) => commit(name, id, [])),
  );
  fc.assert(
    fc.property(fc.array(command, { maxLength: 40 }), fc.nat(), (cmds, cut) => {
      const a = new MetadataStateMachine();
      const b = new MetadataStateMachine();
      const at = cmds.length === 0 ? 0 : cut % (cmds.length + 1);
      let restored: MetadataStateMachine | undefined;
      cmds.forEach((generated, i) => {
        let cmd = generated;
        if (i === at) restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(a.snapshot())), a.appliedIndex);
        if (cmd.op === 'timeline.commit' && cmd.starts.length === 0) cmd = { ...cmd, starts: (a.eventType(cmd.eventType)?.storage.partitions ?? ['0']).map(() => i) };
        const ra = a.apply(i + 1, cmd);
        assert.deepEqual(b.apply(i + 1, cmd), ra);
        if (restored !== undefined) assert.deepEqual(restored.apply(i + 1, cmd), ra);
        assert.ok(a.eventTypeCount() <= Math.max(a.limits.eventTypesMax, 5));
        // A switch is admitted only below the bound in force at its prepare (4 at most here).
        for (const name of names) assert.ok((a.eventType(name)?.storage.timelines?.length ?? 1) <= 4);
      });
      assert.deepEqual(b.snapshot(), a.snapshot());
      assert.equal(b.metadataBytes, a.metadataBytes);
      if (restored !== undefined) {
        assert.deepEqual(restored.snapshot(), a.snapshot());
        assert.equal(restored.metadataBytes, a.metadataBytes);
      }
    }),
    { numRuns: 300, seed: 610 },
  );
});
