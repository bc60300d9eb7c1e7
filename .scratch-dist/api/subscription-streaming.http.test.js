// Goal: the subscription stream and its flow control as interface.md states them ("Subscriptions",
// "Subscription cursors", the subscription rows of "States and transitions", "Limits") with
// compatibility.md's wire details and docs/decisions.md ("Subscription streams and cursors"):
// headers and line shape, read_from, every stream parameter, 409/404, the window of
// max_uncommitted_events, commit_timeout, rebalancing over two and three streams with hand-over,
// at-least-once redelivery after a killed stream, stats.
// Method: a real broker over HTTP; events placed in chosen partitions (user_defined) so every expected
// delivery is known; streams read in the background by SubscriptionStreamClient.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestBroker } from '../testing/broker-harness.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';
import { createSubscription, orderRange, putEvents, subscriptionStats, userDefinedEventType, waitUntil } from '../testing/subscription-fixtures.js';
let broker;
let base;
const open = [];
before(async () => {
    broker = await startTestBroker();
    base = broker.url;
});
after(async () => {
    await Promise.all(open.map((s) => s.close()));
    await broker.destroy();
});
let seq = 0;
const eventType = (partitions) => userDefinedEventType(base, `ss.t${++seq}`, partitions);
const publish = (name, partition, orders) => putEvents(base, name, partition, orders);
const range = orderRange;
const subscription = (eventTypes, over = {}) => createSubscription(base, `app-${++seq}`, eventTypes, over);
async function stream(id, query) {
    const s = await SubscriptionStreamClient.open(base, id, query);
    open.push(s);
    return s;
}
/** Stats by "event_type/partition". */
async function stats(id) {
    return new Map((await subscriptionStats(base, id)).map((p) => [`${p.event_type}/${p.partition}`, p]));
}
const until = waitUntil;
const countBy = (xs) => {
    const m = new Map();
    for (const x of xs)
        if (x !== undefined)
            m.set(x, (m.get(x) ?? 0) + 1);
    return m;
};
test('stream basics: stream id headers, one partition per batch, SubscriptionCursor with a uuid token, "Stream started" first, read_from begin', async () => {
    const et = await eventType(2);
    await publish(et, '0', range('a', 3));
    await publish(et, '1', range('b', 2));
    const id = await subscription([et]);
    const res = await fetch(`${base}/subscriptions/${id}/events?batch_limit=10&batch_flush_timeout=1&stream_timeout=2`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-json-stream/);
    const streamId = res.headers.get('x-svc-streamid');
    assert.match(streamId ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(res.headers.get('x-nakadi-streamid'), streamId);
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines[0].info, { debug: 'Stream started' });
    assert.ok(lines.slice(1).every((l) => l.info === undefined), 'only the first line carries the info');
    for (const l of lines) {
        assert.deepEqual(Object.keys(l.cursor).sort(), ['cursor_token', 'event_type', 'offset', 'partition']);
        assert.equal(l.cursor.event_type, et);
        assert.match(l.cursor.cursor_token, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        for (const e of l.events ?? [])
            assert.equal(e.metadata['partition'], l.cursor.partition, 'a batch holds one partition');
    }
    const byPartition = (p) => lines.filter((l) => l.cursor.partition === p).flatMap((l) => (l.events ?? []).map((e) => e.order_number));
    assert.deepEqual(byPartition('0'), ['a0', 'a1', 'a2']);
    assert.deepEqual(byPartition('1'), ['b0', 'b1']);
    const tokens = lines.map((l) => l.cursor.cursor_token);
    assert.equal(new Set(tokens).size, tokens.length, 'a fresh token per batch');
});
test('read_from end starts at the newest event when the first stream opens; read_from cursors starts after the initial cursors', async () => {
    const et = await eventType(1);
    await publish(et, '0', ['old0', 'old1']);
    const endSub = await subscription([et], { read_from: 'end' });
    const fromCursor = await subscription([et], { read_from: 'cursors', initial_cursors: [{ event_type: et, partition: '0', offset: '001-0001-000000000000000000' }], owning_application: 'cursor-app' });
    const s = await stream(endSub, 'batch_flush_timeout=1');
    const c = await stream(fromCursor, 'batch_flush_timeout=1');
    await s.waitFor((x) => x.lines.length >= 1, 5000, 'a keep-alive');
    await publish(et, '0', ['new0']);
    await s.waitFor((x) => x.orders().length >= 1);
    assert.deepEqual(s.orders(), ['new0']);
    await c.waitFor((x) => x.orders().length >= 2);
    assert.deepEqual(c.orders(), ['old1', 'new0'], 'exclusive: the event after the initial cursor first');
});
test('batch_limit, stream_limit and stream_keep_alive_limit end or shape the stream; bad parameters are 422', async () => {
    const et = await eventType(1);
    await publish(et, '0', range('e', 7));
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=3&stream_limit=5&max_uncommitted_events=100&batch_flush_timeout=1');
    await s.waitEnded(5000);
    assert.deepEqual(s.batches().map((l) => l.events.length), [3, 2], 'batches of batch_limit, cut at stream_limit');
    const keepAlive = await stream(id, 'batch_flush_timeout=1&stream_keep_alive_limit=2&max_uncommitted_events=100');
    await keepAlive.waitEnded(8000);
    assert.ok(keepAlive.lines.length >= 2, 'keep-alives before the end');
    assert.ok(keepAlive.lines.slice(-2).every((l) => l.events === undefined));
    for (const q of ['stream_limit=1&batch_limit=2', 'max_uncommitted_events=0', 'commit_timeout=61', 'batch_limit=abc', 'stream_timeout=1&batch_flush_timeout=5']) {
        const r = await call(base, 'GET', `/subscriptions/${id}/events?${q}`);
        assert.equal(r.status, 422, `${q}: ${r.text}`);
        assert.match(r.headers.get('content-type') ?? '', /problem\+json/);
    }
    assert.equal((await call(base, 'GET', '/subscriptions/00000000-0000-4000-8000-000000000000/events')).status, 404);
});
test('stream_timeout ends the stream and flushes what is pending', async () => {
    const et = await eventType(1);
    await publish(et, '0', ['t0', 't1']);
    const id = await subscription([et]);
    const started = Date.now();
    const s = await stream(id, 'batch_limit=100&batch_flush_timeout=1&stream_timeout=1&max_uncommitted_events=100');
    await s.waitEnded(5000);
    assert.deepEqual(s.orders(), ['t0', 't1']);
    assert.ok(Date.now() - started < 4000);
});
test('max_uncommitted_events: the stream pauses at the window and resumes on commit; commits answer 204, then 200 with outdated', async () => {
    const et = await eventType(1);
    await publish(et, '0', range('w', 10));
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=1&max_uncommitted_events=3&batch_flush_timeout=1');
    await s.waitFor((x) => x.events().length >= 3);
    await new Promise((r) => setTimeout(r, 1300)); // a flush period: keep-alives only
    assert.deepEqual(s.orders(), ['w0', 'w1', 'w2'], 'paused at three uncommitted events');
    const batches = s.batches();
    // Committing the second batch commits the first as well.
    const r = await s.commit([batches[1].cursor]);
    assert.equal(r.status, 204, r.text);
    const cursors = await call(base, 'GET', `/subscriptions/${id}/cursors`);
    assert.equal(cursors.body.items[0].offset, batches[1].cursor.offset);
    await s.waitFor((x) => x.events().length >= 5, 5000, 'two more events after the commit');
    assert.deepEqual(s.orders(), ['w0', 'w1', 'w2', 'w3', 'w4']);
    const again = await s.commit([batches[0].cursor, s.batches()[4].cursor]);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body.items.map((i) => i.result), ['outdated', 'committed']);
});
test('409 when every partition has a stream, with the slot count', async () => {
    const et = await eventType(2);
    const id = await subscription([et]);
    await stream(id, 'batch_flush_timeout=1');
    await stream(id, 'batch_flush_timeout=1');
    const r = await call(base, 'GET', `/subscriptions/${id}/events`);
    assert.equal(r.status, 409, r.text);
    assert.equal(r.body.detail, 'No free slots for streaming available. Total slots: 2');
});
test('two and three streams share six partitions evenly; a stream that leaves hands its partitions to the others', async () => {
    const et = await eventType(6);
    const id = await subscription([et]);
    const a = await stream(id, 'batch_flush_timeout=1&max_uncommitted_events=1000');
    await until('a owns all six', async () => [...(await stats(id)).values()].every((p) => p.stream_id === a.streamId && p.state === 'assigned'));
    const b = await stream(id, 'batch_flush_timeout=1&max_uncommitted_events=1000');
    // Nothing was sent, so a hands over at once: no partition stays reassigning.
    await until('3 + 3', async () => {
        const owners = countBy([...(await stats(id)).values()].filter((p) => p.state === 'assigned').map((p) => p.stream_id));
        return owners.get(a.streamId) === 3 && owners.get(b.streamId) === 3;
    });
    const c = await stream(id, 'batch_flush_timeout=1&max_uncommitted_events=1000');
    await until('2 + 2 + 2', async () => {
        const owners = countBy([...(await stats(id)).values()].filter((p) => p.state === 'assigned').map((p) => p.stream_id));
        return [a, b, c].every((s) => owners.get(s.streamId) === 2);
    });
    // Every partition delivers to its owner only.
    const st = await stats(id);
    for (let p = 0; p < 6; p++)
        await publish(et, String(p), [`p${p}`]);
    for (const s of [a, b, c]) {
        const mine = [...st.entries()].filter(([, v]) => v.stream_id === s.streamId).map(([k]) => k.split('/')[1]);
        await s.waitFor((x) => x.events().length >= 2);
        assert.deepEqual([...s.partitions()].sort(), mine.sort(), `${s.streamId} got its own partitions`);
    }
    await Promise.all([a, b, c].map((s) => s.commitAll()));
    await c.close();
    await until('3 + 3 after c left', async () => {
        const owners = countBy([...(await stats(id)).values()].map((p) => p.stream_id));
        return owners.get(a.streamId) === 3 && owners.get(b.streamId) === 3;
    });
});
test('a moving partition is reassigning until its old owner commits; the new owner continues after the commit', async () => {
    const et = await eventType(2);
    await publish(et, '0', range('x', 3));
    await publish(et, '1', range('y', 3));
    const id = await subscription([et]);
    const a = await stream(id, 'batch_limit=10&batch_flush_timeout=1&max_uncommitted_events=100');
    await a.waitFor((x) => x.events().length >= 6);
    const b = await stream(id, 'batch_flush_timeout=1&max_uncommitted_events=100');
    let moving = '';
    await until('one partition reassigning to b', async () => {
        const st = [...(await stats(id)).entries()].find(([, v]) => v.state === 'reassigning');
        if (st === undefined)
            return false;
        assert.equal(st[1].stream_id, b.streamId, 'reassigning names the new owner');
        moving = st[0].split('/')[1];
        return true;
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(b.events().length, 0, 'the new owner gets nothing while the old one holds uncommitted events');
    // a commits the first two events of the moving partition only.
    const line = a.batches().find((l) => l.cursor.partition === moving);
    const firstTwo = { ...line.cursor, offset: `001-0001-${'1'.padStart(18, '0')}` };
    assert.equal((await a.commit([firstTwo])).status, 204);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(b.events().length, 0, 'still one uncommitted event: still reassigning');
    assert.equal((await a.commit([line.cursor])).status, 204);
    await until('assigned to b', async () => (await stats(id)).get(`${et}/${moving}`).state === 'assigned');
    await publish(et, moving, ['after']);
    await b.waitFor((x) => x.events().length >= 1);
    assert.deepEqual(b.orders(), ['after'], 'b starts after the last commit: nothing committed is sent again');
});
test('a stream killed mid-batch: its uncommitted events go to the next stream, committed ones never again', async () => {
    const et = await eventType(1);
    await publish(et, '0', range('k', 6));
    const id = await subscription([et]);
    const a = await stream(id, 'batch_limit=2&batch_flush_timeout=1&max_uncommitted_events=100');
    await a.waitFor((x) => x.events().length >= 6);
    assert.equal((await a.commit([a.batches()[0].cursor])).status, 204, 'k0 and k1 committed');
    await a.close();
    await until('the session is gone', async () => (await stats(id)).get(`${et}/0`).state === 'unassigned');
    const b = await stream(id, 'batch_limit=2&batch_flush_timeout=1&max_uncommitted_events=100');
    await b.waitFor((x) => x.events().length >= 4);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(b.orders(), ['k2', 'k3', 'k4', 'k5']);
});
test('commit_timeout: with uncommitted events and no commit the service closes the stream; it may still commit for the timeout, then not', async () => {
    const et = await eventType(1);
    await publish(et, '0', ['c0', 'c1']);
    const id = await subscription([et]);
    const started = Date.now();
    const s = await stream(id, 'batch_limit=1&batch_flush_timeout=1&commit_timeout=1&max_uncommitted_events=100');
    await s.waitEnded(6000);
    assert.ok(Date.now() - started >= 900, 'not before the commit timeout');
    assert.deepEqual(s.orders(), ['c0', 'c1']);
    const late = await s.commit([s.batches()[0].cursor]);
    assert.equal(late.status, 204, `a commit right after the close is accepted: ${late.text}`);
    await new Promise((r) => setTimeout(r, 1500));
    const tooLate = await s.commit([s.batches()[1].cursor]);
    assert.equal(tooLate.status, 422, tooLate.text);
    // The next stream gets what was not committed.
    const next = await stream(id, 'batch_flush_timeout=1');
    await next.waitFor((x) => x.events().length >= 1);
    assert.deepEqual(next.orders(), ['c1']);
});
test('stats: unassigned before any stream, then stream ids and unconsumed events (newest minus committed)', async () => {
    const et = await eventType(2);
    await publish(et, '0', range('s', 4));
    const id = await subscription([et]);
    const before = await stats(id);
    assert.deepEqual([...before.values()].map((p) => [p.state, p.stream_id, p.unconsumed_events]), [['unassigned', undefined, undefined], ['unassigned', undefined, undefined]]);
    const s = await stream(id, 'batch_limit=4&batch_flush_timeout=1&max_uncommitted_events=100');
    await s.waitFor((x) => x.events().length >= 4);
    let st = await stats(id);
    assert.deepEqual([st.get(`${et}/0`).state, st.get(`${et}/0`).stream_id, st.get(`${et}/0`).unconsumed_events], ['assigned', s.streamId, 4]);
    assert.equal(st.get(`${et}/1`).unconsumed_events, 0);
    await s.commitAll();
    st = await stats(id);
    assert.equal(st.get(`${et}/0`).unconsumed_events, 0);
    await publish(et, '1', ['late']);
    st = await stats(id);
    assert.equal(st.get(`${et}/1`).unconsumed_events, 1);
});
//# sourceMappingURL=subscription-streaming.http.test.js.map