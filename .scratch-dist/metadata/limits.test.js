// Goal (issue 10): metadata is bounded where commands are applied, so no member, however buggy, can
// take it past its bounds: event types, subscriptions, schema versions per event type, schema size,
// partitions (a 20,000,000-partition event type once ran every node out of memory), and the bytes of
// everything together (a snapshot must fit one message between nodes). Refusals are results, never
// exceptions; the bounds are replicated (limits.set), and the state stays the same on every node.
// Method: the pure state machine, with small bounds set by a command; a property that two machines,
// and a snapshot restored midway, agree on results and state whatever the commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MetadataStateMachine } from './state-machine.js';
import { defaultMetadataLimits } from './limits.js';
import { storedEventType } from '../testing/metadata-fixtures.js';
const small = { eventTypesMax: 3, subscriptionsMax: 2, schemaVersionsMax: 3, schemaBytesMax: 1000, partitionsMax: 8, subscriptionPartitionsMax: 10, metadataBytesMax: 20_000 };
function machine(limits = small) {
    const sm = new MetadataStateMachine();
    let index = 0;
    const apply = (cmd) => sm.apply(++index, cmd);
    assert.deepEqual(apply({ op: 'limits.set', limits }), { ok: true });
    return { sm, apply };
}
const create = (name, partitionCount = 1, over = {}) => ({ op: 'event_type.create', eventType: storedEventType(name, over), partitionCount });
const sub = (id, eventTypes) => ({ id, owning_application: `app-${id}`, event_types: eventTypes, consumer_group: 'default', read_from: 'end', created_at: 't0' });
function refusedWith(r, reason, detail) {
    assert.equal(r.ok, false, JSON.stringify(r));
    if (r.ok)
        return;
    assert.equal(r.reason, reason);
    assert.match(r.detail, detail);
}
test('the defaults hold until limits.set; a malformed limits.set is refused and changes nothing', () => {
    const sm = new MetadataStateMachine();
    assert.deepEqual({ ...sm.limits }, { ...defaultMetadataLimits });
    refusedWith(sm.apply(1, { op: 'limits.set', limits: { ...small, eventTypesMax: 0 } }), 'invalid', /positive integer/);
    refusedWith(sm.apply(2, { op: 'limits.set', limits: { eventTypesMax: 5 } }), 'invalid', /positive integer/);
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
    for (const n of ['a', 'b', 'c'])
        assert.equal(apply(create(n)).ok, true);
    refusedWith(apply(create('d')), 'limit', /3 event types.*eventTypesMax 3/);
    refusedWith(apply(create('a')), 'exists', /already exists/);
    assert.equal(apply({ op: 'event_type.delete', name: 'b' }).ok, true);
    assert.equal(apply(create('d')).ok, true);
});
test('schema versions: at most schemaVersionsMax per event type; an update keeping the schema is not refused', () => {
    const { sm, apply } = machine();
    apply(create('a'));
    let updatedAt = 't0';
    const update = (version, schemaChanged) => {
        const next = storedEventType('a', { updated_at: `${updatedAt}+`, schema: { type: 'json_schema', schema: `{"title":"${version}"}`, version, created_at: 't' } });
        const r = apply({ op: 'event_type.update', eventType: next, basedOnUpdatedAt: updatedAt, schemaChanged });
        if (r.ok)
            updatedAt = next.updated_at;
        return r;
    };
    assert.equal(update('1.0.1', true).ok, true);
    assert.equal(update('1.0.2', true).ok, true);
    refusedWith(update('1.0.3', true), 'limit', /3 schema versions.*schemaVersionsMax 3/);
    assert.equal(update('1.0.2', false).ok, true, 'other fields may still change');
    assert.deepEqual(sm.eventType('a').schemas.map((s) => s.version), ['1.0.0', '1.0.1', '1.0.2']);
});
test('schema size and the bytes of all metadata are bounded; deleting frees them', () => {
    const { sm, apply } = machine();
    const big = (n) => ({ schema: { type: 'json_schema', schema: `{"description":"${'x'.repeat(n)}"}`, version: '1.0.0', created_at: 't0' } });
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
    refusedWith(apply({ op: 'event_type.rename' }), 'invalid', /Unknown metadata command/);
});
test('property: the bounds keep the state the same everywhere: two machines, and one restored from a snapshot midway, agree', () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    const command = fc.oneof(fc.record({ name: fc.constantFrom(...names), partitions: fc.integer({ min: 0, max: 12 }), pad: fc.integer({ min: 0, max: 6000 }) })
        .map(({ name, partitions, pad }) => create(name, partitions, { owning_application: 'o'.repeat(pad) })), fc.constantFrom(...names).map((name) => ({ op: 'event_type.delete', name })), fc.record({ id: fc.constantFrom('s1', 's2', 's3'), ets: fc.subarray(names, { minLength: 1 }) })
        .map(({ id, ets }) => ({ op: 'subscription.create', subscription: sub(id, ets) })), fc.constantFrom('s1', 's2', 's3').map((id) => ({ op: 'subscription.delete', id })), fc.record({ eventTypesMax: fc.integer({ min: 1, max: 5 }), metadataBytesMax: fc.integer({ min: 2000, max: 30_000 }) })
        .map((l) => ({ op: 'limits.set', limits: { ...small, ...l } })));
    fc.assert(fc.property(fc.array(command, { maxLength: 40 }), fc.nat(), (cmds, cut) => {
        const a = new MetadataStateMachine();
        const b = new MetadataStateMachine();
        const at = cmds.length === 0 ? 0 : cut % (cmds.length + 1);
        let restored;
        cmds.forEach((cmd, i) => {
            if (i === at)
                restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(a.snapshot())), a.appliedIndex);
            const ra = a.apply(i + 1, cmd);
            assert.deepEqual(b.apply(i + 1, cmd), ra);
            if (restored !== undefined)
                assert.deepEqual(restored.apply(i + 1, cmd), ra);
            assert.ok(a.eventTypeCount() <= Math.max(a.limits.eventTypesMax, 5));
        });
        assert.deepEqual(b.snapshot(), a.snapshot());
        assert.equal(b.metadataBytes, a.metadataBytes);
        if (restored !== undefined) {
            assert.deepEqual(restored.snapshot(), a.snapshot());
            assert.equal(restored.metadataBytes, a.metadataBytes);
        }
    }), { numRuns: 300, seed: 610 });
});
//# sourceMappingURL=limits.test.js.map