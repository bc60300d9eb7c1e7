/**
 * The deployment's bounds for event types (from config). Passed in rather than read from limits.ts so
 * that tests and operators can set them; their internal consistency is asserted once per call site.
 */
import { assert } from '../core/assert.js';
export function assertRegistryOptions(opts) {
    assert(Number.isSafeInteger(opts.partitionsDefault) && opts.partitionsDefault >= 1, 'partitionsDefault must be an integer >= 1');
    assert(Number.isSafeInteger(opts.partitionsMax) && opts.partitionsMax >= 1, 'partitionsMax must be an integer >= 1');
    assert(opts.partitionsDefault <= opts.partitionsMax, 'partitionsDefault must not exceed partitionsMax');
    assert(Number.isSafeInteger(opts.retentionTimeMsMin) && opts.retentionTimeMsMin >= 0, 'retentionTimeMsMin must be an integer >= 0');
    assert(Number.isSafeInteger(opts.retentionTimeMsMax), 'retentionTimeMsMax must be an integer');
    assert(opts.retentionTimeMsMin <= opts.retentionTimeMsDefault, 'retention default below its minimum');
    assert(opts.retentionTimeMsDefault <= opts.retentionTimeMsMax, 'retention default above its maximum');
    for (const key of ['schemaBytesMax', 'schemaDepthMax', 'schemaObjectsMax', 'schemaEnumValuesMax']) {
        assert(Number.isSafeInteger(opts[key]) && opts[key] >= 1, `${key} must be an integer >= 1`);
    }
}
//# sourceMappingURL=registry-options.js.map