/**
 * TEST-ONLY: generators of hostile HTTP requests for every route of the API (fuzz.http.test.ts), and a
 * client that sends one and reads a bounded part of the answer. Requests mix the plausible (so they get
 * past the first checks) with the hostile: malformed and deeply nested JSON, huge and negative numbers,
 * duplicate keys, invalid UTF-8, compressed and corrupt bodies, odd content types, cursors, query
 * values and path parameters.
 */
import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { routePermissions } from '../auth/permissions.js';
import { zstdRawFrame } from './zstd-frames.js';
/** Every route of the API (the permission table lists them all; permissions.test.ts checks that). */
export const allRoutes = Object.keys(routePermissions);
const junk = fc.constantFrom('', ' ', 'x', '..', '%00', '%ZZ', '%65vents', 'a'.repeat(300), '😀', '\u0000', 'null', '[]', '{}', '-1', '1e309', 'BEGIN', 'latest', '../../etc');
const bigNumbers = fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 64, 1e308, -0, 0.5);
const numberText = fc.oneof(bigNumbers.map(String), fc.constantFrom('1e309', '-1e309', 'NaN', 'Infinity', '0x10', '1_000', '9'.repeat(400), '', ' 1', '1.0'));
/** JSON text that JSON.parse reads but that is hostile: deep, wide, huge numbers, duplicate keys. */
const hostileJsonText = fc.oneof(fc.integer({ min: 1, max: 200_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)), fc.integer({ min: 1, max: 50_000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)), fc.constantFrom('{"a":1,"a":2}', '[{"metadata":{"eid":"x"},"metadata":{}}]', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}'), numberText.map((n) => `[${n}]`), fc.integer({ min: 1, max: 20_000 }).map((n) => JSON.stringify(Array.from({ length: n }, (_, i) => i))));
/** Bytes that are not JSON, or not UTF-8. */
const garbageBytes = fc.oneof(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), fc.constantFrom('', '[', '{"a":', 'nul', '[1,]', '"unterminated', '\uFEFF[]').map((s) => Buffer.from(s)), fc.constantFrom(Buffer.from([0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d]), Buffer.from([0x5b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x5d])));
const uuidish = fc.oneof(fc.uuid(), junk);
const offsetText = fc.oneof(fc.constantFrom('BEGIN', 'begin', 'END', '001-0001-000000000000000000', '001-0001-000000000000000001', '001-0001-000000000000000002', '001-0001-999999999999999999', '001-ffff-000000000000000001', '001-0001--00000000000000001', '0', '-1', ''), fc.string({ maxLength: 40 }));
const cursor = (eventType) => fc.record({
    partition: fc.oneof(fc.constantFrom('0', '1', '7', '-1', '99999999999999999999'), fc.string({ maxLength: 5 })),
    offset: offsetText,
    event_type: eventType,
    cursor_token: fc.oneof(fc.uuid(), fc.string({ maxLength: 5 })),
    shift: bigNumbers,
}, { requiredKeys: [] });
function eventOf(order, extra, eid) {
    return { order_number: order, metadata: { eid, occurred_at: '2026-11-22T10:00:00Z' }, ...extra };
}
/** Batches for publishing: mostly valid events, sometimes broken ones in the middle. */
const batch = fc.array(fc.oneof({ weight: 6, arbitrary: fc.tuple(fc.string({ maxLength: 8 }), fc.uuid()).map(([o, eid]) => eventOf(o, {}, eid)) }, { weight: 1, arbitrary: fc.tuple(fc.uuid(), fc.jsonValue({ maxDepth: 3 })).map(([eid, v]) => eventOf('x', { amount: v }, eid)) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) }, { weight: 1, arbitrary: fc.uuid().map((eid) => ({ metadata: { eid, occurred_at: 'not a date', partition: '9' } })) }), { maxLength: 30 });
const schemaText = fc.oneof(fc.constant(JSON.stringify({ type: 'object', properties: { order_number: { type: 'string' } } })), fc.constantFrom('{"type":"object","properties":{"x":{"type":"string","pattern":"^(a+)+$"}}}', '{"type":"object","properties":{"x":{"pattern":"(a)\\\\1"}}}', '{"$ref":"#"}', '{"type":"objectx"}', '{"enum":[]}', '{"type":"object","properties":{"c":{"$ref":"#"}}}', 'not json', '[]'), fc.integer({ min: 1, max: 70_000 }).map((n) => JSON.stringify({ type: 'object', properties: { e: { enum: Array.from({ length: n }, (_, i) => i) } } })), fc.integer({ min: 1, max: 5_000 }).map((n) => `{"type":"object","properties":{"a":${'{"type":"array","items":'.repeat(n)}{}${'}'.repeat(n)}}}`), fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)));
function eventTypeBody(name) {
    return fc.record({
        name,
        owning_application: fc.oneof(fc.constant('fuzz-app'), junk),
        category: fc.constantFrom('business', 'data', 'undefined', 'other', null),
        enrichment_strategies: fc.constantFrom(['metadata_enrichment'], [], ['x'], null),
        partition_strategy: fc.constantFrom('random', 'hash', 'user_defined', 'x'),
        partition_key_fields: fc.constantFrom(['order_number'], [], ['x.y'], 'x'),
        compatibility_mode: fc.constantFrom('forward', 'none', 'compatible', 'fixed'),
        schema: fc.record({ type: fc.constantFrom('json_schema', 'avro'), schema: schemaText, created_at: fc.constantFrom('2026-01-01T00:00:00Z', 5), version: fc.constantFrom('1.0.0', 'x') }, { requiredKeys: ['type', 'schema'] }),
        default_statistic: fc.record({ messages_per_minute: bigNumbers, message_size: bigNumbers, read_parallelism: bigNumbers, write_parallelism: bigNumbers }),
        options: fc.record({ retention_time: bigNumbers }),
        authorization: fc.constantFrom(undefined, { admins: [], readers: [], writers: [] }, { admins: [{ data_type: '*', value: '*' }], readers: [{ data_type: '*', value: '*' }], writers: [{ data_type: '*', value: '*' }] }),
    }, { requiredKeys: ['name', 'owning_application', 'category', 'schema'] });
}
/** A plausible-or-hostile JSON body for a route. */
function routeBody(route, f, nameArb) {
    const anyEventType = fc.constantFrom(f.tracked, f.other, 'fuzz.none');
    switch (route) {
        case 'POST /event-types/:name/events':
            return batch;
        case 'POST /event-types':
            return eventTypeBody(fc.oneof(fc.constantFrom('fuzz.new', 'fuzz.new2', f.other), junk));
        case 'PUT /event-types/:name':
            return eventTypeBody(nameArb);
        case 'POST /event-types/:name/cursor-distances':
            return fc.array(fc.record({ initial_cursor: cursor(anyEventType), final_cursor: cursor(anyEventType) }, { requiredKeys: [] }), { maxLength: 4 });
        case 'POST /event-types/:name/cursors-lag':
        case 'POST /event-types/:name/shifted-cursors':
            return fc.array(cursor(anyEventType), { maxLength: 4 });
        case 'POST /subscriptions':
        case 'PUT /subscriptions/:id':
            return fc.record({
                owning_application: fc.oneof(fc.constant('fuzz-app'), junk),
                event_types: fc.oneof(fc.constant([f.tracked]), fc.array(fc.oneof(anyEventType, junk), { maxLength: 3 })),
                consumer_group: fc.oneof(fc.constant('g'), junk),
                read_from: fc.constantFrom('begin', 'end', 'cursors', 'x'),
                initial_cursors: fc.array(cursor(anyEventType), { maxLength: 3 }),
                authorization: fc.oneof(fc.constant({ admins: [{ data_type: '*', value: '*' }], readers: [{ data_type: '*', value: '*' }] }), fc.record({ admins: fc.array(fc.record({ data_type: fc.oneof(fc.constant('user'), junk), value: junk }, { requiredKeys: [] }), { maxLength: 2 }), readers: fc.oneof(fc.constant([]), junk) }, { requiredKeys: [] }), fc.jsonValue({ maxDepth: 2 })),
            }, { requiredKeys: [] });
        case 'POST /subscriptions/:id/cursors':
        case 'PATCH /subscriptions/:id/cursors':
            return fc.oneof(fc.record({ items: fc.array(cursor(anyEventType), { maxLength: 3 }) }), fc.array(cursor(anyEventType), { maxLength: 2 }));
        case 'POST /settings/features':
            return fc.record({ feature: fc.constantFrom('disable_event_type_creation', 'high_level_api', 'limit_consumers_number', 'check_partitions_keys', 'nope'), enabled: fc.oneof(fc.boolean(), junk) }, { requiredKeys: [] });
        case 'POST /storages':
            return fc.record({ id: fc.oneof(fc.constantFrom('fuzzstore', 'default'), junk), storage_type: fc.constantFrom('broker', 'kafka'), broker_configuration: fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 2 })) }, { requiredKeys: [] });
        case 'POST /event-types/:name/timelines':
            return fc.record({ storage_id: fc.oneof(fc.constantFrom('default', 'fuzzstore'), junk) }, { requiredKeys: [] });
        default:
            return fc.jsonValue({ maxDepth: 3 });
    }
}
const queryKeys = ['batch_limit', 'batch_flush_timeout', 'stream_limit', 'stream_timeout', 'stream_keep_alive_limit', 'max_uncommitted_events', 'commit_timeout', 'limit', 'offset', 'event_type', 'owning_application', 'cursors', 'consumed_offset', 'show_time_lag'];
const queryString = fc
    .array(fc.tuple(fc.constantFrom(...queryKeys, 'x'), fc.oneof(numberText, junk, fc.string({ maxLength: 20 }))), { maxLength: 4 })
    .map((pairs) => pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&'));
const encodings = ['gzip', 'deflate', 'zstd', 'identity', 'br', 'gzip, gzip', 'x-gzip', 'GZIP'];
function encode(body, encoding, corrupt) {
    let out;
    switch (encoding.toLowerCase()) {
        case 'gzip':
        case 'x-gzip':
            out = gzipSync(body);
            break;
        case 'deflate':
            out = deflateSync(body);
            break;
        case 'zstd':
            out = zstdRawFrame(body);
            break;
        default:
            out = body;
    }
    if (corrupt && out.length > 4) {
        out = Buffer.from(out);
        const at = Math.floor(out.length / 2);
        out[at] = out[at] ^ 0xff;
    }
    return out;
}
export function fuzzRequest(f) {
    return fc.constantFrom(...allRoutes).chain((route) => {
        const [method, pattern] = route.split(' ');
        const destructive = method === 'DELETE';
        // The tracked event type and subscription are never deleted, so what was stored stays countable.
        const nameArb = destructive ? fc.oneof(fc.constantFrom(f.other, 'fuzz.none'), junk) : fc.oneof({ weight: 4, arbitrary: fc.constant(f.tracked) }, { weight: 1, arbitrary: fc.constantFrom(f.other, 'fuzz.none') }, { weight: 1, arbitrary: junk });
        const idArb = destructive ? uuidish : fc.oneof({ weight: 3, arbitrary: fc.constant(f.subscription) }, { weight: 1, arbitrary: uuidish });
        const params = {
            name: nameArb,
            id: pattern.startsWith('/subscriptions') ? idArb : fc.oneof(fc.constantFrom('default', 'fuzzstore'), junk),
            version: fc.oneof(fc.constantFrom('1.0.0', 'latest', '9.9.9'), junk),
            partition: fc.oneof(fc.constantFrom('0', '1', '99'), junk),
            type: fc.oneof(fc.constantFrom('CONSUMER_APP', 'CONSUMER_ET', 'PRODUCER_APP', 'PRODUCER_ET'), junk),
        };
        const pathArb = fc.tuple(...pattern.split('/').map((seg) => (seg.startsWith(':') ? (params[seg.slice(1)] ?? junk).map(encodeURIComponent) : fc.constant(seg))));
        const bodyArb = method === 'GET' || method === 'DELETE'
            ? fc.constant(undefined)
            : fc.oneof({ weight: 6, arbitrary: routeBody(route, f, nameArb).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) }, { weight: 1, arbitrary: hostileJsonText.map((t) => Buffer.from(t)) }, { weight: 1, arbitrary: garbageBytes });
        const headersArb = fc.record({
            'content-type': fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'garbage/;;', 'application/json; charset=latin1'),
            'content-encoding': fc.constantFrom(...encodings),
            'accept-encoding': fc.constantFrom('gzip', 'gzip;q=0', '*', 'br'),
            'x-svc-cursors': fc.oneof(fc.array(cursor(fc.constant(f.tracked)), { maxLength: 3 }).map((c) => JSON.stringify(c)), hostileJsonText.filter((t) => t.length < 8000), junk),
            'x-svc-streamid': uuidish,
            'x-flow-id': fc.oneof(fc.string({ maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s)), fc.constant('f'.repeat(2000))),
        }, { requiredKeys: [] });
        // Header values must be sendable (no line breaks, latin1): what a client cannot send is not the test's point.
        const sendable = headersArb.map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => /^[\t\x20-\x7e\x80-\xff]*$/.test(v))));
        return fc.record({ path: pathArb, query: queryString, body: bodyArb, headers: sendable, corrupt: fc.boolean() }).map(({ path, query, body, headers, corrupt }) => {
            const streaming = route === 'GET /event-types/:name/events' || route === 'GET /subscriptions/:id/events';
            // Streams end by themselves soon (a client would close them; the fuzzer reads only the head).
            const q = streaming ? `${query}${query === '' ? '' : '&'}stream_timeout=1&batch_flush_timeout=1` : query;
            const h = { ...headers };
            let sent = body;
            if (body !== undefined && h['content-encoding'] !== undefined)
                sent = encode(body, h['content-encoding'], corrupt && h['content-encoding'] !== 'identity');
            return { method, route, path: path.join('/') + (q === '' ? '' : `?${q}`), headers: h, body: sent, plain: body };
        });
    });
}
/** Sends one request; reads at most `bytesMax` bytes or `timeMs` of the answer, then closes. */
export function sendFuzz(port, r, timeMs = 3000, bytesMax = 256 * 1024) {
    return new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method: r.method, path: r.path, headers: { ...r.headers, connection: 'close' } }, (res) => {
            const chunks = [];
            let bytes = 0;
            let truncated = false;
            const finish = () => {
                clearTimeout(timer);
                let body = Buffer.concat(chunks);
                if (!truncated && res.headers['content-encoding'] === 'gzip' && body.length > 0)
                    body = gunzipSync(body);
                resolve({ status: res.statusCode ?? 0, headers: res.headers, body, truncated });
            };
            const cut = () => {
                truncated = true;
                res.destroy();
                finish();
            };
            const timer = setTimeout(cut, timeMs);
            res.on('data', (c) => {
                chunks.push(c);
                bytes += c.length;
                if (bytes > bytesMax)
                    cut();
            });
            res.on('end', () => {
                if (!truncated)
                    finish();
            });
            res.on('error', () => undefined);
        });
        req.on('error', reject);
        // A hang detector: no answer at all for this long means the node stopped serving.
        req.setTimeout(15_000, () => {
            req.destroy();
            reject(new Error(`no answer within 15 s to ${r.method} ${r.path.slice(0, 200)}`));
        });
        req.end(r.body);
    });
}
//# sourceMappingURL=http-fuzz.js.map