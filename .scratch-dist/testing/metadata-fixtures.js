export function storedEventType(name, over = {}) {
    return {
        name, owning_application: 'app', category: 'business', enrichment_strategies: ['metadata_enrichment'],
        partition_strategy: 'random', compatibility_mode: 'forward',
        schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' },
        options: { retention_time: 1000 }, created_at: 't0', updated_at: 't0', ...over,
    };
}
//# sourceMappingURL=metadata-fixtures.js.map