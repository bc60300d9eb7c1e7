// Goal (issue 10, "Authorization"): every operation on a subscription needs read access to all of its
// event types (before, any caller with the read scope could read the stats with stream ids, reset the
// cursors of and delete any subscription), and a subscription may carry the original service's
// `authorization` section: admins may change it (PUT) and delete it and reset its cursors; readers may
// stream and commit; either may read it, its cursors and stats. The administrator passes. A change of
// the readers closes the subscription's open streams; who lost access gets 403 on reconnect. The
// section is checked (422), cannot be removed, and PUT changes nothing else.
// Method: a broker with a static token file; one event type readable only by some; HTTP calls per caller.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { allScopes, bearer, tokenFile } from '../testing/auth-fixtures.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';
const tokens = {
    admin: { uid: 'brook-admin', scopes: [] },
    owner: { uid: 'owner', type: 'user', scopes: allScopes },
    reader: { uid: 'reader', type: 'user', scopes: allScopes },
    subAdmin: { uid: 'sub-admin', type: 'user', scopes: allScopes },
    outsider: { uid: 'outsider', type: 'user', scopes: allScopes },
};
let broker;
const streams = [];
before(async () => {
    broker = await startTestBroker({ auth: 'static', authTokensFile: tokenFile(tokens) });
});
after(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await broker.destroy();
});
const req = (who, method, path, body, headers = {}) => call(broker.url, method, path, body, { ...bearer(who), ...headers });
const status = async (who, method, path, body) => (await req(who, method, path, body)).status;
const user = (value) => ({ data_type: 'user', value });
/** An event type only `owner`, `reader` and `sub-admin` may read (the outsider may not). */
async function eventType(name) {
    const authorization = { admins: [user('owner')], readers: [user('owner'), user('reader'), user('sub-admin')], writers: [user('owner')] };
    assert.equal(await status('owner', 'POST', '/event-types', businessEventType(name, { authorization })), 201);
    assert.equal(await status('owner', 'POST', `/event-types/${name}/events`, [businessEvent('o-1')]), 200);
}
async function open(who, id) {
    try {
        const s = await SubscriptionStreamClient.open(broker.url, id, 'batch_flush_timeout=1', bearer(who));
        streams.push(s);
        return s;
    }
    catch (err) {
        return err.status;
    }
}
test('without a section, every operation on a subscription needs read access to each of its event types', async () => {
    await eventType('sa.hidden');
    const created = await req('owner', 'POST', '/subscriptions', { owning_application: 'owner', event_types: ['sa.hidden'], read_from: 'begin' });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    const reset = { items: [{ event_type: 'sa.hidden', partition: '0', offset: 'BEGIN' }] };
    const ops = [
        ['GET', `/subscriptions/${id}`],
        ['GET', `/subscriptions/${id}/stats`],
        ['GET', `/subscriptions/${id}/cursors`],
        ['PATCH', `/subscriptions/${id}/cursors`, reset],
        ['PUT', `/subscriptions/${id}`, { authorization: { admins: [user('outsider')], readers: [user('outsider')] } }],
        ['DELETE', `/subscriptions/${id}`],
    ];
    for (const [m, path, body] of ops) {
        const r = await req('outsider', m, path, body);
        assert.equal(r.status, 403, `outsider: ${m} ${path}: ${r.text}`);
        assert.match(r.text, /sa\.hidden/, 'the refusal names the event type');
    }
    assert.equal(await open('outsider', id), 403, 'outsider: stream');
    const commit = await req('outsider', 'POST', `/subscriptions/${id}/cursors`, { items: [] }, { 'X-Svc-StreamId': 'any' });
    assert.equal(commit.status, 403, commit.text);
    // A caller who may read the event type may do all of it (no section); the subscription is still there.
    const s = await open('reader', id);
    assert.ok(typeof s !== 'number', `reader: stream ${String(s)}`);
    const stats = await req('reader', 'GET', `/subscriptions/${id}/stats`);
    assert.equal(stats.status, 200, stats.text);
    assert.match(stats.text, new RegExp(s.streamId), 'the reader sees the stream id');
    assert.equal(await status('reader', 'GET', `/subscriptions/${id}`), 200);
    assert.equal(await status('admin', 'GET', `/subscriptions/${id}/stats`), 200);
    await s.close();
    assert.equal(await status('reader', 'DELETE', `/subscriptions/${id}`), 204);
});
test('the authorization section: admins change, reset and delete; readers stream and commit; either reads; the administrator passes', async () => {
    await eventType('sa.section');
    const authorization = { admins: [user('sub-admin')], readers: [user('reader')] };
    const created = await req('owner', 'POST', '/subscriptions', { owning_application: 'owner', event_types: ['sa.section'], read_from: 'begin', authorization });
    assert.equal(created.status, 201, created.text);
    const sub = created.body;
    assert.deepEqual(sub.authorization, authorization);
    const id = sub.id;
    assert.deepEqual((await req('reader', 'GET', `/subscriptions/${id}`)).body, created.body, 'served as stored');
    for (const who of ['reader', 'subAdmin', 'admin']) {
        for (const path of [`/subscriptions/${id}`, `/subscriptions/${id}/stats`, `/subscriptions/${id}/cursors`])
            assert.equal(await status(who, 'GET', path), 200, `${who}: GET ${path}`);
    }
    // The owner may read the event type but is in neither list.
    for (const path of [`/subscriptions/${id}`, `/subscriptions/${id}/stats`, `/subscriptions/${id}/cursors`])
        assert.equal(await status('owner', 'GET', path), 403, `owner: GET ${path}`);
    assert.equal(await open('owner', id), 403);
    assert.equal(await open('subAdmin', id), 403, 'an admin of the subscription is not a reader');
    // A reader streams and commits.
    const s = await open('reader', id);
    assert.ok(typeof s !== 'number', `reader: stream ${String(s)}`);
    await s.waitFor((c) => c.batches().length > 0, 10_000, 'a batch');
    const batch = s.batches()[0];
    const commit = await req('reader', 'POST', `/subscriptions/${id}/cursors`, { items: [batch.cursor] }, { 'X-Svc-StreamId': s.streamId });
    assert.equal(commit.status, 204, commit.text);
    const foreignCommit = await req('subAdmin', 'POST', `/subscriptions/${id}/cursors`, { items: [batch.cursor] }, { 'X-Svc-StreamId': s.streamId });
    assert.equal(foreignCommit.status, 403, 'an admin of the subscription does not commit for its readers');
    // Reset and change are the admins'.
    const reset = { items: [{ event_type: 'sa.section', partition: '0', offset: 'BEGIN' }] };
    assert.equal(await status('reader', 'PATCH', `/subscriptions/${id}/cursors`, reset), 403);
    assert.equal(await status('reader', 'PUT', `/subscriptions/${id}`, { authorization: { admins: [user('reader')], readers: [user('reader')] } }), 403);
    assert.equal(await status('reader', 'DELETE', `/subscriptions/${id}`), 403);
    await s.close();
    // PUT: only the section changes; the readers change closes open streams; who lost access gets 403.
    const s2 = await open('reader', id);
    assert.ok(typeof s2 !== 'number');
    const newAuth = { admins: [user('sub-admin')], readers: [user('owner')] };
    const put = await req('subAdmin', 'PUT', `/subscriptions/${id}`, { ...created.body, authorization: newAuth });
    assert.equal(put.status, 204, put.text);
    await s2.waitEnded();
    assert.deepEqual((await req('subAdmin', 'GET', `/subscriptions/${id}`)).body.authorization, newAuth);
    assert.equal(await open('reader', id), 403, 'the former reader is refused');
    const s3 = await open('owner', id);
    assert.ok(typeof s3 !== 'number', 'the new reader streams');
    await s3.close();
    // What PUT refuses.
    const refusals = [
        [{ ...created.body, consumer_group: 'other', authorization: newAuth }, /consumer_group/],
        [{ event_types: ['sa.hidden'], authorization: newAuth }, /event_types/],
        [{ authorization: null }, /cannot be removed/],
        [{ authorization: { admins: [], readers: [user('x')] } }, /authorization\.admins/],
        [{ authorization: { admins: [user('x')], readers: [{ data_type: 'user' }] } }, /authorization\.readers\[0\]\.value/],
        [{ authorization: { admins: [user('x')], readers: [user('x')], writers: [user('x')] } }, /writers/],
    ];
    for (const [body, detail] of refusals) {
        const r = await req('subAdmin', 'PUT', `/subscriptions/${id}`, body);
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
        assert.match(r.text, detail);
    }
    assert.equal(await status('subAdmin', 'PUT', `/subscriptions/no-such-id`, { authorization: newAuth }), 404);
    assert.equal(await status('subAdmin', 'PATCH', `/subscriptions/${id}/cursors`, reset), 204);
    assert.equal(await status('admin', 'GET', `/subscriptions/${id}/stats`), 200);
    assert.equal(await status('subAdmin', 'DELETE', `/subscriptions/${id}`), 204);
});
test('a malformed section is refused at creation with 422', async () => {
    await eventType('sa.create');
    for (const [authorization, detail] of [
        ['x', /must be an object/],
        [{ admins: [user('a')] }, /authorization\.readers/],
        [{ admins: [user('a')], readers: [{ data_type: '', value: 'v' }] }, /data_type/],
    ]) {
        const r = await req('owner', 'POST', '/subscriptions', { owning_application: 'owner', event_types: ['sa.create'], authorization });
        assert.equal(r.status, 422, r.text);
        assert.match(r.text, detail);
    }
});
//# sourceMappingURL=subscription-authorization.http.test.js.map