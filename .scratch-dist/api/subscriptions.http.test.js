// Goal: subscription CRUD as the interface states it (Subscription, the Subscriptions endpoint table,
// the subscription rows of "States and transitions", the Limits) and the choices of docs/decisions.md:
// 201 with Location and Content-Location, the same key triple 200 with the existing subscription,
// defaults, read_from and initial_cursors, unknown event types and the partition limit 422, malformed
// bodies 400, the list's filters, order and links, 404s, the 409 on deleting a used event type, and
// survival across a restart.
// Method: a real broker over HTTP on a temporary RocksDB, restarted on the same directory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
let broker;
before(async () => {
    broker = await startTestBroker();
    for (const name of ['sub.a', 'sub.b', 'sub.c']) {
        assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType(name))).status, 201);
    }
    const wide = { messages_per_minute: 1, message_size: 1, read_parallelism: 60, write_parallelism: 60 };
    for (const name of ['sub.wide1', 'sub.wide2']) {
        assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType(name, { default_statistic: wide }))).status, 201);
    }
    const four = { messages_per_minute: 1, message_size: 1, read_parallelism: 2, write_parallelism: 2 };
    assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('sub.two', { default_statistic: four }))).status, 201);
});
after(async () => {
    await broker.destroy();
});
const post = (body) => call(broker.url, 'POST', '/subscriptions', body);
const detail = (r) => r.body.detail ?? '';
test('POST creates: 201 with Location and Content-Location, the defaults, and GET by id returns it', async () => {
    const r = await post({ owning_application: 'crud-app', event_types: ['sub.a'] });
    assert.equal(r.status, 201, r.text);
    const s = r.body;
    assert.match(s.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(r.headers.get('location'), `/subscriptions/${s.id}`);
    assert.equal(r.headers.get('content-location'), `/subscriptions/${s.id}`);
    assert.equal(s.consumer_group, 'default');
    assert.equal(s.read_from, 'end');
    assert.equal(s.initial_cursors, undefined);
    assert.deepEqual(s.event_types, ['sub.a']);
    assert.ok(Math.abs(Date.parse(s.created_at) - Date.now()) < 60_000);
    const got = await call(broker.url, 'GET', `/subscriptions/${s.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, s);
});
test('the same key triple (event types in any order) answers 200 with the existing subscription and Location', async () => {
    const first = await post({ owning_application: 'triple-app', event_types: ['sub.a', 'sub.b'], consumer_group: 'g1', read_from: 'begin' });
    assert.equal(first.status, 201);
    const again = await post({ owning_application: 'triple-app', event_types: ['sub.b', 'sub.a', 'sub.b'], consumer_group: 'g1', read_from: 'end' });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first.body, 'the existing one, read_from unchanged');
    assert.equal(again.headers.get('location'), `/subscriptions/${first.body.id}`);
    assert.equal(again.headers.get('content-location'), null);
    // Concurrent creates of one new triple all get the same subscription, exactly one of them 201.
    const racing = await Promise.all(Array.from({ length: 5 }, () => post({ owning_application: 'triple-app', event_types: ['sub.c', 'sub.a'] })));
    assert.deepEqual(racing.map((r) => r.status).sort(), [200, 200, 200, 200, 201]);
    assert.equal(new Set(racing.map((r) => r.body.id)).size, 1);
    // A different consumer group or owner is a different subscription.
    const other = await post({ owning_application: 'triple-app', event_types: ['sub.a', 'sub.b'], consumer_group: 'g2' });
    assert.equal(other.status, 201);
    assert.notEqual(other.body.id, first.body.id);
    assert.equal((await post({ owning_application: 'triple-app-2', event_types: ['sub.a', 'sub.b'], consumer_group: 'g1' })).status, 201);
});
test('read_from cursors needs initial_cursors covering every partition, each valid (422 otherwise)', async () => {
    const base = { owning_application: 'cursor-app', event_types: ['sub.two', 'sub.a'], read_from: 'cursors' };
    const full = [
        { event_type: 'sub.two', partition: '0', offset: 'BEGIN' },
        { event_type: 'sub.two', partition: '1', offset: 'begin' },
        { event_type: 'sub.a', partition: '0', offset: 'BEGIN' },
    ];
    const cases = [
        [undefined, /initial_cursors" is required/],
        ['BEGIN', /must be an array/],
        [full.slice(1), /missing: sub\.two:0/],
        [[...full, { event_type: 'sub.b', partition: '0', offset: 'BEGIN' }], /not one of the subscription's event types/],
        [[...full.slice(1), { event_type: 'sub.two', partition: '7', offset: 'BEGIN' }], /partition "7" does not exist/],
        [[...full, full[0]], /given twice/],
        [[{ ...full[0], offset: 'xyz' }, ...full.slice(1)], /not a valid offset/],
        [[{ ...full[0], offset: '001-0001-000000000000000005' }, ...full.slice(1)], /does not exist yet/],
        [[{ event_type: 'sub.two', partition: 0, offset: 'BEGIN' }, ...full.slice(1)], /partition" must be a string/],
    ];
    for (const [initial_cursors, why] of cases) {
        const r = await post(initial_cursors === undefined ? base : { ...base, initial_cursors });
        assert.equal(r.status, 422, JSON.stringify(initial_cursors));
        assert.match(detail(r), why);
    }
    // A real offset: publish to sub.a and start after its first event.
    assert.equal((await call(broker.url, 'POST', '/event-types/sub.a/events', [businessEvent('A-1'), businessEvent('A-2')])).status, 200);
    const parts = (await call(broker.url, 'GET', '/event-types/sub.a/partitions')).body;
    const cursors = [...full.slice(0, 2), { event_type: 'sub.a', partition: '0', offset: parts[0].newest_available_offset }];
    const ok = await post({ ...base, initial_cursors: cursors });
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.body.initial_cursors, cursors);
    assert.equal(ok.body.read_from, 'cursors');
    // initial_cursors with begin/end is ignored, not stored.
    const begin = await post({ owning_application: 'cursor-app', event_types: ['sub.b'], read_from: 'begin', initial_cursors: 'ignored' });
    assert.equal(begin.status, 201);
    assert.equal(begin.body.initial_cursors, undefined);
});
test('unknown event types and more partitions than the limit are 422', async () => {
    const unknown = await post({ owning_application: 'limit-app', event_types: ['sub.a', 'no.such.type'] });
    assert.equal(unknown.status, 422);
    assert.match(detail(unknown), /"no\.such\.type"/);
    const wide = await post({ owning_application: 'limit-app', event_types: ['sub.wide1', 'sub.wide2'] });
    assert.equal(wide.status, 422);
    assert.match(detail(wide), /at most 100 partitions together; these have 120/);
    assert.equal((await post({ owning_application: 'limit-app', event_types: ['sub.wide1', 'sub.a'] })).status, 201, '61 partitions are fine');
});
test('malformed bodies: 400 when not a JSON object, 422 when a field breaks a rule', async () => {
    for (const body of ['{', '[]', '"text"', '42']) {
        const r = await post(body);
        assert.equal(r.status, 400, body);
        assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
    }
    const invalid = [
        [{ event_types: ['sub.a'] }, /"owning_application" is required/],
        [{ owning_application: '', event_types: ['sub.a'] }, /"owning_application" must be a non-empty string/],
        [{ owning_application: 7, event_types: ['sub.a'] }, /"owning_application" must be a non-empty string/],
        [{ owning_application: 'bad-app' }, /"event_types" is required/],
        [{ owning_application: 'bad-app', event_types: [] }, /non-empty array/],
        [{ owning_application: 'bad-app', event_types: 'sub.a' }, /non-empty array/],
        [{ owning_application: 'bad-app', event_types: ['sub.a', ''] }, /event_types\[1\]/],
        [{ owning_application: 'bad-app', event_types: ['sub.a'], consumer_group: '' }, /"consumer_group"/],
        [{ owning_application: 'bad-app', event_types: ['sub.a'], read_from: 'middle' }, /"read_from" must be one of begin, end, cursors/],
    ];
    for (const [body, why] of invalid) {
        const r = await post(body);
        assert.equal(r.status, 422, JSON.stringify(body));
        assert.match(detail(r), why);
    }
    // null counts as absent; id and created_at sent by the client are ignored (read-only).
    const r = await post({ owning_application: 'bad-app', event_types: ['sub.a'], consumer_group: null, read_from: null, id: 'mine', created_at: '2000-01-01T00:00:00Z' });
    assert.equal(r.status, 201);
    assert.notEqual(r.body.id, 'mine');
    assert.notEqual(r.body.created_at, '2000-01-01T00:00:00Z');
    assert.equal(r.body.consumer_group, 'default');
});
test('GET /subscriptions: event_type (all must match), owning_application, newest first, limit/offset with _links', async () => {
    const ids = [];
    for (const [types, group] of [[['sub.a'], 'l1'], [['sub.a', 'sub.b'], 'l2'], [['sub.b'], 'l3'], [['sub.b', 'sub.a', 'sub.c'], 'l4'], [['sub.a'], 'l5']]) {
        const r = await post({ owning_application: 'list-app', event_types: types, consumer_group: group });
        assert.equal(r.status, 201);
        ids.push(r.body.id);
    }
    const list = async (q) => {
        const r = await call(broker.url, 'GET', `/subscriptions${q}`);
        assert.equal(r.status, 200, r.text);
        return r.body;
    };
    assert.deepEqual((await list('?owning_application=list-app')).items.map((s) => s.id), [...ids].reverse());
    assert.deepEqual((await list('?owning_application=list-app&event_type=sub.a&event_type=sub.b')).items.map((s) => s.id), [ids[3], ids[1]]);
    assert.deepEqual((await list('?owning_application=list-app&event_type=sub.c')).items.map((s) => s.id), [ids[3]]);
    assert.deepEqual((await list('?owning_application=nobody')).items, []);
    const all = await list('');
    assert.ok(all.items.length <= 20 && all.items.length > 0);
    assert.ok(all.items.every((s, i) => i === 0 || s.created_at <= all.items[i - 1].created_at), 'newest first');
    const p1 = await list('?owning_application=list-app&limit=2');
    assert.deepEqual(p1.items.map((s) => s.id), [ids[4], ids[3]]);
    assert.equal(p1._links.prev, undefined);
    assert.equal(p1._links.next?.href, '/subscriptions?owning_application=list-app&offset=2&limit=2');
    const p2 = await list(p1._links.next.href.slice('/subscriptions'.length));
    assert.deepEqual(p2.items.map((s) => s.id), [ids[2], ids[1]]);
    assert.equal(p2._links.prev?.href, '/subscriptions?owning_application=list-app&offset=0&limit=2');
    const p3 = await list(p2._links.next.href.slice('/subscriptions'.length));
    assert.deepEqual(p3.items.map((s) => s.id), [ids[0]]);
    assert.equal(p3._links.next, undefined);
    for (const q of ['?limit=0', '?limit=x', '?offset=-1', '?event_type=', '?owning_application=a&owning_application=b']) {
        assert.equal((await call(broker.url, 'GET', `/subscriptions${q}`)).status, 400, q);
    }
});
test('GET and DELETE by id: 204, then 404 Problems', async () => {
    const s = (await post({ owning_application: 'del-app', event_types: ['sub.a'] })).body;
    const del = await call(broker.url, 'DELETE', `/subscriptions/${s.id}`);
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    for (const method of ['GET', 'DELETE']) {
        for (const id of [s.id, 'not-a-uuid']) {
            const r = await call(broker.url, method, `/subscriptions/${id}`);
            assert.equal(r.status, 404, `${method} ${id}`);
            assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
            assert.match(detail(r), new RegExp(id));
        }
    }
    // The triple is free again: a new subscription with a new id.
    const again = await post({ owning_application: 'del-app', event_types: ['sub.a'] });
    assert.equal(again.status, 201);
    assert.notEqual(again.body.id, s.id);
});
test('DELETE /event-types/{name} answers 409 while a subscription uses the type', async () => {
    assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('sub.used'))).status, 201);
    const s = (await post({ owning_application: 'used-app', event_types: ['sub.used', 'sub.b'] })).body;
    const refused = await call(broker.url, 'DELETE', '/event-types/sub.used');
    assert.equal(refused.status, 409);
    assert.match(detail(refused), new RegExp(s.id));
    assert.equal((await call(broker.url, 'GET', '/event-types/sub.used')).status, 200);
    assert.equal((await call(broker.url, 'DELETE', `/subscriptions/${s.id}`)).status, 204);
    assert.equal((await call(broker.url, 'DELETE', '/event-types/sub.used')).status, 200);
});
test('disable_subscription_creation makes POST refuse with 503', async () => {
    assert.equal((await call(broker.url, 'POST', '/settings/features', { feature: 'disable_subscription_creation', enabled: true })).status, 204);
    const r = await post({ owning_application: 'toggle-app', event_types: ['sub.a'] });
    assert.equal(r.status, 503);
    assert.match(detail(r), /disable_subscription_creation/);
    assert.equal((await call(broker.url, 'POST', '/settings/features', { feature: 'disable_subscription_creation', enabled: false })).status, 204);
    assert.equal((await post({ owning_application: 'toggle-app', event_types: ['sub.a'] })).status, 201);
});
test('subscriptions survive a restart: same body, the triple still answers 200, list order kept', async () => {
    const s = (await post({ owning_application: 'restart-app', event_types: ['sub.b', 'sub.a'], consumer_group: 'r', read_from: 'begin' })).body;
    const before = (await call(broker.url, 'GET', '/subscriptions?limit=1000')).body.items;
    broker = await broker.restart();
    const got = await call(broker.url, 'GET', `/subscriptions/${s.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, s);
    const again = await post({ owning_application: 'restart-app', event_types: ['sub.a', 'sub.b'], consumer_group: 'r' });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, s.id);
    assert.deepEqual((await call(broker.url, 'GET', '/subscriptions?limit=1000')).body.items, before);
    assert.equal((await call(broker.url, 'DELETE', '/event-types/sub.a')).status, 409, 'still in use after the restart');
});
//# sourceMappingURL=subscriptions.http.test.js.map