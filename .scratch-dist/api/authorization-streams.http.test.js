// Goal: rule changes reach subscription streams as they reach low-level ones (issue 5, points 4 and 5;
// docs/security.md): a blacklisted consumer app or event type has its live subscription streams
// closed and cannot open new ones (403), and a rule applied while a stream is being opened (its
// stream.open still on its way through the metadata Raft group) closes that stream too.
// Method: a broker with a static token file; streams opened and watched over HTTP; for the race, the
// rule change is sent while the stream request is in flight, many times over.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { allScopes, bearer, tokenFile } from '../testing/auth-fixtures.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';
const tokens = {
    admin: { uid: 'brook-admin', scopes: [] },
    carol: { uid: 'carol', type: 'service', scopes: allScopes },
    dave: { uid: 'dave', type: 'user', scopes: allScopes },
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
const req = (who, method, path, body) => call(broker.url, method, path, body, bearer(who));
async function subscription(who, eventType) {
    const r = await req(who, 'POST', '/subscriptions', { owning_application: who, event_types: [eventType] });
    assert.equal(r.status, 201, r.text);
    return r.body.id;
}
/** Opens a subscription stream; resolves with the client, or with the refusal's status. */
async function open(who, subId) {
    try {
        const s = await SubscriptionStreamClient.open(broker.url, subId, 'batch_flush_timeout=1', bearer(who));
        streams.push(s);
        return s;
    }
    catch (err) {
        return err.status;
    }
}
test('blacklist: live subscription streams of a blocked consumer app or event type are closed, new ones refused with 403', async () => {
    assert.equal((await req('admin', 'POST', '/event-types', businessEventType('azs.bl'))).status, 201);
    const carolSub = await subscription('carol', 'azs.bl');
    const daveSub = await subscription('dave', 'azs.bl');
    const carol = await open('carol', carolSub);
    const dave = await open('dave', daveSub);
    assert.ok(carol instanceof SubscriptionStreamClient && dave instanceof SubscriptionStreamClient);
    assert.equal((await req('admin', 'PUT', '/settings/blacklist/CONSUMER_APP/carol')).status, 204);
    await carol.waitEnded(5000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(dave.isEnded, false, "dave's stream stays");
    const refused = await req('carol', 'GET', `/subscriptions/${carolSub}/events`);
    assert.equal(refused.status, 403);
    assert.match(refused.headers.get('content-type') ?? '', /problem\+json/);
    assert.match(refused.body.detail, /CONSUMER_APP/);
    assert.equal((await req('admin', 'PUT', '/settings/blacklist/CONSUMER_ET/azs.bl')).status, 204);
    await dave.waitEnded(5000);
    assert.equal(await open('dave', daveSub), 403);
    assert.equal(await open('admin', daveSub), 403, 'the blacklist applies to the administrator too');
    assert.equal((await req('admin', 'DELETE', '/settings/blacklist/CONSUMER_APP/carol')).status, 204);
    assert.equal((await req('admin', 'DELETE', '/settings/blacklist/CONSUMER_ET/azs.bl')).status, 204);
    const back = await open('carol', carolSub);
    assert.ok(back instanceof SubscriptionStreamClient, 'unblocked: the stream opens again');
    await back.close();
});
test('a consumer blacklisted while its subscription stream is being opened does not keep streaming', async () => {
    assert.equal((await req('admin', 'POST', '/event-types', businessEventType('azs.race'))).status, 201);
    const subId = await subscription('carol', 'azs.race');
    const stayedOpen = [];
    for (let i = 0; i < 120; i++) {
        // The blacklist entry goes out while the stream request is on its way (both through Raft).
        const opening = open('carol', subId);
        await new Promise((r) => setTimeout(r, i % 4));
        assert.equal((await req('admin', 'PUT', '/settings/blacklist/CONSUMER_APP/carol')).status, 204);
        const s = await opening;
        if (s instanceof SubscriptionStreamClient) {
            // Opened before or while the entry was applied: the service must close it.
            await s.waitEnded(1500).catch(() => stayedOpen.push(i));
            await s.close();
        }
        else {
            assert.equal(s, 403, `round ${i}`);
        }
        assert.equal((await req('admin', 'DELETE', '/settings/blacklist/CONSUMER_APP/carol')).status, 204);
    }
    assert.deepEqual(stayedOpen, [], 'rounds where a blacklisted consumer kept streaming');
});
//# sourceMappingURL=authorization-streams.http.test.js.map