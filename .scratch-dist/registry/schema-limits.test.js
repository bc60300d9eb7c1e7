// Goal (issue 10): a schema's complexity is bounded with clear 422s, and what the bounds allow is
// cheap. A 60,000-value enum (25 s to create) is refused; an enum at the limit compiles and validates
// by lookup; duplicate enum values are refused in linear time (ajv's meta-schema did it in O(n²)).
// Schemas nested 100,000 deep or with 10,000 properties (500 or a stack-overflow message before) get
// 422 naming the bound; the largest schemas the bounds allow still compile and run.
// Method: validateEventTypeCreate with the registry fixtures' options, and the validator cache.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validateEventTypeCreate, SchemaValidatorCache } from './index.js';
import { assertProblem, createBody, createdAt, opts } from './registry-fixtures.js';
const create = (schema, o = opts) => validateEventTypeCreate(createBody({ schema: { type: 'json_schema', schema: typeof schema === 'string' ? schema : JSON.stringify(schema) } }), o, createdAt);
const props = (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string' }]));
const withProps = (extra) => ({ type: 'object', properties: { order_number: { type: 'string' }, customer: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, ...extra }, required: ['order_number', 'customer'] });
const metadata = { eid: '9f0c2a4e-3a51-4d4e-a0b2-1c2d3e4f5a6b', occurred_at: '2026-11-22T10:00:00Z' };
describe('enums', () => {
    test('issue 10: a 60,000-value enum is refused with 422 naming the limit and the place', () => {
        const values = Array.from({ length: 60_000 }, (_, i) => `value-${i}`);
        assertProblem(() => create(withProps({ v: { enum: values } })), 422, /enum of 60000 values at #\/properties\/v\/enum; at most 10000/);
    });
    test('an enum at the limit is created and validates by lookup, with the message ajv gives', () => {
        const values = Array.from({ length: opts.schemaEnumValuesMax }, (_, i) => `value-${i}`);
        const { eventType } = create(withProps({ v: { enum: [...values, 7, null, { k: [1] }].slice(-opts.schemaEnumValuesMax) } }));
        const validate = new SchemaValidatorCache().validatorFor(eventType, eventType.schema);
        const event = (v) => ({ order_number: 'o', customer: { id: 'c' }, v, metadata });
        assert.equal(validate(event(`value-${opts.schemaEnumValuesMax - 1}`)), null);
        assert.equal(validate(event(7)), null);
        assert.equal(validate(event(7.0)), null);
        assert.equal(validate(event(null)), null);
        assert.equal(validate(event({ k: [1] })), null);
        assert.equal(validate(event('value-0')), '#/v: must be equal to one of the allowed values', 'value-0 was cut off by the slice');
        assert.equal(validate(event({ k: [2] })), '#/v: must be equal to one of the allowed values');
        assert.equal(validate(event('7')), '#/v: must be equal to one of the allowed values');
    });
    test('repeated enum values are refused (draft-04), objects compared regardless of key order', () => {
        assertProblem(() => create(withProps({ v: { enum: ['a', 'b', 'a'] } })), 422, /repeats the value "a" in the enum at #\/properties\/v\/enum/);
        assertProblem(() => create(withProps({ v: { enum: [{ x: 1, y: 2 }, { y: 2, x: 1 }] } })), 422, /repeats the value/);
        assertProblem(() => create(withProps({ v: { enum: [1, 1.0] } })), 422, /repeats the value 1 /);
        assert.doesNotThrow(() => create(withProps({ v: { enum: [1, '1', true, 'true', null, [1], { a: 1 }] } })));
    });
});
describe('shape', () => {
    test('issue 10: a schema nested 100,000 levels deep is refused with 422, not a stack overflow', () => {
        const deep = '['.repeat(100_000) + ']'.repeat(100_000);
        assertProblem(() => create(`{"type":"object","properties":{"a":{"enum":[${deep}]}}}`), 422, /nested deeper than 50 levels/);
        let items = '{"type":"string"}';
        for (let i = 0; i < 2000; i++)
            items = `{"type":"array","items":${items}}`;
        assertProblem(() => create(`{"type":"object","properties":{"a":${items}}}`), 422, /nested deeper than 50 levels/);
    });
    test('issue 10: 10,000 properties or 5,000 allOf members are refused with 422 naming the bound', () => {
        assertProblem(() => create(withProps(props(10_000))), 422, /more than 1000 objects and arrays/);
        assertProblem(() => create({ type: 'object', allOf: Array.from({ length: 5000 }, (_, i) => ({ properties: { [`q${i}`]: { type: 'integer' } } })) }), 422, /more than 1000 objects and arrays/);
    });
    test('the text size bound is the configured one', () => {
        const text = JSON.stringify(withProps({ d: { type: 'string', description: 'x'.repeat(5000) } }));
        assertProblem(() => create(text, { ...opts, schemaBytesMax: 4096 }), 422, /at most 4096 bytes/);
        assert.doesNotThrow(() => create(text));
    });
    test('the largest schemas the bounds allow compile and validate (no stack overflow, here or when called deep in a stack)', () => {
        let nested = { type: 'string' };
        for (let i = 0; i < 22; i++)
            nested = { type: 'array', items: nested };
        const schemas = [
            withProps(props(990)),
            withProps({ x: { anyOf: Array.from({ length: 990 }, (_, i) => ({ type: 'integer', minimum: i })) } }),
            withProps({ a: nested }),
        ];
        for (const schema of schemas) {
            const { eventType } = create(schema);
            const validate = new SchemaValidatorCache().validatorFor(eventType, eventType.schema);
            const deepCall = (d) => (d === 0 ? validate({ order_number: 'o', customer: { id: 'c' }, x: 5, metadata }) : deepCall(d - 1));
            assert.equal(deepCall(1000), null);
        }
    });
});
//# sourceMappingURL=schema-limits.test.js.map