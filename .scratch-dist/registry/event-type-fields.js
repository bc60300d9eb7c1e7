/**
 * Field rules of EventType and its sub-objects (interface "Resources and their fields"), shared by
 * create and update. Each parser takes the raw JSON value, throws Problem 422 whose detail names the
 * field, and returns the normalized value. JSON null is treated like an absent optional field, as the
 * original service's JSON binding did. Unknown fields are ignored (and not stored): clients written
 * for newer versions of the original service send fields Brook does not know.
 */
import { problems } from '../core/problem.js';
import { eventTypeNameLengthMax } from '../core/limits.js';
import { categories, compatibilityModes, enrichmentStrategies, partitionStrategies, } from '../metadata/types.js';
import { closeUndeclaredProperties, effectiveSchema, predefinedFieldConflicts } from './effective-schema.js';
import { forEachSubschema, isPlainObject, resolveLocalRef, walkSchema } from './json-schema-walk.js';
import { checkSchemaLimits } from './schema-limits.js';
import { linearRegExp, UnsupportedPatternError } from './linear-regexp.js';
import { schemaCompileError } from './schema-compiler.js';
export function unprocessable(detail) {
    throw problems.unprocessable(detail);
}
export function isAbsent(value) {
    return value === undefined || value === null;
}
export function requireBodyObject(body) {
    if (!isPlainObject(body))
        unprocessable('Event type must be a JSON object');
    return body;
}
function requireString(value, field) {
    if (isAbsent(value))
        unprocessable(`Field "${field}" is required`);
    if (typeof value !== 'string')
        unprocessable(`Field "${field}" must be a string`);
    return value;
}
const namePatternText = '[a-zA-Z][-0-9a-zA-Z_]*(\\.[a-zA-Z][-0-9a-zA-Z_]*)*';
const namePattern = new RegExp(`^${namePatternText}$`);
export function parseName(value) {
    const name = requireString(value, 'name');
    // Length first: it bounds the work of the pattern and keeps storage keys and log lines bounded.
    if (name.length > eventTypeNameLengthMax) {
        unprocessable(`Field "name" must be at most ${eventTypeNameLengthMax} characters`);
    }
    if (!namePattern.test(name))
        unprocessable(`Field "name" must match pattern ${namePatternText}`);
    return name;
}
export function parseOwningApplication(value) {
    const app = requireString(value, 'owning_application');
    if (app.length === 0)
        unprocessable('Field "owning_application" must not be empty');
    return app;
}
function parseEnum(value, field, allowed) {
    if (typeof value !== 'string' || !allowed.includes(value)) {
        unprocessable(`Field "${field}" must be one of ${allowed.join(', ')}`);
    }
    return value;
}
export function parseCategory(value) {
    if (isAbsent(value))
        unprocessable('Field "category" is required');
    return parseEnum(value, 'category', categories);
}
export function parsePartitionStrategy(value, fallback) {
    if (isAbsent(value))
        return fallback;
    return parseEnum(value, 'partition_strategy', partitionStrategies);
}
export function parseCompatibilityMode(value, fallback) {
    if (isAbsent(value))
        return fallback;
    return parseEnum(value, 'compatibility_mode', compatibilityModes);
}
/** Interface: metadata_enrichment is mandatory for business and data, not allowed for undefined. */
export function parseEnrichmentStrategies(value, category, fallback) {
    let list;
    if (isAbsent(value)) {
        list = fallback;
    }
    else {
        if (!Array.isArray(value))
            unprocessable('Field "enrichment_strategies" must be an array');
        list = value.map((v) => parseEnum(v, 'enrichment_strategies', enrichmentStrategies));
        if (new Set(list).size !== list.length)
            unprocessable('Field "enrichment_strategies" must not repeat a strategy');
    }
    const hasMetadata = list.includes('metadata_enrichment');
    if (category === 'undefined' && hasMetadata) {
        unprocessable('Field "enrichment_strategies" must not contain metadata_enrichment for category undefined');
    }
    if (category !== 'undefined' && !hasMetadata) {
        unprocessable(`Field "enrichment_strategies" must contain metadata_enrichment for category ${category}`);
    }
    return [...list];
}
/**
 * EventTypeSchema on input. version and created_at are read-only and ignored, on create and on update
 * alike (compatibility.md): clients update an event type by GET, change, PUT, and send them back as
 * they read them. The registry sets created_at and computes the version from the change.
 */
