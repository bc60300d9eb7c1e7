/**
 * Bounds on a submitted schema's complexity, checked right after it is parsed and before anything
 * else looks at it. Every later step (the registry's walks, schema evolution, ajv's compiler and the
 * code it generates) works in time and stack depth proportional to these, so they are what keeps one
 * request from freezing the node or overflowing the stack (a 100,000-deep array or 10,000 properties
 * answered 500 "Maximum call stack size exceeded"; a 60,000-value enum took 25 s to create).
 *
 * - schemaBytesMax: the schema text (UTF-8 bytes);
 * - schemaDepthMax: nesting of objects and arrays in the schema document (the root object is 1);
 * - schemaObjectsMax: objects and arrays in the schema document: every subschema and every keyword
 *   holding several (properties, allOf ...) counts, so it bounds what ajv compiles into one function;
 * - schemaEnumValuesMax: values of one `enum`; they must also be distinct (draft-04), which is checked
 *   here in linear time rather than by ajv's meta-schema in quadratic time.
 * The depth and count are measured without recursion, so they hold for any input.
 */
import { problems } from '../core/problem.js';
import { isPlainObject, walkSchema } from './json-schema-walk.js';
function refuse(detail) {
    throw problems.unprocessable(`Field "schema.schema" ${detail}`);
}
/** Depth and object count of a parsed JSON document, iteratively; stops as soon as a bound is passed. */
function checkShape(root, limits) {
    const stack = [[root, 1]];
    let objects = 0;
    while (stack.length > 0) {
        const [value, depth] = stack.pop();
        if (typeof value !== 'object' || value === null)
            continue;
        objects++;
        if (depth > limits.schemaDepthMax)
            refuse(`is nested deeper than ${limits.schemaDepthMax} levels of objects and arrays`);
        if (objects > limits.schemaObjectsMax)
            refuse(`has more than ${limits.schemaObjectsMax} objects and arrays (subschemas and their keywords)`);
        for (const child of Array.isArray(value) ? value : Object.values(value)) {
            if (typeof child === 'object' && child !== null)
                stack.push([child, depth + 1]);
        }
    }
}
/** JSON text with object keys sorted: equal JSON values (draft-04 equality) give equal text. */
function canonical(value) {
    if (Array.isArray(value))
        return `[${value.map(canonical).join(',')}]`;
    if (isPlainObject(value)) {
        return `{${Object.keys(value)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
            .join(',')}}`;
    }
    return JSON.stringify(value);
}
function checkEnums(schema, limits) {
    walkSchema(schema, (node, pointer) => {
        const values = node['enum'];
        if (!Array.isArray(values))
            return;
        if (values.length > limits.schemaEnumValuesMax) {
            refuse(`has an enum of ${values.length} values at #${pointer}/enum; at most ${limits.schemaEnumValuesMax} are allowed`);
        }
        const seen = new Set();
        for (const v of values) {
            const key = canonical(v);
            if (seen.has(key))
                refuse(`repeats the value ${key.slice(0, 100)} in the enum at #${pointer}/enum; enum values must be distinct`);
            seen.add(key);
        }
    });
}
/** Throws 422 when the parsed schema passes a bound (its text size is checked by the caller, before parsing). */
export function checkSchemaLimits(schema, limits) {
    checkShape(schema, limits);
    checkEnums(schema, limits);
}
//# sourceMappingURL=schema-limits.js.map