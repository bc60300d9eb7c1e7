/**
 * The interface's category rules turn a submitted schema into the schema events are checked against:
 * - undefined: the submitted schema as is (and events are never validated);
 * - business: metadata plus the submitted properties at the top level of the event;
 * - data: {metadata, data_op, data_type, data}, where the submitted schema describes data.
 *
 * Then closeUndeclaredProperties() applies the compatibility mode's rule on undeclared properties.
 */
import { problems } from '../core/problem.js';
import { deepCloneJson, escapePointerToken, forEachSubschema, isPlainObject, resolveLocalRef, walkSchema, } from './json-schema-walk.js';
/** EventMetadata (interface table). Every field is declared so the closed modes accept all of them. */
export function metadataSchema() {
    return {
        type: 'object',
        properties: {
            eid: { type: 'string', format: 'uuid' },
            event_type: { type: 'string' },
            occurred_at: { type: 'string', format: 'date-time' },
            received_at: { type: 'string', format: 'date-time' },
            version: { type: 'string' },
            parent_eids: { type: 'array', items: { type: 'string', format: 'uuid' } },
            flow_id: { type: 'string' },
            partition: { type: 'string' },
        },
        required: ['eid', 'occurred_at'],
    };
}
/** Top-level property names the category reserves; the submitted schema must not declare them. */
export function predefinedFields(category) {
    switch (category) {
        case 'undefined':
            return [];
        case 'business':
            return ['metadata'];
        case 'data':
            return ['metadata', 'data_op', 'data_type', 'data'];
    }
}
/** Predefined names the submitted schema declares in its top-level properties (a name conflict). */
export function predefinedFieldConflicts(category, submitted) {
    const properties = submitted['properties'];
    if (!isPlainObject(properties))
        return [];
    return predefinedFields(category).filter((name) => Object.prototype.hasOwnProperty.call(properties, name));
}
/**
 * The effective schema of a category. Throws Problem 422 on a name conflict, so no caller can build an
 * effective schema whose own field would silently replace a predefined one.
 * The result shares no objects with `submitted` except for category undefined, where it *is* `submitted`.
 */
export function effectiveSchema(category, submitted) {
    const conflicts = predefinedFieldConflicts(category, submitted);
    if (conflicts.length > 0) {
        throw problems.unprocessable(`Field "schema.schema" must not declare ${conflicts.map((n) => `"${n}"`).join(', ')}: ` +
            `reserved by category ${category}`);
    }
    switch (category) {
        case 'undefined':
            return submitted;
        case 'business':
            return businessSchema(deepCloneJson(submitted));
        case 'data':
            return dataChangeSchema(deepCloneJson(submitted));
    }
}
/** Where a business schema's own root goes when it refers to itself (`"$ref": "#"`). */
const submittedRootDefinition = '__brook_submitted_root';
function businessSchema(schema) {
    const own = isPlainObject(schema['properties']) ? schema['properties'] : {};
    const required = Array.isArray(schema['required']) ? schema['required'] : [];
    // A recursive schema ("$ref": "#", e.g. a tree of nodes) means the submitted root, not the event
    // with its metadata: such references point to a copy of the submitted root kept in definitions.
    // Its definitions stay at the root, where "#/definitions/..." keeps resolving. A root id starts a
    // resolution scope of its own, and is left alone (as for data change events).
    if (typeof schema['id'] !== 'string' && refersToRoot(schema)) {
        const root = deepCloneJson(schema);
        delete root['definitions'];
        const target = `#/definitions/${submittedRootDefinition}`;
        retargetRootRefs(schema, target);
        retargetRootRefs(root, target);
        const definitions = isPlainObject(schema['definitions']) ? schema['definitions'] : {};
        schema['definitions'] = { ...definitions, [submittedRootDefinition]: root };
    }
    // metadata first: it is what every reader of a business event looks at before the payload.
    return {
        ...schema,
        ...(schema['type'] === undefined ? { type: 'object' } : {}),
        properties: { metadata: metadataSchema(), ...own },
        required: ['metadata', ...required.filter((n) => n !== 'metadata')],
    };
}
function dataChangeSchema(schema) {
    // $schema is only meaningful at a document's root, so it moves up to the wrapper.
    const dollarSchema = schema['$schema'];
    delete schema['$schema'];
    if (schema['type'] === undefined)
        schema['type'] = 'object';
    // Same-document references ("#/definitions/x") were written against the submitted schema's root,
    // which is now at #/properties/data. A root "id" starts a new resolution scope in which the old
    // references still resolve, so they are left alone then; likewise below any nested "id".
    if (typeof schema['id'] !== 'string')
        rebaseLocalRefs(schema, '#/properties/data');
    return {
        ...(dollarSchema !== undefined ? { $schema: dollarSchema } : {}),
        type: 'object',
        properties: {
            metadata: metadataSchema(),
            data_op: { type: 'string', enum: ['C', 'U', 'D', 'S'] },
            data_type: { type: 'string' },
            data: schema,
        },
        required: ['metadata', 'data_op', 'data_type', 'data'],
    };
}
/** Whether a subschema (outside a nested id's scope) is `"$ref": "#"`. */
function refersToRoot(node) {
    let found = node['$ref'] === '#';
    forEachSubschema(node, (child) => {
        if (!found && typeof child['id'] !== 'string')
            found = refersToRoot(child);
    });
    return found;
}
function retargetRootRefs(node, target) {
    if (node['$ref'] === '#')
        node['$ref'] = target;
    forEachSubschema(node, (child) => {
        if (typeof child['id'] !== 'string')
            retargetRootRefs(child, target);
    });
}
function rebaseLocalRefs(node, base) {
    const ref = node['$ref'];
    if (typeof ref === 'string' && ref.startsWith('#'))
        node['$ref'] = base + ref.slice(1);
    forEachSubschema(node, (child) => {
        if (typeof child['id'] !== 'string')
            rebaseLocalRefs(child, base);
    });
}
// ---------------------------------------------------------------------------------------------------
// Undeclared properties per compatibility mode.
/** True when the schema constrains objects, i.e. closing it changes what it accepts for objects only. */
function describesObject(node) {
    const type = node['type'];
    if (type === 'object')
        return true;
    if (Array.isArray(type))
        return type.includes('object');
    return (type === undefined &&
        (isPlainObject(node['properties']) || Array.isArray(node['required']) || isPlainObject(node['patternProperties'])));
}
/**
 * The schema that events are validated with, given the mode's rule on undeclared properties:
 * - forward: undeclared properties accepted, so the schema is used as written (returned unchanged);
 * - compatible: undeclared properties rejected: additionalProperties:false on every object schema
 *   (the mode forbids additionalProperties, so there is nothing of the author's to respect);
 * - none: rejected unless the schema allows them: false wherever additionalProperties is not set.
 *
 * additionalProperties only sees the properties of its own schema object, so a naive injection would
 * break composition: {allOf:[{properties:{a}}, {properties:{b}}]} would accept nothing. Hence:
 * - members of allOf/anyOf/oneOf and schema dependencies describe the same object as their parent and
 *   are not closed themselves; the parent is closed instead, declaring every property its members declare;
 * - when a member's properties cannot be known (a remote $ref, or a member that itself allows extra
 *   properties), the parent is left open rather than rejecting valid events;
 * - definitions used as members through a local $ref are treated as members;
 * - nothing under `not` is touched, since closing a negated schema would widen what is accepted.
 * Returns a deep copy; the input is never modified.
 */