export function parseSchemaField(value, limits) {
    if (isAbsent(value))
        unprocessable('Field "schema" is required');
    if (!isPlainObject(value))
        unprocessable('Field "schema" must be an object');
    if (value['type'] !== 'json_schema')
        unprocessable('Field "schema.type" must be json_schema');
    const text = requireString(value['schema'], 'schema.schema');
    if (Buffer.byteLength(text, 'utf8') > limits.schemaBytesMax) {
        unprocessable(`Field "schema.schema" must be at most ${limits.schemaBytesMax} bytes`);
    }
    let parsed;
    try {
        parsed = JSON.parse(text);
    }
    catch (err) {
        unprocessable(`Field "schema.schema" must be valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!isPlainObject(parsed))
        unprocessable('Field "schema.schema" must be a JSON object (a draft-04 schema)');
    // Before anything else walks or compiles it (schema-limits.ts).
    checkSchemaLimits(parsed, limits);
    return { text, parsed };
}
/** Keywords the interface calls unsupported in compatible mode. */
const compatibleForbiddenKeywords = ['not', 'patternProperties', 'additionalProperties', 'additionalItems'];
/**
 * The submitted schema's own rules: a valid draft-04 schema; for business and data, an object schema
 * that does not declare the predefined fields; in compatible mode none of the unsupported keywords;
 * and an effective validation schema that compiles (so publishing can never meet an uncompilable one).
 */
export function checkSubmittedSchema(schema, category, mode) {
    checkPatterns(schema);
    const compileError = schemaCompileError(schema);
    if (compileError?.unsupportedPattern === true) {
        unprocessable(`Field "schema.schema" has a pattern Brook cannot use: ${compileError.reason}`);
    }
    if (compileError !== null) {
        unprocessable(`Field "schema.schema" must be a valid JSON Schema draft-04: ${compileError.reason}`);
    }
    if (category !== 'undefined') {
        const type = schema['type'];
        const objectType = type === undefined || type === 'object' || (Array.isArray(type) && type.includes('object'));
        if (!objectType)
            unprocessable(`Field "schema.schema" must describe an object for category ${category}`);
        const conflicts = predefinedFieldConflicts(category, schema);
        if (conflicts.length > 0) {
            unprocessable(`Field "schema.schema" must not declare ${conflicts.map((n) => `"${n}"`).join(', ')}: ` +
                `reserved by category ${category}`);
        }
    }
    if (mode === 'compatible') {
        walkSchema(schema, (node, pointer) => {
            for (const keyword of compatibleForbiddenKeywords) {
                if (node[keyword] !== undefined) {
                    unprocessable(`Field "schema.schema" uses "${keyword}" at #${pointer}, which compatibility_mode compatible does not support`);
                }
            }
        });
    }
    const validationSchema = closeUndeclaredProperties(effectiveSchema(category, schema), mode);
    const effectiveError = schemaCompileError(validationSchema);
    if (effectiveError !== null) {
        unprocessable(`Field "schema.schema" cannot be used for category ${category}: ${effectiveError.reason}`);
    }
}
/**
 * Every `pattern` and `patternProperties` key must run in linear time (linear-regexp.ts), also where ajv
 * would skip it (a pattern property whose schema is {}): a later version could start using it. The
 * compiler refuses them too; this names where they are.
 */
function checkPatterns(schema) {
    walkSchema(schema, (node, pointer) => {
        const patterns = [];
        if (typeof node['pattern'] === 'string')
            patterns.push([node['pattern'], `#${pointer}/pattern`]);
        const props = node['patternProperties'];
        if (isPlainObject(props))
            for (const key of Object.keys(props))
                patterns.push([key, `#${pointer}/patternProperties`]);
        for (const [pattern, where] of patterns) {
            try {
                linearRegExp(pattern);
            }
            catch (err) {
                if (!(err instanceof UnsupportedPatternError))
                    throw err;
                unprocessable(`Field "schema.schema" has a pattern at ${where} that Brook cannot use: ${err.message}`);
            }
        }
    });
}
/**
 * partition_key_fields: required for hash, absent otherwise (an empty list counts as absent, since it
 * names no field); each entry a required field of the submitted schema (for data that is the schema of
 * `data`), dotted paths descending through required object properties.
 */
