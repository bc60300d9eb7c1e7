/**
 * Goal: the registry's public face is exactly the agreed API, and the strategy registries list what
 * GET /registry/partition-strategies and /registry/enrichment-strategies must answer. Method: inspect
 * the module namespace and the lists; check that each listed strategy is accepted on create.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as registry from './index.js';
import { createBody, createdAt, opts } from './registry-fixtures.js';
test('index exports exactly the registry API', () => {
    assert.deepEqual(Object.keys(registry).sort(), [
        'SchemaValidatorCache',
        'bumpVersion',
        'compareSchemaChange',
        'effectiveSchema',
        'enrichmentStrategyNames',
        'partitionStrategyNames',
        'validateEventTypeCreate',
        'validateEventTypeUpdate',
    ]);
});
test('GET /registry/partition-strategies lists random, user_defined, hash', () => {
    assert.deepEqual(registry.partitionStrategyNames, ['random', 'user_defined', 'hash']);
    assert.ok(Object.isFrozen(registry.partitionStrategyNames));
});
test('GET /registry/enrichment-strategies lists metadata_enrichment', () => {
    assert.deepEqual(registry.enrichmentStrategyNames, ['metadata_enrichment']);
});
test('every advertised partition strategy is accepted on create', () => {
    for (const strategy of registry.partitionStrategyNames) {
        const keys = strategy === 'hash' ? { partition_key_fields: ['order_number'] } : {};
        const { eventType } = registry.validateEventTypeCreate(createBody({ partition_strategy: strategy, ...keys }), opts, createdAt);
        assert.equal(eventType.partition_strategy, strategy);
    }
});
//# sourceMappingURL=index.test.js.map