export function closeUndeclaredProperties(schema, mode) {
    if (mode === 'forward')
        return schema;
    const root = deepCloneJson(schema);
    const memberRefs = new Set();
    walkSchema(root, (node) => {
        forEachSubschema(node, (child, _tokens, role) => {
            if (role === 'branch' && typeof child['$ref'] === 'string')
                memberRefs.add(child['$ref']);
        });
    });
    const close = (node, pointer, isMember) => {
        forEachSubschema(node, (child, tokens, role) => {
            if (role === 'negated')
                return;
            const childPointer = pointer + '/' + tokens.map(escapePointerToken).join('/');
            close(child, childPointer, role === 'branch' || memberRefs.has('#' + childPointer));
        });
        if (!isMember)
            maybeClose(root, node);
    };
    close(root, '', false);
    return root;
}
function maybeClose(root, node) {
    if (node['additionalProperties'] !== undefined)
        return; // compatible forbids it; in none the author chose.
    const members = collectMembers(root, node, new Set());
    if (members === undefined)
        return;
    if (!describesObject(node) && !members.some(describesObject))
        return;
    for (const member of members) {
        const extra = member['additionalProperties'];
        if ((extra !== undefined && extra !== false) || member['patternProperties'] !== undefined)
            return;
    }
    // Members' properties are declared on the closed parent as "{}" (any value): the members still
    // check their values, the parent only stops treating those names as undeclared.
    const own = isPlainObject(node['properties']) ? node['properties'] : {};
    for (const member of members) {
        const declared = member['properties'];
        if (!isPlainObject(declared))
            continue;
        for (const name of Object.keys(declared)) {
            if (!Object.prototype.hasOwnProperty.call(own, name))
                own[name] = {};
        }
    }
    if (Object.keys(own).length > 0 || node['properties'] !== undefined)
        node['properties'] = own;
    node['additionalProperties'] = false;
}
/**
 * Every schema that describes the same object as `node` (members, members of members, local $ref
 * targets), or undefined when one of them cannot be resolved.
 */
function collectMembers(root, node, seen) {
    const members = [];
    let resolvable = true;
    forEachSubschema(node, (child, _tokens, role) => {
        if (role !== 'branch' || !resolvable)
            return;
        let member = child;
        const ref = child['$ref'];
        if (typeof ref === 'string')
            member = resolveLocalRef(root, ref);
        if (member === undefined) {
            resolvable = false;
            return;
        }
        if (seen.has(member))
            return;
        seen.add(member);
        members.push(member);
        const nested = collectMembers(root, member, seen);
        if (nested === undefined)
            resolvable = false;
        else
            members.push(...nested);
    });
    return resolvable ? members : undefined;
}
//# sourceMappingURL=effective-schema.js.map