// Goal: the commit rules and cursor operations of a subscription (interface.md, "Subscriptions": commit
// rules, GET/PATCH cursors; compatibility.md: 400 without the stream id, 422 for an unknown or closed
// stream or a partition it does not own) and at-least-once across a restart: what was committed is
// never sent again, what was not is.
// Method: a real broker over HTTP on a temporary RocksDB, restarted on the same directory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestBroker } from '../testing/broker-harness.js';
import { off } from '../testing/stream-client.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';
import { createSubscription, putEvents, userDefinedEventType } from '../testing/subscription-fixtures.js';
let broker;
const open = [];
before(async () => {
    broker = await startTestBroker();
});
after(async () => {
    await Promise.all(open.map((s) => s.close()));
    await broker.destroy();
});
let seq = 0;
const eventType = (partitions) => userDefinedEventType(broker.url, `sc.t${++seq}`, partitions);
const publish = (name, partition, orders) => putEvents(broker.url, name, partition, orders);
const subscription = (eventTypes) => createSubscription(broker.url, `app-${++seq}`, eventTypes);
async function stream(id, query = 'batch_flush_timeout=1&max_uncommitted_events=100') {
    const s = await SubscriptionStreamClient.open(broker.url, id, query);
    open.push(s);
    return s;
}
const cursor = (et, partition, offset) => ({ event_type: et, partition, offset, cursor_token: crypto.randomUUID() });
test('commit errors: no stream id 400, unknown stream 422, not sent on the stream 422, foreign event type 422, bad bodies 400/422, unknown subscription 404', async () => {
    const et = await eventType(2);
    const other = await eventType(1);
    await publish(et, '0', ['a0', 'a1', 'a2']);
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=1&max_uncommitted_events=2&batch_flush_timeout=1');
    await s.waitFor((x) => x.events().length >= 2);
    const post = (body, headers = { 'X-Svc-StreamId': s.streamId }) => call(broker.url, 'POST', `/subscriptions/${id}/cursors`, body, headers);
    const noHeader = await post({ items: [cursor(et, '0', off(0))] }, {});
    assert.equal(noHeader.status, 400, noHeader.text);
    assert.match(noHeader.headers.get('content-type') ?? '', /problem\+json/);
    assert.equal((await post({ items: [cursor(et, '0', off(0))] }, { 'X-Svc-StreamId': crypto.randomUUID() })).status, 422);
    const notSent = await post({ items: [cursor(et, '0', off(2))] });
    assert.equal(notSent.status, 422, 'offset 2 exists but the window held it back');
    assert.match(notSent.body.detail, /not sent on stream/);
    assert.equal((await post({ items: [cursor(other, '0', off(0))] })).status, 422, 'an event type of another subscription');
    assert.equal((await post({ items: [cursor(et, '7', off(0))] })).status, 422, 'an unknown partition');
    assert.equal((await post({ items: [cursor(et, '0', 'garbage')] })).status, 422);
    assert.equal((await post({ items: [{ event_type: et, partition: '0', offset: off(0) }] })).status, 422, 'cursor_token is required');
    assert.equal((await post({ items: [] })).status, 422);
    assert.equal((await post({ cursors: [] })).status, 422);
    assert.equal((await post('{not json')).status, 400);
    assert.equal((await call(broker.url, 'POST', `/subscriptions/${crypto.randomUUID()}/cursors`, { items: [cursor(et, '0', off(0))] }, { 'X-Svc-StreamId': s.streamId })).status, 404);
    // The alias header of the original service works; a keep-alive's cursor (before what was sent) is just outdated.
    const ok = await post({ items: [cursor(et, '0', off(1))] }, { 'X-Nakadi-StreamId': s.streamId });
    assert.equal(ok.status, 204, ok.text);
    const keepAlive = await post({ items: [cursor(et, '1', 'BEGIN')] });
    assert.equal(keepAlive.status, 200, keepAlive.text);
    assert.deepEqual(keepAlive.body.items.map((i) => i.result), ['outdated']);
});
test('a stream may commit only partitions it owns', async () => {
    const et = await eventType(2);
    await publish(et, '0', ['x']);
    await publish(et, '1', ['y']);
    const id = await subscription([et]);
    const a = await stream(id);
    await a.waitFor((x) => x.events().length >= 2);
    assert.equal((await a.commitAll()).status, 204);
    const b = await stream(id);
    // After the rebalance a owns one partition and b the other; b has been sent nothing of a's partition.
    await new Promise((r) => setTimeout(r, 300));
    const stats = await call(broker.url, 'GET', `/subscriptions/${id}/stats`);
    const parts = stats.body.items[0].partitions;
    const ofA = parts.find((p) => p.stream_id === a.streamId).partition;
    const r = await b.commit([cursor(et, ofA, 'BEGIN')]);
    assert.equal(r.status, 422, r.text);
});
test('GET cursors shows the committed cursors; PATCH resets them, disconnects the streams, and the next stream starts there', async () => {
    const et = await eventType(1);
    await publish(et, '0', ['r0', 'r1', 'r2', 'r3']);
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=4&batch_flush_timeout=1&max_uncommitted_events=100');
    await s.waitFor((x) => x.events().length >= 4);
    assert.equal((await s.commitAll()).status, 204);
    const got = await call(broker.url, 'GET', `/subscriptions/${id}/cursors`);
    assert.equal(got.status, 200);
    const items = got.body.items;
    assert.deepEqual(items.map((c) => [c.event_type, c.partition, c.offset]), [[et, '0', off(3)]]);
    assert.match(items[0].cursor_token, /^[0-9a-f-]{36}$/);
    const reset = await call(broker.url, 'PATCH', `/subscriptions/${id}/cursors`, { items: [{ event_type: et, partition: '0', offset: off(0) }] });
    assert.equal(reset.status, 204, reset.text);
    await s.waitEnded(5000);
    const again = await call(broker.url, 'GET', `/subscriptions/${id}/cursors`);
    assert.equal(again.body.items[0].offset, off(0));
    // The old stream's id cannot commit after a reset.
    assert.equal((await s.commit([s.batches()[0].cursor])).status, 422);
    const next = await stream(id);
    await next.waitFor((x) => x.events().length >= 3);
    assert.deepEqual(next.orders(), ['r1', 'r2', 'r3']);
    for (const bad of [
        { items: [{ event_type: et, partition: '9', offset: off(0) }] },
        { items: [{ event_type: et, partition: '0', offset: 'nope' }] },
        { items: [{ event_type: et, partition: '0', offset: off(99) }] },
        { items: [{ event_type: 'sc.unknown', partition: '0', offset: off(0) }] },
        { items: [] },
        { nothing: true },
    ]) {
        const r = await call(broker.url, 'PATCH', `/subscriptions/${id}/cursors`, bad);
        assert.equal(r.status, 422, `${JSON.stringify(bad)}: ${r.text}`);
    }
    assert.equal((await call(broker.url, 'PATCH', `/subscriptions/${crypto.randomUUID()}/cursors`, { items: [] })).status, 404);
    assert.equal((await call(broker.url, 'GET', `/subscriptions/${crypto.randomUUID()}/cursors`)).status, 404);
});
test('across a restart: sessions of the old process are closed, a new stream resumes after the last commit', async () => {
    const et = await eventType(2);
    await publish(et, '0', ['m0', 'm1', 'm2']);
    await publish(et, '1', ['n0']);
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    await s.waitFor((x) => x.events().length >= 4);
    const m1 = s.batches().find((l) => l.events[0].order_number === 'm1');
    assert.equal((await s.commit([m1.cursor])).status, 204);
    // Restart with the stream open: the stream ends, and the new process serves new streams.
    broker = await broker.restart();
    await s.waitEnded(5000);
    const a = await stream(id);
    const b = await stream(id);
    await a.waitFor(() => a.events().length + b.events().length >= 2, 5000);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual([...a.orders(), ...b.orders()].sort(), ['m2', 'n0'], 'm0 and m1 were committed; m2 and n0 come again');
});
//# sourceMappingURL=subscription-commits.http.test.js.map