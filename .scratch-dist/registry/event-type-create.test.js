/**
 * Goal: every field rule of POST /event-types (interface "EventType" and its sub-objects, plus
 * compatibility.md's partition count) holds: each rule has a failing case answered with Problem 422
 * naming the field, and a passing case. Method: table-free, one test per rule, on validateEventTypeCreate
 * with the fixtures of registry-fixtures.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validateEventTypeCreate } from './index.js';
import { assertProblem, createBody, createdAt, opts, orderSchema, schemaField } from './registry-fixtures.js';
const create = (body) => validateEventTypeCreate(body, opts, createdAt);
describe('POST /event-types defaults', () => {
    test('defaults are filled: random, forward, retention default, version 1.0.0, times from the caller', () => {
        const { eventType, partitionCount } = create(createBody());
        assert.equal(eventType.partition_strategy, 'random');
        assert.equal(eventType.compatibility_mode, 'forward');
        assert.deepEqual(eventType.options, { retention_time: opts.retentionTimeMsDefault });
        assert.equal(eventType.schema.version, '1.0.0');
        assert.equal(eventType.schema.created_at, createdAt);
        assert.equal(eventType.created_at, createdAt);
        assert.equal(eventType.updated_at, createdAt);
        assert.equal(partitionCount, opts.partitionsDefault);
        assert.equal(eventType.partition_key_fields, undefined);
        assert.ok(!('authorization' in eventType), 'absent optional fields are left out');
    });
    test('enrichment_strategies defaults to [] for category undefined', () => {
        const { eventType } = create(createBody({ category: 'undefined', enrichment_strategies: undefined }));
        assert.deepEqual(eventType.enrichment_strategies, []);
    });
    test('the schema text is stored exactly as sent', () => {
        const text = '{ "type" : "object",\n "properties": {"a": {"type":"string"}} }';
        const { eventType } = create(createBody({ schema: { type: 'json_schema', schema: text } }));
        assert.equal(eventType.schema.schema, text);
    });
    test('unknown fields are ignored and not stored', () => {
        const { eventType } = create(createBody({ cleanup_policy: 'delete', audience: 'x' }));
        assert.ok(!('cleanup_policy' in eventType));
        assert.ok(!('audience' in eventType));
    });
    test('the body must be a JSON object', () => {
        for (const body of [null, [], 'x', 3])
            assertProblem(() => create(body), 422, /must be a JSON object/);
    });
});
describe('name', () => {
    test('name matches [a-zA-Z][-0-9a-zA-Z_]*(\\.[a-zA-Z][-0-9a-zA-Z_]*)*', () => {
        for (const name of ['a', 'order', 'A.b-c_d', 'shop.order-created.v2', 'x1.y2.z3']) {
            assert.equal(create(createBody({ name })).eventType.name, name);
        }
    });
    test('a name not matching the pattern is refused', () => {
        for (const name of ['', '1abc', '-a', 'a..b', 'a.', '.a', 'a b', 'a.1b', 'a/b', 'ä']) {
            assertProblem(() => create(createBody({ name })), 422, /Field "name" must match pattern/);
        }
    });
    test('name is required and a string', () => {
        assertProblem(() => create(createBody({ name: undefined })), 422, /Field "name" is required/);
        assertProblem(() => create(createBody({ name: 42 })), 422, /Field "name" must be a string/);
    });
    test('name length is bounded', () => {
        assert.ok(create(createBody({ name: 'a'.repeat(255) })));
        assertProblem(() => create(createBody({ name: 'a'.repeat(256) })), 422, /Field "name" must be at most 255/);
    });
});
describe('owning_application and category', () => {
    test('owning_application is required and non-empty', () => {
        assertProblem(() => create(createBody({ owning_application: undefined })), 422, /"owning_application" is required/);
        assertProblem(() => create(createBody({ owning_application: '' })), 422, /"owning_application" must not be empty/);
        assertProblem(() => create(createBody({ owning_application: 1 })), 422, /"owning_application" must be a string/);
    });
    test('category is one of undefined, data, business', () => {
        assertProblem(() => create(createBody({ category: undefined })), 422, /"category" is required/);
        assertProblem(() => create(createBody({ category: 'BUSINESS' })), 422, /"category" must be one of/);
        assert.equal(create(createBody({ category: 'data' })).eventType.category, 'data');
    });
});
describe('enrichment_strategies', () => {
    test('metadata_enrichment is mandatory for business and data', () => {
        for (const category of ['business', 'data']) {
            assertProblem(() => create(createBody({ category, enrichment_strategies: [] })), 422, /"enrichment_strategies" must contain metadata_enrichment/);
            assertProblem(() => create(createBody({ category, enrichment_strategies: undefined })), 422, /"enrichment_strategies" must contain metadata_enrichment/);
        }
    });
    test('metadata_enrichment is not allowed for undefined', () => {
        assertProblem(() => create(createBody({ category: 'undefined' })), 422, /"enrichment_strategies" must not contain metadata_enrichment/);
    });
    test('unknown, repeated or non-array strategies are refused', () => {
        assertProblem(() => create(createBody({ enrichment_strategies: ['x'] })), 422, /"enrichment_strategies" must be one of/);
        assertProblem(() => create(createBody({ enrichment_strategies: ['metadata_enrichment', 'metadata_enrichment'] })), 422, /must not repeat/);
        assertProblem(() => create(createBody({ enrichment_strategies: 'metadata_enrichment' })), 422, /must be an array/);
    });
});
describe('partition_strategy and partition_key_fields', () => {
    test('partition_strategy is one of the registry strategies', () => {
        for (const s of ['random', 'user_defined'])
            assert.equal(create(createBody({ partition_strategy: s })).eventType.partition_strategy, s);
        assertProblem(() => create(createBody({ partition_strategy: 'round_robin' })), 422, /"partition_strategy" must be one of/);
    });
    test('partition_key_fields is required for hash', () => {
        assertProblem(() => create(createBody({ partition_strategy: 'hash' })), 422, /"partition_key_fields" is required/);
        assertProblem(() => create(createBody({ partition_strategy: 'hash', partition_key_fields: [] })), 422, /is required/);
        const ok = create(createBody({ partition_strategy: 'hash', partition_key_fields: ['order_number'] }));
        assert.deepEqual(ok.eventType.partition_key_fields, ['order_number']);
    });
    test('partition_key_fields is absent for other strategies (an empty list counts as absent)', () => {
        for (const s of ['random', 'user_defined']) {
            assertProblem(() => create(createBody({ partition_strategy: s, partition_key_fields: ['order_number'] })), 422, /"partition_key_fields" must be absent/);
            assert.equal(create(createBody({ partition_strategy: s, partition_key_fields: [] })).eventType.partition_key_fields, undefined);
        }
    });
    test('each key field must be a required field of the schema', () => {
        const hash = (fields) => create(createBody({ partition_strategy: 'hash', partition_key_fields: fields }));
        assertProblem(() => hash(['amount']), 422, /entry "amount" must be a required field/); // declared, optional
        assertProblem(() => hash(['nope']), 422, /entry "nope" must be a required field/); // undeclared
        assertProblem(() => hash([7]), 422, /non-empty strings/);
        assertProblem(() => hash('order_number'), 422, /must be an array/);
    });
    test('dotted key fields descend into required nested properties', () => {
        const ok = create(createBody({ partition_strategy: 'hash', partition_key_fields: ['customer.id'] }));
        assert.deepEqual(ok.eventType.partition_key_fields, ['customer.id']);
        assertProblem(() => create(createBody({ partition_strategy: 'hash', partition_key_fields: ['customer.email'] })), 422, /"customer.email" must be a required field/);
    });
    test('key fields are found through local $ref and allOf', () => {
        const schema = {
            definitions: { customer: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
            allOf: [{ properties: { customer: { $ref: '#/definitions/customer' } }, required: ['customer'] }],
        };
        const ok = create(createBody({ schema: schemaField(schema), partition_strategy: 'hash', partition_key_fields: ['customer.id'] }));
        assert.deepEqual(ok.eventType.partition_key_fields, ['customer.id']);
    });
    test('for category data key fields are relative to data', () => {
        const body = { category: 'data', partition_strategy: 'hash' };
        assert.ok(create(createBody({ ...body, partition_key_fields: ['order_number'] })));
        assertProblem(() => create(createBody({ ...body, partition_key_fields: ['data.order_number'] })), 422, /must be a required field/);
        assertProblem(() => create(createBody({ ...body, partition_key_fields: ['data_type'] })), 422, /must be a required field/);
    });
});
describe('compatibility_mode', () => {
    test('compatibility_mode is compatible, forward or none', () => {
        for (const m of ['compatible', 'forward', 'none'])
            assert.equal(create(createBody({ compatibility_mode: m })).eventType.compatibility_mode, m);
        assertProblem(() => create(createBody({ compatibility_mode: 'backward' })), 422, /"compatibility_mode" must be one of/);
    });
    test('compatible mode refuses not, patternProperties, additionalProperties and additionalItems anywhere', () => {
        const nested = (keyword, value) => ({
            type: 'object',
            properties: { a: { type: 'object', properties: { b: { type: 'array', items: { type: 'object', [keyword]: value } } } } },
        });
        const cases = [
            ['not', { type: 'string' }],
            ['patternProperties', { '^x': { type: 'string' } }],
            ['additionalProperties', false],
            ['additionalItems', false],
        ];
        for (const [keyword, value] of cases) {
            for (const schema of [{ type: 'object', [keyword]: value }, nested(keyword, value)]) {
                assertProblem(() => create(createBody({ compatibility_mode: 'compatible', schema: schemaField(schema) })), 422, new RegExp(`uses "${keyword}" at #.*compatible does not support`));
                assert.ok(create(createBody({ compatibility_mode: 'forward', schema: schemaField(schema) })), `forward allows ${keyword}`);
            }
        }
    });
    test('compatible mode accepts properties merely named like the forbidden keywords', () => {
        const schema = { type: 'object', properties: { not: { type: 'string' }, additionalProperties: { type: 'number' } } };
        assert.ok(create(createBody({ compatibility_mode: 'compatible', schema: schemaField(schema) })));
    });
});
describe('schema', () => {
    test('schema is required and schema.type must be json_schema', () => {
        assertProblem(() => create(createBody({ schema: undefined })), 422, /Field "schema" is required/);
        assertProblem(() => create(createBody({ schema: 'x' })), 422, /Field "schema" must be an object/);
        assertProblem(() => create(createBody({ schema: { type: 'avro_schema', schema: '{}' } })), 422, /Field "schema.type" must be json_schema/);
    });
    test('schema.schema must be a string holding a JSON object', () => {
        assertProblem(() => create(createBody({ schema: { type: 'json_schema', schema: {} } })), 422, /"schema.schema" must be a string/);
        assertProblem(() => create(createBody({ schema: { type: 'json_schema' } })), 422, /"schema.schema" is required/);
        assertProblem(() => create(createBody({ schema: { type: 'json_schema', schema: '{"type":' } })), 422, /"schema.schema" must be valid JSON/);
        for (const text of ['[]', 'true', '"s"', 'null']) {
            assertProblem(() => create(createBody({ schema: { type: 'json_schema', schema: text } })), 422, /must be a JSON object/);
        }
    });
    test('schema.schema must be a valid draft-04 schema', () => {
        const bad = [{ type: 'objectx' }, { properties: { a: { $ref: '#/definitions/missing' } } }, { required: 'a' }, { minLength: -1 }];
        for (const schema of bad) {
            assertProblem(() => create(createBody({ schema: schemaField(schema) })), 422, /"schema.schema" must be a valid JSON Schema draft-04/);
        }
    });
    test('read-only schema.version and schema.created_at are ignored on create', () => {
        const schema = { ...schemaField(orderSchema), version: '7.1.0', created_at: '1999-01-01T00:00:00Z' };
        const { eventType } = create(createBody({ schema }));
        assert.equal(eventType.schema.version, '1.0.0');
        assert.equal(eventType.schema.created_at, createdAt);
    });
    test('read-only created_at and updated_at are ignored on create', () => {
        const { eventType } = create(createBody({ created_at: '1999-01-01T00:00:00Z', updated_at: '1999-01-01T00:00:00Z' }));
        assert.equal(eventType.created_at, createdAt);
        assert.equal(eventType.updated_at, createdAt);
    });
    test('business must not declare metadata (a name conflict rejects creation)', () => {
        const schema = { type: 'object', properties: { metadata: { type: 'object' } } };
        assertProblem(() => create(createBody({ schema: schemaField(schema) })), 422, /must not declare "metadata"/);
        const other = { type: 'object', properties: { data_op: { type: 'string' } } };
        assert.ok(create(createBody({ schema: schemaField(other) })), 'business may use the data category names');
    });
    test('data must not declare metadata, data_op, data_type or data', () => {
        for (const name of ['metadata', 'data_op', 'data_type', 'data']) {
            const schema = { type: 'object', properties: { [name]: { type: 'string' } } };
            assertProblem(() => create(createBody({ category: 'data', schema: schemaField(schema) })), 422, new RegExp(`must not declare "${name}"`));
        }
    });
    test('undefined may declare any name', () => {
        const schema = { type: 'object', properties: { metadata: { type: 'string' } } };
        assert.ok(create(createBody({ category: 'undefined', enrichment_strategies: [], schema: schemaField(schema) })));
    });
    test('business and data schemas must describe objects', () => {
        for (const category of ['business', 'data']) {
            assertProblem(() => create(createBody({ category, schema: schemaField({ type: 'string' }) })), 422, /must describe an object/);
        }
        assert.ok(create(createBody({ category: 'undefined', enrichment_strategies: [], schema: schemaField({ type: 'string' }) })));
    });
});
describe('default_statistic', () => {
    const stats = { messages_per_minute: 100, message_size: 200, read_parallelism: 3, write_parallelism: 5 };
    test('partition count is min(max(read_parallelism, write_parallelism), partitionsMax)', () => {
        assert.equal(create(createBody({ default_statistic: stats })).partitionCount, 5);
        assert.equal(create(createBody({ default_statistic: { ...stats, read_parallelism: 6 } })).partitionCount, 6);
        assert.equal(create(createBody({ default_statistic: { ...stats, write_parallelism: 1000 } })).partitionCount, opts.partitionsMax);
        assert.deepEqual(create(createBody({ default_statistic: stats })).eventType.default_statistic, stats);
    });
    test('all four statistics are required integers >= 1', () => {
        for (const field of Object.keys(stats)) {
            const without = { ...stats };
            delete without[field];
            assertProblem(() => create(createBody({ default_statistic: without })), 422, new RegExp(`"default_statistic.${field}" is required`));
            for (const bad of [0, -1, 1.5, '3']) {
                assertProblem(() => create(createBody({ default_statistic: { ...stats, [field]: bad } })), 422, new RegExp(`"default_statistic.${field}" must be an integer >= 1`));
            }
        }
        assertProblem(() => create(createBody({ default_statistic: [] })), 422, /"default_statistic" must be an object/);
    });
});
describe('options.retention_time', () => {
    test('retention_time defaults and must lie within the configured bounds', () => {
        assert.equal(create(createBody({ options: {} })).eventType.options.retention_time, opts.retentionTimeMsDefault);
        assert.equal(create(createBody({ options: null })).eventType.options.retention_time, opts.retentionTimeMsDefault);
        assert.equal(create(createBody({ options: { retention_time: opts.retentionTimeMsMin } })).eventType.options.retention_time, opts.retentionTimeMsMin);
        assert.equal(create(createBody({ options: { retention_time: opts.retentionTimeMsMax } })).eventType.options.retention_time, opts.retentionTimeMsMax);
        assertProblem(() => create(createBody({ options: { retention_time: opts.retentionTimeMsMin - 1 } })), 422, /"options.retention_time" must be between/);
        assertProblem(() => create(createBody({ options: { retention_time: opts.retentionTimeMsMax + 1 } })), 422, /"options.retention_time" must be between/);
        assertProblem(() => create(createBody({ options: { retention_time: 3_600_000.5 } })), 422, /"options.retention_time" must be an integer/);
        assertProblem(() => create(createBody({ options: 5 })), 422, /"options" must be an object/);
    });
});
describe('authorization and scopes', () => {
    const attr = { data_type: 'user', value: 'alice' };
    const auth = { admins: [attr], readers: [{ data_type: '*', value: '*' }], writers: [attr] };
    test('a well-formed authorization section is stored', () => {
        assert.deepEqual(create(createBody({ authorization: auth })).eventType.authorization, auth);
    });
    test('admins, readers and writers are required non-empty arrays of {data_type, value}', () => {
        for (const list of ['admins', 'readers', 'writers']) {
            assertProblem(() => create(createBody({ authorization: { ...auth, [list]: undefined } })), 422, new RegExp(`"authorization.${list}" is required`));
            assertProblem(() => create(createBody({ authorization: { ...auth, [list]: [] } })), 422, new RegExp(`"authorization.${list}" must not be empty`));
            assertProblem(() => create(createBody({ authorization: { ...auth, [list]: attr } })), 422, new RegExp(`"authorization.${list}" must be an array`));
            assertProblem(() => create(createBody({ authorization: { ...auth, [list]: [{ data_type: 'user' }] } })), 422, new RegExp(`"authorization.${list}\\[0\\].value" must be a non-empty string`));
            assertProblem(() => create(createBody({ authorization: { ...auth, [list]: [attr, { data_type: '', value: 'x' }] } })), 422, new RegExp(`"authorization.${list}\\[1\\].data_type" must be a non-empty string`));
        }
        assertProblem(() => create(createBody({ authorization: [] })), 422, /"authorization" must be an object/);
    });
    test('read_scopes and write_scopes are arrays of strings, stored', () => {
        const { eventType } = create(createBody({ read_scopes: ['shop.read'], write_scopes: [] }));
        assert.deepEqual(eventType.read_scopes, ['shop.read']);
        assert.deepEqual(eventType.write_scopes, []);
        assertProblem(() => create(createBody({ read_scopes: 'shop.read' })), 422, /"read_scopes" must be an array of strings/);
        assertProblem(() => create(createBody({ write_scopes: [1] })), 422, /"write_scopes" must be an array of strings/);
    });
});
//# sourceMappingURL=event-type-create.test.js.map