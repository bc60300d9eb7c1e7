// Goal: the subscription stream (GET /subscriptions/{id}/events) as interface.md states it
// ("Subscription", "Subscription cursors", the subscription rows of "States and transitions", the
// "Subscriptions" endpoints, "Limits") with compatibility.md's wire details: headers, line shape,
// keep-alives, read_from begin/end/cursors, every stream parameter (batch_limit, batch_flush_timeout,
// stream_limit, stream_timeout, stream_keep_alive_limit, max_uncommitted_events, commit_timeout) and
// their 422s, the 409 without a free slot, 404, rebalancing over two and three streams (stats and
// deliveries), the reassigning hand-over, and at-least-once redelivery after a killed stream.
// Method: one real broker over HTTP for the file; every test uses fresh user_defined event types so it
// knows in which partition each event is; streams are read in the background (SubscriptionStreamClient);
// asynchronous effects are polled (GET /stats, stream lines) with deadlines instead of fixed sleeps.
// Short quiet periods ("nothing more arrives for 1.2 s") are the only sleeps: they assert an absence.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { call, startTestBroker } from '../testing/broker-harness.js';
import { assertProblem, eventIn, off, publish, sleep } from '../testing/stream-client.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';
import { createSubscription, orderRange, putEvents, subscriptionStats, userDefinedEventType, waitUntil } from '../testing/subscription-fixtures.js';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const T = { timeout: 30_000 };
let broker;
let base;
const clients = [];
before(async () => {
    broker = await startTestBroker();
    base = broker.url;
});
after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await broker.destroy();
});
let seq = 0;
const eventType = (partitions) => userDefinedEventType(base, `sst.t${++seq}`, partitions);
const put = (name, partition, orders) => putEvents(base, name, partition, orders);
const range = orderRange;
const subscription = (eventTypes, over = {}) => createSubscription(base, `sst-app-${++seq}`, eventTypes, over);
async function stream(id, query) {
    const c = await SubscriptionStreamClient.open(base, id, query);
    clients.push(c);
    return c;
}
const stats = (id) => subscriptionStats(base, id);
const until = waitUntil;
/** Partitions (by id) each stream owns with state assigned, from GET /stats. */
async function owners(id) {
    const m = new Map();
    for (const p of await stats(id)) {
        if (p.state !== 'assigned' || p.stream_id === undefined)
            continue;
        m.set(p.stream_id, [...(m.get(p.stream_id) ?? []), p.partition].sort());
    }
    return m;
}
/** Waits until a partition of the subscription is reassigning and answers its id. */
async function reassigningPartition(id) {
    let p = '';
    await until('one partition reassigning', async () => {
        const m = (await stats(id)).find((x) => x.state === 'reassigning');
        if (m !== undefined)
            p = m.partition;
        return m !== undefined;
    });
    return p;
}
/** Waits until every partition of the subscription is unassigned (all sessions closed). */
async function allUnassigned(id) {
    await until('every partition unassigned', async () => (await stats(id)).every((p) => p.state === 'unassigned' && p.stream_id === undefined));
}
const ordersOf = (c, partition) => c.batches().filter((l) => l.cursor.partition === partition).flatMap((l) => l.events.map((e) => String(e.order_number)));
const keepAlives = (c) => c.lines.filter((l) => l.events === undefined);
// ------------------------------------------------------------------------------------------ basics
test('stream basics: 200, x-json-stream, equal X-Svc-StreamId/X-Nakadi-StreamId, SubscriptionCursor lines, one partition per batch, "Stream started" first, keep-alives without events', T, async () => {
    const et = await eventType(3);
    await put(et, '0', ['a0', 'a1']);
    await put(et, '1', ['b0']);
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=5&batch_flush_timeout=1');
    assert.equal(s.res.status, 200);
    assert.match(s.res.headers.get('content-type') ?? '', /^application\/x-json-stream/);
    const svc = s.res.headers.get('x-svc-streamid');
    assert.match(svc ?? '', UUID);
    assert.equal(s.res.headers.get('x-nakadi-streamid'), svc);
    // Events of partitions 0 and 1 flush at the first flush period, partition 2 sends a keep-alive then;
    // wait for a second period so every partition has sent a keep-alive.
    await s.waitFor((c) => c.events().length >= 3 && ['0', '1', '2'].every((p) => keepAlives(c).some((l) => l.cursor.partition === p)), 8000, 'events and keep-alives of every partition');
    assert.deepEqual(s.lines[0].info, { debug: 'Stream started' }, 'the first line carries the start info');
    assert.ok(s.lines.slice(1).every((l) => l.info === undefined), 'only the first line carries info');
    for (const l of s.lines) {
        assert.deepEqual(Object.keys(l.cursor).sort(), ['cursor_token', 'event_type', 'offset', 'partition']);
        assert.equal(l.cursor.event_type, et);
        assert.match(l.cursor.cursor_token, UUID);
        assert.match(l.cursor.offset, /^(BEGIN|001-0001-\d{18})$/);
        assert.ok(['0', '1', '2'].includes(l.cursor.partition));
        for (const e of l.events ?? []) {
            assert.equal(e.metadata['partition'], l.cursor.partition, 'a batch holds events of its cursor partition only');
            assert.equal(e.metadata['event_type'], et);
        }
        if (l.events !== undefined)
            assert.ok(l.events.length > 0, 'a line with events has at least one (keep-alives omit the field)');
    }
    assert.equal(new Set(s.lines.map((l) => l.cursor.cursor_token)).size, s.lines.length, 'a fresh cursor_token per batch');
    // Cursors point at the batch's last event; keep-alives repeat the partition's position.
    const b0 = s.batches().find((l) => l.cursor.partition === '0');
    assert.deepEqual(b0.events.map((e) => e.order_number), ['a0', 'a1']);
    assert.equal(b0.cursor.offset, off(1));
    const b1 = s.batches().find((l) => l.cursor.partition === '1');
    assert.deepEqual(b1.events.map((e) => e.order_number), ['b0']);
    assert.equal(b1.cursor.offset, off(0));
    const ka = (p) => keepAlives(s).filter((l) => l.cursor.partition === p).map((l) => l.cursor.offset);
    assert.ok(ka('2').every((o) => o === 'BEGIN'), `empty partition keep-alives are at BEGIN: ${ka('2').join()}`);
    const lastIndexOfBatch = s.lines.indexOf(b0);
    const laterKeepAlives0 = s.lines.slice(lastIndexOfBatch + 1).filter((l) => l.events === undefined && l.cursor.partition === '0');
    assert.ok(laterKeepAlives0.every((l) => l.cursor.offset === off(1)), 'a keep-alive after a batch carries the same offset');
});
test('read_from end: events published before the first stream are not delivered, later ones are; the start is fixed by the first stream (a second stream gets what the first did not commit)', T, async () => {
    const et = await eventType(2);
    await put(et, '0', ['old0a', 'old0b']);
    await put(et, '1', ['old1']);
    const id = await subscription([et], { read_from: 'end' });
    const a = await stream(id, 'batch_flush_timeout=1');
    await put(et, '0', ['new0']);
    await put(et, '1', ['new1']);
    await a.waitFor((c) => c.events().length >= 2, 8000, 'the two new events');
    await sleep(300);
    assert.deepEqual(a.orders().sort(), ['new0', 'new1'], 'only events published after the stream opened');
    await a.close();
    await allUnassigned(id);
    await put(et, '0', ['mid0']);
    const b = await stream(id, 'batch_flush_timeout=1');
    await b.waitFor((c) => c.events().length >= 3, 8000, 'new0, new1, mid0 again');
    await sleep(300);
    assert.deepEqual(ordersOf(b, '0'), ['new0', 'mid0']);
    assert.deepEqual(ordersOf(b, '1'), ['new1']);
});
test('read_from begin delivers everything; read_from cursors starts after each initial cursor (exclusive), over two event types', T, async () => {
    const et1 = await eventType(2);
    const et2 = await eventType(1);
    await put(et1, '0', ['x0', 'x1', 'x2']);
    await put(et1, '1', ['y0', 'y1']);
    await put(et2, '0', ['z0', 'z1']);
    const begin = await subscription([et1, et2]);
    const sb = await stream(begin, 'batch_limit=10&batch_flush_timeout=1');
    await sb.waitFor((c) => c.events().length >= 7, 8000, 'all seven events');
    const got = (c, et, p) => c.batches().filter((l) => l.cursor.event_type === et && l.cursor.partition === p).flatMap((l) => l.events.map((e) => e.order_number));
    assert.deepEqual(got(sb, et1, '0'), ['x0', 'x1', 'x2']);
    assert.deepEqual(got(sb, et1, '1'), ['y0', 'y1']);
    assert.deepEqual(got(sb, et2, '0'), ['z0', 'z1']);
    for (const l of sb.batches())
        for (const e of l.events)
            assert.equal(e.metadata['event_type'], l.cursor.event_type, 'cursor names the event type of its events');
    const cursors = await subscription([et1, et2], {
        read_from: 'cursors',
        initial_cursors: [
            { event_type: et1, partition: '0', offset: off(0) },
            { event_type: et1, partition: '1', offset: 'BEGIN' },
            { event_type: et2, partition: '0', offset: off(1) },
        ],
    });
    const sc = await stream(cursors, 'batch_limit=10&batch_flush_timeout=1');
    await sc.waitFor((c) => c.events().length >= 4, 8000, 'x1, x2, y0, y1');
    await put(et2, '0', ['z2']);
    await sc.waitFor((c) => c.events().length >= 5, 8000, 'z2');
    await sleep(300);
    assert.deepEqual(got(sc, et1, '0'), ['x1', 'x2'], 'after off(0): x0 is not delivered');
    assert.deepEqual(got(sc, et1, '1'), ['y0', 'y1'], 'BEGIN: from the oldest');
    assert.deepEqual(got(sc, et2, '0'), ['z2'], 'initial cursor at the newest event: only later events');
});
// ------------------------------------------------------------------------------------- parameters
test('batch_limit shapes batches and batch_flush_timeout=1 flushes a partial batch about a second later', T, async () => {
    const et = await eventType(1);
    await put(et, '0', range('e', 7));
    const id = await subscription([et]);
    const opened = Date.now();
    const s = await stream(id, 'batch_limit=3&batch_flush_timeout=1&max_uncommitted_events=100');
    await s.waitFor((c) => c.events().length >= 6, 8000, 'two full batches');
    const fullAt = Date.now();
    await s.waitFor((c) => c.events().length >= 7, 8000, 'the partial batch');
    const partialAt = Date.now();
    assert.ok(fullAt - opened < 900, `full batches are sent at once (after ${fullAt - opened} ms)`);
    assert.ok(partialAt - opened >= 800, `the partial batch waits for the flush timeout (after ${partialAt - opened} ms)`);
    assert.ok(partialAt - opened < 3500, `the partial batch is flushed after about 1 s (after ${partialAt - opened} ms)`);
    assert.deepEqual(s.batches().map((l) => l.events.length), [3, 3, 1]);
    assert.deepEqual(s.orders(), range('e', 7));
    assert.deepEqual(s.batches().map((l) => l.cursor.offset), [off(2), off(5), off(6)]);
});
test('stream_limit ends the stream after exactly that many events over all partitions', T, async () => {
    const et = await eventType(2);
    await put(et, '0', range('a', 4));
    await put(et, '1', range('b', 4));
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=2&stream_limit=5&max_uncommitted_events=100&batch_flush_timeout=1');
    await s.waitEnded(8000);
    assert.equal(s.events().length, 5, `exactly stream_limit events: ${s.orders().join()}`);
    assert.ok(s.batches().every((l) => l.events.length <= 2));
    // Per partition the events are a prefix in order.
    for (const [p, prefix] of [['0', 'a'], ['1', 'b']]) {
        const got = ordersOf(s, p);
        assert.deepEqual(got, range(prefix, got.length));
    }
});
test('stream_timeout ends the stream after about that many seconds, with the pending events flushed', T, async () => {
    const et = await eventType(1);
    await put(et, '0', ['t0', 't1']);
    const id = await subscription([et]);
    const started = Date.now();
    const s = await stream(id, 'batch_limit=100&batch_flush_timeout=1&stream_timeout=2&max_uncommitted_events=100');
    await s.waitEnded(8000);
    const took = Date.now() - started;
    assert.ok(took >= 1800, `not before stream_timeout (${took} ms)`);
    assert.ok(took < 5000, `soon after stream_timeout (${took} ms)`);
    assert.deepEqual(s.orders(), ['t0', 't1']);
});
test('stream_keep_alive_limit ends the stream after that many keep-alives in a row on every partition', T, async () => {
    const et = await eventType(2);
    const id = await subscription([et]);
    const started = Date.now();
    const s = await stream(id, 'batch_flush_timeout=1&stream_keep_alive_limit=2');
    await s.waitEnded(8000);
    const took = Date.now() - started;
    assert.ok(took >= 1800 && took < 5000, `two flush periods (${took} ms)`);
    assert.equal(s.events().length, 0);
    for (const p of ['0', '1']) {
        assert.equal(keepAlives(s).filter((l) => l.cursor.partition === p).length, 2, `two keep-alives of partition ${p}`);
    }
    // An event resets a partition's count: the stream still ends, after the event was sent.
    const et2 = await eventType(1);
    await put(et2, '0', ['k0']);
    const id2 = await subscription([et2]);
    const s2 = await stream(id2, 'batch_flush_timeout=1&stream_keep_alive_limit=1');
    await s2.waitEnded(8000);
    assert.deepEqual(s2.orders(), ['k0']);
    assert.equal(s2.lines.at(-1).events, undefined, 'the last line is the keep-alive that reached the limit');
});
test('max_uncommitted_events=3 with 10 events: exactly 3 arrive, then only keep-alives; each commit lets as many more through', T, async () => {
    const et = await eventType(1);
    await put(et, '0', range('w', 10));
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=2&max_uncommitted_events=3&batch_flush_timeout=1');
    await s.waitFor((c) => c.events().length >= 3, 8000, 'three events');
    const linesAtPause = s.lines.length;
    await s.waitFor((c) => c.lines.length > linesAtPause + 1, 5000, 'keep-alives while paused');
    assert.deepEqual(s.orders(), ['w0', 'w1', 'w2'], 'paused at the window');
    assert.ok(s.lines.slice(linesAtPause).every((l) => l.events === undefined), 'only keep-alives while paused');
    assert.ok(s.lines.slice(linesAtPause).every((l) => l.cursor.offset === off(2)), 'keep-alives at the last sent offset');
    // Committing the first batch (2 events) opens the window by 2.
    const first = s.batches()[0];
    assert.equal(first.events.length, 2);
    assert.equal((await s.commit([first.cursor])).status, 204);
    await s.waitFor((c) => c.events().length >= 5, 5000, 'two more after the commit');
    await sleep(1200);
    assert.deepEqual(s.orders(), range('w', 5), 'exactly two more');
    // Committing everything sent lets three more through.
    const last = s.batches().at(-1);
    assert.equal((await s.commit([last.cursor])).status, 204);
    await s.waitFor((c) => c.events().length >= 8, 5000, 'three more');
    await sleep(1200);
    assert.deepEqual(s.orders(), range('w', 8));
});
test('max_uncommitted_events counts over all partitions of the stream', T, async () => {
    const et = await eventType(2);
    await put(et, '0', range('a', 5));
    await put(et, '1', range('b', 5));
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=1&max_uncommitted_events=3&batch_flush_timeout=1');
    await s.waitFor((c) => c.events().length >= 3, 8000, 'three events');
    await sleep(1200);
    assert.equal(s.events().length, 3, `three events over both partitions: ${s.orders().join()}`);
    const one = s.batches()[0];
    assert.equal((await s.commit([one.cursor])).status, 204);
    await s.waitFor((c) => c.events().length >= 4, 5000, 'one more');
    await sleep(1200);
    assert.equal(s.events().length, 4, `one commit of one event lets exactly one more through: ${s.orders().join()}`);
});
test('commit_timeout: without uncommitted events the stream stays; a commit keeps it; uncommitted events and no commit for commit_timeout close it', T, async () => {
    const et = await eventType(1);
    await put(et, '0', ['c0', 'c1']);
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=1&batch_flush_timeout=1&commit_timeout=1&max_uncommitted_events=100');
    await s.waitFor((c) => c.events().length >= 2, 5000, 'two events');
    assert.equal((await s.commitAll()).status, 204);
    // Nothing uncommitted: keep-alives only, the stream stays open past several commit timeouts.
    const linesBefore = s.lines.length;
    await s.waitFor((c) => c.lines.length >= linesBefore + 3, 8000, 'three keep-alives');
    assert.equal(s.isEnded, false, 'no uncommitted events: not closed by the commit timeout');
    await put(et, '0', ['c2']);
    const sentAt = Date.now();
    await s.waitFor((c) => c.events().length >= 3, 5000, 'c2');
    await s.waitEnded(6000);
    const took = Date.now() - sentAt;
    assert.ok(took >= 800, `not before the commit timeout (${took} ms)`);
    assert.ok(took < 5000, `within a few seconds (${took} ms)`);
    await allUnassigned(id);
    // The next stream gets the uncommitted event again.
    const next = await stream(id, 'batch_flush_timeout=1');
    await next.waitFor((c) => c.events().length >= 1, 5000, 'c2 again');
    await sleep(300);
    assert.deepEqual(next.orders(), ['c2']);
});
test('commit_timeout counts from the last commit: a stream that keeps committing part of what it holds stays open past it; silent, it is closed', T, async () => {
    const et = await eventType(1);
    await put(et, '0', range('k', 5));
    const id = await subscription([et]);
    const s = await stream(id, 'batch_limit=1&batch_flush_timeout=1&commit_timeout=2&max_uncommitted_events=100');
    await s.waitFor((c) => c.events().length >= 5, 5000, 'five events');
    const sentAt = Date.now();
    // One batch a second: always some uncommitted events, never 2 s without a commit.
    for (let i = 0; i < 3; i++) {
        await sleep(1000);
        assert.equal((await s.commit([s.batches()[i].cursor])).status, 204);
    }
    assert.ok(Date.now() - sentAt >= 3000);
    assert.equal(s.isEnded, false, 'committing restarts the commit timeout');
    const lastCommitAt = Date.now();
    await s.waitEnded(6000);
    assert.ok(Date.now() - lastCommitAt >= 1500, `closed about commit_timeout after the last commit (${Date.now() - lastCommitAt} ms)`);
});
test('invalid stream parameters are 422 Problems and take no slot', T, async () => {
    const et = await eventType(1);
    const id = await subscription([et]);
    const bad = [
        'stream_limit=1&batch_limit=2',
        'max_uncommitted_events=0',
        'max_uncommitted_events=-1',
        'max_uncommitted_events=x',
        'commit_timeout=61',
        'commit_timeout=1.5',
        'commit_timeout=-1',
        'batch_limit=1.5',
        'batch_limit=abc',
        'batch_limit=0',
        'batch_flush_timeout=x',
        'stream_timeout=1&batch_flush_timeout=2',
        'stream_keep_alive_limit=-2',
        'stream_limit=two',
    ];
    for (const q of bad) {
        const r = await call(base, 'GET', `/subscriptions/${id}/events?${q}`);
        assertProblem(r, 422);
        assert.ok(String(r.body.detail ?? '').length > 0, `${q}: a detail`);
    }
    assert.ok((await stats(id)).every((p) => p.state === 'unassigned'), 'no session was opened');
    // The single slot is still free, and the boundary values are accepted.
    const s = await stream(id, 'commit_timeout=60&max_uncommitted_events=1&batch_flush_timeout=1&stream_limit=1&batch_limit=1');
    assert.equal(s.res.status, 200);
});
// ------------------------------------------------------------------------------------ slots, 404
test('409 with the exact detail when streams equal partitions (over two event types); a freed slot can be used again; 404 for an unknown subscription', T, async () => {
    const et1 = await eventType(2);
    const et2 = await eventType(1);
    const id = await subscription([et1, et2]);
    const ss = [await stream(id, 'batch_flush_timeout=1'), await stream(id, 'batch_flush_timeout=1'), await stream(id, 'batch_flush_timeout=1')];
    const r = await call(base, 'GET', `/subscriptions/${id}/events?batch_flush_timeout=1`);
    assertProblem(r, 409);
    assert.equal(r.body.detail, 'No free slots for streaming available. Total slots: 3');
    // The refused request did not disturb the assignment: one partition per stream.
    await until('one partition each', async () => {
        const o = await owners(id);
        return o.size === 3 && ss.every((s) => o.get(s.streamId)?.length === 1);
    });
    await ss[0].close();
    await until('the slot is free', async () => (await owners(id)).size === 2 && (await stats(id)).every((p) => p.state === 'assigned'));
    const again = await stream(id, 'batch_flush_timeout=1');
    assert.match(again.streamId, UUID);
    for (const unknown of [crypto.randomUUID(), 'not-a-uuid']) {
        const nf = await call(base, 'GET', `/subscriptions/${unknown}/events`);
        assertProblem(nf, 404);
    }
});
test('DELETE of a subscription ends its open streams; their stream ids then commit nothing (404)', T, async () => {
    const et = await eventType(2);
    await put(et, '0', ['d0']);
    const id = await subscription([et]);
    const a = await stream(id, 'batch_flush_timeout=1');
    const b = await stream(id, 'batch_flush_timeout=1');
    await until('a stream has d0', () => a.events().length + b.events().length >= 1);
    const sent = [...a.batches(), ...b.batches()][0];
    const owner = a.batches().length > 0 ? a : b;
    assert.equal((await call(base, 'DELETE', `/subscriptions/${id}`)).status, 204);
    await a.waitEnded(5000);
    await b.waitEnded(5000);
    assertProblem(await owner.commit([sent.cursor]), 404);
    assertProblem(await call(base, 'GET', `/subscriptions/${id}/events`), 404);
});
test('a client that disconnects while its stream is being opened does not keep the slot', T, async () => {
    const et = await eventType(1);
    const id = await subscription([et]);
    const { hostname, port } = new URL(base);
    // The request goes out and the connection closes at once, before the server has written the head.
    for (let i = 0; i < 3; i++) {
        await new Promise((resolve, reject) => {
            const sock = net.connect(Number(port), hostname, () => {
                sock.end(`GET /subscriptions/${id}/events?batch_flush_timeout=1 HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`, () => {
                    sock.destroy();
                    resolve();
                });
            });
            sock.on('error', reject);
        });
    }
    // Their sessions may still be opening: a new stream gets the single slot once they closed (not 409 for ever).
    let s;
    await until('the slot to be free', async () => {
        s = await stream(id, 'batch_flush_timeout=1').catch((err) => {
            if (err.status !== 409)
                throw err;
            return undefined;
        });
        return s !== undefined;
    });
    assert.match(s.streamId, UUID);
    assert.deepEqual((await stats(id)).map((p) => p.stream_id), [s.streamId]);
});
// -------------------------------------------------------------------------------------- rebalance
test('two streams on four partitions: 2 + 2 in stats and in deliveries; when one closes the other gets all four', T, async () => {
    const et = await eventType(4);
    const id = await subscription([et]);
    const a = await stream(id, 'batch_flush_timeout=1&max_uncommitted_events=100');
    await until('a owns all four', async () => (await owners(id)).get(a.streamId)?.length === 4);
    const b = await stream(id, 'batch_flush_timeout=1&max_uncommitted_events=100');
    await until('2 + 2', async () => {
        const o = await owners(id);
        return o.get(a.streamId)?.length === 2 && o.get(b.streamId)?.length === 2;
    });
    const o = await owners(id);
    const ofA = o.get(a.streamId);
    const ofB = o.get(b.streamId);
    assert.deepEqual([...ofA, ...ofB].sort(), ['0', '1', '2', '3']);
    for (let p = 0; p < 4; p++)
        await put(et, String(p), [`p${p}`]);
    await a.waitFor((c) => c.events().length >= 2, 5000, 'a: two events');
    await b.waitFor((c) => c.events().length >= 2, 5000, 'b: two events');
    await sleep(300);
    assert.deepEqual([...a.partitions()].sort(), ofA, 'a receives its own partitions only');
    assert.deepEqual([...b.partitions()].sort(), ofB, 'b receives its own partitions only');
    assert.deepEqual(a.orders().sort(), ofA.map((p) => `p${p}`));
    assert.deepEqual(b.orders().sort(), ofB.map((p) => `p${p}`));
    assert.equal((await a.commitAll()).status, 204);
    assert.equal((await b.commitAll()).status, 204);
    await b.close();
    await until('a owns all four again', async () => (await owners(id)).get(a.streamId)?.length === 4 && (await stats(id)).every((p) => p.state === 'assigned'));
    for (const p of ofB)
        await put(et, p, [`after${p}`]);
    await a.waitFor((c) => c.events().length >= 4, 5000, "b's partitions reach a");
    assert.deepEqual(a.orders().slice(2).sort(), ofB.map((p) => `after${p}`));
});
test('three streams: 2/1/1 on four partitions and 2/2/2 on six; a leaving stream hands its partitions to the others', T, async () => {
    const et4 = await eventType(4);
    const id4 = await subscription([et4]);
    const s4 = [await stream(id4, 'batch_flush_timeout=1'), await stream(id4, 'batch_flush_timeout=1'), await stream(id4, 'batch_flush_timeout=1')];
    await until('2/1/1', async () => {
        const o = await owners(id4);
        const sizes = s4.map((s) => o.get(s.streamId)?.length ?? 0).sort();
        return JSON.stringify(sizes) === '[1,1,2]';
    });
    const et6 = await eventType(6);
    const id6 = await subscription([et6]);
    const q = 'batch_flush_timeout=1&max_uncommitted_events=100';
    const s6 = [await stream(id6, q), await stream(id6, q), await stream(id6, q)];
    await until('2/2/2', async () => {
        const o = await owners(id6);
        return s6.every((s) => o.get(s.streamId)?.length === 2);
    });
    const o = await owners(id6);
    for (let p = 0; p < 6; p++)
        await put(et6, String(p), [`p${p}`]);
    for (const s of s6) {
        await s.waitFor((c) => c.events().length >= 2, 5000, `two events on ${s.streamId}`);
    }
    await sleep(300);
    for (const s of s6) {
        assert.deepEqual([...s.partitions()].sort(), o.get(s.streamId), 'each stream receives the partitions stats show for it');
        assert.equal(s.events().length, 2);
        assert.equal((await s.commitAll()).status, 204);
    }
    const [x, y, z] = s6;
    await z.close();
    await until('3/3 after one left', async () => {
        const now = await owners(id6);
        return now.get(x.streamId)?.length === 3 && now.get(y.streamId)?.length === 3 && !now.has(z.streamId);
    });
    // z's former partitions now deliver to x or y.
    for (const p of o.get(z.streamId))
        await put(et6, p, [`moved${p}`]);
    await until('the moved partitions deliver', () => x.events().length + y.events().length >= 6);
    const moved = [...x.orders(), ...y.orders()].filter((n) => n.startsWith('moved')).sort();
    assert.deepEqual(moved, o.get(z.streamId).map((p) => `moved${p}`));
});
test('a partition moving from a stream with uncommitted events is reassigning until the old stream commits; then the new owner continues after the commit', T, async () => {
    const et = await eventType(2);
    await put(et, '0', range('x', 3));
    await put(et, '1', range('y', 3));
    const id = await subscription([et]);
    const a = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    await a.waitFor((c) => c.events().length >= 6, 5000, 'six events');
    const b = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    let moving;
    await until('one partition reassigning', async () => {
        moving = (await stats(id)).find((p) => p.state === 'reassigning');
        return moving !== undefined;
    });
    const p = moving.partition;
    const other = p === '0' ? '1' : '0';
    const st = await stats(id);
    assert.equal(st.find((x) => x.partition === other).state, 'assigned');
    assert.equal(st.find((x) => x.partition === other).stream_id, a.streamId, 'the other partition stays with a');
    // A new event of the moving partition reaches neither stream while it is reassigning.
    const prefix = p === '0' ? 'x' : 'y';
    await put(et, p, ['n0']);
    await sleep(1200);
    assert.equal(b.events().length, 0, 'the new owner gets nothing while reassigning');
    assert.deepEqual(ordersOf(a, p), range(prefix, 3), 'the old owner stops sending the moving partition');
    // A partial commit keeps it reassigning.
    const sent = a.batches().filter((l) => l.cursor.partition === p);
    assert.equal((await a.commit([sent[0].cursor])).status, 204);
    await sleep(500);
    assert.equal((await stats(id)).find((x) => x.partition === p).state, 'reassigning', 'still one uncommitted event');
    assert.equal(b.events().length, 0);
    // Committing the rest completes the hand-over.
    assert.equal((await a.commit([sent.at(-1).cursor])).status, 204);
    await until('assigned to b', async () => {
        const x = (await stats(id)).find((s) => s.partition === p);
        return x.state === 'assigned' && x.stream_id === b.streamId;
    });
    await b.waitFor((c) => c.events().length >= 1, 5000, 'n0 on b');
    await sleep(300);
    assert.deepEqual(b.orders(), ['n0'], 'b starts after the committed cursor: committed events are not sent again');
});
test('the old owner leaving with uncommitted events: the new owner starts after the committed cursor and gets what was not committed', T, async () => {
    const et = await eventType(2);
    await put(et, '0', range('x', 3));
    await put(et, '1', range('y', 3));
    const id = await subscription([et]);
    const a = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    await a.waitFor((c) => c.events().length >= 6, 5000, 'six events');
    const b = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    const p = await reassigningPartition(id);
    const prefix = p === '0' ? 'x' : 'y';
    const otherPrefix = p === '0' ? 'y' : 'x';
    // a commits the first event of the moving partition and all of its own, then dies.
    const sentP = a.batches().filter((l) => l.cursor.partition === p);
    const sentOther = a.batches().filter((l) => l.cursor.partition !== p);
    assert.equal((await a.commit([sentP[0].cursor, sentOther.at(-1).cursor])).status, 204);
    await a.close();
    await b.waitFor((c) => c.events().length >= 2, 5000, 'the two uncommitted events of the moving partition');
    await until('b owns both', async () => (await owners(id)).get(b.streamId)?.length === 2);
    await sleep(300);
    assert.deepEqual(ordersOf(b, p), [`${prefix}1`, `${prefix}2`], 'after the committed cursor, the uncommitted ones again');
    assert.deepEqual(ordersOf(b, p === '0' ? '1' : '0'), [], `${otherPrefix}* were all committed: not again`);
});
test('an old owner silent past commit_timeout loses the moving partition: the new owner gets its uncommitted events', T, async () => {
    const et = await eventType(2);
    await put(et, '0', range('x', 2));
    await put(et, '1', range('y', 2));
    const id = await subscription([et]);
    const a = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100&commit_timeout=2');
    await a.waitFor((c) => c.events().length >= 4, 5000, 'four events');
    const b = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    const p = await reassigningPartition(id);
    const prefix = p === '0' ? 'x' : 'y';
    const movedAt = Date.now();
    await b.waitFor((c) => ordersOf(c, p).length >= 2, 8000, 'the moving partition after the commit timeout');
    assert.ok(Date.now() - movedAt >= 1000, 'not handed over long before the commit timeout');
    assert.deepEqual(ordersOf(b, p), [`${prefix}0`, `${prefix}1`]);
});
test('a stream whose moving partition was handed over at its commit timeout is not closed for that partition: it keeps streaming and committing its own', T, async () => {
    const et = await eventType(2);
    await put(et, '0', ['x0']);
    await put(et, '1', ['y0']);
    const id = await subscription([et]);
    const a = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100&commit_timeout=2');
    await a.waitFor((c) => c.events().length >= 2, 5000, 'two events');
    const b = await stream(id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    const p = await reassigningPartition(id);
    const q = p === '0' ? '1' : '0';
    // a commits its own partition only, a second after the move: the moving partition is handed over at
    // move + 2 s (a's commit timeout since the move), before a's own commit timeout (commit + 2 s) comes.
    await sleep(1000);
    assert.equal((await a.commit([a.batches().find((l) => l.cursor.partition === q).cursor])).status, 204);
    const committedAt = Date.now();
    await until('the moving partition assigned to b', async () => {
        const m = (await stats(id)).find((x) => x.partition === p);
        return m.state === 'assigned' && m.stream_id === b.streamId;
    });
    await b.waitFor((c) => c.events().length >= 1, 5000, 'the moving partition on b');
    // b holds that event uncommitted. a has nothing uncommitted it could still commit (the partition is
    // b's now; a's commit of it is refused), so its commit timeout has nothing to count.
    assertProblem(await a.commit([a.batches().find((l) => l.cursor.partition === p).cursor]), 422);
    await sleep(Math.max(0, committedAt + 3500 - Date.now()));
    assert.equal(a.isEnded, false, 'a, with everything it may still commit committed, was closed by its commit timeout');
    await put(et, q, ['own']);
    await a.waitFor((c) => c.orders().includes('own'), 5000, 'a still streams its own partition');
});
// ---------------------------------------------------------------------------------- at-least-once
test('a stream killed in the middle of a batch line: the next stream gets the whole batch', T, async () => {
    const et = await eventType(1);
    const pad = 'x'.repeat(4000);
    await publish(base, et, Array.from({ length: 100 }, (_, i) => eventIn('0', `m${i}`, { pad })));
    const id = await subscription([et]);
    // A ~400 kB batch: the client reads its first chunk, well before the line's end, and disconnects.
    const got = await new Promise((resolve, reject) => {
        const req = http.get(`${base}/subscriptions/${id}/events?batch_limit=100&max_uncommitted_events=100`, { agent: false }, (res) => {
            let text = '';
            res.on('data', (c) => {
                text += c.toString();
                if (text.length > 1000) {
                    req.destroy();
                    resolve(text);
                }
            });
        });
        req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
    assert.ok(!got.includes('\n'), 'the client saw part of the first line only');
    await allUnassigned(id);
    const next = await stream(id, 'batch_limit=100&max_uncommitted_events=100&batch_flush_timeout=1');
    await next.waitFor((c) => c.events().length >= 100, 5000, 'the whole batch again');
    assert.deepEqual(next.orders(), range('m', 100));
});
test('a stream killed after a batch without committing: the next stream gets those events again (same eids); committed events never come again', T, async () => {
    const et = await eventType(1);
    await put(et, '0', range('k', 6));
    const id = await subscription([et]);
    const q = 'batch_limit=2&batch_flush_timeout=1&max_uncommitted_events=100';
    const a = await stream(id, q);
    await a.waitFor((c) => c.batches().length >= 1, 5000, 'a first batch');
    const firstEids = a.batches()[0].events.map((e) => e.metadata['eid']);
    await a.close(); // killed, nothing committed
    await allUnassigned(id);
    const b = await stream(id, q);
    await b.waitFor((c) => c.events().length >= 6, 5000, 'all six again');
    assert.deepEqual(b.orders(), range('k', 6));
    assert.deepEqual(b.events().slice(0, 2).map((e) => e.metadata['eid']), firstEids, 'the same events (eids) again');
    // Commit the first four (the second batch's cursor commits the first batch too), then die.
    assert.equal((await b.commit([b.batches()[1].cursor])).status, 204);
    await b.close();
    await allUnassigned(id);
    const c = await stream(id, q);
    await c.waitFor((x) => x.events().length >= 2, 5000, 'k4, k5');
    await sleep(300);
    assert.deepEqual(c.orders(), ['k4', 'k5'], 'committed events are not delivered again');
    assert.equal((await c.commitAll()).status, 204);
    await c.close();
    await allUnassigned(id);
    const d = await stream(id, q);
    await d.waitFor((x) => x.lines.length >= 1, 5000, 'a keep-alive');
    await put(et, '0', ['k6']);
    await d.waitFor((x) => x.events().length >= 1, 5000, 'k6');
    await sleep(300);
    assert.deepEqual(d.orders(), ['k6'], 'after committing everything only new events arrive');
});
//# sourceMappingURL=subscription-stream.http.test.js.map