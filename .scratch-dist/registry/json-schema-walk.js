/**
 * Where draft-04 keeps subschemas. Every rule that looks inside a schema (forbidden keywords in
 * compatible mode, closing objects against undeclared properties, partition key lookup, evolution
 * diffs) walks through this one list, so a property *named* "not" or "additionalProperties" is never
 * mistaken for the keyword: only schema positions are visited.
 */
export function isPlainObject(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
/** Keywords whose value is one subschema. */
const singleSchemaKeywords = ['additionalItems', 'additionalProperties', 'not'];
/** Keywords whose value is a map from names to subschemas. */
export const schemaMapKeywords = ['properties', 'patternProperties', 'definitions', 'dependencies'];
/** Keywords whose value is an array of subschemas. */
export const schemaArrayKeywords = ['allOf', 'anyOf', 'oneOf'];
export function escapePointerToken(token) {
    return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
function unescapePointerToken(token) {
    return token.replace(/~1/g, '/').replace(/~0/g, '~');
}
/**
 * Calls `visit` for every direct subschema of `node` with its pointer tokens relative to `node`.
 * Boolean additionalProperties/additionalItems and array-valued dependencies are not schemas and are skipped.
 */
export function forEachSubschema(node, visit) {
    for (const keyword of singleSchemaKeywords) {
        const child = node[keyword];
        if (isPlainObject(child))
            visit(child, [keyword], keyword === 'not' ? 'negated' : 'child');
    }
    const items = node['items'];
    if (isPlainObject(items))
        visit(items, ['items'], 'child');
    else if (Array.isArray(items)) {
        items.forEach((item, i) => {
            if (isPlainObject(item))
                visit(item, ['items', String(i)], 'child');
        });
    }
    for (const keyword of schemaMapKeywords) {
        const map = node[keyword];
        if (!isPlainObject(map))
            continue;
        for (const [name, child] of Object.entries(map)) {
            if (isPlainObject(child))
                visit(child, [keyword, name], keyword === 'dependencies' ? 'branch' : 'child');
        }
    }
    for (const keyword of schemaArrayKeywords) {
        const list = node[keyword];
        if (!Array.isArray(list))
            continue;
        list.forEach((child, i) => {
            if (isPlainObject(child))
                visit(child, [keyword, String(i)], 'branch');
        });
    }
}
/** Depth-first visit of `root` and every subschema, with the JSON pointer of each ("" for the root). */
export function walkSchema(root, visit) {
    const step = (node, pointer) => {
        visit(node, pointer);
        forEachSubschema(node, (child, tokens) => step(child, pointer + '/' + tokens.map(escapePointerToken).join('/')));
    };
    step(root, '');
}
/**
 * Resolves a same-document reference ("#", "#/definitions/x") against `root`; undefined for anything
 * else (remote references, ids), which callers treat as "cannot reason about this part".
 */
export function resolveLocalRef(root, ref) {
    if (ref === '#')
        return root;
    if (!ref.startsWith('#/'))
        return undefined;
    let node = root;
    for (const raw of ref.slice(2).split('/')) {
        let token;
        try {
            token = unescapePointerToken(decodeURIComponent(raw));
        }
        catch {
            return undefined;
        }
        if (Array.isArray(node))
            node = node[Number(token)];
        else if (isPlainObject(node))
            node = node[token];
        else
            return undefined;
    }
    return isPlainObject(node) ? node : undefined;
}
/** Structural JSON equality; key order of objects does not matter, array order does. */
export function jsonEqual(a, b) {
    if (a === b)
        return true;
    if (Array.isArray(a)) {
        if (!Array.isArray(b) || a.length !== b.length)
            return false;
        return a.every((item, i) => jsonEqual(item, b[i]));
    }
    if (isPlainObject(a)) {
        if (!isPlainObject(b))
            return false;
        const keys = Object.keys(a);
        if (keys.length !== Object.keys(b).length)
            return false;
        return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
    }
    return false;
}
export function deepCloneJson(value) {
    return structuredClone(value);
}
//# sourceMappingURL=json-schema-walk.js.map