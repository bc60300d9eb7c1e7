/**
 * Goal: the interface's category rules produce the right effective schema (undefined: as is;
 * business: metadata plus the submitted properties at the top level; data: metadata, data_op,
 * data_type and data = the submitted schema), name conflicts are refused, and the closed validation
 * schema of modes compatible/none keeps composition (allOf/anyOf/$ref) working. Method: inspect the
 * produced schemas directly; behaviour under ajv is checked in validator-cache.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { effectiveSchema } from './index.js';
import { closeUndeclaredProperties, metadataSchema } from './effective-schema.js';
import { assertProblem, orderSchema } from './registry-fixtures.js';
import { schemaCompileError } from './schema-compiler.js';
describe('effective schema per category', () => {
    test('undefined: the effective schema equals the submitted schema', () => {
        assert.equal(effectiveSchema('undefined', orderSchema), orderSchema);
    });
    test('business: metadata plus the submitted properties at the top level, metadata required', () => {
        const eff = effectiveSchema('business', orderSchema);
        assert.deepEqual(Object.keys(eff.properties), ['metadata', 'order_number', 'amount', 'customer']);
        assert.deepEqual(eff.properties.metadata, metadataSchema());
        assert.deepEqual(eff.required, ['metadata', 'order_number', 'customer']);
        assert.equal(eff.type, 'object');
        assert.deepEqual(eff.properties.customer, orderSchema.properties.customer);
    });
    test('business: an untyped submitted schema becomes an object schema; other keywords are kept', () => {
        const eff = effectiveSchema('business', { properties: { a: {} }, definitions: { d: {} }, title: 'T' });
        assert.equal(eff.type, 'object');
        assert.deepEqual(eff.definitions, { d: {} });
        assert.equal(eff.title, 'T');
    });
    test('data: {metadata, data_op C/U/D/S, data_type, data} with data = the submitted schema', () => {
        const eff = effectiveSchema('data', orderSchema);
        assert.deepEqual(eff.required, ['metadata', 'data_op', 'data_type', 'data']);
        assert.deepEqual(eff.properties.data_op, { type: 'string', enum: ['C', 'U', 'D', 'S'] });
        assert.deepEqual(eff.properties.data_type, { type: 'string' });
        assert.deepEqual(eff.properties.data, orderSchema);
        assert.deepEqual(eff.properties.metadata, metadataSchema());
    });
    test('data: $schema moves to the root and local $refs are rebased under #/properties/data', () => {
        const submitted = {
            $schema: 'http://json-schema.org/draft-04/schema#',
            definitions: { id: { type: 'string' } },
            properties: { id: { $ref: '#/definitions/id' }, self: { $ref: '#' } },
        };
        const eff = effectiveSchema('data', submitted);
        assert.equal(eff.$schema, submitted.$schema);
        assert.equal(eff.properties.data.$schema, undefined);
        assert.equal(eff.properties.data.properties.id.$ref, '#/properties/data/definitions/id');
        assert.equal(eff.properties.data.properties.self.$ref, '#/properties/data');
        assert.equal(schemaCompileError(eff), null);
        assert.equal(submitted.properties.id.$ref, '#/definitions/id', 'the submitted schema is not modified');
    });
    test('data: with a root id the references resolve in its scope and are left alone', () => {
        const submitted = { id: 'http://example.com/order', definitions: { id: { type: 'string' } }, properties: { id: { $ref: '#/definitions/id' } } };
        const eff = effectiveSchema('data', submitted);
        assert.equal(eff.properties.data.properties.id.$ref, '#/definitions/id');
        assert.equal(schemaCompileError(eff), null);
    });
    test('name conflicts reject: business metadata; data metadata, data_op, data_type, data', () => {
        assertProblem(() => effectiveSchema('business', { properties: { metadata: {} } }), 422, /must not declare "metadata"/);
        for (const name of ['metadata', 'data_op', 'data_type', 'data']) {
            assertProblem(() => effectiveSchema('data', { properties: { [name]: {} } }), 422, new RegExp(`"${name}"`));
        }
        assert.ok(effectiveSchema('undefined', { properties: { metadata: {} } }));
    });
});
describe('validation schema per compatibility mode', () => {
    const nested = { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'string' } } } } };
    test('forward: the schema is used as written', () => {
        assert.equal(closeUndeclaredProperties(nested, 'forward'), nested);
    });
    test('compatible: additionalProperties false on every object schema, input untouched', () => {
        const closed = closeUndeclaredProperties(nested, 'compatible');
        assert.equal(closed.additionalProperties, false);
        assert.equal(closed.properties.a.additionalProperties, false);
        assert.equal(nested.additionalProperties, undefined);
    });
    test('none: closed only where additionalProperties is not set', () => {
        const schema = { type: 'object', properties: { open: { type: 'object', additionalProperties: true }, typed: { type: 'object', additionalProperties: { type: 'number' } }, plain: { type: 'object' } } };
        const closed = closeUndeclaredProperties(schema, 'none');
        assert.equal(closed.additionalProperties, false);
        assert.equal(closed.properties.open.additionalProperties, true);
        assert.deepEqual(closed.properties.typed.additionalProperties, { type: 'number' });
        assert.equal(closed.properties.plain.additionalProperties, false);
    });
    test('non-object schemas ({}, strings) are not closed', () => {
        const closed = closeUndeclaredProperties({ type: 'object', properties: { any: {}, s: { type: 'string' } } }, 'compatible');
        assert.deepEqual(closed.properties.any, {});
        assert.deepEqual(closed.properties.s, { type: 'string' });
    });
    test('allOf members are not closed; the parent declares their properties instead', () => {
        const schema = { type: 'object', allOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: { type: 'object', properties: { c: {} } } } }] };
        const closed = closeUndeclaredProperties(schema, 'compatible');
        assert.equal(closed.additionalProperties, false);
        assert.deepEqual(Object.keys(closed.properties), ['a', 'b']);
        assert.equal(closed.allOf[0].additionalProperties, undefined);
        assert.equal(closed.allOf[1].properties.b.additionalProperties, false, 'a member property is its own object');
    });
    test('definitions used as members through $ref are treated as members', () => {
        const schema = { definitions: { base: { type: 'object', properties: { id: {} } } }, type: 'object', allOf: [{ $ref: '#/definitions/base' }], properties: { x: {} } };
        const closed = closeUndeclaredProperties(schema, 'compatible');
        assert.equal(closed.definitions.base.additionalProperties, undefined);
        assert.deepEqual(Object.keys(closed.properties).sort(), ['id', 'x']);
        assert.equal(closed.additionalProperties, false);
    });
    test('a member that allows extra properties, or a remote member, leaves the parent open', () => {
        const open = closeUndeclaredProperties({ type: 'object', anyOf: [{ additionalProperties: true }] }, 'none');
        assert.equal(open.additionalProperties, undefined);
        const remote = closeUndeclaredProperties({ type: 'object', allOf: [{ $ref: 'http://example.com/s' }] }, 'none');
        assert.equal(remote.additionalProperties, undefined);
    });
    test('nothing under not is closed (closing a negation would widen it)', () => {
        const closed = closeUndeclaredProperties({ type: 'object', properties: {}, not: { type: 'object', properties: { x: {} } } }, 'none');
        assert.equal(closed.not.additionalProperties, undefined);
    });
});
//# sourceMappingURL=effective-schema.test.js.map