/**
 * PUT /event-types/{name}: the field rules of create, plus what may change on an existing event type.
 *
 * Rules from the interface: the name cannot change; the schema change must be allowed by
 * compatibility_mode; mode changes only none -> forward -> compatible; an existing authorization
 * section cannot be removed; default_statistic cannot change. Read-only fields sent back as they were
 * read (created_at, updated_at, schema.created_at, schema.version) are ignored, never taken from the
 * request (compatibility.md: clients update by GET, change, PUT, as the original service allowed).
 *
 * Rules Brook decides where the interface is silent (each refuses what would break a promise already
 * made to consumers of the stored events):
 * - category cannot change: stored events were validated against the old category's effective schema
 *   (a data change event is no business event), and enrichment depends on it.
 * - partition_strategy may change only away from random (as the original service allows): random
 *   promised no ordering, so starting to order from now on breaks nobody; leaving hash or
 *   user_defined would break the per-key (or producer-chosen) ordering consumers rely on.
 * - partition_key_fields cannot change while the strategy stays hash: other keys would send equal
 *   entities to other partitions, breaking their order.
 * - The schema is compared under the mode that results from the update (the stricter one, since
 *   modes only get stricter), so a mode change cannot smuggle in a change the new mode forbids.
 * - Omitted fields that cannot change (or whose default would be a forbidden change) keep their stored
 *   value: compatibility_mode, partition_strategy, partition_key_fields (while hash),
 *   enrichment_strategies, default_statistic, options.retention_time. A client that PUTs a body built
 *   for an older version of the resource should not have its retention or ordering silently reset.
 *   read_scopes and write_scopes are replaced like the rest of the resource (absent means none).
 */
import { problems } from '../core/problem.js';
import { assembleEventType, assertIsoTime } from './event-type-create.js';
import { checkSubmittedSchema, isAbsent, parseAuthorization, parseCategory, parseCompatibilityMode, parseEnrichmentStrategies, parseOwningApplication, parsePartitionKeyFields, parsePartitionStrategy, parseRetentionTime, parseSchemaField, parseScopes, parseStatistics, requireBodyObject, unprocessable, } from './event-type-fields.js';
import { isPlainObject, jsonEqual } from './json-schema-walk.js';
import { assertRegistryOptions } from './registry-options.js';
import { describeChange, isChangeAllowed, maxLevel, schemaChanges } from './schema-evolution.js';
import { bumpVersion } from './semver.js';
/** Interface: "Allowed mode changes are none to forward and forward to compatible" (stricter only). */
const allowedModeChanges = new Set(['none->forward', 'forward->compatible']);
export function isModeChangeAllowed(from, to) {
    return from === to || allowedModeChanges.has(`${from}->${to}`);
}
export function validateEventTypeUpdate(body, existing, opts, nowIso) {
    assertRegistryOptions(opts);
    assertIsoTime(nowIso);
    const old = existing.eventType;
    const input = requireBodyObject(body);
    if (input['name'] !== old.name) {
        unprocessable(`Field "name" cannot be changed (the event type is "${old.name}")`);
    }
    const owningApplication = parseOwningApplication(input['owning_application']);
    const category = parseCategory(input['category']);
    if (category !== old.category)
        unprocessable(`Field "category" cannot be changed from ${old.category}`);
    const enrichment = parseEnrichmentStrategies(input['enrichment_strategies'], category, old.enrichment_strategies);
    const mode = parseCompatibilityMode(input['compatibility_mode'], old.compatibility_mode);
    if (!isModeChangeAllowed(old.compatibility_mode, mode)) {
        unprocessable(`Field "compatibility_mode" cannot change from ${old.compatibility_mode} to ${mode}; ` +
            'allowed are none to forward and forward to compatible');
    }
    const strategy = parsePartitionStrategy(input['partition_strategy'], old.partition_strategy);
    if (strategy !== old.partition_strategy && old.partition_strategy !== 'random') {
        unprocessable(`Field "partition_strategy" cannot change from ${old.partition_strategy}; only random may be changed`);
    }
    const submitted = parseSchemaField(input['schema'], opts);
    checkSubmittedSchema(submitted.parsed, category, mode);
    const keepingHash = strategy === 'hash' && old.partition_strategy === 'hash';
    const keyFieldsInput = isAbsent(input['partition_key_fields']) && keepingHash ? old.partition_key_fields : input['partition_key_fields'];
    const keyFields = parsePartitionKeyFields(keyFieldsInput, strategy, submitted.parsed);
    if (keepingHash && !jsonEqual(keyFields, old.partition_key_fields)) {
        unprocessable('Field "partition_key_fields" cannot be changed while partition_strategy is hash');
    }
    const statistics = isAbsent(input['default_statistic'])
        ? old.default_statistic
        : parseStatistics(input['default_statistic']);
    if (!jsonEqual(statistics, old.default_statistic)) {
        unprocessable('Field "default_statistic" cannot be changed: it fixed the partition count at creation');
    }
    const retentionTime = parseRetentionTime(input['options'], old.options.retention_time, opts);
    const authorization = parseAuthorization(input['authorization']);
    if (old.authorization !== undefined && authorization === undefined) {
        // Checked as a Problem on the request rather than in the authorizer: the interface lists it
        // among PUT's conditions, and removing the section would drop every access restriction.
        throw problems.unprocessable('Field "authorization" cannot be removed once set');
    }
    const readScopes = parseScopes(input['read_scopes'], 'read_scopes');
    const writeScopes = parseScopes(input['write_scopes'], 'write_scopes');
    const evolution = evolveSchema(old.schema, submitted, mode, nowIso);
    const eventType = assembleEventType({
        name: old.name,
        owning_application: owningApplication,
        category,
        enrichment_strategies: enrichment,
        partition_strategy: strategy,
        partition_key_fields: keyFields,
        compatibility_mode: mode,
        schema: evolution.schema,
        default_statistic: statistics,
        options: { retention_time: retentionTime },
        authorization,
        read_scopes: readScopes,
        write_scopes: writeScopes,
        created_at: old.created_at,
        updated_at: nowIso,
    });
    return { eventType, schemaChanged: evolution.changed };
}
/**
 * The new EventTypeSchema: unchanged (same version, same text) when the schemas are semantically
 * identical; otherwise the new text with the version bumped by the largest change, refused when the
 * mode does not allow that change.
 */
function evolveSchema(current, submitted, mode, nowIso) {
    const previous = JSON.parse(current.schema);
    const changes = schemaChanges(isPlainObject(previous) ? previous : {}, submitted.parsed, mode);
    const level = changes.reduce((acc, c) => maxLevel(acc, c.level), 'none');
    if (level === 'none')
        return { schema: current, changed: false };
    if (!isChangeAllowed(level, mode)) {
        const refused = changes.filter((c) => !isChangeAllowed(c.level, mode)).map(describeChange);
        unprocessable(`Field "schema.schema" has changes not allowed in compatibility_mode ${mode}: ${refused.join('; ')}`);
    }
    return {
        schema: { type: 'json_schema', schema: submitted.text, version: bumpVersion(current.version, level), created_at: nowIso },
        changed: true,
    };
}
//# sourceMappingURL=event-type-update.js.map