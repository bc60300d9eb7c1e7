/**
 * POST /event-types: every field rule of the interface, applied to an untrusted JSON body, producing
 * the normalized EventType the registry stores (defaults filled, read-only fields generated) and the
 * partition count fixed at creation. Pure: the caller passes the time.
 */
import { assert } from '../core/assert.js';
import { checkSubmittedSchema, parseAuthorization, parseCategory, parseCompatibilityMode, parseEnrichmentStrategies, parseName, parseOwningApplication, parsePartitionKeyFields, parsePartitionStrategy, parseRetentionTime, parseSchemaField, parseScopes, parseStatistics, partitionCountFor, requireBodyObject, } from './event-type-fields.js';
import { assertRegistryOptions } from './registry-options.js';
import { initialSchemaVersion } from './semver.js';
export function validateEventTypeCreate(body, opts, nowIso) {
    assertRegistryOptions(opts);
    assertIsoTime(nowIso);
    const input = requireBodyObject(body);
    const name = parseName(input['name']);
    const owningApplication = parseOwningApplication(input['owning_application']);
    const category = parseCategory(input['category']);
    const enrichment = parseEnrichmentStrategies(input['enrichment_strategies'], category, []);
    const partitionStrategy = parsePartitionStrategy(input['partition_strategy'], 'random');
    const mode = parseCompatibilityMode(input['compatibility_mode'], 'forward');
    const schema = parseSchemaField(input['schema'], opts);
    checkSubmittedSchema(schema.parsed, category, mode);
    const keyFields = parsePartitionKeyFields(input['partition_key_fields'], partitionStrategy, schema.parsed);
    const statistics = parseStatistics(input['default_statistic']);
    const retentionTime = parseRetentionTime(input['options'], opts.retentionTimeMsDefault, opts);
    const authorization = parseAuthorization(input['authorization']);
    const readScopes = parseScopes(input['read_scopes'], 'read_scopes');
    const writeScopes = parseScopes(input['write_scopes'], 'write_scopes');
    const eventType = assembleEventType({
        name,
        owning_application: owningApplication,
        category,
        enrichment_strategies: enrichment,
        partition_strategy: partitionStrategy,
        partition_key_fields: keyFields,
        compatibility_mode: mode,
        schema: { type: 'json_schema', schema: schema.text, version: initialSchemaVersion, created_at: nowIso },
        default_statistic: statistics,
        options: { retention_time: retentionTime },
        authorization,
        read_scopes: readScopes,
        write_scopes: writeScopes,
        created_at: nowIso,
        updated_at: nowIso,
    });
    const partitionCount = partitionCountFor(statistics, opts);
    assert(partitionCount >= 1 && partitionCount <= opts.partitionsMax, 'partition count out of bounds');
    return { eventType, partitionCount };
}
/** The times the registry writes come from the caller's clock; a malformed one is a caller bug. */
export function assertIsoTime(nowIso) {
    assert(typeof nowIso === 'string' && !Number.isNaN(Date.parse(nowIso)), `nowIso "${nowIso}" is not a date-time`);
}
/** The interface table's order, which GET serves. */
const eventTypeFieldOrder = [
    'name',
    'owning_application',
    'category',
    'enrichment_strategies',
    'partition_strategy',
    'partition_key_fields',
    'compatibility_mode',
    'schema',
    'default_statistic',
    'options',
    'authorization',
    'read_scopes',
    'write_scopes',
    'created_at',
    'updated_at',
];
/**
 * Builds the stored object in one fixed key order, leaving absent optional fields out rather than
 * present-but-undefined, so stored records compare and serialize predictably.
 */
export function assembleEventType(parts) {
    const ordered = {};
    for (const key of eventTypeFieldOrder) {
        if (parts[key] !== undefined)
            ordered[key] = parts[key];
    }
    return ordered;
}
//# sourceMappingURL=event-type-create.js.map