/**
 * Shared fixtures for the registry's tests (imported only by *.test.ts): registry options, a valid
 * request body per category, and an assertion that a call fails with a given Problem.
 */
import assert from 'node:assert/strict';
import { isProblem } from '../core/problem.js';
import { validateEventTypeCreate } from './event-type-create.js';
export const opts = {
    partitionsDefault: 1,
    partitionsMax: 8,
    retentionTimeMsDefault: 345_600_000,
    retentionTimeMsMin: 3_600_000,
    retentionTimeMsMax: 3_456_000_000,
    schemaBytesMax: 1_000_000,
    schemaDepthMax: 50,
    schemaObjectsMax: 1000,
    schemaEnumValuesMax: 10_000,
};
export const createdAt = '2024-05-01T10:00:00.000Z';
export const updatedAt = '2024-05-02T11:00:00.000Z';
export const orderSchema = {
    type: 'object',
    properties: {
        order_number: { type: 'string', description: 'the order' },
        amount: { type: 'number' },
        customer: {
            type: 'object',
            properties: { id: { type: 'string' }, email: { type: 'string', format: 'email' } },
            required: ['id'],
        },
    },
    required: ['order_number', 'customer'],
};
export function schemaField(schema) {
    return { type: 'json_schema', schema: JSON.stringify(schema) };
}
/** A valid POST body; `overrides` replace fields (undefined removes one). */
export function createBody(overrides = {}) {
    const body = {
        name: 'shop.order-created',
        owning_application: 'shop',
        category: 'business',
        enrichment_strategies: ['metadata_enrichment'],
        schema: schemaField(orderSchema),
        ...overrides,
    };
    for (const [k, v] of Object.entries(overrides))
        if (v === undefined)
            delete body[k];
    return body;
}
/** An existing record as the registry would hold it after creating `body`. */
export function recordOf(body, version = '1.0.0') {
    const { eventType, partitionCount } = validateEventTypeCreate(body, opts, createdAt);
    eventType.schema = { ...eventType.schema, version };
    return {
        eventType,
        schemas: [eventType.schema],
        storage: { topic: 1, partitions: Array.from({ length: partitionCount }, (_, i) => String(i)), timeline: 1 },
    };
}
/** Asserts that `fn` throws a Problem with `status` whose detail matches `detail`. */
export function assertProblem(fn, status, detail) {
    assert.throws(fn, (err) => {
        assert.ok(isProblem(err), `expected a Problem, got ${String(err)}`);
        assert.equal(err.status, status, `status of "${err.detail}"`);
        assert.match(err.detail ?? '', detail);
        return true;
    });
}
//# sourceMappingURL=registry-fixtures.js.map