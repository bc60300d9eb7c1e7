// Goal (issue 10): a valid recursive schema (`"$ref": "#"`, a tree of nodes) is accepted and validates
// as written, in every category and mode: "#" means the submitted root (for business events not the
// event with its metadata, for data change events the data), undeclared properties are closed inside
// the recursion in the closed modes, and a schema change of such a type is versioned like any other.
// It was refused with "can't resolve reference # from id #".
// Method: the registry's create/update validation and the validator cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SchemaValidatorCache, validateEventTypeCreate, validateEventTypeUpdate } from './index.js';
import { createBody, createdAt, opts, recordOf, updatedAt } from './registry-fixtures.js';
const tree = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } }, required: ['name'] };
const metadata = { eid: '9f0c2a4e-3a51-4d4e-a0b2-1c2d3e4f5a6b', occurred_at: '2026-11-22T10:00:00Z' };
function validatorFor(category, mode, schema = tree) {
    const body = createBody({ category, compatibility_mode: mode, enrichment_strategies: category === 'undefined' ? [] : ['metadata_enrichment'], partition_strategy: 'random', partition_key_fields: undefined, schema: { type: 'json_schema', schema: JSON.stringify(schema) } });
    const { eventType } = validateEventTypeCreate(body, opts, createdAt);
    const validate = new SchemaValidatorCache().validatorFor(eventType, eventType.schema);
    return (payload) => validate(category === 'data' ? { metadata, data_op: 'C', data_type: 't', data: payload } : { ...payload, metadata });
}
test('issue 10: "$ref": "#" is accepted; children are checked against the submitted root, without metadata', () => {
    for (const category of ['business', 'data']) {
        for (const mode of ['forward', 'none', 'compatible']) {
            const v = validatorFor(category, mode);
            assert.equal(v({ name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] }), null, `${category} ${mode}`);
            assert.match(v({ name: 'a', children: [{ children: [] }] }) ?? '', /children\/0\/name: required property is missing/, `${category} ${mode}`);
            const extra = v({ name: 'a', children: [{ name: 'b', extra: 1 }] });
            if (mode === 'forward')
                assert.equal(extra, null);
            else
                assert.match(extra ?? '', /children\/0\/extra: property is not declared/, `${category} ${mode}`);
        }
    }
});
test('references to definitions keep resolving next to "#", and a recursive type evolves like any other', () => {
    const schema = { type: 'object', definitions: { label: { type: 'string', maxLength: 3 } }, properties: { name: { $ref: '#/definitions/label' }, next: { $ref: '#' } }, required: ['name'] };
    const v = validatorFor('business', 'compatible', schema);
    assert.equal(v({ name: 'abc', next: { name: 'de' } }), null);
    assert.match(v({ name: 'abc', next: { name: 'long' } }) ?? '', /next\/name/);
    const body = createBody({ schema: { type: 'json_schema', schema: JSON.stringify(tree) }, partition_strategy: 'random', partition_key_fields: undefined });
    const existing = recordOf(body);
    const { eventType, schemaChanged } = validateEventTypeUpdate({ ...body, schema: { type: 'json_schema', schema: JSON.stringify({ ...tree, description: 'a tree' }) } }, existing, opts, updatedAt);
    assert.equal(schemaChanged, true);
    assert.equal(eventType.schema.version, '1.0.1');
});
//# sourceMappingURL=recursive-schema.test.js.map