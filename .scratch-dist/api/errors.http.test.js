// Goal: the error paths over real HTTP (issue 2 point 6, interface.md "Errors", compatibility.md
// "Problem" and "Status codes the interface leaves open"): every error answer is a Problem
// (application/problem+json; type/title/status/detail, status equal to the HTTP status) carrying the
// X-Flow-Id; malformed, empty and non-array bodies get 400 on every body-taking endpoint; unknown routes
// and unknown event types 404; oversized bodies 413; a deleted event type's name can be re-created and
// starts empty; and no request however malformed takes the broker down or stores half a batch.
// Method: one real broker for the file; requests through fetch and, for what fetch cannot send
// (broken HTTP, invalid URLs), through a raw TCP socket. After the garbage, the broker must still
// answer normally and hold exactly the events of the batches it acknowledged.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { businessEvent, businessEventType, call, readLines, startTestBroker } from '../testing/broker-harness.js';
let broker;
let base;
before(async () => {
    broker = await startTestBroker();
    base = `http://127.0.0.1:${broker.port}`;
});
after(async () => {
    await broker.destroy();
});
/** Every error answer: status, Problem media type and fields, status field equal to the HTTP status, X-Flow-Id. */
function assertProblem(r, status, detailIncludes) {
    assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text}`);
    assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/, `content type of ${r.text}`);
    const p = r.body;
    assert.ok(p !== null && typeof p === 'object', `body is a JSON object: ${r.text}`);
    assert.equal(p['type'], `http://httpstatus.es/${status}`);
    assert.equal(typeof p['title'], 'string');
    assert.ok(p['title'].length > 0);
    assert.equal(p['status'], status);
    assert.equal(typeof p['detail'], 'string');
    assert.ok(!String(p['detail']).includes('    at '), 'no stack trace in detail');
    assert.ok((r.headers.get('x-flow-id') ?? '').length > 0, 'X-Flow-Id echoed');
    if (detailIncludes !== undefined)
        assert.ok(String(p['detail']).includes(detailIncludes), `detail "${p['detail']}" lacks "${detailIncludes}"`);
}
/** Sends raw bytes and returns whatever the server answers before closing (or after a short idle end). */
function rawRequest(data) {
    return new Promise((resolve) => {
        const socket = connect(broker.port, '127.0.0.1');
        const chunks = [];
        socket.on('data', (d) => chunks.push(d));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.on('error', () => undefined);
        socket.write(data);
        // Half-close so a server waiting for more of an incomplete request sees the end of it.
        socket.end();
    });
}
/** Parses a raw HTTP/1.1 answer: status, lower-cased headers and body. */
function parseRaw(text) {
    const end = text.indexOf('\r\n\r\n');
    assert.ok(end > 0, `an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`);
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) };
}
function assertRawProblem(text, status) {
    const r = parseRaw(text);
    assert.equal(r.status, status, text.slice(0, 300));
    assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/, text.slice(0, 300));
    let body = r.body;
    if (r.headers.get('transfer-encoding') === 'chunked')
        body = body.slice(body.indexOf('\r\n') + 2, body.lastIndexOf('\r\n0\r\n'));
    const p = JSON.parse(body);
    assert.equal(p['status'], status);
    assert.equal(p['type'], `http://httpstatus.es/${status}`);
    assert.equal(typeof p['title'], 'string');
}
async function createEventType(body) {
    const r = await call(base, 'POST', '/event-types', body);
    assert.equal(r.status, 201, r.text);
}
async function partitions(name) {
    const r = await call(base, 'GET', `/event-types/${name}/partitions`);
    assert.equal(r.status, 200, r.text);
    return r.body;
}
function storedCount(ps) {
    const n = (o) => Number(o.slice(o.lastIndexOf('-') + 1));
    return ps.reduce((sum, p) => sum + (p.newest_available_offset === 'BEGIN' ? 0 : n(p.newest_available_offset) - n(p.oldest_available_offset) + 1), 0);
}
const statistic = (n) => ({ messages_per_minute: 10, message_size: 100, read_parallelism: n, write_parallelism: n });
/** Every endpoint that takes a JSON body, for an event type that exists. */
function bodyEndpoints(name) {
    return [
        ['POST', '/event-types'],
        ['PUT', `/event-types/${name}`],
        ['POST', `/event-types/${name}/events`],
        ['POST', `/event-types/${name}/cursor-distances`],
        ['POST', `/event-types/${name}/cursors-lag`],
        ['POST', `/event-types/${name}/shifted-cursors`],
    ];
}
describe('400 for bodies that are not what the endpoint takes', () => {
    const name = 'err.body';
    before(async () => createEventType(businessEventType(name)));
    test('malformed JSON gets 400 on every body-taking endpoint', async () => {
        const malformed = ['{', '[{"a":1}', '{"a":}', "{'a':1}", 'nul', '[1,]', '{"a":1}}', '\u0000', 'undefined', '{"a":"\\x"}'];
        for (const [method, path] of bodyEndpoints(name)) {
            for (const body of malformed) {
                assertProblem(await call(base, method, path, body), 400);
            }
        }
    });
    test('invalid UTF-8 gets 400 on every body-taking endpoint', async () => {
        const bodies = [Buffer.from([0xff, 0xfe, 0xfd]), Buffer.from([0x5b, 0x7b, 0xc3, 0x28, 0x7d, 0x5d]), Buffer.from([0x7b, 0x80, 0x7d])];
        for (const [method, path] of bodyEndpoints(name)) {
            for (const body of bodies)
                assertProblem(await call(base, method, path, body), 400);
        }
    });
    test('an empty body gets 400 on every body-taking endpoint', async () => {
        for (const [method, path] of bodyEndpoints(name)) {
            assertProblem(await call(base, method, path, ''), 400);
            // No body at all (no Content-Type, no Content-Length).
            assertProblem(await call(base, method, path), 400);
        }
    });
    test('a publish body that is not an array gets 400', async () => {
        for (const body of [{}, businessEvent('x'), '"events"', 42, true, 'null']) {
            assertProblem(await call(base, 'POST', `/event-types/${name}/events`, body), 400, 'array');
        }
        assert.equal(storedCount(await partitions(name)), 0);
    });
    test('an event type body that is not an object gets 422', async () => {
        for (const body of ['[]', '"x"', '7', 'null', 'true']) {
            assertProblem(await call(base, 'POST', '/event-types', body), 422);
        }
    });
});
describe('404', () => {
    test('unknown routes get a 404 Problem', async () => {
        // GET / redirects to the console (issue 11); other methods on / still have no resource.
        const cases = [
            ['POST', '/'],
            ['GET', '/nope'],
            ['GET', '/event-types/err.x/nope'],
            ['POST', '/registry/partition-strategies'],
            ['PATCH', '/event-types'],
            ['DELETE', '/event-types'],
            ['GET', '/event-types/a/b/c/d'],
            ['GET', '/registry'],
        ];
        for (const [method, path] of cases)
            assertProblem(await call(base, method, path), 404);
    });
    test('every route of an unknown event type gets 404', async () => {
        const cases = [
            ['GET', '/event-types/err.none', undefined],
            ['PUT', '/event-types/err.none', businessEventType('err.none')],
            ['DELETE', '/event-types/err.none', undefined],
            ['POST', '/event-types/err.none/events', [businessEvent('x')]],
            ['GET', '/event-types/err.none/events', undefined],
            ['GET', '/event-types/err.none/partitions', undefined],
            ['GET', '/event-types/err.none/partitions/0', undefined],
            ['POST', '/event-types/err.none/cursors-lag', [{ partition: '0', offset: 'BEGIN' }]],
            ['GET', '/event-types/err.none/schemas', undefined],
            ['GET', '/event-types/err.none/schemas/latest', undefined],
        ];
        for (const [method, path, body] of cases)
            assertProblem(await call(base, method, path, body), 404, 'err.none');
    });
});
describe('409 and 413', () => {
    test('creating an existing name gets a 409 Problem', async () => {
        await createEventType(businessEventType('err.conflict'));
        assertProblem(await call(base, 'POST', '/event-types', businessEventType('err.conflict')), 409);
    });
    test('a body over the limit of a non-publishing endpoint gets a 413 Problem', async () => {
        const huge = JSON.stringify(businessEventType('err.huge', { padding: 'x'.repeat(5 * 1024 * 1024) }));
        assertProblem(await call(base, 'POST', '/event-types', huge), 413);
        assertProblem(await call(base, 'GET', '/event-types/err.huge'), 404);
    });
    test('a publish body over 64 MiB gets a 413 Problem and stores nothing', async () => {
        await createEventType(businessEventType('err.huge.publish'));
        const event = JSON.stringify(businessEvent('x', { padding: 'y'.repeat(900_000) }));
        const body = '[' + Array.from({ length: 75 }, () => event).join(',') + ']';
        assert.ok(body.length > 64 * 1024 * 1024);
        assertProblem(await call(base, 'POST', '/event-types/err.huge.publish/events', body), 413);
        assert.equal(storedCount(await partitions('err.huge.publish')), 0);
    });
});
describe('every error answer is a Problem', () => {
    test('422 answers of the registry and cursor tools are Problems', async () => {
        await createEventType(businessEventType('err.p422', { default_statistic: statistic(2) }));
        assertProblem(await call(base, 'POST', '/event-types', businessEventType('err.p422b', { category: 'x' })), 422);
        assertProblem(await call(base, 'PUT', '/event-types/err.p422', businessEventType('other')), 422);
        assertProblem(await call(base, 'POST', '/event-types/err.p422/cursors-lag', [{ partition: '7', offset: 'BEGIN' }]), 422);
        assertProblem(await call(base, 'POST', '/event-types/err.p422/cursors-lag', [{ partition: '0' }]), 422);
        assertProblem(await call(base, 'GET', '/event-types/err.p422/events?batch_limit=-1'), 422);
        assertProblem(await call(base, 'GET', '/event-types/err.p422/events?batch_limit=5&stream_limit=2'), 422);
    });
    test('a malformed X-Svc-Cursors header gets a 400 Problem', async () => {
        await createEventType(businessEventType('err.cursors'));
        for (const header of ['not json', '{"partition":"0","offset":"BEGIN"}', '[1]', '[]']) {
            assertProblem(await call(base, 'GET', '/event-types/err.cursors/events', undefined, { 'X-Svc-Cursors': header }), 400);
        }
    });
    test('a URL that is not valid percent-encoding gets a 400 Problem', async () => {
        for (const path of ['/event-types/%E0%A4%A', '/event-types/%zz', '/event-types/%C3%28/partitions']) {
            const text = await rawRequest(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
            assertRawProblem(text, 400);
        }
    });
    test('a path parameter over the length limit gets a Problem', async () => {
        const r = await call(base, 'GET', `/event-types/${'a'.repeat(2000)}`);
        assert.ok(r.status === 404 || r.status === 414 || r.status === 400, `status ${r.status}`);
        assertProblem(r, r.status);
    });
    test('broken HTTP gets a 400 or 431 Problem', async () => {
        const cases = [
            ['GARBAGE\r\n\r\n', 400],
            ['GET /event-types HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n', 400],
            ['POST /event-types HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
            ['POST /event-types HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
            [`GET /event-types HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
        ];
        for (const [request, status] of cases)
            assertRawProblem(await rawRequest(request), status);
    });
});
describe('re-creating a deleted event type', () => {
    test('the name can be re-created; the new event type starts with empty partitions and its own schema', async () => {
        const name = 'err.recreate';
        await createEventType(businessEventType(name, { default_statistic: statistic(2) }));
        const ok = await call(base, 'POST', `/event-types/${name}/events`, [businessEvent('old-1'), businessEvent('old-2'), businessEvent('old-3')]);
        assert.equal(ok.status, 200, ok.text);
        assert.equal(storedCount(await partitions(name)), 3);
        assert.equal((await call(base, 'DELETE', `/event-types/${name}`)).status, 200);
        const schema = { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] };
        await createEventType(businessEventType(name, { default_statistic: statistic(3), schema: { type: 'json_schema', schema: JSON.stringify(schema) } }));
        const ps = await partitions(name);
        assert.equal(ps.length, 3, 'the new partition count applies');
        for (const p of ps) {
            assert.equal(p.newest_available_offset, 'BEGIN', `partition ${p.partition} is empty`);
            assert.equal(p.oldest_available_offset, 'BEGIN');
        }
        const history = (await call(base, 'GET', `/event-types/${name}/schemas`)).body;
        assert.deepEqual(history.items.map((s) => s['version']), ['1.0.0']);
        assert.equal(history.items[0]['schema'], JSON.stringify(schema));
        // The old schema no longer applies; the new one does, and only new events are read back.
        const rejected = await call(base, 'POST', `/event-types/${name}/events`, [businessEvent('old-style')]);
        assert.equal(rejected.status, 422, rejected.text);
        const fresh = { sku: 'new-1', metadata: { eid: '00000000-0000-4000-8000-00000000ffff', occurred_at: '2026-11-22T10:00:00Z' } };
        assert.equal((await call(base, 'POST', `/event-types/${name}/events`, [fresh])).status, 200);
        const after = await partitions(name);
        assert.equal(storedCount(after), 1);
        const used = after.find((p) => p.newest_available_offset !== 'BEGIN');
        assert.match(used.newest_available_offset, /-000000000000000000$/, 'offsets restart at 0');
        const res = await fetch(`${base}/event-types/${name}/events?stream_limit=1`, {
            headers: { 'X-Svc-Cursors': JSON.stringify(after.map((p) => ({ partition: p.partition, offset: 'BEGIN' }))) },
        });
        const lines = (await readLines(res, (ls) => ls.some((l) => l['events'] !== undefined)));
        const events = lines.flatMap((l) => l['events'] ?? []);
        assert.deepEqual(events.map((e) => e['sku'] ?? e['order_number']), ['new-1']);
    });
});
describe('no request crashes the broker or stores half a batch', () => {
    const name = 'err.barrage';
    before(async () => {
        await createEventType(businessEventType(name, { partition_strategy: 'hash', partition_key_fields: ['order_number'], default_statistic: statistic(3) }));
    });
    const deepArray = (depth) => '['.repeat(depth) + ']'.repeat(depth);
    const deepObject = (depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    test('deeply nested JSON is refused with a 4xx Problem or per-item 422, never a 500', async () => {
        const eventWith = (x) => `[{"order_number":"d","metadata":{"eid":"00000000-0000-4000-8000-0000000000d1","occurred_at":"2026-11-22T10:00:00Z"},"x":${x}}]`;
        const cases = [
            ['POST', `/event-types/${name}/events`, deepArray(100_000)],
            ['POST', `/event-types/${name}/events`, eventWith(deepArray(100_000))],
            ['POST', `/event-types/${name}/events`, eventWith(deepObject(100_000))],
            ['POST', '/event-types', deepObject(100_000)],
            ['PUT', `/event-types/${name}`, deepObject(100_000)],
            ['POST', `/event-types/${name}/cursors-lag`, deepArray(100_000)],
            ['POST', `/event-types/${name}/cursor-distances`, `[{"initial_cursor":${deepObject(100_000)}}]`],
            ['POST', '/event-types', JSON.stringify(businessEventType('err.deep.schema', {
                    schema: { type: 'json_schema', schema: '{"type":"object","properties":{"a":'.repeat(5000) + '{}' + '}}'.repeat(5000) },
                }))],
        ];
        const before = storedCount(await partitions(name));
        // Deep undeclared data (the validator does not descend into it) and deep declared data (a
        // recursive schema the validator must follow): both are refused as invalid events.
        for (const x of [deepArray(100_000), deepObject(100_000)]) {
            const r = await call(base, 'POST', `/event-types/${name}/events`, eventWith(x));
            assert.equal(r.status, 422, r.text.slice(0, 300));
            assert.deepEqual(r.body, [{ publishing_status: 'failed', step: 'validating', eid: '00000000-0000-4000-8000-0000000000d1', detail: 'The event is nested too deeply to be processed' }]);
        }
        const tree = { type: 'object', properties: { order_number: { type: 'string' }, x: { $ref: '#/definitions/node' } }, required: ['order_number'], definitions: { node: { type: 'array', items: { $ref: '#/definitions/node' } } } };
        await createEventType(businessEventType('err.deep.recursive', { schema: { type: 'json_schema', schema: JSON.stringify(tree) } }));
        const recursive = await call(base, 'POST', '/event-types/err.deep.recursive/events', eventWith(deepArray(100_000)));
        assert.equal(recursive.status, 422, recursive.text.slice(0, 300));
        assert.equal(recursive.body[0]['detail'], 'The event is nested too deeply to be processed');
        assert.equal(storedCount(await partitions('err.deep.recursive')), 0);
        // Moderate nesting that the broker can handle is stored.
        assert.equal((await call(base, 'POST', '/event-types/err.deep.recursive/events', eventWith(deepArray(500)))).status, 200);
        for (const [method, path, body] of cases) {
            const r = await call(base, method, path, body);
            assert.ok(r.status >= 400 && r.status < 500, `${method} ${path} ${body.slice(0, 60)}: ${r.status} ${r.text.slice(0, 300)}`);
            if (r.status === 422 && Array.isArray(r.body))
                continue; // a batch rejected item by item
            assertProblem(r, r.status);
        }
        assert.equal(storedCount(await partitions(name)), before);
    });
    test('huge numbers and wrong types for every event type field get 422, never a 500', async () => {
        const good = businessEventType('err.types');
        const wrong = [null, 0, -1, 1e308, 'x', '', true, [], [null], {}, { a: 1 }];
        const fields = [
            'name', 'owning_application', 'category', 'schema', 'partition_strategy', 'partition_key_fields', 'enrichment_strategies',
            'compatibility_mode', 'default_statistic', 'options', 'authorization', 'read_scopes', 'write_scopes', 'created_at', 'updated_at',
        ];
        let i = 0;
        for (const field of fields) {
            for (const value of wrong) {
                const body = { ...good, name: `err.types.t${i++}`, [field]: value };
                const r = await call(base, 'POST', '/event-types', body);
                assert.ok(r.status === 201 || r.status === 422, `${field}=${JSON.stringify(value)}: ${r.status} ${r.text}`);
                if (r.status === 422)
                    assertProblem(r, 422);
            }
        }
        const sub = [
            ['schema', { type: 'json_schema', schema: 5 }],
            ['schema', { type: 'json_schema', schema: '[]' }],
            ['schema', { type: 'json_schema', schema: 'null' }],
            ['schema', { type: ['json_schema'], schema: '{}' }],
            ['options', { retention_time: 1e308 }],
            ['default_statistic', { messages_per_minute: 1e308, message_size: 1, read_parallelism: 1, write_parallelism: 1 }],
            ['authorization', { admins: [[]], readers: {}, writers: null }],
            ['partition_key_fields', [{}, []]],
        ];
        for (const [field, value] of sub) {
            assertProblem(await call(base, 'POST', '/event-types', { ...good, name: `err.types.t${i++}`, [field]: value }), 422);
        }
        // Numbers that JSON.parse turns into Infinity or loses precision on, sent as raw text.
        const rawStats = '{"messages_per_minute":1e400,"message_size":1,"read_parallelism":123456789012345678901234567890,"write_parallelism":1}';
        const rawBody = JSON.stringify({ ...good, name: `err.types.t${i++}` }).replace(/}$/, `,"default_statistic":${rawStats}}`);
        assertProblem(await call(base, 'POST', '/event-types', rawBody), 422, 'default_statistic');
        const rawRetention = JSON.stringify({ ...good, name: `err.types.t${i++}` }).replace(/}$/, ',"options":{"retention_time":-1e400}}');
        assertProblem(await call(base, 'POST', '/event-types', rawRetention), 422, 'retention_time');
    });
    test('wrong types in events and metadata get a per-item 422 (an element that is not an object: 400), never a 500, and store nothing', async () => {
        const before = await partitions(name);
        const md = (over) => ({ eid: '00000000-0000-4000-8000-0000000000e1', occurred_at: '2026-11-22T10:00:00Z', ...over });
        const events = [
            { order_number: 1, metadata: md({}) },
            { order_number: { a: 1 }, metadata: md({}) },
            { order_number: 'x', metadata: md({ eid: 5 }) },
            { order_number: 'x', metadata: md({ occurred_at: [] }) },
            { order_number: 'x', metadata: md({ event_type: 5 }) },
            { order_number: 'x', metadata: md({ flow_id: {} }) },
            { order_number: 'x', metadata: md({ partition: 1 }) },
            { order_number: 'x', metadata: md({ parent_eids: 'x' }) },
            { order_number: 'x', metadata: md({ parent_eids: [1] }) },
            { order_number: 'x', metadata: md({ received_at: 'x' }) },
            { order_number: 'x', metadata: md({ version: 1 }) },
            { order_number: 'x', amount: '1e400', metadata: md({}) },
            { order_number: 'x', metadata: [] },
            { order_number: 'x', metadata: null },
            { order_number: 'x' },
        ];
        for (const event of events) {
            const r = await call(base, 'POST', `/event-types/${name}/events`, [{ order_number: 'fine', metadata: md({}) }, event]);
            assert.equal(r.status, 422, `${JSON.stringify(event)}: ${r.status} ${r.text}`);
            const items = r.body;
            assert.equal(items.length, 2);
            assert.equal(items[1]['publishing_status'], 'failed');
            assert.equal(items[0]['publishing_status'], 'aborted');
        }
        // An element that is not an object: the batch is not a batch of events (400, one Problem).
        for (const notAnEvent of [42, 'x', null, []]) {
            const r = await call(base, 'POST', `/event-types/${name}/events`, [{ order_number: 'fine', metadata: md({}) }, notAnEvent]);
            assert.equal(r.status, 400, `${JSON.stringify(notAnEvent)}: ${r.status} ${r.text}`);
            assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
        }
        // A declared number beyond the double range (parsed as Infinity), sent as raw text.
        const rawInf = `[{"order_number":"x","amount":1e400,"metadata":${JSON.stringify(md({}))}}]`;
        const inf = await call(base, 'POST', `/event-types/${name}/events`, rawInf);
        assert.equal(inf.status, 422, inf.text);
        assert.deepEqual(await partitions(name), before);
    });
    test('the broker still answers normally afterwards and holds exactly the acknowledged events', async () => {
        const r = await call(base, 'GET', '/event-types');
        assert.equal(r.status, 200);
        assert.ok(Array.isArray(r.body));
        const batch = Array.from({ length: 5 }, (_, k) => businessEvent(`after-${k}`));
        assert.equal((await call(base, 'POST', `/event-types/${name}/events`, batch)).status, 200);
        // Only this batch was ever acknowledged for the event type: exactly its events are stored.
        assert.equal(storedCount(await partitions(name)), 5);
        assert.equal((await call(base, 'GET', '/registry/partition-strategies')).status, 200);
    });
});
//# sourceMappingURL=errors.http.test.js.map