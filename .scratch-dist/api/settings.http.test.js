// Goal: feature toggles (GET/POST /settings/features) are listed with their defaults, set through
// replicated metadata, survive a restart, refuse unknown names (400, compatibility.md) and really change
// behaviour (disable_event_type_creation / _deletion make the registry refuse with 503).
// Method: a real broker over HTTP on a temporary RocksDB, restarted on the same directory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
let broker;
before(async () => {
    broker = await startTestBroker();
});
after(async () => {
    await broker.destroy();
});
const enabled = async (name) => (await call(broker.url, 'GET', '/settings/features')).body.items.find((f) => f.feature === name)?.enabled;
test('GET lists every feature of compatibility.md with its default', async () => {
    const r = await call(broker.url, 'GET', '/settings/features');
    assert.equal(r.status, 200);
    const names = r.body.items.map((f) => f.feature).sort();
    assert.deepEqual(names, [
        'check_owning_application', 'check_partitions_keys', 'disable_event_type_creation', 'disable_event_type_deletion',
        'disable_subscription_creation', 'high_level_api', 'limit_consumers_number',
    ]);
    assert.equal(await enabled('disable_event_type_creation'), false);
    assert.equal(await enabled('high_level_api'), true);
});
test('an unknown feature or a malformed body is 400', async () => {
    for (const body of [{ feature: 'no_such_thing', enabled: true }, { feature: 'high_level_api' }, { feature: 1, enabled: true }, [], '{']) {
        const r = await call(broker.url, 'POST', '/settings/features', body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
    }
});
test('disable_event_type_creation makes POST /event-types refuse, and enabling it again allows it', async () => {
    assert.equal((await call(broker.url, 'POST', '/settings/features', { feature: 'disable_event_type_creation', enabled: true })).status, 204);
    assert.equal(await enabled('disable_event_type_creation'), true);
    const refused = await call(broker.url, 'POST', '/event-types', businessEventType('toggle.one'));
    assert.equal(refused.status, 503);
    assert.match(refused.body.detail, /disable_event_type_creation/);
    assert.equal((await call(broker.url, 'GET', '/event-types/toggle.one')).status, 404);
    assert.equal((await call(broker.url, 'POST', '/settings/features', { feature: 'disable_event_type_creation', enabled: false })).status, 204);
    assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('toggle.one'))).status, 201);
});
test('toggles survive a restart; disable_event_type_deletion does not stop the administrator (every caller with auth off)', async () => {
    assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('toggle.two'))).status, 201);
    assert.equal((await call(broker.url, 'POST', '/settings/features', { feature: 'disable_event_type_deletion', enabled: true })).status, 204);
    broker = await broker.restart();
    assert.equal(await enabled('disable_event_type_deletion'), true);
    assert.equal((await call(broker.url, 'DELETE', '/event-types/toggle.two')).status, 200);
    assert.equal((await call(broker.url, 'POST', '/settings/features', { feature: 'disable_event_type_deletion', enabled: false })).status, 204);
    assert.equal(await enabled('disable_event_type_deletion'), false);
});
//# sourceMappingURL=settings.http.test.js.map