// Goal: the event type registry over real HTTP (issue 2 point 1, interface.md "EventType" and
// "Event type registry"): POST/GET/PUT/DELETE /event-types with every field rule, the 404/409/422
// answers, partition count from default_statistic, and the strategy registries.
// Method: one real broker (HTTP on a random port, RocksDB in a temp dir) for the whole file; each
// test uses its own event type names so tests do not depend on each other.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
let broker;
let base;
// A small maximum so the cap of default_statistic is observable without creating 100 partitions.
const partitionsMax = 12;
before(async () => {
    broker = await startTestBroker({ partitionsMax });
    base = `http://127.0.0.1:${broker.port}`;
});
after(async () => {
    await broker.destroy();
});
function jsonSchema(schema) {
    return { type: 'json_schema', schema: JSON.stringify(schema) };
}
const orderSchema = {
    type: 'object',
    properties: { order_number: { type: 'string' }, amount: { type: 'number' } },
    required: ['order_number'],
};
function undefinedEventType(name, over = {}) {
    return { name, owning_application: 'test-app', category: 'undefined', schema: jsonSchema({ type: 'object' }), ...over };
}
function dataEventType(name, over = {}) {
    return {
        name,
        owning_application: 'test-app',
        category: 'data',
        enrichment_strategies: ['metadata_enrichment'],
        schema: jsonSchema({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }),
        ...over,
    };
}
const statistic = (read, write) => ({
    messages_per_minute: 100,
    message_size: 500,
    read_parallelism: read,
    write_parallelism: write,
});
function assertProblem(r, status, detailIncludes) {
    assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text}`);
    assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const p = r.body;
    assert.equal(p['status'], status);
    assert.equal(p['type'], `http://httpstatus.es/${status}`);
    assert.equal(typeof p['title'], 'string');
    assert.equal(typeof p['detail'], 'string');
    if (detailIncludes !== undefined)
        assert.ok(p['detail'].includes(detailIncludes), `detail "${p['detail']}" lacks "${detailIncludes}"`);
}
async function create(body) {
    return call(base, 'POST', '/event-types', body);
}
async function createOk(body) {
    const r = await create(body);
    assert.equal(r.status, 201, r.text);
}
async function get(name) {
    const r = await call(base, 'GET', `/event-types/${name}`);
    assert.equal(r.status, 200, r.text);
    return r.body;
}
async function partitionCount(name) {
    const r = await call(base, 'GET', `/event-types/${name}/partitions`);
    assert.equal(r.status, 200, r.text);
    return r.body.length;
}
describe('POST /event-types and GET', () => {
    test('POST answers 201 with no body and GET returns the stored event type with its defaults', async () => {
        const r = await create(businessEventType('et.create.ok', { partition_strategy: undefined }));
        assert.equal(r.status, 201);
        assert.equal(r.text, '');
        const et = await get('et.create.ok');
        assert.equal(et['name'], 'et.create.ok');
        assert.equal(et['owning_application'], 'test-app');
        assert.equal(et['category'], 'business');
        assert.deepEqual(et['enrichment_strategies'], ['metadata_enrichment']);
        assert.equal(et['partition_strategy'], 'random', 'partition_strategy defaults to random');
        assert.equal(et['compatibility_mode'], 'forward', 'compatibility_mode defaults to forward');
        assert.deepEqual(et['options'], { retention_time: 345600000 }, 'retention_time defaults to 345600000');
        const schema = et['schema'];
        assert.equal(schema['type'], 'json_schema');
        assert.equal(schema['version'], '1.0.0');
        assert.equal(schema['schema'], JSON.stringify(orderSchema), 'the submitted schema text is served unchanged');
        assert.ok(!Number.isNaN(Date.parse(schema['created_at'])));
        assert.ok(!Number.isNaN(Date.parse(et['created_at'])), 'created_at is a date-time');
        assert.equal(et['updated_at'], et['created_at'], 'a new event type was last updated when created');
        assert.ok(!('partition_key_fields' in et));
    });
    test('GET /event-types lists every event type', async () => {
        await createOk(businessEventType('et.list.a'));
        await createOk(undefinedEventType('et.list.b'));
        const r = await call(base, 'GET', '/event-types');
        assert.equal(r.status, 200);
        assert.ok(Array.isArray(r.body));
        const names = r.body.map((e) => e['name']);
        assert.ok(names.includes('et.list.a') && names.includes('et.list.b'), JSON.stringify(names));
    });
    test('name: values matching the pattern are accepted', async () => {
        for (const name of ['a', 'Z', 'a1', 'a-b_c', 'order.placed', 'A.b-1.c_2', 'x-.y_']) {
            const r = await create(businessEventType(`${name}`));
            assert.equal(r.status, 201, `${name}: ${r.text}`);
            assert.equal((await get(name))['name'], name);
        }
    });
    test('name: values not matching [a-zA-Z][-0-9a-zA-Z_]*(\\.[a-zA-Z][-0-9a-zA-Z_]*)* get 422', async () => {
        for (const name of ['', '1abc', '-a', '_a', '.a', 'a.', 'a..b', 'a.1b', 'a.-b', 'a b', 'a/b', 'a:b', 'é', 'a.b.', 'a\nb']) {
            assertProblem(await create(businessEventType(name)), 422, 'name');
        }
    });
    test('name: missing or not a string gets 422', async () => {
        const missing = businessEventType('x');
        delete missing['name'];
        assertProblem(await create(missing), 422, 'name');
        assertProblem(await create(businessEventType('x', { name: 42 })), 422, 'name');
        assertProblem(await create(businessEventType('x', { name: ['a'] })), 422, 'name');
    });
    test('owning_application is required', async () => {
        const missing = businessEventType('et.owner.missing');
        delete missing['owning_application'];
        assertProblem(await create(missing), 422, 'owning_application');
        assertProblem(await create(businessEventType('et.owner.num', { owning_application: 7 })), 422, 'owning_application');
    });
    test('category is required and must be undefined, data or business', async () => {
        const missing = businessEventType('et.cat.missing');
        delete missing['category'];
        assertProblem(await create(missing), 422, 'category');
        assertProblem(await create(businessEventType('et.cat.bad', { category: 'Business' })), 422, 'category');
        assertProblem(await create(businessEventType('et.cat.bad2', { category: 'other' })), 422, 'category');
    });
    test('409 when the name exists', async () => {
        await createOk(businessEventType('et.dup'));
        assertProblem(await create(businessEventType('et.dup')), 409, 'et.dup');
        // Another category does not make the name free.
        assertProblem(await create(undefinedEventType('et.dup')), 409);
    });
    test('concurrent creations of one name: exactly one 201, the others 409', async () => {
        const answers = await Promise.all(Array.from({ length: 10 }, () => create(businessEventType('et.race'))));
        const statuses = answers.map((r) => r.status).sort();
        assert.deepEqual(statuses, [201, ...Array(9).fill(409)]);
    });
    test('unknown fields are ignored and not stored', async () => {
        await createOk(businessEventType('et.unknown.field', { color: 'blue' }));
        assert.ok(!('color' in (await get('et.unknown.field'))));
    });
});
describe('schema field on create', () => {
    test('schema is required', async () => {
        const missing = businessEventType('et.schema.missing');
        delete missing['schema'];
        assertProblem(await create(missing), 422, 'schema');
    });
    test('schema.type other than json_schema gets 422', async () => {
        for (const type of ['avro_schema', 'JSON_SCHEMA', undefined, 3]) {
            assertProblem(await create(businessEventType('et.schema.type', { schema: { type, schema: '{}' } })), 422, 'schema.type');
        }
    });
    test('schema.schema that is not valid JSON gets 422', async () => {
        assertProblem(await create(businessEventType('et.schema.json', { schema: { type: 'json_schema', schema: '{"type":' } })), 422, 'schema.schema');
        assertProblem(await create(businessEventType('et.schema.json', { schema: { type: 'json_schema', schema: { type: 'object' } } })), 422, 'schema.schema');
    });
    test('schema.schema that is not a valid draft-04 schema gets 422', async () => {
        for (const bad of [{ type: 5 }, { type: 'objekt' }, { properties: 3 }, { required: 'a' }, { minLength: -1 }]) {
            assertProblem(await create(undefinedEventType('et.schema.draft4', { schema: jsonSchema(bad) })), 422, 'schema.schema');
        }
    });
    test('schemas of another draft, unresolvable references or invalid patterns get 422', async () => {
        const cases = [
            { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
            { type: 'object', properties: { a: { $ref: 'http://example.com/remote.json' } } },
            { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } },
            { type: 'object', properties: { a: { type: 'string', pattern: '(' } } },
        ];
        for (const schema of cases) {
            assertProblem(await create(businessEventType('et.schema.invalid', { schema: jsonSchema(schema) })), 422, 'schema.schema');
        }
        await createOk(businessEventType('et.schema.draft4', { schema: jsonSchema({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }) }));
    });
    test('schema.version and schema.created_at sent on create are ignored: the registry sets 1.0.0', async () => {
        await createOk(businessEventType('et.schema.ro', {
            schema: { ...jsonSchema(orderSchema), version: '7.7.7', created_at: '2000-01-01T00:00:00Z' },
        }));
        const schema = (await get('et.schema.ro'))['schema'];
        assert.equal(schema['version'], '1.0.0');
        assert.notEqual(schema['created_at'], '2000-01-01T00:00:00Z');
    });
});
describe('category rules', () => {
    test('business: the submitted schema must not declare metadata (name conflict)', async () => {
        const schema = { type: 'object', properties: { metadata: { type: 'object' }, a: { type: 'string' } } };
        assertProblem(await create(businessEventType('et.biz.conflict', { schema: jsonSchema(schema) })), 422, 'metadata');
    });
    test('business: the schema must describe an object', async () => {
        assertProblem(await create(businessEventType('et.biz.array', { schema: jsonSchema({ type: 'array' }) })), 422, 'object');
    });
    test('data: the submitted schema must not declare metadata, data_op, data_type or data', async () => {
        for (const field of ['metadata', 'data_op', 'data_type', 'data']) {
            const schema = { type: 'object', properties: { [field]: { type: 'string' } } };
            assertProblem(await create(dataEventType(`et.data.conflict.${field}`, { schema: jsonSchema(schema) })), 422, field);
        }
    });
    test('undefined: the schema is free (it may declare metadata) and is stored as submitted', async () => {
        const schema = { type: 'object', properties: { metadata: { type: 'integer' } } };
        await createOk(undefinedEventType('et.undef.free', { schema: jsonSchema(schema) }));
        assert.equal((await get('et.undef.free'))['schema']['schema'], JSON.stringify(schema));
        // Not even an object schema is required.
        await createOk(undefinedEventType('et.undef.string', { schema: jsonSchema({ type: 'string' }) }));
    });
});
describe('enrichment_strategies rules', () => {
    test('business requires metadata_enrichment', async () => {
        assertProblem(await create(businessEventType('et.enr.biz.none', { enrichment_strategies: [] })), 422, 'enrichment_strategies');
        const absent = businessEventType('et.enr.biz.absent');
        delete absent['enrichment_strategies'];
        assertProblem(await create(absent), 422, 'enrichment_strategies');
    });
    test('data requires metadata_enrichment', async () => {
        assertProblem(await create(dataEventType('et.enr.data.none', { enrichment_strategies: [] })), 422, 'enrichment_strategies');
        await createOk(dataEventType('et.enr.data.ok'));
        assert.deepEqual((await get('et.enr.data.ok'))['enrichment_strategies'], ['metadata_enrichment']);
    });
    test('undefined does not allow metadata_enrichment', async () => {
        assertProblem(await create(undefinedEventType('et.enr.undef.md', { enrichment_strategies: ['metadata_enrichment'] })), 422, 'enrichment_strategies');
        await createOk(undefinedEventType('et.enr.undef.empty', { enrichment_strategies: [] }));
        assert.deepEqual((await get('et.enr.undef.empty'))['enrichment_strategies'], []);
    });
    test('unknown or malformed strategies get 422', async () => {
        assertProblem(await create(businessEventType('et.enr.unknown', { enrichment_strategies: ['metadata_enrichment', 'geo_enrichment'] })), 422, 'enrichment_strategies');
        assertProblem(await create(businessEventType('et.enr.string', { enrichment_strategies: 'metadata_enrichment' })), 422, 'enrichment_strategies');
    });
});
describe('partition strategies', () => {
    test('random, hash and user_defined are accepted and stored', async () => {
        await createOk(businessEventType('et.ps.random', { partition_strategy: 'random' }));
        await createOk(businessEventType('et.ps.user', { partition_strategy: 'user_defined' }));
        await createOk(businessEventType('et.ps.hash', { partition_strategy: 'hash', partition_key_fields: ['order_number'] }));
        assert.equal((await get('et.ps.random'))['partition_strategy'], 'random');
        assert.equal((await get('et.ps.user'))['partition_strategy'], 'user_defined');
        const hash = await get('et.ps.hash');
        assert.equal(hash['partition_strategy'], 'hash');
        assert.deepEqual(hash['partition_key_fields'], ['order_number']);
    });
    test('an unknown partition strategy gets 422', async () => {
        assertProblem(await create(businessEventType('et.ps.unknown', { partition_strategy: 'round_robin' })), 422, 'partition_strategy');
    });
    test('hash requires partition_key_fields', async () => {
        assertProblem(await create(businessEventType('et.ps.hash.nokeys', { partition_strategy: 'hash' })), 422, 'partition_key_fields');
        assertProblem(await create(businessEventType('et.ps.hash.empty', { partition_strategy: 'hash', partition_key_fields: [] })), 422, 'partition_key_fields');
    });
    test('partition_key_fields must be required fields of the schema', async () => {
        // amount is declared but optional; nope is not declared at all.
        for (const keys of [['amount'], ['nope'], ['order_number', 'amount'], [3], 'order_number']) {
            assertProblem(await create(businessEventType('et.ps.hash.badkey', { partition_strategy: 'hash', partition_key_fields: keys })), 422, 'partition_key_fields');
        }
    });
    test('partition_key_fields may be a dotted path through required objects', async () => {
        const schema = {
            type: 'object',
            properties: { customer: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
            required: ['customer'],
        };
        await createOk(businessEventType('et.ps.hash.nested', { schema: jsonSchema(schema), partition_strategy: 'hash', partition_key_fields: ['customer.id'] }));
        assertProblem(await create(businessEventType('et.ps.hash.nested2', { schema: jsonSchema(schema), partition_strategy: 'hash', partition_key_fields: ['customer.name'] })), 422, 'partition_key_fields');
    });
    test('partition_key_fields must be absent for random and user_defined', async () => {
        for (const strategy of ['random', 'user_defined']) {
            assertProblem(await create(businessEventType(`et.ps.${strategy}.keys`, { partition_strategy: strategy, partition_key_fields: ['order_number'] })), 422, 'partition_key_fields');
        }
    });
    test('data category: partition_key_fields are relative to data', async () => {
        await createOk(dataEventType('et.ps.data.hash', { partition_strategy: 'hash', partition_key_fields: ['id'] }));
        assertProblem(await create(dataEventType('et.ps.data.hash2', { partition_strategy: 'hash', partition_key_fields: ['data.id'] })), 422, 'partition_key_fields');
        assertProblem(await create(dataEventType('et.ps.data.hash3', { partition_strategy: 'hash', partition_key_fields: ['data_type'] })), 422, 'partition_key_fields');
    });
    test('GET /registry/partition-strategies lists random, user_defined and hash', async () => {
        const r = await call(base, 'GET', '/registry/partition-strategies');
        assert.equal(r.status, 200);
        assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual([...r.body].sort(), ['hash', 'random', 'user_defined']);
    });
    test('GET /registry/enrichment-strategies lists metadata_enrichment', async () => {
        const r = await call(base, 'GET', '/registry/enrichment-strategies');
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, ['metadata_enrichment']);
    });
});
describe('default_statistic and partitions', () => {
    test('without default_statistic an event type has 1 partition', async () => {
        await createOk(businessEventType('et.stat.absent'));
        assert.equal(await partitionCount('et.stat.absent'), 1);
        assert.ok(!('default_statistic' in (await get('et.stat.absent'))));
    });
    test('partition count is max(read_parallelism, write_parallelism)', async () => {
        await createOk(businessEventType('et.stat.read', { default_statistic: statistic(5, 2) }));
        await createOk(businessEventType('et.stat.write', { default_statistic: statistic(1, 3) }));
        assert.equal(await partitionCount('et.stat.read'), 5);
        assert.equal(await partitionCount('et.stat.write'), 3);
        assert.deepEqual((await get('et.stat.read'))['default_statistic'], statistic(5, 2));
        const ids = (await call(base, 'GET', '/event-types/et.stat.read/partitions')).body.map((p) => p['partition']);
        assert.deepEqual(ids, ['0', '1', '2', '3', '4']);
    });
    test('partition count is capped at the configured maximum', async () => {
        await createOk(businessEventType('et.stat.cap', { default_statistic: statistic(50, 40) }));
        assert.equal(await partitionCount('et.stat.cap'), partitionsMax);
    });
    test('default_statistic fields are required positive integers', async () => {
        const cases = [
            { messages_per_minute: 1, message_size: 1, read_parallelism: 1 },
            { ...statistic(0, 1) },
            { ...statistic(1, -2) },
            { ...statistic(1.5, 1) },
            { ...statistic(1, 1), message_size: '100' },
            [1, 2, 3, 4],
        ];
        for (const s of cases) {
            assertProblem(await create(businessEventType('et.stat.bad', { default_statistic: s })), 422, 'default_statistic');
        }
    });
    test('default_statistic cannot be changed by PUT; omitting it keeps it', async () => {
        const body = businessEventType('et.stat.immutable', { default_statistic: statistic(2, 2) });
        await createOk(body);
        assertProblem(await call(base, 'PUT', '/event-types/et.stat.immutable', { ...body, default_statistic: statistic(4, 4) }), 422, 'default_statistic');
        const omitted = { ...body };
        delete omitted['default_statistic'];
        assert.equal((await call(base, 'PUT', '/event-types/et.stat.immutable', omitted)).status, 200);
        assert.deepEqual((await get('et.stat.immutable'))['default_statistic'], statistic(2, 2));
        assert.equal(await partitionCount('et.stat.immutable'), 2);
    });
});
describe('options, authorization and scopes', () => {
    test('options.retention_time defaults to 345600000 and keeps a given value', async () => {
        await createOk(businessEventType('et.opt.default', { options: {} }));
        assert.deepEqual((await get('et.opt.default'))['options'], { retention_time: 345600000 });
        await createOk(businessEventType('et.opt.given', { options: { retention_time: 3_600_000 } }));
        assert.deepEqual((await get('et.opt.given'))['options'], { retention_time: 3_600_000 });
    });
    test('options.retention_time must be an integer within bounds', async () => {
        for (const retention_time of ['1000', 1.5, -1, 10 ** 15]) {
            assertProblem(await create(businessEventType('et.opt.bad', { options: { retention_time } })), 422, 'retention_time');
        }
        assertProblem(await create(businessEventType('et.opt.bad', { options: 'long' })), 422, 'options');
    });
    test('authorization is stored and served', async () => {
        const authorization = {
            admins: [{ data_type: 'user', value: 'alice' }],
            readers: [{ data_type: '*', value: '*' }],
            writers: [{ data_type: 'service', value: 'shop' }, { data_type: 'user', value: 'bob' }],
        };
        await createOk(businessEventType('et.auth.ok', { authorization }));
        assert.deepEqual((await get('et.auth.ok'))['authorization'], authorization);
    });
    test('authorization needs admins, readers and writers of {data_type, value} attributes', async () => {
        const attr = [{ data_type: 'user', value: 'alice' }];
        const cases = [
            { admins: attr, readers: attr },
            { admins: attr, readers: attr, writers: 'alice' },
            { admins: attr, readers: attr, writers: [{ data_type: 'user' }] },
            { admins: attr, readers: attr, writers: [{ data_type: '', value: 'x' }] },
            { admins: attr, readers: attr, writers: ['alice'] },
            [attr],
        ];
        for (const authorization of cases) {
            assertProblem(await create(businessEventType('et.auth.bad', { authorization })), 422, 'authorization');
        }
    });
    test('read_scopes and write_scopes are stored', async () => {
        await createOk(businessEventType('et.scopes', { read_scopes: ['svc.read', 'orders.read'], write_scopes: ['orders.write'] }));
        const et = await get('et.scopes');
        assert.deepEqual(et['read_scopes'], ['svc.read', 'orders.read']);
        assert.deepEqual(et['write_scopes'], ['orders.write']);
        assertProblem(await create(businessEventType('et.scopes.bad', { read_scopes: [1] })), 422, 'read_scopes');
        assertProblem(await create(businessEventType('et.scopes.bad', { write_scopes: 'x' })), 422, 'write_scopes');
    });
    test('compatibility_mode must be compatible, forward or none', async () => {
        for (const mode of ['compatible', 'forward', 'none']) {
            await createOk(businessEventType(`et.mode.${mode}`, { compatibility_mode: mode }));
            assert.equal((await get(`et.mode.${mode}`))['compatibility_mode'], mode);
        }
        assertProblem(await create(businessEventType('et.mode.bad', { compatibility_mode: 'fixed' })), 422, 'compatibility_mode');
    });
});
describe('PUT /event-types/{name}', () => {
    test('PUT answers 200 with no body, changes updated_at and keeps created_at', async () => {
        const body = businessEventType('et.put.ok');
        await createOk(body);
        const before = await get('et.put.ok');
        // Wait until the clock moved on so the new updated_at can differ.
        const start = Date.now();
        while (Date.now() <= start + 2)
            await new Promise((r) => setTimeout(r, 2));
        const r = await call(base, 'PUT', '/event-types/et.put.ok', { ...body, owning_application: 'other-app' });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.text, '');
        const afterPut = await get('et.put.ok');
        assert.equal(afterPut['owning_application'], 'other-app');
        assert.equal(afterPut['created_at'], before['created_at']);
        assert.ok(Date.parse(afterPut['updated_at']) > Date.parse(before['updated_at']), 'updated_at moved forward');
    });
    test('PUT with a different name gets 422', async () => {
        const body = businessEventType('et.put.rename');
        await createOk(body);
        assertProblem(await call(base, 'PUT', '/event-types/et.put.rename', { ...body, name: 'et.put.renamed' }), 422, 'name');
        const noName = { ...body };
        delete noName['name'];
        assertProblem(await call(base, 'PUT', '/event-types/et.put.rename', noName), 422, 'name');
        assert.equal((await call(base, 'GET', '/event-types/et.put.renamed')).status, 404);
    });
    test('PUT applies the field rules of create', async () => {
        const body = businessEventType('et.put.rules');
        await createOk(body);
        assertProblem(await call(base, 'PUT', '/event-types/et.put.rules', { ...body, enrichment_strategies: [] }), 422, 'enrichment_strategies');
        assertProblem(await call(base, 'PUT', '/event-types/et.put.rules', { ...body, owning_application: 5 }), 422, 'owning_application');
        assertProblem(await call(base, 'PUT', '/event-types/et.put.rules', { ...body, schema: { type: 'avro_schema', schema: '{}' } }), 422, 'schema.type');
        assertProblem(await call(base, 'PUT', '/event-types/et.put.rules', { ...body, options: { retention_time: 'x' } }), 422, 'retention_time');
    });
    test('PUT cannot change the category', async () => {
        const body = businessEventType('et.put.cat');
        await createOk(body);
        assertProblem(await call(base, 'PUT', '/event-types/et.put.cat', { ...body, category: 'undefined', enrichment_strategies: [] }), 422, 'category');
    });
    test('PUT stores new options, scopes and authorization but cannot remove authorization', async () => {
        const authorization = { admins: [{ data_type: 'user', value: 'a' }], readers: [{ data_type: 'user', value: 'b' }], writers: [{ data_type: 'user', value: 'c' }] };
        const body = businessEventType('et.put.auth', { authorization });
        await createOk(body);
        const changed = { ...authorization, readers: [{ data_type: '*', value: '*' }] };
        const put = await call(base, 'PUT', '/event-types/et.put.auth', { ...body, authorization: changed, options: { retention_time: 7_200_000 }, read_scopes: ['r'] });
        assert.equal(put.status, 200, put.text);
        const et = await get('et.put.auth');
        assert.deepEqual(et['authorization'], changed);
        assert.deepEqual(et['options'], { retention_time: 7_200_000 });
        assert.deepEqual(et['read_scopes'], ['r']);
        const removed = { ...body };
        delete removed['authorization'];
        assertProblem(await call(base, 'PUT', '/event-types/et.put.auth', removed), 422, 'authorization');
        assert.deepEqual((await get('et.put.auth'))['authorization'], changed);
    });
    test('PUT may change the partition strategy away from random only', async () => {
        const body = businessEventType('et.put.strategy');
        await createOk(body);
        const toHash = { ...body, partition_strategy: 'hash', partition_key_fields: ['order_number'] };
        assert.equal((await call(base, 'PUT', '/event-types/et.put.strategy', toHash)).status, 200);
        assert.equal((await get('et.put.strategy'))['partition_strategy'], 'hash');
        assertProblem(await call(base, 'PUT', '/event-types/et.put.strategy', { ...body, partition_strategy: 'random' }), 422, 'partition_strategy');
    });
    test('PUT with a malformed body gets 422 when it is not an object', async () => {
        await createOk(businessEventType('et.put.notobj'));
        assertProblem(await call(base, 'PUT', '/event-types/et.put.notobj', [1, 2]), 422);
        assertProblem(await call(base, 'PUT', '/event-types/et.put.notobj', '"text"'), 422);
    });
});
describe('404 for unknown names', () => {
    test('GET, PUT and DELETE of an unknown event type get 404', async () => {
        assertProblem(await call(base, 'GET', '/event-types/et.nope'), 404, 'et.nope');
        assertProblem(await call(base, 'PUT', '/event-types/et.nope', businessEventType('et.nope')), 404, 'et.nope');
        assertProblem(await call(base, 'DELETE', '/event-types/et.nope'), 404, 'et.nope');
    });
    test('sub-resources of an unknown event type get 404', async () => {
        for (const path of ['/partitions', '/partitions/0', '/schemas', '/schemas/latest', '/schemas/1.0.0']) {
            assertProblem(await call(base, 'GET', `/event-types/et.nope${path}`), 404);
        }
    });
});
describe('DELETE /event-types/{name}', () => {
    test('DELETE answers 200 with no body; the event type is gone from GET and the list', async () => {
        await createOk(businessEventType('et.delete.me'));
        const r = await call(base, 'DELETE', '/event-types/et.delete.me');
        assert.equal(r.status, 200, r.text);
        assert.equal(r.text, '');
        assertProblem(await call(base, 'GET', '/event-types/et.delete.me'), 404);
        const names = (await call(base, 'GET', '/event-types')).body.map((e) => e['name']);
        assert.ok(!names.includes('et.delete.me'));
        assertProblem(await call(base, 'DELETE', '/event-types/et.delete.me'), 404);
    });
    test('concurrent deletions of one name: exactly one 200, the others 404', async () => {
        await createOk(businessEventType('et.delete.race'));
        const answers = await Promise.all(Array.from({ length: 5 }, () => call(base, 'DELETE', '/event-types/et.delete.race')));
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, 404, 404, 404, 404]);
    });
    test('the stored registry survives a restart', async () => {
        await createOk(businessEventType('et.restart', { default_statistic: statistic(3, 1), read_scopes: ['r'] }));
        const before = await get('et.restart');
        broker = await broker.restart();
        base = `http://127.0.0.1:${broker.port}`;
        assert.deepEqual(await get('et.restart'), before);
        assert.equal(await partitionCount('et.restart'), 3);
    });
});
//# sourceMappingURL=event-types.http.test.js.map