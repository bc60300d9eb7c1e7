// Goal (issue 10): a request body that stops midway, or drips, no longer holds its connection and bytes
// for good: it gets a 408 Problem and the connection is closed (idle body: httpBodyIdleTimeoutMs; whole
// request: httpRequestTimeoutMs). Long-lived streams are not cut by either, and a kept-alive connection
// outlives the body idle timeout between requests. The publish body limit fits the interface (4 MiB
// by default instead of 64 MiB).
// Method: a real broker with short timeouts; raw sockets for what fetch cannot do (stop a body,
// drip it, reuse a connection); each wait has a generous bound that only detects a hang.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { closeStream, openStream, readUntil } from '../testing/stream-client.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';
let broker;
let base;
before(async () => {
    broker = await startTestBroker({ httpBodyIdleTimeoutMs: 500, httpRequestTimeoutMs: 3000 });
    base = `http://127.0.0.1:${broker.port}`;
    assert.equal((await call(base, 'POST', '/event-types', businessEventType('to.orders'))).status, 201);
});
after(async () => {
    await broker.destroy();
});
/** Opens a socket and resolves with everything the server sent once it closes (or rejects after `boundMs`). */
function rawConnection() {
    const socket = connect(broker.port, '127.0.0.1');
    const chunks = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1'))));
    return { socket, closed, received: () => Buffer.concat(chunks).toString('latin1') };
}
async function within(p, boundMs, what) {
    let timer;
    try {
        return await Promise.race([p, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${boundMs} ms`)), boundMs)))]);
    }
    finally {
        clearTimeout(timer);
    }
}
function assert408(answer) {
    assert.match(answer, /^HTTP\/1\.1 408 /, answer);
    assert.match(answer, /content-type: application\/problem\+json/i);
    assert.match(answer, /"status":408/);
}
const head = (length) => `POST /event-types/to.orders/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
test('issue 10: a body that stops midway gets 408 and its connection is closed, by the idle timeout', async () => {
    const c = rawConnection();
    const started = Date.now();
    c.socket.write(head(1000) + '[{"order_number":');
    const answer = await within(c.closed, 15_000, 'stalled body');
    assert408(answer);
    // The idle timeout (500 ms) cut it, not the whole-request timeout (3 s) that would do it too.
    assert.ok(Date.now() - started < 2500, `cut after ${Date.now() - started} ms`);
});
test('issue 10: a body that keeps dripping a byte now and then is cut by the request timeout', async () => {
    const c = rawConnection();
    c.socket.write(head(1000) + '[');
    const drip = setInterval(() => c.socket.write(' '), 200);
    try {
        assert408(await within(c.closed, 15_000, 'dripping body'));
    }
    finally {
        clearInterval(drip);
    }
});
test('a kept-alive connection is not closed by the body idle timeout between requests', async () => {
    const c = rawConnection();
    const body = JSON.stringify([businessEvent('K-1')]);
    c.socket.write(head(Buffer.byteLength(body)) + body);
    await within((async () => { while (!/\r\n\r\n/.test(c.received()))
        await new Promise((r) => setTimeout(r, 20)); })(), 10_000, 'first answer');
    assert.match(c.received(), /^HTTP\/1\.1 200 /);
    await new Promise((r) => setTimeout(r, 1200));
    c.socket.write('GET /event-types/to.orders HTTP/1.1\r\nHost: x\r\n\r\n');
    await within((async () => { while (c.received().split('HTTP/1.1 ').length < 3)
        await new Promise((r) => setTimeout(r, 20)); })(), 10_000, 'second answer');
    assert.match(c.received().split('HTTP/1.1 ')[2] ?? '', /^200 /);
    c.socket.destroy();
});
test('issue 10: streams live longer than both timeouts (keep-alives every second for 4 s)', async () => {
    const sub = await call(base, 'POST', '/subscriptions', { owning_application: 'a', event_types: ['to.orders'] });
    assert.equal(sub.status, 201);
    const id = sub.body.id;
    const low = await openStream(base, 'to.orders', 'batch_flush_timeout=1');
    const high = await SubscriptionStreamClient.open(base, id, 'batch_flush_timeout=1');
    try {
        assert.equal(low.status, 200);
        const lowLines = await readUntil(low, (lines) => lines.length >= 5, 15_000);
        await high.waitFor((c) => c.lines.length >= 5, 15_000, 'five subscription lines');
        assert.ok(lowLines.length >= 5 && !high.isEnded, 'both streams kept sending past 3 s');
    }
    finally {
        await closeStream(low);
        await high.close();
    }
});
test('issue 10: the publish body limit is 4 MiB by default (413 above), not 64 MiB', async () => {
    const event = JSON.stringify(businessEvent('B', { pad: 'x'.repeat(900_000) }));
    const five = `[${Array.from({ length: 5 }, () => event).join(',')}]`;
    assert.ok(five.length > 4 * 1024 * 1024);
    const r = await call(base, 'POST', '/event-types/to.orders/events', five);
    assert.equal(r.status, 413, r.text);
    assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
    const four = `[${Array.from({ length: 4 }, () => JSON.stringify(businessEvent('B', { pad: 'x'.repeat(900_000) }))).join(',')}]`;
    assert.equal((await call(base, 'POST', '/event-types/to.orders/events', four)).status, 200);
});
//# sourceMappingURL=request-timeouts.http.test.js.map