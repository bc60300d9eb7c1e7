// Goal: the metadata state machine is deterministic and enforces its own rules (unique names, topic
// ids never reused, optimistic concurrency on update, in-order apply).
// Method: examples, plus a fast-check property that two machines fed the same commands agree, and
// that a snapshot restored and fed the rest agrees with one that applied everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MetadataStateMachine } from './state-machine.js';
function et(name, updated = 't0') {
    return {
        name, owning_application: 'app', category: 'business', enrichment_strategies: ['metadata_enrichment'],
        partition_strategy: 'random', compatibility_mode: 'forward',
        schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' },
        options: { retention_time: 1000 }, created_at: 't0', updated_at: updated,
    };
}
test('create, duplicate, delete and re-create with a fresh topic', () => {
    const sm = new MetadataStateMachine();
    assert.deepEqual(sm.apply(1, { op: 'event_type.create', eventType: et('a'), partitionCount: 3 }), { ok: true });
    assert.deepEqual(sm.eventType('a').storage.partitions, ['0', '1', '2']);
    assert.equal(sm.apply(2, { op: 'event_type.create', eventType: et('a'), partitionCount: 1 }).ok, false);
    const topic = sm.eventType('a').storage.topic;
    assert.deepEqual(sm.apply(3, { op: 'event_type.delete', name: 'a' }), { ok: true, droppedTopic: topic, droppedLogs: [{ storage_id: 'default', topic }] });
    sm.apply(4, { op: 'event_type.create', eventType: et('a'), partitionCount: 1 });
    assert.notEqual(sm.eventType('a').storage.topic, topic);
});
test('an update based on a stale updated_at is a conflict', () => {
    const sm = new MetadataStateMachine();
    sm.apply(1, { op: 'event_type.create', eventType: et('a'), partitionCount: 1 });
    assert.equal(sm.apply(2, { op: 'event_type.update', eventType: et('a', 't1'), basedOnUpdatedAt: 't0', schemaChanged: false }).ok, true);
    const r = sm.apply(3, { op: 'event_type.update', eventType: et('a', 't2'), basedOnUpdatedAt: 't0', schemaChanged: false });
    assert.equal(r.ok, false);
    assert.equal(sm.eventType('a').eventType.updated_at, 't1');
});
test('a changed schema is appended to the version history', () => {
    const sm = new MetadataStateMachine();
    sm.apply(1, { op: 'event_type.create', eventType: et('a'), partitionCount: 1 });
    const next = et('a', 't1');
    next.schema = { ...next.schema, version: '1.1.0' };
    sm.apply(2, { op: 'event_type.update', eventType: next, basedOnUpdatedAt: 't0', schemaChanged: true });
    assert.deepEqual(sm.eventType('a').schemas.map((s) => s.version), ['1.0.0', '1.1.0']);
});
test('apply out of order is an invariant violation', () => {
    const sm = new MetadataStateMachine();
    assert.throws(() => sm.apply(2, { op: 'event_type.delete', name: 'x' }), /out of order/);
});
function sub(id, eventTypes, over = {}) {
    return { id, owning_application: 'app', event_types: eventTypes, consumer_group: 'default', read_from: 'end', created_at: 't0', ...over };
}
test('subscriptions: the key triple is unique (event type order irrelevant), the existing one is returned', () => {
    const sm = new MetadataStateMachine();
    sm.apply(1, { op: 'event_type.create', eventType: et('a'), partitionCount: 1 });
    sm.apply(2, { op: 'event_type.create', eventType: et('b'), partitionCount: 1 });
    const first = sub('s1', ['a', 'b']);
    assert.deepEqual(sm.apply(3, { op: 'subscription.create', subscription: first }), { ok: true, subscription: first, created: true });
    assert.deepEqual(sm.apply(4, { op: 'subscription.create', subscription: sub('s2', ['b', 'a']) }), { ok: true, subscription: first, created: false });
    assert.equal(sm.subscription('s2'), undefined);
    assert.equal(sm.apply(5, { op: 'subscription.create', subscription: sub('s3', ['a', 'b'], { consumer_group: 'other' }) }).ok, true);
    assert.equal(sm.apply(6, { op: 'subscription.create', subscription: sub('s3', ['a']) }).ok, false, 'a taken id is refused');
    assert.deepEqual([...sm.subscriptions()].map((s) => s.id), ['s1', 's3']);
});
test('subscriptions: unknown event types are refused at apply; a used event type cannot be deleted', () => {
    const sm = new MetadataStateMachine();
    sm.apply(1, { op: 'event_type.create', eventType: et('a'), partitionCount: 1 });
    const r = sm.apply(2, { op: 'subscription.create', subscription: sub('s1', ['a', 'gone']) });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'not_found');
    sm.apply(3, { op: 'subscription.create', subscription: sub('s1', ['a']) });
    const d = sm.apply(4, { op: 'event_type.delete', name: 'a' });
    assert.equal(!d.ok && d.reason, 'in_use');
    assert.ok(sm.eventType('a'));
    assert.deepEqual(sm.apply(5, { op: 'subscription.delete', id: 's1' }), { ok: true });
    assert.equal(!sm.apply(6, { op: 'subscription.delete', id: 's1' }).ok && 'gone', 'gone');
    assert.equal(sm.apply(7, { op: 'event_type.delete', name: 'a' }).ok, true);
    // The key is free again after the delete.
    sm.apply(8, { op: 'event_type.create', eventType: et('a'), partitionCount: 1 });
    assert.deepEqual(sm.apply(9, { op: 'subscription.create', subscription: sub('s9', ['a']) }).ok, true);
    assert.equal(sm.subscription('s9')?.id, 's9');
});
test('a snapshot written before subscriptions existed still restores', () => {
    const sm = MetadataStateMachine.restore({ eventTypes: [], nextTopic: 1 }, 0);
    assert.deepEqual([...sm.subscriptions()], []);
    assert.deepEqual(sm.snapshot().subscriptions, []);
});
test('same commands, same state; snapshot + rest equals everything', () => {
    const cmd = fc.oneof(fc.record({ op: fc.constant('event_type.create'), name: fc.constantFrom('a', 'b', 'c'), n: fc.integer({ min: 1, max: 4 }) }), fc.record({ op: fc.constant('event_type.delete'), name: fc.constantFrom('a', 'b', 'c') }), fc.record({
        op: fc.constant('subscription.create'),
        id: fc.constantFrom('s1', 's2', 's3', 's4'),
        types: fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 3 }),
        group: fc.constantFrom('g1', 'g2'),
    }), fc.record({ op: fc.constant('subscription.delete'), id: fc.constantFrom('s1', 's2', 's3', 's4') }));
    fc.assert(fc.property(fc.array(cmd, { maxLength: 30 }), fc.nat(), (raw, cut) => {
        const cmds = raw.map((c) => {
            switch (c.op) {
                case 'event_type.create':
                    return { op: c.op, eventType: et(c.name), partitionCount: c.n };
                case 'event_type.delete':
                    return { op: c.op, name: c.name };
                case 'subscription.create':
                    return { op: c.op, subscription: sub(c.id, c.types, { consumer_group: c.group }) };
                case 'subscription.delete':
                    return { op: c.op, id: c.id };
            }
        });
        const x = new MetadataStateMachine();
        const y = new MetadataStateMachine();
        cmds.forEach((c, i) => assert.deepEqual(x.apply(i + 1, c), y.apply(i + 1, c)));
        assert.deepEqual(x.snapshot(), y.snapshot());
        const k = cmds.length === 0 ? 0 : cut % (cmds.length + 1);
        const z0 = new MetadataStateMachine();
        cmds.slice(0, k).forEach((c, i) => z0.apply(i + 1, c));
        const z = MetadataStateMachine.restore(JSON.parse(JSON.stringify(z0.snapshot())), k);
        cmds.slice(k).forEach((c, i) => z.apply(k + i + 1, c));
        assert.deepEqual(z.snapshot(), x.snapshot());
    }));
});
//# sourceMappingURL=state-machine.test.js.map