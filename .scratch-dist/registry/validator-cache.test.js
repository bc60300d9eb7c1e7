/**
 * Goal: published events are validated as the interface says per category and compatibility mode:
 * undefined is never validated (any object), business/data against their effective schema, undeclared
 * properties rejected in compatible and none (unless the schema allows them) and accepted in forward;
 * metadata fields checked by format; errors name the failing path; validators are compiled once per
 * (event type, schema version) and forgotten on request. Method: create event types with
 * validateEventTypeCreate and run events through SchemaValidatorCache.validatorFor.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SchemaValidatorCache, validateEventTypeCreate } from './index.js';
import { createBody, createdAt, opts, orderSchema, schemaField } from './registry-fixtures.js';
const eid = 'd765de34-09c0-4bbb-8b1e-7160a33a0791';
const metadata = { eid, occurred_at: '2024-05-01T10:00:00Z' };
const order = { order_number: 'o1', customer: { id: 'c1' } };
function eventType(overrides = {}) {
    return validateEventTypeCreate(createBody(overrides), opts, createdAt).eventType;
}
function validator(et, cache = new SchemaValidatorCache()) {
    return cache.validatorFor(et, et.schema);
}
describe('category rules at validation', () => {
    test('undefined: events are not validated against the schema, only required to be objects', () => {
        const v = validator(eventType({ category: 'undefined', enrichment_strategies: [], compatibility_mode: 'compatible' }));
        assert.equal(v({ anything: true }), null);
        assert.equal(v({}), null);
        for (const bad of [[], 'x', 1, null])
            assert.match(v(bad) ?? '', /must be a JSON object/);
    });
    test('business: metadata and the submitted properties at the top level', () => {
        const v = validator(eventType());
        assert.equal(v({ metadata, ...order }), null);
        assert.equal(v({ ...order }), '#/metadata: required property is missing');
        assert.equal(v({ metadata, customer: { id: 'c1' } }), '#/order_number: required property is missing');
        assert.equal(v({ metadata, ...order, amount: 'ten' }), '#/amount: must be number');
        assert.equal(v({ metadata, ...order, customer: { id: 'c1', email: 'nope' } }), '#/customer/email: must match format "email"');
        assert.match(v([metadata]) ?? '', /^#: must be object/);
    });
    test('data: metadata, data_op in C/U/D/S, data_type and data against the submitted schema', () => {
        const v = validator(eventType({ category: 'data' }));
        const ok = { metadata, data_op: 'C', data_type: 'order', data: order };
        assert.equal(v(ok), null);
        assert.match(v({ ...ok, data_op: 'X' }) ?? '', /^#\/data_op: must be equal to one of the allowed values/);
        assert.equal(v({ metadata, data_op: 'U', data: order }), '#/data_type: required property is missing');
        assert.equal(v({ ...ok, data: { order_number: 'o1' } }), '#/data/customer: required property is missing');
        assert.equal(v({ ...ok, data: { ...order, amount: 'x' } }), '#/data/amount: must be number');
    });
    test('data: $ref into the submitted schema resolves after wrapping', () => {
        const schema = { definitions: { money: { type: 'number' } }, type: 'object', properties: { amount: { $ref: '#/definitions/money' } } };
        const v = validator(eventType({ category: 'data', schema: schemaField(schema) }));
        const ok = { metadata, data_op: 'C', data_type: 'order', data: { amount: 3 } };
        assert.equal(v(ok), null);
        assert.equal(v({ ...ok, data: { amount: 'x' } }), '#/data/amount: must be number');
    });
});
describe('metadata', () => {
    const v = validator(eventType());
    test('eid must be a uuid and occurred_at a date-time, both required', () => {
        assert.equal(v({ metadata: { ...metadata, eid: 'x' }, ...order }), '#/metadata/eid: must match format "uuid"');
        assert.equal(v({ metadata: { ...metadata, occurred_at: 'yesterday' }, ...order }), '#/metadata/occurred_at: must match format "date-time"');
        assert.equal(v({ metadata: { occurred_at: metadata.occurred_at }, ...order }), '#/metadata/eid: required property is missing');
        assert.equal(v({ metadata: { eid }, ...order }), '#/metadata/occurred_at: required property is missing');
    });
    test('the optional metadata fields are declared and typed', () => {
        const full = { ...metadata, event_type: 'x', flow_id: 'f', partition: '0', parent_eids: [eid], received_at: metadata.occurred_at, version: '1.0.0' };
        assert.equal(v({ metadata: full, ...order }), null);
        assert.equal(v({ metadata: { ...metadata, parent_eids: ['x'] }, ...order }), '#/metadata/parent_eids/0: must match format "uuid"');
        assert.equal(v({ metadata: { ...metadata, partition: 0 }, ...order }), '#/metadata/partition: must be string');
    });
});
describe('undeclared properties per compatibility mode', () => {
    const undeclaredTop = { metadata, ...order, surprise: 1 };
    const undeclaredNested = { metadata, ...order, customer: { id: 'c1', surprise: 1 } };
    const undeclaredMetadata = { metadata: { ...metadata, surprise: 1 }, ...order };
    test('forward: events with undeclared fields are accepted (top level, nested, metadata)', () => {
        const v = validator(eventType({ compatibility_mode: 'forward' }));
        for (const e of [undeclaredTop, undeclaredNested, undeclaredMetadata])
            assert.equal(v(e), null);
    });
    test('compatible: events with undeclared properties are rejected, naming the property', () => {
        const v = validator(eventType({ compatibility_mode: 'compatible' }));
        assert.equal(v(undeclaredTop), '#/surprise: property is not declared in the schema');
        assert.equal(v(undeclaredNested), '#/customer/surprise: property is not declared in the schema');
        assert.equal(v(undeclaredMetadata), '#/metadata/surprise: property is not declared in the schema');
        assert.equal(v({ metadata, ...order }), null);
    });
    test('none: undeclared properties are rejected unless the schema allows them', () => {
        const strict = validator(eventType({ compatibility_mode: 'none' }));
        assert.equal(strict(undeclaredTop), '#/surprise: property is not declared in the schema');
        assert.equal(strict(undeclaredNested), '#/customer/surprise: property is not declared in the schema');
        assert.equal(strict(undeclaredMetadata), '#/metadata/surprise: property is not declared in the schema');
        const loose = { ...orderSchema, additionalProperties: true, properties: { ...orderSchema.properties, customer: { ...orderSchema.properties.customer, additionalProperties: { type: 'number' } } } };
        const allowing = validator(eventType({ compatibility_mode: 'none', schema: schemaField(loose) }));
        assert.equal(allowing(undeclaredTop), null);
        assert.equal(allowing(undeclaredNested), null);
        assert.equal(allowing({ metadata, ...order, customer: { id: 'c1', surprise: 'x' } }), '#/customer/surprise: must be number');
    });
    test('none and compatible: properties declared in allOf members are declared', () => {
        const schema = { type: 'object', allOf: [{ properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } } }] };
        for (const mode of ['none', 'compatible']) {
            const v = validator(eventType({ compatibility_mode: mode, schema: schemaField(schema) }));
            assert.equal(v({ metadata, a: 'x', b: 1 }), null, mode);
            assert.equal(v({ metadata, a: 'x', c: 1 }), '#/c: property is not declared in the schema', mode);
            assert.equal(v({ metadata, a: 1 }), '#/a: must be string', mode);
        }
    });
    test('data: undeclared envelope fields are rejected in compatible, accepted in forward', () => {
        const event = { metadata, data_op: 'C', data_type: 'order', data: order, extra: true };
        assert.equal(validator(eventType({ category: 'data', compatibility_mode: 'compatible' }))(event), '#/extra: property is not declared in the schema');
        assert.equal(validator(eventType({ category: 'data', compatibility_mode: 'forward' }))(event), null);
    });
});
describe('compiled once per (event type, schema version)', () => {
    test('the same version returns the same validator; another version or mode compiles anew', () => {
        const cache = new SchemaValidatorCache();
        const et = eventType();
        const first = cache.validatorFor(et, et.schema);
        assert.equal(cache.validatorFor(et, et.schema), first);
        assert.equal(cache.validatorFor(structuredClone(et), structuredClone(et.schema)), first, 'keyed by value, not identity');
        const v2 = { ...et.schema, version: '1.1.0', schema: JSON.stringify({ ...orderSchema, properties: { ...orderSchema.properties, note: { type: 'string' } } }) };
        const second = cache.validatorFor(et, v2);
        assert.notEqual(second, first);
        assert.equal(second({ metadata, ...order, note: 3 }), '#/note: must be string');
        assert.equal(first({ metadata, ...order, note: 3 }), null, 'version 1.0.0 still validates with its own schema');
        assert.notEqual(cache.validatorFor({ ...et, compatibility_mode: 'compatible' }, et.schema), first);
    });
    test('forget drops the event type: a re-created type with the same name and version gets its new schema', () => {
        const cache = new SchemaValidatorCache();
        const et = eventType();
        const old = cache.validatorFor(et, et.schema);
        cache.forget(et.name);
        const recreated = { ...et, schema: { ...et.schema, schema: JSON.stringify({ type: 'object', properties: { x: { type: 'string' } }, required: ['x'] }) } };
        const fresh = cache.validatorFor(recreated, recreated.schema);
        assert.notEqual(fresh, old);
        assert.equal(fresh({ metadata, x: 'y' }), null);
        cache.forget('never-seen');
    });
    test('two versions declaring the same schema id can both be compiled', () => {
        const cache = new SchemaValidatorCache();
        const withId = (t) => JSON.stringify({ id: 'http://example.com/order', type: 'object', properties: { a: { type: t } } });
        const et = eventType({ schema: { type: 'json_schema', schema: withId('string') } });
        const v1 = cache.validatorFor(et, et.schema);
        const v2 = cache.validatorFor(et, { ...et.schema, version: '2.0.0', schema: withId('number') });
        assert.equal(v1({ metadata, a: 'x' }), null);
        assert.equal(v2({ metadata, a: 'x' }), '#/a: must be number');
    });
});
//# sourceMappingURL=validator-cache.test.js.map