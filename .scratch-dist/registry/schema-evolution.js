import { escapePointerToken, isPlainObject, jsonEqual } from './json-schema-walk.js';
const levelRank = { none: 0, patch: 1, minor: 2, major: 3 };
export function maxLevel(a, b) {
    return levelRank[a] >= levelRank[b] ? a : b;
}
/** The interface: modes compatible and forward allow patch and minor changes; none allows all. */
export function isChangeAllowed(level, mode) {
    return level !== 'major' || mode === 'none';
}
export function compareSchemaChange(oldSchema, newSchema, mode) {
    const changes = schemaChanges(oldSchema, newSchema, mode);
    return {
        level: changes.reduce((acc, c) => maxLevel(acc, c.level), 'none'),
        reasons: changes.map(describeChange),
    };
}
export function describeChange(change) {
    return `${change.path}: ${change.what}`;
}
export function schemaChanges(oldSchema, newSchema, mode) {
    const out = [];
    diffSchema(oldSchema, newSchema, '#', mode, out);
    return out;
}
/** Annotations: changing them never changes which events are valid. */
const annotationKeywords = new Set(['title', 'description']);
/** Keywords compared as sets: reordering their values changes nothing. */
const setValuedKeywords = new Set(['enum', 'type']);
/** Keywords diffed together with "properties" (a new property and its "required" entry are one change). */
const handledWithProperties = new Set(['properties', 'required']);
function diffSchema(a, b, path, mode, out) {
    if (jsonEqual(a, b))
        return;
    if (!isPlainObject(a) || !isPlainObject(b)) {
        out.push({ level: 'major', path, what: 'schema changed' });
        return;
    }
    diffPropertiesAndRequired(a, b, path, mode, out);
    const keywords = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const keyword of keywords) {
        if (handledWithProperties.has(keyword))
            continue;
        const x = a[keyword];
        const y = b[keyword];
        if (jsonEqual(x, y))
            continue;
        const at = `${path}/${escapePointerToken(keyword)}`;
        if (annotationKeywords.has(keyword)) {
            out.push({ level: 'patch', path: at, what: `"${keyword}" changed` });
        }
        else if (x === undefined || y === undefined) {
            out.push({ level: 'major', path: at, what: x === undefined ? `"${keyword}" added` : `"${keyword}" removed` });
        }
        else {
            diffKeyword(keyword, x, y, at, mode, out);
        }
    }
}
function diffKeyword(keyword, x, y, at, mode, out) {
    switch (keyword) {
        case 'definitions':
        case 'patternProperties':
        case 'dependencies':
            diffSchemaMap(keyword, x, y, at, mode, out);
            return;
        case 'items':
        case 'allOf':
        case 'anyOf':
        case 'oneOf':
            if (Array.isArray(x) && Array.isArray(y) && x.length === y.length) {
                x.forEach((item, i) => diffSchema(item, y[i], `${at}/${i}`, mode, out));
                return;
            }
            if (isPlainObject(x) && isPlainObject(y))
                return diffSchema(x, y, at, mode, out);
            out.push({ level: 'major', path: at, what: `"${keyword}" changed` });
            return;
        case 'not':
        case 'additionalProperties':
        case 'additionalItems':
            if (isPlainObject(x) && isPlainObject(y))
                return diffSchema(x, y, at, mode, out);
            out.push({ level: 'major', path: at, what: `"${keyword}" changed` });
            return;
        default:
            if (setValuedKeywords.has(keyword) && sameSet(x, y))
                return;
            out.push({ level: 'major', path: at, what: `"${keyword}" changed` });
    }
}
function sameSet(x, y) {
    if (!Array.isArray(x) || !Array.isArray(y))
        return false;
    return x.every((v) => y.some((w) => jsonEqual(v, w))) && y.every((w) => x.some((v) => jsonEqual(v, w)));
}
/** definitions, patternProperties, dependencies: entries added or removed, entries changed. */
function diffSchemaMap(keyword, x, y, at, mode, out) {
    if (!isPlainObject(x) || !isPlainObject(y)) {
        out.push({ level: 'major', path: at, what: `"${keyword}" changed` });
        return;
    }
    for (const name of new Set([...Object.keys(x), ...Object.keys(y)])) {
        const entryAt = `${at}/${escapePointerToken(name)}`;
        if (!Object.hasOwn(y, name))
            out.push({ level: 'major', path: entryAt, what: `${keyword} entry removed` });
        // A new definition changes nothing by itself (only a $ref to it does, and that is a change of its
        // own); it is an addition, like an optional property.
        else if (!Object.hasOwn(x, name)) {
            out.push({ level: keyword === 'definitions' ? 'minor' : 'major', path: entryAt, what: `${keyword} entry added` });
        }
        else
            diffSchema(x[name], y[name], entryAt, mode, out);
    }
}
function stringSet(value) {
    return new Set(Array.isArray(value) ? value.filter((v) => typeof v === 'string') : []);
}
function diffPropertiesAndRequired(a, b, path, mode, out) {
    const oldProps = isPlainObject(a['properties']) ? a['properties'] : {};
    const newProps = isPlainObject(b['properties']) ? b['properties'] : {};
    const oldRequired = stringSet(a['required']);
    const newRequired = stringSet(b['required']);
    // Forward mode promises only that old consumers can read new events, so new required data is fine;
    // compatible mode also lets old producers keep publishing, which a new required property would break.
    const requiredAdditionLevel = mode === 'forward' ? 'minor' : 'major';
    const propertyAt = (name) => `${path}/properties/${escapePointerToken(name)}`;
    if (a['properties'] !== undefined && b['properties'] !== undefined && !isPlainObject(b['properties'])) {
        out.push({ level: 'major', path: `${path}/properties`, what: '"properties" changed' });
    }
    for (const name of Object.keys(oldProps)) {
        if (!Object.hasOwn(newProps, name))
            out.push({ level: 'major', path: propertyAt(name), what: 'property removed' });
        else
            diffSchema(oldProps[name], newProps[name], propertyAt(name), mode, out);
    }
    for (const name of Object.keys(newProps)) {
        if (Object.hasOwn(oldProps, name))
            continue;
        if (newRequired.has(name)) {
            out.push({ level: requiredAdditionLevel, path: propertyAt(name), what: 'required property added' });
        }
        else {
            out.push({ level: 'minor', path: propertyAt(name), what: 'optional property added' });
        }
    }
    for (const name of newRequired) {
        if (oldRequired.has(name))
            continue;
        if (Object.hasOwn(newProps, name) && !Object.hasOwn(oldProps, name))
            continue; // reported above as a required property added
        out.push({ level: requiredAdditionLevel, path: `${path}/required`, what: `"${name}" marked required` });
    }
    for (const name of oldRequired) {
        if (newRequired.has(name))
            continue;
        if (Object.hasOwn(oldProps, name) && !Object.hasOwn(newProps, name))
            continue; // reported above as a removal
        out.push({ level: 'major', path: `${path}/required`, what: `"${name}" no longer required` });
    }
}
//# sourceMappingURL=schema-evolution.js.map