export function parsePartitionKeyFields(value, strategy, schema) {
    const absent = isAbsent(value) || (Array.isArray(value) && value.length === 0);
    if (strategy !== 'hash') {
        if (!absent)
            unprocessable(`Field "partition_key_fields" must be absent for partition_strategy ${strategy}`);
        return undefined;
    }
    if (absent)
        unprocessable('Field "partition_key_fields" is required for partition_strategy hash');
    if (!Array.isArray(value))
        unprocessable('Field "partition_key_fields" must be an array of strings');
    for (const field of value) {
        if (typeof field !== 'string' || field.length === 0) {
            unprocessable('Field "partition_key_fields" must be an array of non-empty strings');
        }
        if (!isRequiredPath(schema, field)) {
            unprocessable(`Field "partition_key_fields" entry "${field}" must be a required field of the schema`);
        }
    }
    return [...value];
}
/** True when every segment of the dotted path is a declared and required property of its parent. */
function isRequiredPath(root, path) {
    let node = root;
    for (const segment of path.split('.')) {
        node = node === undefined ? undefined : derefLocal(root, node);
        if (node === undefined || !declaresRequired(root, node, segment))
            return false;
        node = propertySchema(root, node, segment);
    }
    return true;
}
function derefLocal(root, node) {
    const seen = new Set();
    let current = node;
    while (current !== undefined && typeof current['$ref'] === 'string') {
        if (seen.has(current))
            return undefined; // a $ref cycle describes no property
        seen.add(current);
        current = resolveLocalRef(root, current['$ref']);
    }
    return current;
}
/** The node itself plus its allOf members: all of them apply to the same object. */
function sameObjectSchemas(root, node) {
    const out = [node];
    forEachSubschema(node, (child, tokens) => {
        if (tokens[0] !== 'allOf')
            return;
        const member = derefLocal(root, child);
        if (member !== undefined)
            out.push(...sameObjectSchemas(root, member));
    });
    return out;
}
function declaresRequired(root, node, name) {
    const schemas = sameObjectSchemas(root, node);
    const required = schemas.some((s) => Array.isArray(s['required']) && s['required'].includes(name));
    return required && propertySchema(root, node, name) !== undefined;
}
function propertySchema(root, node, name) {
    for (const s of sameObjectSchemas(root, node)) {
        const properties = s['properties'];
        if (isPlainObject(properties) && Object.hasOwn(properties, name) && isPlainObject(properties[name])) {
            return properties[name];
        }
    }
    return undefined;
}
const statisticsFields = ['messages_per_minute', 'message_size', 'read_parallelism', 'write_parallelism'];
export function parseStatistics(value) {
    if (isAbsent(value))
        return undefined;
    if (!isPlainObject(value))
        unprocessable('Field "default_statistic" must be an object');
    const stats = {};
    for (const field of statisticsFields) {
        const n = value[field];
        if (isAbsent(n))
            unprocessable(`Field "default_statistic.${field}" is required`);
        if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
            unprocessable(`Field "default_statistic.${field}" must be an integer >= 1`);
        }
        stats[field] = n;
    }
    return stats;
}
/** compatibility.md: min(max(read_parallelism, write_parallelism), max); the default when absent. */
export function partitionCountFor(stats, opts) {
    if (stats === undefined)
        return opts.partitionsDefault;
    return Math.min(Math.max(stats.read_parallelism, stats.write_parallelism), opts.partitionsMax);
}
export function parseRetentionTime(value, fallback, opts) {
    if (isAbsent(value))
        return fallback;
    if (!isPlainObject(value))
        unprocessable('Field "options" must be an object');
    const ms = value['retention_time'];
    if (isAbsent(ms))
        return fallback;
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms)) {
        unprocessable('Field "options.retention_time" must be an integer (milliseconds)');
    }
    if (ms < opts.retentionTimeMsMin || ms > opts.retentionTimeMsMax) {
        unprocessable(`Field "options.retention_time" must be between ${opts.retentionTimeMsMin} and ${opts.retentionTimeMsMax}`);
    }
    return ms;
}
const authorizationLists = ['admins', 'readers', 'writers'];
/**
 * EventTypeAuthorization: all three lists required and non-empty (an empty list would lock everyone,
 * including the owners, out of that operation), each item {data_type, value} of non-empty strings.
 * What a data_type means is the authorization plugin's business, not the registry's.
 */
export function parseAuthorization(value) {
    if (isAbsent(value))
        return undefined;
    if (!isPlainObject(value))
        unprocessable('Field "authorization" must be an object');
    const auth = {};
    for (const list of authorizationLists) {
        const items = value[list];
        if (isAbsent(items))
            unprocessable(`Field "authorization.${list}" is required`);
        if (!Array.isArray(items))
            unprocessable(`Field "authorization.${list}" must be an array`);
        if (items.length === 0)
            unprocessable(`Field "authorization.${list}" must not be empty`);
        auth[list] = items.map((item, i) => parseAttribute(item, `authorization.${list}[${i}]`));
    }
    return auth;
}
function parseAttribute(item, field) {
    if (!isPlainObject(item))
        unprocessable(`Field "${field}" must be an object with data_type and value`);
    const dataType = item['data_type'];
    const value = item['value'];
    if (typeof dataType !== 'string' || dataType.length === 0) {
        unprocessable(`Field "${field}.data_type" must be a non-empty string`);
    }
    if (typeof value !== 'string' || value.length === 0) {
        unprocessable(`Field "${field}.value" must be a non-empty string`);
    }
    return { data_type: dataType, value };
}
export function parseScopes(value, field) {
    if (isAbsent(value))
        return undefined;
    if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) {
        unprocessable(`Field "${field}" must be an array of strings`);
    }
    return [...value];
}
//# sourceMappingURL=event-type-fields.js.map