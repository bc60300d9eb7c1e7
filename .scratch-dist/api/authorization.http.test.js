// Goal: per-resource authorization, the administrator, the blacklist and the feature toggles over HTTP
// with real tokens (issue 5, points 2-6; interface.md "Authentication"; docs/security.md): the lists of
// an event type on every protected operation, the wildcard, read_scopes/write_scopes, the readers
// change that disconnects consumers, blacklist effects on live streams, admin-only endpoints, and each
// toggle changing what it says.
// Method: a broker with a static token file; streams opened and watched over HTTP.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { allScopes, bearer, tokenFile } from '../testing/auth-fixtures.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';
const tokens = {
    admin: { uid: 'brook-admin', scopes: [] },
    alice: { uid: 'alice', type: 'user', scopes: allScopes },
    bob: { uid: 'bob', type: 'user', scopes: allScopes },
    carol: { uid: 'carol', type: 'service', scopes: allScopes },
    dave: { uid: 'dave', type: 'user', scopes: allScopes },
    eve: { uid: 'eve', type: 'user', scopes: [...allScopes, 'x.read', 'x.write'] },
    carolAsUser: { uid: 'carol', type: 'user', scopes: allScopes },
};
const as = (who) => bearer(who);
let broker;
const streams = [];
before(async () => {
    broker = await startTestBroker({ auth: 'static', authTokensFile: tokenFile(tokens) });
});
after(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await broker.destroy();
});
const req = (who, method, path, body) => call(broker.url, method, path, body, as(who));
const status = async (who, method, path, body) => (await req(who, method, path, body)).status;
const authorization = {
    admins: [{ data_type: 'user', value: 'alice' }],
    readers: [{ data_type: 'service', value: 'carol' }, { data_type: 'user', value: 'bob' }],
    writers: [{ data_type: 'user', value: 'bob' }],
};
/** Opens a low-level stream; resolves with the response (status) and a promise of its end. */
async function lowLevel(who, name) {
    const ac = new AbortController();
    const res = await fetch(`${broker.url}/event-types/${name}/events?batch_flush_timeout=1`, { headers: as(who), signal: ac.signal });
    const ended = res.status === 200 ? res.text().then(() => undefined, () => undefined) : Promise.resolve();
    return { status: res.status, ended, cancel: () => ac.abort() };
}
async function endsWithin(p, ms) {
    let t;
    const r = await Promise.race([p.then(() => true), new Promise((res) => (t = setTimeout(() => res(false), ms)))]);
    clearTimeout(t);
    return r;
}
test('publishing needs a writer; reading operations need a reader; update and delete need an admin; the administrator passes all', async () => {
    assert.equal(await status('alice', 'POST', '/event-types', businessEventType('az.orders', { authorization })), 201);
    const ev = [businessEvent('o1')];
    assert.equal(await status('bob', 'POST', '/event-types/az.orders/events', ev), 200);
    assert.equal(await status('dave', 'POST', '/event-types/az.orders/events', ev), 403);
    assert.equal(await status('carol', 'POST', '/event-types/az.orders/events', ev), 403, 'a reader is not a writer');
    assert.equal(await status('admin', 'POST', '/event-types/az.orders/events', ev), 200);
    const reads = [
        ['GET', '/event-types/az.orders/partitions'],
        ['GET', '/event-types/az.orders/partitions/0'],
        ['POST', '/event-types/az.orders/cursor-distances', [{ initial_cursor: { partition: '0', offset: 'BEGIN' }, final_cursor: { partition: '0', offset: 'BEGIN' } }]],
        ['POST', '/event-types/az.orders/cursors-lag', [{ partition: '0', offset: 'BEGIN' }]],
        ['POST', '/event-types/az.orders/shifted-cursors', [{ partition: '0', offset: 'BEGIN', shift: 0 }]],
    ];
    for (const [m, path, body] of reads) {
        assert.equal(await status('carol', m, path, body), 200, `reader carol: ${m} ${path}`);
        assert.equal(await status('carolAsUser', m, path, body), 403, `same uid, other kind of subject: ${m} ${path}`);
        assert.equal(await status('dave', m, path, body), 403, `dave: ${m} ${path}`);
        assert.equal(await status('admin', m, path, body), 200, `admin: ${m} ${path}`);
    }
    const s = await lowLevel('carol', 'az.orders');
    assert.equal(s.status, 200);
    s.cancel();
    assert.equal((await lowLevel('dave', 'az.orders')).status, 403);
    assert.equal(await status('dave', 'POST', '/subscriptions', { owning_application: 'dave', event_types: ['az.orders'] }), 403);
    assert.equal(await status('carol', 'POST', '/subscriptions', { owning_application: 'carol', event_types: ['az.orders'] }), 201);
    const updated = businessEventType('az.orders', { authorization, owning_application: 'new-owner' });
    assert.equal(await status('bob', 'PUT', '/event-types/az.orders', updated), 403);
    assert.equal(await status('alice', 'PUT', '/event-types/az.orders', updated), 200);
    assert.equal(await status('admin', 'PUT', '/event-types/az.orders', updated), 200);
    const removed = await req('alice', 'PUT', '/event-types/az.orders', businessEventType('az.orders'));
    assert.equal(removed.status, 422, 'an authorization section cannot be removed');
    assert.equal(await status('bob', 'DELETE', '/event-types/az.orders'), 403);
});
test('the wildcard lets every authenticated subject read; read_scopes and write_scopes are enforced', async () => {
    const open = { ...authorization, readers: [{ data_type: '*', value: '*' }] };
    assert.equal(await status('alice', 'POST', '/event-types', businessEventType('az.open', { authorization: open })), 201);
    assert.equal(await status('dave', 'GET', '/event-types/az.open/partitions'), 200);
    assert.equal(await status('dave', 'POST', '/event-types/az.open/events', [businessEvent('x')]), 403, 'the wildcard is only in readers');
    assert.equal(await status('alice', 'POST', '/event-types', businessEventType('az.scoped', { read_scopes: ['x.read'], write_scopes: ['x.write'] })), 201);
    assert.equal(await status('dave', 'GET', '/event-types/az.scoped/partitions'), 403);
    assert.equal(await status('eve', 'GET', '/event-types/az.scoped/partitions'), 200);
    assert.equal(await status('dave', 'POST', '/event-types/az.scoped/events', [businessEvent('x')]), 403);
    assert.equal(await status('eve', 'POST', '/event-types/az.scoped/events', [businessEvent('x')]), 200);
    // Deleting needs a subject of admins (bob has config.write but is not in admins; alice is).
    assert.equal(await status('bob', 'DELETE', '/event-types/az.open'), 403);
    assert.equal(await status('alice', 'DELETE', '/event-types/az.open'), 200);
});
test('when the readers change, open streams of the event type are disconnected; who lost access gets 403, who kept it reconnects', async () => {
    assert.equal(await status('alice', 'POST', '/event-types', businessEventType('az.rc', { authorization })), 201);
    const sub = await req('bob', 'POST', '/subscriptions', { owning_application: 'bob', event_types: ['az.rc'] });
    assert.equal(sub.status, 201, sub.text);
    const subId = sub.body.id;
    const carolStream = await lowLevel('carol', 'az.rc');
    assert.equal(carolStream.status, 200);
    const bobStream = await SubscriptionStreamClient.open(broker.url, subId, 'batch_flush_timeout=1', as('bob'));
    streams.push(bobStream);
    assert.equal(await endsWithin(carolStream.ended, 300), false, 'open before the change');
    const onlyBob = { ...authorization, readers: [{ data_type: 'user', value: 'bob' }] };
    assert.equal(await status('alice', 'PUT', '/event-types/az.rc', businessEventType('az.rc', { authorization: onlyBob })), 200);
    assert.equal(await endsWithin(carolStream.ended, 5000), true, 'the low-level stream of the reader who lost access ended');
    await bobStream.waitEnded(5000);
    assert.equal((await lowLevel('carol', 'az.rc')).status, 403);
    const again = await SubscriptionStreamClient.open(broker.url, subId, 'batch_flush_timeout=1', as('bob'));
    streams.push(again);
    assert.ok(again.streamId.length > 0, 'bob is still a reader and reconnects');
    // A subscription consumer who lost read access to one of its event types cannot consume.
    const carolSub = await req('carolAsUser', 'GET', `/subscriptions/${subId}/events`);
    assert.equal(carolSub.status, 403);
});
test('blacklist: producers and consumers by app and by event type, live streams closed, unknown types 400, admin only', async () => {
    assert.equal(await status('admin', 'POST', '/event-types', businessEventType('az.bl')), 201);
    const ev = [businessEvent('b')];
    assert.deepEqual((await req('admin', 'GET', '/settings/blacklist')).body, { consumers: { apps: [], event_types: [] }, producers: { apps: [], event_types: [] } });
    assert.equal(await status('admin', 'PUT', '/settings/blacklist/PRODUCER_APP/bob'), 204);
    assert.equal(await status('bob', 'POST', '/event-types/az.bl/events', ev), 403);
    assert.equal(await status('dave', 'POST', '/event-types/az.bl/events', ev), 200);
    assert.equal(await status('admin', 'DELETE', '/settings/blacklist/PRODUCER_APP/bob'), 204);
    assert.equal(await status('bob', 'POST', '/event-types/az.bl/events', ev), 200);
    assert.equal(await status('admin', 'PUT', '/settings/blacklist/PRODUCER_ET/az.bl'), 204);
    assert.equal(await status('admin', 'POST', '/event-types/az.bl/events', ev), 403, 'the blacklist applies to everyone');
    assert.equal(await status('admin', 'DELETE', '/settings/blacklist/PRODUCER_ET/az.bl'), 204);
    const carol = await lowLevel('carol', 'az.bl');
    const dave = await lowLevel('dave', 'az.bl');
    assert.equal(carol.status, 200);
    assert.equal(await status('admin', 'PUT', '/settings/blacklist/CONSUMER_APP/carol'), 204);
    assert.equal(await endsWithin(carol.ended, 5000), true, "carol's open stream was closed");
    assert.equal(await endsWithin(dave.ended, 300), false, "dave's stream stays");
    assert.equal((await lowLevel('carol', 'az.bl')).status, 403);
    assert.equal(await status('admin', 'PUT', '/settings/blacklist/CONSUMER_ET/az.bl'), 204);
    assert.equal(await endsWithin(dave.ended, 5000), true, 'every stream of the event type was closed');
    assert.equal((await lowLevel('dave', 'az.bl')).status, 403);
    const view = (await req('admin', 'GET', '/settings/blacklist')).body;
    assert.deepEqual(view, { consumers: { apps: ['carol'], event_types: ['az.bl'] }, producers: { apps: [], event_types: [] } });
    const unknown = await req('admin', 'PUT', '/settings/blacklist/EVERYONE/x');
    assert.equal(unknown.status, 400);
    assert.match(unknown.headers.get('content-type') ?? '', /problem\+json/);
    assert.equal(await status('dave', 'PUT', '/settings/blacklist/PRODUCER_APP/x'), 403);
    assert.equal(await status('dave', 'GET', '/settings/blacklist'), 403);
    await req('admin', 'DELETE', '/settings/blacklist/CONSUMER_APP/carol');
    await req('admin', 'DELETE', '/settings/blacklist/CONSUMER_ET/az.bl');
});
test('administrator-only endpoints answer the administrator and refuse others with every scope', async () => {
    const adminRoutes = [
        ['GET', '/settings/features'],
        ['POST', '/settings/features', { feature: 'disable_subscription_creation', enabled: false }],
        ['GET', '/settings/blacklist'],
        ['PUT', '/settings/blacklist/CONSUMER_APP/nobody'],
        ['DELETE', '/settings/blacklist/CONSUMER_APP/nobody'],
        ['GET', '/metrics'],
        ['GET', '/metrics/prometheus'],
        ['POST', '/storages', { id: 'az-store', storage_type: 'broker', broker_configuration: {} }],
        ['GET', '/storages'],
        ['GET', '/storages/az-store'],
        ['GET', '/event-types/az.orders/timelines'],
        ['DELETE', '/storages/az-store'],
    ];
    // Timelines of an existing event type; POST needs a storage, checked before it is deleted above.
    assert.equal(await status('dave', 'POST', '/event-types/az.orders/timelines', { storage_id: 'default' }), 403);
    assert.equal(await status('dave', 'DELETE', `/event-types/az.orders/timelines/${crypto.randomUUID()}`), 403);
    // The administrator passes the timeline routes (a switch, then a timeline id that does not exist).
    assert.equal(await status('admin', 'POST', '/event-types/az.orders/timelines', { storage_id: 'default' }), 201);
    assert.equal(await status('admin', 'DELETE', `/event-types/az.orders/timelines/${crypto.randomUUID()}`), 404);
    for (const [m, path, body] of adminRoutes) {
        const denied = await req('dave', m, path, body);
        assert.equal(denied.status, 403, `${m} ${path} as dave`);
        assert.match(denied.headers.get('content-type') ?? '', /problem\+json/);
        const allowed = await status('admin', m, path, body);
        assert.ok(allowed === 200 || allowed === 201 || allowed === 204, `${m} ${path} as admin: ${allowed}`);
    }
});
test('feature toggles change behaviour', async () => {
    const toggle = async (feature, enabled) => assert.equal(await status('admin', 'POST', '/settings/features', { feature, enabled }), 204);
    await toggle('disable_event_type_creation', true);
    assert.equal(await status('alice', 'POST', '/event-types', businessEventType('az.ft1')), 503);
    await toggle('disable_event_type_creation', false);
    assert.equal(await status('alice', 'POST', '/event-types', businessEventType('az.ft1')), 201);
    await toggle('disable_event_type_deletion', true);
    assert.equal(await status('alice', 'DELETE', '/event-types/az.ft1'), 403, 'one of its admins is refused');
    assert.equal(await status('admin', 'DELETE', '/event-types/az.ft1'), 200, 'the administrator is not');
    assert.equal(await status('alice', 'POST', '/event-types', businessEventType('az.ft1')), 201);
    await toggle('disable_event_type_deletion', false);
    await toggle('disable_subscription_creation', true);
    assert.equal(await status('alice', 'POST', '/subscriptions', { owning_application: 'alice', event_types: ['az.ft1'] }), 503);
    await toggle('disable_subscription_creation', false);
    await toggle('high_level_api', false);
    assert.equal(await status('alice', 'GET', '/subscriptions'), 503);
    await toggle('high_level_api', true);
    assert.equal(await status('alice', 'GET', '/subscriptions'), 200);
    await toggle('check_owning_application', true);
    assert.equal(await status('dave', 'POST', '/event-types', businessEventType('az.ft2', { owning_application: 'someone-else' })), 422);
    assert.equal(await status('dave', 'POST', '/event-types', businessEventType('az.ft2', { owning_application: 'dave' })), 201);
    assert.equal(await status('dave', 'POST', '/subscriptions', { owning_application: 'someone-else', event_types: ['az.ft2'] }), 422);
    assert.equal(await status('admin', 'POST', '/event-types', businessEventType('az.ft3', { owning_application: 'anyone' })), 201, 'the administrator creates for anyone');
    await toggle('check_owning_application', false);
    const hashed = businessEventType('az.hash', { partition_strategy: 'hash', partition_key_fields: ['order_number'] });
    assert.equal(await status('alice', 'POST', '/event-types', { ...hashed, category: 'undefined', enrichment_strategies: [], schema: { type: 'json_schema', schema: '{"type":"object","properties":{"order_number":{}},"required":["order_number"]}' } }), 201);
    const objectKey = [{ order_number: { nested: 1 } }];
    assert.equal(await status('alice', 'POST', '/event-types/az.hash/events', objectKey), 200, 'off: hashed through its string form');
    await toggle('check_partitions_keys', true);
    const refused = await req('alice', 'POST', '/event-types/az.hash/events', objectKey);
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body[0].step, 'partitioning');
    await toggle('check_partitions_keys', false);
    // limit_consumers_number (on by default): the 6th low-level connection to a partition is refused.
    const six = [];
    for (let i = 0; i < 6; i++)
        six.push(await lowLevel('alice', 'az.ft1'));
    assert.deepEqual(six.map((s) => s.status), [200, 200, 200, 200, 200, 429]);
    await toggle('limit_consumers_number', false);
    const seventh = await lowLevel('alice', 'az.ft1');
    assert.equal(seventh.status, 200, 'off: no per-partition limit');
    for (const s of [...six, seventh])
        s.cancel();
    await toggle('limit_consumers_number', true);
    assert.equal(await status('admin', 'POST', '/settings/features', { feature: 'no_such_feature', enabled: true }), 400);
});
test('eventTypeDeletionAdminOnly: deleting event types needs the administrator', async () => {
    const b = await startTestBroker({ auth: 'static', authTokensFile: tokenFile(tokens), eventTypeDeletionAdminOnly: true });
    try {
        assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('az.del'), as('alice'))).status, 201);
        assert.equal((await call(b.url, 'DELETE', '/event-types/az.del', undefined, as('alice'))).status, 403);
        assert.equal((await call(b.url, 'DELETE', '/event-types/az.del', undefined, as('admin'))).status, 200);
    }
    finally {
        await b.destroy();
    }
});
//# sourceMappingURL=authorization.http.test.js.map