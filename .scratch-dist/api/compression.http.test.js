// Goal (issue 10, compatibility.md "Compressed request bodies"): clients of the original service that
// compress their bodies work unchanged. A POST, PUT or PATCH body with Content-Encoding gzip (x-gzip),
// deflate or zstd is decoded; the body limit applies to the decoded bytes while decoding (a bomb is cut
// at the limit with 413, never inflated in memory, and stores nothing); an unknown coding is 415 and a
// corrupt body 400, all Problems. Answers are gzipped when the client asks, and streams too, flushed
// per batch: a batch reaches a gzip client as soon as it is sent, not when 16 KiB have piled up.
// Method: one real broker; requests through node:http so the test sees the bytes on the wire.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { createGunzip, deflateSync, gzipSync } from 'node:zlib';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { zstdFixture, zstdRawFrame, zstdRleBomb } from '../testing/zstd-frames.js';
let broker;
let port;
let base;
before(async () => {
    broker = await startTestBroker();
    port = broker.port;
    base = `http://127.0.0.1:${port}`;
});
after(async () => {
    await broker.destroy();
});
function send(method, path, body, headers = {}) {
    return new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
    });
}
function json(a) {
    return JSON.parse(a.body.toString());
}
function assertProblem(a, status, includes) {
    assert.equal(a.status, status, a.body.toString());
    assert.match(String(a.headers['content-type']), /^application\/problem\+json/);
    const p = json(a);
    assert.equal(p['status'], status);
    assert.ok(String(p['detail']).includes(includes), `detail "${String(p['detail'])}" names "${includes}"`);
}
async function newEventType(name) {
    const r = await send('POST', '/event-types', gzipSync(JSON.stringify(businessEventType(name))), { 'content-encoding': 'gzip' });
    assert.equal(r.status, 201, r.body.toString());
}
async function eventCount(name) {
    const r = await call(base, 'GET', `/event-types/${name}/partitions`);
    assert.equal(r.status, 200);
    return r.body.reduce((n, p) => n + (p.newest_available_offset === 'BEGIN' ? 0 : Number(p.newest_available_offset.slice(-18)) + 1), 0);
}
test('a gzip-compressed event type is created; publishing works with gzip, x-gzip, deflate and zstd', async () => {
    await newEventType('comp.publish');
    const batch = (tag) => Buffer.from(JSON.stringify([businessEvent(`${tag}-1`), businessEvent(`${tag}-2`)]));
    for (const [encoding, body] of [
        ['gzip', gzipSync(batch('g'))],
        ['GZIP', gzipSync(batch('G'))],
        ['x-gzip', gzipSync(batch('x'))],
        ['gzip, identity', gzipSync(batch('i'))],
        ['deflate', deflateSync(batch('d'))],
        ['zstd', zstdRawFrame(batch('z'))],
    ]) {
        const r = await send('POST', '/event-types/comp.publish/events', body, { 'content-encoding': encoding });
        assert.equal(r.status, 200, `${encoding}: ${r.body.toString()}`);
    }
    // The reference zstd encoder's output (a compressed block) is a batch of three events.
    const z = await send('POST', '/event-types/comp.publish/events', zstdFixture, { 'content-encoding': 'zstd' });
    assert.equal(z.status, 200, z.body.toString());
    assert.equal(await eventCount('comp.publish'), 6 * 2 + 3);
});
test('PUT, subscription creation and PATCH take compressed bodies too', async () => {
    await newEventType('comp.other');
    const put = await send('PUT', '/event-types/comp.other', zstdRawFrame(Buffer.from(JSON.stringify(businessEventType('comp.other', { owning_application: 'other-app' })))), { 'content-encoding': 'zstd' });
    assert.equal(put.status, 200, put.body.toString());
    assert.equal((await call(base, 'GET', '/event-types/comp.other')).body['owning_application'], 'other-app');
    const sub = await send('POST', '/subscriptions', deflateSync(JSON.stringify({ owning_application: 'a', event_types: ['comp.other'] })), { 'content-encoding': 'deflate' });
    assert.equal(sub.status, 201, sub.body.toString());
    const id = json(sub)['id'];
    const patch = await send('PATCH', `/subscriptions/${id}/cursors`, gzipSync(JSON.stringify({ items: [{ event_type: 'comp.other', partition: '0', offset: 'BEGIN' }] })), { 'content-encoding': 'gzip' });
    assert.equal(patch.status, 204, patch.body.toString());
});
test('an unknown content coding, or two codings, is 415; a corrupt body is 400; all Problems', async () => {
    await newEventType('comp.bad');
    const body = Buffer.from('[]');
    assertProblem(await send('POST', '/event-types/comp.bad/events', body, { 'content-encoding': 'br' }), 415, 'br');
    assertProblem(await send('POST', '/event-types/comp.bad/events', gzipSync(gzipSync(body)), { 'content-encoding': 'gzip, gzip' }), 415, 'one content coding');
    assertProblem(await send('POST', '/event-types/comp.bad/events', Buffer.from('[{"not":"gzip"}]'), { 'content-encoding': 'gzip' }), 400, 'gzip');
    assertProblem(await send('POST', '/event-types/comp.bad/events', gzipSync(body).subarray(0, 8), { 'content-encoding': 'gzip' }), 400, 'gzip');
    assertProblem(await send('POST', '/event-types/comp.bad/events', Buffer.from('[]'), { 'content-encoding': 'deflate' }), 400, 'deflate');
    assertProblem(await send('POST', '/event-types/comp.bad/events', Buffer.from('[]'), { 'content-encoding': 'zstd' }), 400, 'zstd');
    assertProblem(await send('POST', '/event-types', Buffer.from('{}'), { 'content-encoding': 'compress' }), 415, 'compress');
    // And the node still serves.
    assert.equal((await call(base, 'GET', '/event-types/comp.bad')).status, 200);
});
test('a 1 GiB gzip bomb and a 1 GiB zstd bomb are refused with 413 without being inflated in memory, storing nothing', async () => {
    await newEventType('comp.bomb');
    // 64 gzip members of 16 MiB of spaces each: about 1 MB on the wire, 1 GiB decoded.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024, 0x20));
    const gzipBomb = Buffer.concat([gzipSync('['), ...Array.from({ length: 64 }, () => member)]);
    const zstdBomb = zstdRleBomb(8192);
    for (const [encoding, bomb] of [['gzip', gzipBomb], ['zstd', zstdBomb]]) {
        assert.ok(bomb.length < 2_000_000, `${encoding} bomb is ${bomb.length} bytes`);
        const rssBefore = process.memoryUsage().rss;
        const r = await send('POST', '/event-types/comp.bomb/events', bomb, { 'content-encoding': encoding });
        const grown = process.memoryUsage().rss - rssBefore;
        assertProblem(r, 413, 'decoded request body');
        // The limit (64 MiB at most) is what may be held, never the 1 GiB.
        assert.ok(grown < 300 * 1024 * 1024, `${encoding}: RSS grew by ${Math.round(grown / 1048576)} MiB`);
    }
    assert.equal(await eventCount('comp.bomb'), 0);
});
test('answers are gzipped when the client accepts gzip, and not otherwise', async () => {
    for (let i = 0; i < 8; i++)
        await newEventType(`comp.list${i}`);
    const plain = await send('GET', '/event-types', undefined);
    assert.equal(plain.headers['content-encoding'], undefined);
    const zipped = await send('GET', '/event-types', undefined, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.ok(zipped.body.length < plain.body.length);
    const { gunzipSync } = await import('node:zlib');
    assert.deepEqual(JSON.parse(gunzipSync(zipped.body).toString()), JSON.parse(plain.body.toString()));
    const refused = await send('GET', '/event-types', undefined, { 'accept-encoding': 'gzip;q=0' });
    assert.equal(refused.headers['content-encoding'], undefined);
});
/** Opens a stream with Accept-Encoding: gzip and yields decoded lines as they arrive. */
function openGzipStream(path, headers = {}) {
    return new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path, headers: { 'accept-encoding': 'gzip', ...headers } }, (res) => {
            const lines = [];
            const waiters = [];
            let buf = '';
            if (res.headers['content-encoding'] === 'gzip') {
                const gunzip = createGunzip();
                res.pipe(gunzip);
                gunzip.on('data', (d) => {
                    buf += d.toString();
                    let nl;
                    while ((nl = buf.indexOf('\n')) >= 0) {
                        lines.push(JSON.parse(buf.slice(0, nl)));
                        buf = buf.slice(nl + 1);
                    }
                    for (const w of waiters.splice(0))
                        w();
                });
                gunzip.on('error', () => undefined);
            }
            resolve({
                res,
                next: async (timeoutMs) => {
                    const deadline = Date.now() + timeoutMs;
                    while (lines.length === 0) {
                        const left = deadline - Date.now();
                        if (left <= 0)
                            throw new Error(`no line within ${timeoutMs} ms`);
                        await new Promise((r) => {
                            const t = setTimeout(r, left);
                            waiters.push(() => {
                                clearTimeout(t);
                                r();
                            });
                        });
                    }
                    return lines.shift();
                },
                close: () => req.destroy(),
            });
        });
        req.on('error', reject);
        req.end();
    });
}
test('a low-level stream is gzipped and each batch arrives as it is sent (flushed per batch)', async () => {
    await newEventType('comp.stream');
    const s = await openGzipStream('/event-types/comp.stream/events?batch_limit=1&batch_flush_timeout=30', {
        'x-svc-cursors': JSON.stringify([{ partition: '0', offset: 'BEGIN' }]),
    });
    try {
        assert.equal(s.res.statusCode, 200);
        assert.equal(s.res.headers['content-encoding'], 'gzip');
        for (const order of ['S-1', 'S-2', 'S-3']) {
            const p = await call(base, 'POST', '/event-types/comp.stream/events', [businessEvent(order)]);
            assert.equal(p.status, 200);
            // A hang detector, not a speed check: unflushed, the line would wait for 16 KiB or the stream's end.
            const line = (await s.next(10_000));
            assert.equal(line.events?.[0]?.order_number, order);
        }
    }
    finally {
        s.close();
    }
});
test('a subscription stream is gzipped and flushed per batch', async () => {
    await newEventType('comp.sub');
    const sub = await call(base, 'POST', '/subscriptions', { owning_application: 'a', event_types: ['comp.sub'], read_from: 'begin' });
    assert.equal(sub.status, 201);
    const id = sub.body.id;
    const s = await openGzipStream(`/subscriptions/${id}/events?batch_limit=1&max_uncommitted_events=100`);
    try {
        assert.equal(s.res.statusCode, 200);
        assert.equal(s.res.headers['content-encoding'], 'gzip');
        for (const order of ['U-1', 'U-2']) {
            assert.equal((await call(base, 'POST', '/event-types/comp.sub/events', [businessEvent(order)])).status, 200);
            let line = (await s.next(10_000));
            while (line.events === undefined)
                line = (await s.next(10_000));
            assert.equal(line.events[0]?.order_number, order);
        }
    }
    finally {
        s.close();
    }
});
//# sourceMappingURL=compression.http.test.js.map