// Goal: publishing over real HTTP (issue 2 point 2, interface.md "Publishing", "EventMetadata",
// "BatchItemResponse"): 200 with no body, metadata enrichment as read back from the log, whole-batch
// 422 with one BatchItemResponse per item for validation, enrichment and partitioning failures with
// nothing stored, the 999,000-byte limit on the submitted text, the partition strategies, the category
// and compatibility-mode validation rules, and X-Flow-Id.
// Method: one real broker for the file. Events are read back through the low-level stream from BEGIN
// (batch_limit=1, stream_limit = the number of stored events, so the stream ends by itself); "nothing
// stored" is checked on the partitions' newest offsets. The 207 answer (storage failure of some
// partitions) needs fault injection and is covered by src/publishing/publish.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, eid, readLines, startTestBroker, } from '../testing/broker-harness.js';
let broker;
let base;
before(async () => {
    broker = await startTestBroker();
    base = `http://127.0.0.1:${broker.port}`;
});
after(async () => {
    await broker.destroy();
});
function jsonSchema(schema) {
    return { type: 'json_schema', schema: JSON.stringify(schema) };
}
const statistic = (n) => ({ messages_per_minute: 100, message_size: 500, read_parallelism: n, write_parallelism: n });
async function createEventType(body) {
    const r = await call(base, 'POST', '/event-types', body);
    assert.equal(r.status, 201, r.text);
}
function publish(name, events, headers = {}) {
    return call(base, 'POST', `/event-types/${name}/events`, events, headers);
}
async function publishOk(name, events, headers = {}) {
    const r = await publish(name, events, headers);
    assert.equal(r.status, 200, r.text);
}
async function partitions(name) {
    const r = await call(base, 'GET', `/event-types/${name}/partitions`);
    assert.equal(r.status, 200, r.text);
    return r.body;
}
function offsetNumber(offset) {
    return Number(offset.slice(offset.lastIndexOf('-') + 1));
}
function storedCount(ps) {
    return ps.reduce((n, p) => n + (p.newest_available_offset === 'BEGIN' ? 0 : offsetNumber(p.newest_available_offset) - offsetNumber(p.oldest_available_offset) + 1), 0);
}
/** Every stored event of the event type with the partition its batch came from, per partition in log order. */
async function readAll(name) {
    const ps = await partitions(name);
    const total = storedCount(ps);
    if (total === 0)
        return [];
    const cursors = ps.map((p) => ({ partition: p.partition, offset: 'BEGIN' }));
    const res = await fetch(`${base}/event-types/${name}/events?batch_limit=1&stream_limit=${total}`, {
        headers: { 'X-Svc-Cursors': JSON.stringify(cursors) },
    });
    assert.equal(res.status, 200);
    const count = (lines) => lines.reduce((n, l) => n + (l['events']?.length ?? 0), 0);
    const lines = await readLines(res, (ls) => count(ls) >= total);
    const out = [];
    for (const line of lines) {
        for (const event of line.events ?? [])
            out.push({ partition: line.cursor.partition, event });
    }
    assert.equal(out.length, total);
    return out;
}
function metadataOf(event) {
    return event['metadata'];
}
function assertItems(r, expected) {
    assert.equal(r.status, 422, r.text);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    const items = r.body;
    assert.ok(Array.isArray(items), r.text);
    assert.equal(items.length, expected.length, r.text);
    expected.forEach((e, i) => {
        for (const [k, v] of Object.entries(e))
            assert.equal(items[i][k], v, `item ${i}.${k} in ${r.text}`);
        if (items[i].publishing_status === 'failed') {
            assert.equal(typeof items[i].detail, 'string', `item ${i} carries a detail`);
            assert.ok(items[i].detail.length > 0);
        }
        // Aborted items say nothing more than their status (a reply must not be many times the batch).
        if (items[i].publishing_status === 'aborted')
            assert.equal(items[i].detail, undefined, `item ${i} carries no detail`);
    });
    return items;
}
/** Java's String.hashCode, written independently of the broker's partitioner. */
function javaHash(s) {
    let h = 0;
    for (const unit of s.split('').map((c) => c.charCodeAt(0)))
        h = (h * 31 + unit) % 2 ** 32;
    return h >= 2 ** 31 ? h - 2 ** 32 : h;
}
describe('successful publishing and metadata enrichment', () => {
    const name = 'pub.enrich';
    before(async () => createEventType(businessEventType(name)));
    test('a valid batch gets 200 with an empty body', async () => {
        const r = await publish(name, [businessEvent('A-0')]);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.text, '');
    });
    test('an empty batch gets 200 and stores nothing', async () => {
        const empty = await createAndCount('pub.empty');
        await publishOk('pub.empty', []);
        assert.equal(await empty(), 0);
    });
    test('stored events carry event_type, received_at, version, flow_id and partition; producer fields unchanged', async () => {
        const ev = businessEvent('A-1', { amount: 12.5 });
        const md = ev['metadata'];
        md['parent_eids'] = ['00000000-0000-4000-8000-0000000000aa'];
        await createEventType(businessEventType('pub.enrich.one'));
        await publishOk('pub.enrich.one', [ev], { 'X-Flow-Id': 'flow-enrich-1' });
        const [stored] = await readAll('pub.enrich.one');
        assert.ok(stored);
        assert.equal(stored.event['order_number'], 'A-1');
        assert.equal(stored.event['amount'], 12.5);
        const m = metadataOf(stored.event);
        assert.equal(m['eid'], md['eid']);
        assert.equal(m['occurred_at'], '2026-11-22T10:00:00Z');
        assert.deepEqual(m['parent_eids'], ['00000000-0000-4000-8000-0000000000aa']);
        assert.equal(m['event_type'], 'pub.enrich.one');
        assert.equal(m['version'], '1.0.0');
        assert.equal(m['flow_id'], 'flow-enrich-1');
        assert.equal(m['partition'], stored.partition);
        assert.equal(typeof m['received_at'], 'string');
        assert.ok(!Number.isNaN(Date.parse(m['received_at'])), 'received_at is a date-time');
        assert.match(m['received_at'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
    });
    test('a producer flow_id is kept; a matching event_type is accepted', async () => {
        await createEventType(businessEventType('pub.enrich.keep'));
        const ev = businessEvent('A-2');
        Object.assign(ev['metadata'], { flow_id: 'producer-flow', event_type: 'pub.enrich.keep' });
        await publishOk('pub.enrich.keep', [ev], { 'X-Flow-Id': 'header-flow' });
        const m = metadataOf((await readAll('pub.enrich.keep'))[0].event);
        assert.equal(m['flow_id'], 'producer-flow');
        assert.equal(m['event_type'], 'pub.enrich.keep');
    });
    test('metadata.version is the schema version in force when the event was received', async () => {
        const body = businessEventType('pub.enrich.version');
        await createEventType(body);
        await publishOk('pub.enrich.version', [businessEvent('V-1')]);
        const schema = { type: 'object', properties: { order_number: { type: 'string' }, amount: { type: 'number' }, note: { type: 'string' } }, required: ['order_number'] };
        const put = await call(base, 'PUT', '/event-types/pub.enrich.version', { ...body, schema: jsonSchema(schema) });
        assert.equal(put.status, 200, put.text);
        await publishOk('pub.enrich.version', [businessEvent('V-2', { note: 'n' })]);
        const versions = (await readAll('pub.enrich.version')).map((s) => [s.event['order_number'], metadataOf(s.event)['version']]);
        assert.deepEqual(versions, [['V-1', '1.0.0'], ['V-2', '1.1.0']]);
    });
    test('events of one partition are stored in batch order', async () => {
        await createEventType(businessEventType('pub.order'));
        await publishOk('pub.order', [businessEvent('o1'), businessEvent('o2'), businessEvent('o3')]);
        await publishOk('pub.order', [businessEvent('o4')]);
        assert.deepEqual((await readAll('pub.order')).map((s) => s.event['order_number']), ['o1', 'o2', 'o3', 'o4']);
    });
    test('random spreads the events of a batch over the partitions', async () => {
        await createEventType(businessEventType('pub.random', { default_statistic: statistic(4) }));
        await publishOk('pub.random', Array.from({ length: 200 }, (_, i) => businessEvent(`r${i}`)));
        const ps = await partitions('pub.random');
        assert.equal(storedCount(ps), 200);
        // 200 events over 4 partitions: each is used (probability of an empty one is about 4 * 0.75^200).
        for (const p of ps)
            assert.notEqual(p.newest_available_offset, 'BEGIN', `partition ${p.partition} got no event`);
    });
});
/** Creates a business event type and returns a function counting its stored events. */
async function createAndCount(name, over = {}) {
    await createEventType(businessEventType(name, over));
    return async () => storedCount(await partitions(name));
}
describe('whole-batch 422 with one BatchItemResponse per item; nothing stored', () => {
    test('validation failure: the failing item is failed/validating, earlier ones aborted/validating, later ones aborted/none', async () => {
        const count = await createAndCount('pub.rejected.validate', { default_statistic: statistic(3) });
        await publishOk('pub.rejected.validate', [businessEvent('before')]);
        const before = await partitions('pub.rejected.validate');
        const batch = [businessEvent('a'), businessEvent('b', { order_number: 42 }), businessEvent('c')];
        const items = assertItems(await publish('pub.rejected.validate', batch), [
            { publishing_status: 'aborted', step: 'validating', eid: batch[0]['metadata']['eid'] },
            { publishing_status: 'failed', step: 'validating', eid: batch[1]['metadata']['eid'] },
            { publishing_status: 'aborted', step: 'none', eid: batch[2]['metadata']['eid'] },
        ]);
        assert.match(items[1].detail, /order_number/);
        assert.deepEqual(await partitions('pub.rejected.validate'), before, 'partition offsets unchanged');
        assert.equal(await count(), 1);
    });
    test('validation failures: missing required field, missing metadata, bad eid, bad occurred_at', async () => {
        const count = await createAndCount('pub.rejected.shapes');
        const noOrder = businessEvent('x');
        delete noOrder['order_number'];
        const cases = [
            [noOrder, /order_number/],
            [{ order_number: 'x' }, /metadata/],
            [businessEvent('x', { metadata: { eid: 'not-a-uuid', occurred_at: '2026-11-22T10:00:00Z' } }), /eid/],
            [businessEvent('x', { metadata: { eid: eid(), occurred_at: 'yesterday' } }), /occurred_at/],
            [businessEvent('x', { metadata: { occurred_at: '2026-11-22T10:00:00Z' } }), /eid/],
            [businessEvent('x', { metadata: 'md' }), /metadata/],
        ];
        for (const [bad, detail] of cases) {
            const items = assertItems(await publish('pub.rejected.shapes', [businessEvent('ok'), bad]), [
                { publishing_status: 'aborted', step: 'validating' },
                { publishing_status: 'failed', step: 'validating' },
            ]);
            assert.match(items[1].detail, detail, JSON.stringify(bad));
        }
        assert.equal(await count(), 0);
    });
    test('issue 10: an element that is not an object makes the batch 400 (a Problem, not one item per event), storing nothing', async () => {
        const count = await createAndCount('pub.rejected.nonobject');
        for (const [bad, what] of [['just a string', /element 1 is a string/], [[businessEvent('nested')], /element 1 is an array/], [null, /element 1 is null/], [7, /element 1 is a number/]]) {
            const r = await publish('pub.rejected.nonobject', [businessEvent('ok'), bad]);
            assert.equal(r.status, 400, r.text);
            assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
            assert.match(String(r.body['detail']), what);
        }
        // 200 KB of numbers: a short Problem, not 100,000 items (10 MB before).
        const numbers = '[' + Array(100_000).fill('1').join(',') + ']';
        const r = await call(base, 'POST', '/event-types/pub.rejected.nonobject/events', numbers);
        assert.equal(r.status, 400);
        assert.ok(r.text.length < 1000, `${r.text.length} bytes`);
        assert.equal(await count(), 0);
    });
    test('issue 10: a batch of 100,000 tiny invalid events gets one short item per event: aborted items carry no detail', async () => {
        const count = await createAndCount('pub.rejected.tiny');
        const body = '[' + Array(100_000).fill('{}').join(',') + ']';
        const r = await call(base, 'POST', '/event-types/pub.rejected.tiny/events', body);
        const items = r.body;
        assert.equal(r.status, 422);
        assert.equal(items.length, 100_000);
        assert.deepEqual(items[1], { publishing_status: 'aborted', step: 'none' });
        assert.match(items[0].detail ?? '', /metadata/);
        assert.ok(r.text.length <= 50 * 100_000, `${r.text.length} bytes for a body of ${body.length}`);
        assert.equal(await count(), 0);
    });
    test('issue 10: an event that repeats a key in any of its objects is refused at validating, naming the key; nothing is stored', async () => {
        const count = await createAndCount('pub.rejected.repeated');
        const good = JSON.stringify(businessEvent('ok'));
        const cases = [
            [good.replace('{', '{"order_number":"first",'), /#: "order_number"/],
            [good.replace('"metadata":{', '"metadata":{"occurred_at":"2026-01-01T00:00:00Z",'), /#\/metadata: "occurred_at"/],
            [good.replace('{', '{"x":{"a":1,"b":[{"c":1,"c":2}]},'), /#\/x\/b\/0: "c"/],
            [good.replace('{', '{"a":1,"\\u0061":2,'), /#: "a"/],
            [good.replace('"metadata":{', '"metadata":{}, "metadata":{'), /#: "metadata"/],
        ];
        for (const [text, key] of cases) {
            const r = await call(base, 'POST', '/event-types/pub.rejected.repeated/events', `[${good},${text}]`);
            const items = assertItems(r, [{ publishing_status: 'aborted', step: 'validating' }, { publishing_status: 'failed', step: 'validating' }]);
            assert.match(items[1].detail, /repeats a key/, text);
            assert.match(items[1].detail, key, text);
        }
        assert.equal(await count(), 0);
        // The same keys in different objects, or in an array, are no repetition.
        await publishOk('pub.rejected.repeated', [businessEvent('ok', { x: { order_number: 1, y: { order_number: 2 } }, z: [{ a: 1 }, { a: 2 }] })]);
        assert.equal(await count(), 1);
    });
    test('an item has no eid when the event has none', async () => {
        await createAndCount('pub.rejected.noeid');
        const items = assertItems(await publish('pub.rejected.noeid', [{ order_number: 'x', metadata: { occurred_at: '2026-11-22T10:00:00Z' } }]), [
            { publishing_status: 'failed', step: 'validating' },
        ]);
        assert.ok(!('eid' in items[0]));
    });
    test('enrichment failure: received_at sent by the producer', async () => {
        const count = await createAndCount('pub.rejected.received');
        const bad = businessEvent('b');
        bad['metadata']['received_at'] = '2026-11-22T10:00:00Z';
        const items = assertItems(await publish('pub.rejected.received', [businessEvent('a'), bad, businessEvent('c')]), [
            { publishing_status: 'aborted', step: 'enriching' },
            { publishing_status: 'failed', step: 'enriching' },
            { publishing_status: 'aborted', step: 'validating' },
        ]);
        assert.match(items[1].detail, /received_at/);
        assert.equal(await count(), 0);
    });
    test('enrichment failure: metadata.event_type differs from the endpoint', async () => {
        const count = await createAndCount('pub.rejected.type');
        const bad = businessEvent('b');
        bad['metadata']['event_type'] = 'some.other.type';
        const items = assertItems(await publish('pub.rejected.type', [bad, businessEvent('c')]), [
            { publishing_status: 'failed', step: 'enriching', eid: bad['metadata']['eid'] },
            { publishing_status: 'aborted', step: 'validating' },
        ]);
        assert.match(items[0].detail, /event_type/);
        assert.equal(await count(), 0);
    });
    test('enrichment failure: metadata.version sent by the producer', async () => {
        const count = await createAndCount('pub.rejected.version');
        const bad = businessEvent('b');
        bad['metadata']['version'] = '1.0.0';
        assertItems(await publish('pub.rejected.version', [bad]), [{ publishing_status: 'failed', step: 'enriching' }]);
        assert.equal(await count(), 0);
    });
    test('a validation failure wins over an enrichment failure earlier in the batch', async () => {
        await createAndCount('pub.rejected.order');
        const enrichBad = businessEvent('a');
        enrichBad['metadata']['received_at'] = '2026-11-22T10:00:00Z';
        assertItems(await publish('pub.rejected.order', [enrichBad, businessEvent('b', { amount: 'lots' })]), [
            { publishing_status: 'aborted', step: 'validating' },
            { publishing_status: 'failed', step: 'validating' },
        ]);
    });
});
describe('user_defined partitioning', () => {
    const name = 'pub.user';
    before(async () => createEventType(businessEventType(name, { partition_strategy: 'user_defined', default_statistic: statistic(3) })));
    const withPartition = (order, partition) => {
        const ev = businessEvent(order);
        if (partition !== undefined)
            ev['metadata']['partition'] = partition;
        return ev;
    };
    test('each event goes to the partition it names', async () => {
        await publishOk(name, [withPartition('u2', '2'), withPartition('u0', '0'), withPartition('u2b', '2')]);
        const stored = await readAll(name);
        assert.deepEqual(stored.map((s) => [s.partition, s.event['order_number'], metadataOf(s.event)['partition']]), [['0', 'u0', '0'], ['2', 'u2', '2'], ['2', 'u2b', '2']]);
    });
    test('a missing partition fails the batch at step partitioning; nothing stored', async () => {
        const before = await partitions(name);
        const items = assertItems(await publish(name, [withPartition('a', '1'), withPartition('b', undefined), withPartition('c', '1')]), [
            { publishing_status: 'aborted', step: 'partitioning' },
            { publishing_status: 'failed', step: 'partitioning' },
            { publishing_status: 'aborted', step: 'enriching' },
        ]);
        assert.match(items[1].detail, /partition/);
        assert.deepEqual(await partitions(name), before);
    });
    test('an unknown partition fails the batch at step partitioning; nothing stored', async () => {
        const before = await partitions(name);
        for (const p of ['3', '99', '-1', '00']) {
            const items = assertItems(await publish(name, [withPartition('a', '0'), withPartition('b', p)]), [
                { publishing_status: 'aborted', step: 'partitioning' },
                { publishing_status: 'failed', step: 'partitioning' },
            ]);
            assert.match(items[1].detail, /partition/);
        }
        // A partition of the wrong type is already a schema violation (metadata.partition is a string).
        assertItems(await publish(name, [withPartition('a', 1)]), [{ publishing_status: 'failed', step: 'validating' }]);
        assert.deepEqual(await partitions(name), before);
    });
});
describe('hash partitioning', () => {
    const name = 'pub.hash';
    const count = 4;
    before(async () => createEventType(businessEventType(name, { partition_strategy: 'hash', partition_key_fields: ['order_number'], default_statistic: statistic(count) })));
    test('equal keys go to the same partition across batches, following Java String.hashCode', async () => {
        const keys = ['A-1', 'B-22', 'customer-333', 'zz', 'Ünïcødé', 'k'];
        await publishOk(name, keys.map((k) => businessEvent(k)));
        await publishOk(name, keys.map((k) => businessEvent(k)));
        await publishOk(name, [businessEvent('A-1'), businessEvent('zz')]);
        const stored = await readAll(name);
        const partitionOf = new Map();
        for (const s of stored) {
            const key = s.event['order_number'];
            if (!partitionOf.has(key))
                partitionOf.set(key, new Set());
            partitionOf.get(key).add(s.partition);
            assert.equal(metadataOf(s.event)['partition'], s.partition);
        }
        for (const key of keys) {
            const ps = [...partitionOf.get(key)];
            assert.equal(ps.length, 1, `key ${key} went to partitions ${ps}`);
            assert.equal(ps[0], String(Math.abs(javaHash(key)) % count), `key ${key}`);
        }
        assert.equal(stored.length, keys.length * 2 + 2);
    });
    test('a missing key field fails the batch at step partitioning (category undefined, where no schema check runs first)', async () => {
        await createEventType({
            name: 'pub.hash.undef',
            owning_application: 'test-app',
            category: 'undefined',
            partition_strategy: 'hash',
            partition_key_fields: ['k'],
            default_statistic: statistic(count),
            schema: jsonSchema({ type: 'object', properties: { k: { type: 'string' } }, required: ['k'] }),
        });
        const items = assertItems(await publish('pub.hash.undef', [{ k: 'a' }, { j: 'b' }, { k: 'c' }]), [
            { publishing_status: 'aborted', step: 'partitioning' },
            { publishing_status: 'failed', step: 'partitioning' },
            { publishing_status: 'aborted', step: 'enriching' },
        ]);
        assert.match(items[1].detail, /"k"/);
        assert.equal(storedCount(await partitions('pub.hash.undef')), 0);
        await publishOk('pub.hash.undef', [{ k: 'a' }, { k: 'a', other: 1 }]);
        const stored = await readAll('pub.hash.undef');
        assert.deepEqual(stored.map((s) => s.partition), [String(Math.abs(javaHash('a')) % count), String(Math.abs(javaHash('a')) % count)]);
        assert.ok(!('metadata' in stored[0].event), 'category undefined is not enriched');
    });
    test('data category hashes a key inside data', async () => {
        await createEventType({
            name: 'pub.hash.data',
            owning_application: 'test-app',
            category: 'data',
            enrichment_strategies: ['metadata_enrichment'],
            partition_strategy: 'hash',
            partition_key_fields: ['id'],
            default_statistic: statistic(count),
            schema: jsonSchema({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }),
        });
        const ev = (id) => ({ metadata: { eid: eid(), occurred_at: '2026-11-22T10:00:00Z' }, data_op: 'C', data_type: 'order', data: { id } });
        await publishOk('pub.hash.data', [ev('k1'), ev('k2'), ev('k1')]);
        for (const s of await readAll('pub.hash.data')) {
            const id = s.event['data']['id'];
            assert.equal(s.partition, String(Math.abs(javaHash(id)) % count), `id ${id}`);
        }
    });
});
describe('the 999,000-byte limit per event, measured on the submitted text', () => {
    const name = 'pub.size';
    let count;
    before(async () => {
        count = await createAndCount(name, { schema: jsonSchema({ type: 'object', properties: { order_number: { type: 'string' }, pad: { type: 'string' } }, required: ['order_number'] }) });
    });
    /** The JSON text of an event padded to exactly `bytes` bytes with `fill` in a string or whitespace. */
    function eventText(bytes, how) {
        const ev = businessEvent('big', { pad: '' });
        const text = JSON.stringify(ev);
        const missing = bytes - Buffer.byteLength(text);
        assert.ok(missing >= 0);
        if (how === 'whitespace')
            return text.slice(0, -1) + ' '.repeat(missing) + '}';
        if (how === 'string')
            return text.replace('"pad":""', `"pad":"${'x'.repeat(missing)}"`);
        // 'é' is 2 bytes: an event of fewer characters than the limit but more bytes.
        assert.equal(missing % 2, 0);
        return text.replace('"pad":""', `"pad":"${'é'.repeat(missing / 2)}"`);
    }
    test('an event of exactly 999,000 bytes is accepted', async () => {
        const before = await count();
        await publishOk(name, `[${eventText(999_000, 'string')}]`);
        assert.equal(await count(), before + 1);
    });
    test('an event of 999,001 bytes fails validation; nothing stored', async () => {
        const before = await count();
        const items = assertItems(await publish(name, `[${JSON.stringify(businessEvent('small'))},${eventText(999_001, 'string')}]`), [
            { publishing_status: 'aborted', step: 'validating' },
            { publishing_status: 'failed', step: 'validating' },
        ]);
        assert.match(items[1].detail, /999000|999,000|too large/);
        assert.equal(await count(), before);
    });
    test('whitespace inside the submitted event counts', async () => {
        const before = await count();
        const text = eventText(999_001, 'whitespace');
        assert.ok(JSON.stringify(JSON.parse(text)).length < 1000, 'the parsed event is small');
        assertItems(await publish(name, `[${text}]`), [{ publishing_status: 'failed', step: 'validating' }]);
        assert.equal(await count(), before);
    });
    test('the size is in bytes, not characters', async () => {
        const before = await count();
        const text = eventText(999_100, 'multibyte');
        assert.ok(text.length < 999_000, 'fewer characters than the limit');
        assertItems(await publish(name, `[${text}]`), [{ publishing_status: 'failed', step: 'validating' }]);
        assert.equal(await count(), before);
    });
    test('a batch larger than 999,000 bytes of small events is accepted', async () => {
        const before = await count();
        const events = Array.from({ length: 12 }, () => JSON.parse(eventText(100_000, 'string')));
        await publishOk(name, events);
        assert.equal(await count(), before + 12);
    });
});
describe('validation per category and compatibility mode', () => {
    test('category undefined: events are not validated against the schema and not enriched', async () => {
        await createEventType({
            name: 'pub.undef',
            owning_application: 'test-app',
            category: 'undefined',
            schema: jsonSchema({ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false }),
        });
        const events = [{ b: 'no a at all' }, { a: 'not an integer', metadata: 7 }, {}];
        await publishOk('pub.undef', events);
        assert.deepEqual((await readAll('pub.undef')).map((s) => s.event), events, 'stored exactly as sent');
    });
    test('category undefined: an event must still be a JSON object', async () => {
        await createEventType({ name: 'pub.undef.obj', owning_application: 'test-app', category: 'undefined', schema: jsonSchema({}) });
        const r = await publish('pub.undef.obj', [{}, 5]);
        assert.equal(r.status, 400, r.text);
        assert.match(String(r.body['detail']), /element 1 is a number/);
    });
    test('category data: data_op, data_type and data are validated; the schema applies to data', async () => {
        const name = 'pub.data';
        await createEventType({
            name,
            owning_application: 'test-app',
            category: 'data',
            enrichment_strategies: ['metadata_enrichment'],
            schema: jsonSchema({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }),
        });
        const ev = (over = {}) => ({ metadata: { eid: eid(), occurred_at: '2026-11-22T10:00:00Z' }, data_op: 'U', data_type: 'order', data: { id: 'o-1' }, ...over });
        for (const op of ['C', 'U', 'D', 'S'])
            await publishOk(name, [ev({ data_op: op })]);
        const stored = await readAll(name);
        assert.deepEqual(stored.map((s) => s.event['data_op']), ['C', 'U', 'D', 'S']);
        assert.equal(metadataOf(stored[0].event)['event_type'], name, 'data change events are enriched');
        const noType = ev();
        delete noType['data_type'];
        const noData = ev();
        delete noData['data'];
        const bad = [
            [ev({ data_op: 'X' }), /data_op/],
            [ev({ data_op: 'c' }), /data_op/],
            [noType, /data_type/],
            [ev({ data_type: 5 }), /data_type/],
            [noData, /data/],
            [ev({ data: { id: 5 } }), /data\/id/],
            [ev({ data: {} }), /data\/id/],
            [{ data_op: 'C', data_type: 'order', data: { id: 'x' } }, /metadata/],
        ];
        for (const [event, detail] of bad) {
            const items = assertItems(await publish(name, [event]), [{ publishing_status: 'failed', step: 'validating' }]);
            assert.match(items[0].detail, detail, JSON.stringify(event));
        }
        assert.equal((await readAll(name)).length, 4);
    });
    test('compatible mode rejects undeclared properties, also inside declared objects and metadata', async () => {
        const schema = { type: 'object', properties: { order_number: { type: 'string' }, customer: { type: 'object', properties: { id: { type: 'string' } } } }, required: ['order_number'] };
        await createEventType(businessEventType('pub.mode.compatible', { compatibility_mode: 'compatible', schema: jsonSchema(schema) }));
        await publishOk('pub.mode.compatible', [businessEvent('ok', { customer: { id: 'c' } })]);
        const undeclaredMd = businessEvent('md');
        undeclaredMd['metadata']['color'] = 'red';
        for (const event of [businessEvent('x', { extra: 1 }), businessEvent('y', { customer: { id: 'c', name: 'n' } }), undeclaredMd]) {
            const items = assertItems(await publish('pub.mode.compatible', [event]), [{ publishing_status: 'failed', step: 'validating' }]);
            assert.match(items[0].detail, /not declared|additional/);
        }
        assert.equal((await readAll('pub.mode.compatible')).length, 1);
    });
    test('a number beyond the double range fails a declared number or integer field instead of being stored as null', async () => {
        const name = 'pub.infinity';
        const schema = { type: 'object', properties: { order_number: { type: 'string' }, amount: { type: 'number' }, count: { type: 'integer' } }, required: ['order_number'] };
        await createEventType(businessEventType(name, { schema: jsonSchema(schema) }));
        const md = JSON.stringify({ eid: eid(), occurred_at: '2026-11-22T10:00:00Z' });
        for (const field of ['"amount":1e400', '"amount":-1e400', '"count":1e400']) {
            const items = assertItems(await publish(name, `[{"order_number":"x",${field},"metadata":${md}}]`), [{ publishing_status: 'failed', step: 'validating' }]);
            assert.match(items[0].detail, /amount|count/);
        }
        await publishOk(name, `[{"order_number":"x","amount":1e300,"metadata":${md}}]`);
        assert.deepEqual((await readAll(name)).map((s) => s.event['amount']), [1e300]);
    });
    test('forward mode accepts undeclared properties and stores them', async () => {
        await createEventType(businessEventType('pub.mode.forward', { compatibility_mode: 'forward' }));
        await publishOk('pub.mode.forward', [businessEvent('f', { extra: { nested: true } })]);
        const [stored] = await readAll('pub.mode.forward');
        assert.deepEqual(stored.event['extra'], { nested: true });
    });
    test('none mode rejects undeclared properties unless the schema allows them', async () => {
        await createEventType(businessEventType('pub.mode.none', { compatibility_mode: 'none' }));
        assertItems(await publish('pub.mode.none', [businessEvent('n', { extra: 1 })]), [{ publishing_status: 'failed', step: 'validating' }]);
        const open = { type: 'object', properties: { order_number: { type: 'string' } }, required: ['order_number'], additionalProperties: true };
        await createEventType(businessEventType('pub.mode.none.open', { compatibility_mode: 'none', schema: jsonSchema(open) }));
        await publishOk('pub.mode.none.open', [businessEvent('n', { extra: 1 })]);
        assert.equal((await readAll('pub.mode.none.open')).length, 1);
        assert.equal((await readAll('pub.mode.none')).length, 0);
    });
});
describe('X-Flow-Id', () => {
    const name = 'pub.flow';
    before(async () => createEventType(businessEventType(name)));
    test('echoed on 200, 422, 400 and 404 answers', async () => {
        const ok = await publish(name, [businessEvent('f')], { 'X-Flow-Id': 'flow-ok' });
        assert.equal(ok.status, 200);
        assert.equal(ok.headers.get('x-flow-id'), 'flow-ok');
        const invalid = await publish(name, [{}], { 'X-Flow-Id': 'flow-422' });
        assert.equal(invalid.status, 422);
        assert.equal(invalid.headers.get('x-flow-id'), 'flow-422');
        const malformed = await publish(name, '[{', { 'X-Flow-Id': 'flow-400' });
        assert.equal(malformed.status, 400);
        assert.equal(malformed.headers.get('x-flow-id'), 'flow-400');
        const unknown = await publish('pub.flow.none', [businessEvent('f')], { 'X-Flow-Id': 'flow-404' });
        assert.equal(unknown.status, 404);
        assert.equal(unknown.headers.get('x-flow-id'), 'flow-404');
        const get = await call(base, 'GET', `/event-types/${name}`, undefined, { 'X-Flow-Id': 'flow-get' });
        assert.equal(get.headers.get('x-flow-id'), 'flow-get');
    });
    test('generated (24 alphanumerics) when absent, different per request, and written to metadata.flow_id', async () => {
        await createEventType(businessEventType('pub.flow.gen'));
        const r1 = await publish('pub.flow.gen', [businessEvent('g1')]);
        const r2 = await publish('pub.flow.gen', [businessEvent('g2')]);
        const f1 = r1.headers.get('x-flow-id');
        const f2 = r2.headers.get('x-flow-id');
        assert.match(f1 ?? '', /^[A-Za-z0-9]{24}$/);
        assert.match(f2 ?? '', /^[A-Za-z0-9]{24}$/);
        assert.notEqual(f1, f2);
        const stored = await readAll('pub.flow.gen');
        assert.deepEqual(stored.map((s) => metadataOf(s.event)['flow_id']), [f1, f2]);
        const err = await call(base, 'GET', '/event-types/pub.flow.missing');
        assert.match(err.headers.get('x-flow-id') ?? '', /^[A-Za-z0-9]{24}$/);
    });
    test('publishing to an unknown event type gets a 404 Problem', async () => {
        const r = await publish('pub.unknown', [businessEvent('x')]);
        assert.equal(r.status, 404);
        assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.equal(r.body['status'], 404);
    });
});
//# sourceMappingURL=publishing.http.test.js.map