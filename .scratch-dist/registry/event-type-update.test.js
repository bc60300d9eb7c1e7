/**
 * Goal: PUT /event-types/{name} follows the interface's update conditions (name unchanged, schema change
 * allowed by compatibility_mode, stricter-only mode changes, authorization kept, read-only fields
 * ignored, default_statistic fixed) and Brook's decisions where it is silent (category fixed, partition
 * strategy only away from random, hash keys fixed, omitted sticky fields kept), and bumps the schema
 * version per the Versioning rules. Method: build an existing record with validateEventTypeCreate,
 * then submit modified bodies to validateEventTypeUpdate.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validateEventTypeUpdate } from './index.js';
import { assertProblem, createBody, createdAt, opts, orderSchema, recordOf, schemaField, updatedAt } from './registry-fixtures.js';
const update = (body, existing) => validateEventTypeUpdate(body, existing, opts, updatedAt);
/** orderSchema with a change applied to a deep copy. */
function changed(edit) {
    const s = structuredClone(orderSchema);
    edit(s);
    return s;
}
function withSchema(base, schema) {
    return { ...base, schema: schemaField(schema) };
}
describe('schema versions on update', () => {
    test('an identical schema keeps the version and adds no schema entry; created_at kept, updated_at set', () => {
        const body = createBody();
        const { eventType, schemaChanged } = update(body, recordOf(body));
        assert.equal(schemaChanged, false);
        assert.equal(eventType.schema.version, '1.0.0');
        assert.equal(eventType.schema.created_at, createdAt);
        assert.equal(eventType.created_at, createdAt);
        assert.equal(eventType.updated_at, updatedAt);
    });
    test('a semantically identical text (whitespace, key order, required order) is no change; the stored text stays', () => {
        const body = createBody();
        const existing = recordOf(body);
        const reordered = { required: ['customer', 'order_number'], properties: orderSchema.properties, type: 'object' };
        const { eventType, schemaChanged } = update({ ...body, schema: { type: 'json_schema', schema: JSON.stringify(reordered, null, 2) } }, existing);
        assert.equal(schemaChanged, false);
        assert.equal(eventType.schema, existing.eventType.schema);
    });
    test('only title/description changes are patch level', () => {
        const body = createBody();
        const next = changed((s) => {
            s.title = 'Order';
            s.properties.order_number.description = 'the order number';
        });
        for (const mode of ['compatible', 'forward', 'none']) {
            const base = { ...body, compatibility_mode: mode };
            const { eventType, schemaChanged } = update(withSchema(base, next), recordOf(base));
            assert.equal(schemaChanged, true);
            assert.equal(eventType.schema.version, '1.0.1', mode);
            assert.equal(eventType.schema.created_at, updatedAt);
            assert.equal(eventType.schema.schema, JSON.stringify(next));
        }
    });
    test('a new optional property is minor level in every mode', () => {
        const next = changed((s) => (s.properties.customer.properties.name = { type: 'string' }));
        for (const mode of ['compatible', 'forward', 'none']) {
            const base = createBody({ compatibility_mode: mode });
            assert.equal(update(withSchema(base, next), recordOf(base, '1.4.2')).eventType.schema.version, '1.5.0', mode);
        }
    });
    test('forward: a new required property is minor level', () => {
        const next = changed((s) => {
            s.properties.currency = { type: 'string' };
            s.required.push('currency');
        });
        const base = createBody({ compatibility_mode: 'forward' });
        assert.equal(update(withSchema(base, next), recordOf(base)).eventType.schema.version, '1.1.0');
    });
    test('forward: marking an existing property required is minor level', () => {
        const next = changed((s) => s.required.push('amount'));
        const base = createBody({ compatibility_mode: 'forward' });
        assert.equal(update(withSchema(base, next), recordOf(base)).eventType.schema.version, '1.1.0');
    });
    test('compatible: new required properties and marking required are refused', () => {
        const base = createBody({ compatibility_mode: 'compatible' });
        const added = changed((s) => {
            s.properties.currency = { type: 'string' };
            s.required.push('currency');
        });
        assertProblem(() => update(withSchema(base, added), recordOf(base)), 422, /not allowed in compatibility_mode compatible: #\/properties\/currency: required property added/);
        assertProblem(() => update(withSchema(base, changed((s) => s.required.push('amount'))), recordOf(base)), 422, /"amount" marked required/);
    });
    test('none: any change is accepted and is major level', () => {
        const base = createBody({ compatibility_mode: 'none' });
        const edits = [
            (s) => delete s.properties.amount,
            (s) => (s.properties.amount.type = 'string'),
            (s) => s.required.pop(),
            (s) => {
                s.properties.currency = { type: 'string' };
                s.required.push('currency');
            },
        ];
        for (const edit of edits) {
            assert.equal(update(withSchema(base, changed(edit)), recordOf(base, '1.2.3')).eventType.schema.version, '2.0.0');
        }
    });
    test('forward and compatible: other changes are refused with a detail naming the change', () => {
        for (const mode of ['forward', 'compatible']) {
            const base = createBody({ compatibility_mode: mode });
            assertProblem(() => update(withSchema(base, changed((s) => delete s.properties.amount)), recordOf(base)), 422, /#\/properties\/amount: property removed/);
            assertProblem(() => update(withSchema(base, changed((s) => (s.properties.amount.type = 'string'))), recordOf(base)), 422, /#\/properties\/amount\/type: "type" changed/);
            assertProblem(() => update(withSchema(base, changed((s) => (s.required = ['order_number']))), recordOf(base)), 422, /"customer" no longer required/);
        }
    });
    test('issue 10: read-only fields sent back (schema.created_at, schema.version, created_at, updated_at) are ignored, never taken', () => {
        const body = createBody();
        const existing = recordOf(body);
        // What GET served, sent back unchanged: accepted, nothing changes but updated_at.
        const roundTrip = { ...existing.eventType, owning_application: 'other-app' };
        const same = update(roundTrip, existing);
        assert.equal(same.schemaChanged, false);
        assert.equal(same.eventType.schema, existing.eventType.schema);
        assert.equal(same.eventType.owning_application, 'other-app');
        assert.equal(same.eventType.updated_at, updatedAt);
        // Other values in them, even of the wrong type, are not taken either.
        const next = changed((s) => (s.description = 'x'));
        const bogus = { ...body, created_at: '1999-01-01T00:00:00Z', updated_at: 42, schema: { ...schemaField(next), version: '9.9.9', created_at: { not: 'a date' } } };
        const { eventType } = update(bogus, existing);
        assert.equal(eventType.schema.version, '1.0.1');
        assert.equal(eventType.schema.created_at, updatedAt);
        assert.equal(eventType.created_at, createdAt);
        assert.equal(eventType.updated_at, updatedAt);
    });
    test('the new schema obeys the create rules (compiles, no predefined names)', () => {
        const body = createBody();
        assertProblem(() => update(withSchema(body, { type: 'objectx' }), recordOf(body)), 422, /valid JSON Schema draft-04/);
        assertProblem(() => update(withSchema(body, changed((s) => (s.properties.metadata = {}))), recordOf(body)), 422, /must not declare "metadata"/);
    });
});
describe('immutable fields', () => {
    test('changing the name is refused with 422', () => {
        const body = createBody();
        assertProblem(() => update({ ...body, name: 'shop.other' }, recordOf(body)), 422, /Field "name" cannot be changed/);
        assertProblem(() => update({ ...body, name: undefined }, recordOf(body)), 422, /Field "name" cannot be changed/);
    });
    test('changing the category is refused', () => {
        const body = createBody();
        assertProblem(() => update({ ...body, category: 'data' }, recordOf(body)), 422, /Field "category" cannot be changed/);
    });
    test('default_statistic cannot change; omitted keeps the stored one', () => {
        const stats = { messages_per_minute: 1, message_size: 1, read_parallelism: 2, write_parallelism: 2 };
        const body = createBody({ default_statistic: stats });
        const existing = recordOf(body);
        assert.deepEqual(update(body, existing).eventType.default_statistic, stats);
        assert.deepEqual(update({ ...body, default_statistic: undefined }, existing).eventType.default_statistic, stats);
        assertProblem(() => update({ ...body, default_statistic: { ...stats, read_parallelism: 3 } }, existing), 422, /"default_statistic" cannot be changed/);
        const without = createBody();
        assertProblem(() => update({ ...without, default_statistic: stats }, recordOf(without)), 422, /"default_statistic" cannot be changed/);
    });
    test('partition_strategy may change only away from random', () => {
        const random = createBody();
        const toHash = update({ ...random, partition_strategy: 'hash', partition_key_fields: ['order_number'] }, recordOf(random));
        assert.equal(toHash.eventType.partition_strategy, 'hash');
        assert.equal(update({ ...random, partition_strategy: 'user_defined' }, recordOf(random)).eventType.partition_strategy, 'user_defined');
        const hash = createBody({ partition_strategy: 'hash', partition_key_fields: ['order_number'] });
        assertProblem(() => update({ ...hash, partition_strategy: 'random', partition_key_fields: undefined }, recordOf(hash)), 422, /"partition_strategy" cannot change from hash/);
        const userDefined = createBody({ partition_strategy: 'user_defined' });
        assertProblem(() => update({ ...userDefined, partition_strategy: 'hash', partition_key_fields: ['order_number'] }, recordOf(userDefined)), 422, /cannot change from user_defined/);
    });
    test('partition_key_fields cannot change while hash; omitted keeps them', () => {
        const hash = createBody({ partition_strategy: 'hash', partition_key_fields: ['order_number'] });
        const existing = recordOf(hash);
        assertProblem(() => update({ ...hash, partition_key_fields: ['customer.id'] }, existing), 422, /"partition_key_fields" cannot be changed/);
        const kept = update({ ...hash, partition_strategy: undefined, partition_key_fields: undefined }, existing);
        assert.equal(kept.eventType.partition_strategy, 'hash');
        assert.deepEqual(kept.eventType.partition_key_fields, ['order_number']);
    });
    test('the key fields must stay required in the new schema', () => {
        const hash = createBody({ partition_strategy: 'hash', partition_key_fields: ['customer.id'], compatibility_mode: 'none' });
        const next = changed((s) => delete s.properties.customer.required);
        assertProblem(() => update(withSchema(hash, next), recordOf(hash)), 422, /entry "customer.id" must be a required field/);
    });
});
describe('compatibility_mode changes', () => {
    const cases = [
        ['none', 'forward', true],
        ['forward', 'compatible', true],
        ['none', 'none', true],
        ['forward', 'forward', true],
        ['compatible', 'compatible', true],
        ['none', 'compatible', false],
        ['forward', 'none', false],
        ['compatible', 'forward', false],
        ['compatible', 'none', false],
    ];
    for (const [from, to, allowed] of cases) {
        test(`${from} -> ${to} is ${allowed ? 'allowed' : 'refused'}`, () => {
            const base = createBody({ compatibility_mode: from });
            const body = { ...base, compatibility_mode: to };
            if (allowed)
                assert.equal(update(body, recordOf(base)).eventType.compatibility_mode, to);
            else
                assertProblem(() => update(body, recordOf(base)), 422, new RegExp(`"compatibility_mode" cannot change from ${from} to ${to}`));
        });
    }
    test('an omitted mode keeps the stored one (no silent compatible -> forward)', () => {
        const base = createBody({ compatibility_mode: 'compatible' });
        assert.equal(update({ ...base, compatibility_mode: undefined }, recordOf(base)).eventType.compatibility_mode, 'compatible');
    });
    test('a schema change together with a mode change is judged under the new mode', () => {
        const base = createBody({ compatibility_mode: 'none' });
        const body = withSchema({ ...base, compatibility_mode: 'forward' }, changed((s) => delete s.properties.amount));
        assertProblem(() => update(body, recordOf(base)), 422, /not allowed in compatibility_mode forward/);
    });
    test('switching to compatible requires a schema without the unsupported keywords', () => {
        const loose = { ...orderSchema, additionalProperties: true };
        const base = withSchema(createBody({ compatibility_mode: 'forward' }), loose);
        assertProblem(() => update({ ...base, compatibility_mode: 'compatible' }, recordOf(base)), 422, /uses "additionalProperties"/);
    });
});
describe('authorization and other fields', () => {
    const auth = { admins: [{ data_type: 'user', value: 'a' }], readers: [{ data_type: 'user', value: 'a' }], writers: [{ data_type: 'user', value: 'a' }] };
    test('an existing authorization section cannot be removed', () => {
        const body = createBody({ authorization: auth });
        assertProblem(() => update({ ...body, authorization: undefined }, recordOf(body)), 422, /"authorization" cannot be removed/);
        assertProblem(() => update({ ...body, authorization: null }, recordOf(body)), 422, /"authorization" cannot be removed/);
    });
    test('authorization may be added or changed', () => {
        const plain = createBody();
        assert.deepEqual(update({ ...plain, authorization: auth }, recordOf(plain)).eventType.authorization, auth);
        const body = createBody({ authorization: auth });
        const readers = [{ data_type: '*', value: '*' }];
        assert.deepEqual(update({ ...body, authorization: { ...auth, readers } }, recordOf(body)).eventType.authorization?.readers, readers);
    });
    test('retention_time may change within bounds; omitted keeps the stored one', () => {
        const body = createBody({ options: { retention_time: 7_200_000 } });
        const existing = recordOf(body);
        assert.equal(update({ ...body, options: { retention_time: 3_600_000 } }, existing).eventType.options.retention_time, 3_600_000);
        assert.equal(update({ ...body, options: undefined }, existing).eventType.options.retention_time, 7_200_000);
        assertProblem(() => update({ ...body, options: { retention_time: 1 } }, existing), 422, /"options.retention_time" must be between/);
    });
    test('owning_application may change; enrichment_strategies keep their category rule', () => {
        const body = createBody();
        const existing = recordOf(body);
        assert.equal(update({ ...body, owning_application: 'billing' }, existing).eventType.owning_application, 'billing');
        assert.deepEqual(update({ ...body, enrichment_strategies: undefined }, existing).eventType.enrichment_strategies, ['metadata_enrichment']);
        assertProblem(() => update({ ...body, enrichment_strategies: [] }, existing), 422, /must contain metadata_enrichment/);
    });
    test('read_scopes and write_scopes are replaced', () => {
        const body = createBody({ read_scopes: ['a'] });
        const existing = recordOf(body);
        assert.deepEqual(update({ ...body, read_scopes: ['b'] }, existing).eventType.read_scopes, ['b']);
        assert.equal(update({ ...body, read_scopes: undefined }, existing).eventType.read_scopes, undefined);
    });
});
//# sourceMappingURL=event-type-update.test.js.map