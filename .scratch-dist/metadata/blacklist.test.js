// Goal: the blacklist and the readers-change signal are replicated state: applied identically, kept
// across snapshots, and event_type.update reports readersChanged exactly when the readers (the
// authorization readers list or read_scopes) changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MetadataStateMachine } from './state-machine.js';
function et(over = {}, updated = 't0') {
    return {
        name: 'a', owning_application: 'app', category: 'business', enrichment_strategies: ['metadata_enrichment'],
        partition_strategy: 'random', compatibility_mode: 'forward',
        schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' },
        options: { retention_time: 1000 }, created_at: 't0', updated_at: updated, ...over,
    };
}
test('blacklist entries are set and removed per type, and survive a snapshot', () => {
    const sm = new MetadataStateMachine();
    sm.apply(1, { op: 'blacklist.set', type: 'PRODUCER_APP', name: 'bad-app', blocked: true });
    sm.apply(2, { op: 'blacklist.set', type: 'CONSUMER_ET', name: 'orders', blocked: true });
    sm.apply(3, { op: 'blacklist.set', type: 'CONSUMER_ET', name: 'other', blocked: true });
    sm.apply(4, { op: 'blacklist.set', type: 'CONSUMER_ET', name: 'other', blocked: false });
    assert.equal(sm.blacklisted('PRODUCER_APP', 'bad-app'), true);
    assert.equal(sm.blacklisted('CONSUMER_APP', 'bad-app'), false, 'types are separate');
    assert.equal(sm.blacklisted('CONSUMER_ET', 'other'), false);
    const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
    assert.deepEqual(restored.blacklist(), { CONSUMER_APP: [], CONSUMER_ET: ['orders'], PRODUCER_APP: ['bad-app'], PRODUCER_ET: [] });
    const old = MetadataStateMachine.restore({ eventTypes: [], nextTopic: 1 }, 0);
    assert.deepEqual(old.blacklist().PRODUCER_APP, [], 'a snapshot from before the blacklist restores empty');
});
test('event_type.update reports readersChanged only when readers or read_scopes changed', () => {
    const sm = new MetadataStateMachine();
    const authz = { admins: [{ data_type: 'user', value: 'x' }], readers: [{ data_type: 'user', value: 'r1' }], writers: [{ data_type: 'user', value: 'w' }] };
    sm.apply(1, { op: 'event_type.create', eventType: et({ authorization: authz }), partitionCount: 1 });
    const writersOnly = sm.apply(2, { op: 'event_type.update', eventType: et({ authorization: { ...authz, writers: [{ data_type: 'user', value: 'w2' }] } }, 't1'), basedOnUpdatedAt: 't0', schemaChanged: false });
    assert.deepEqual(writersOnly, { ok: true });
    const readers = sm.apply(3, { op: 'event_type.update', eventType: et({ authorization: { ...authz, readers: [{ data_type: 'user', value: 'r2' }] } }, 't2'), basedOnUpdatedAt: 't1', schemaChanged: false });
    assert.deepEqual(readers, { ok: true, readersChanged: true });
    const scopes = sm.apply(4, { op: 'event_type.update', eventType: et({ authorization: { ...authz, readers: [{ data_type: 'user', value: 'r2' }] }, read_scopes: ['s'] }, 't3'), basedOnUpdatedAt: 't2', schemaChanged: false });
    assert.deepEqual(scopes, { ok: true, readersChanged: true });
});
//# sourceMappingURL=blacklist.test.js.map