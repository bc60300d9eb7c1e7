/**
 * Goal: compareSchemaChange classifies schema changes as the Versioning rules say: only title or
 * description -> patch; new optional properties (and in forward mode new required ones / marking
 * required) -> minor; anything else -> major; identical -> none. Method: examples per rule, then
 * fast-check properties over generated draft-04 schemas: a schema against itself is none, adding a
 * random optional property anywhere is minor, changing only descriptions/titles is patch.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compareSchemaChange } from './index.js';
const modes = ['compatible', 'forward', 'none'];
const base = {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'object', properties: { c: { type: 'integer' } } } },
    required: ['a'],
};
function edit(f) {
    const s = structuredClone(base);
    f(s);
    return s;
}
describe('compareSchemaChange examples', () => {
    test('identical schemas: none', () => {
        for (const mode of modes)
            assert.deepEqual(compareSchemaChange(base, structuredClone(base), mode), { level: 'none', reasons: [] });
    });
    test('key order and the order of required/enum/type lists are not changes', () => {
        const a = { type: ['object', 'null'], properties: { x: { enum: [1, 2] }, y: {} }, required: ['x', 'y'] };
        const b = { required: ['y', 'x'], properties: { y: {}, x: { enum: [2, 1] } }, type: ['null', 'object'] };
        assert.equal(compareSchemaChange(a, b, 'forward').level, 'none');
    });
    test('title and description changes anywhere: patch', () => {
        const next = edit((s) => {
            s.title = 'T';
            s.properties.b.properties.c.description = 'counter';
        });
        for (const mode of modes) {
            const r = compareSchemaChange(base, next, mode);
            assert.equal(r.level, 'patch');
            assert.deepEqual([...r.reasons].sort(), ['#/properties/b/properties/c/description: "description" changed', '#/title: "title" changed']);
        }
    });
    test('a property named "description" is a property, not an annotation', () => {
        const a = { type: 'object', properties: { description: { type: 'string' } } };
        const b = { type: 'object', properties: { description: { type: 'number' } } };
        assert.equal(compareSchemaChange(a, b, 'forward').level, 'major');
    });
    test('new optional property (nested too): minor', () => {
        for (const mode of modes) {
            assert.equal(compareSchemaChange(base, edit((s) => (s.properties.d = { type: 'string' })), mode).level, 'minor');
            assert.equal(compareSchemaChange(base, edit((s) => (s.properties.b.properties.e = { type: 'string' })), mode).level, 'minor');
        }
    });
    test('new required property: minor in forward, major otherwise', () => {
        const next = edit((s) => {
            s.properties.d = { type: 'string' };
            s.required.push('d');
        });
        assert.equal(compareSchemaChange(base, next, 'forward').level, 'minor');
        assert.equal(compareSchemaChange(base, next, 'compatible').level, 'major');
        assert.equal(compareSchemaChange(base, next, 'none').level, 'major');
    });
    test('marking an existing property required: minor in forward, major otherwise', () => {
        const next = edit((s) => (s.properties.b.required = ['c']));
        assert.equal(compareSchemaChange(base, next, 'forward').level, 'minor');
        assert.deepEqual(compareSchemaChange(base, next, 'compatible').reasons, ['#/properties/b/required: "c" marked required']);
    });
    test('removals, type changes, constraint changes, no-longer-required: major', () => {
        const edits = [
            ['#/properties/a: property removed', (s) => delete s.properties.a],
            ['#/properties/a/type: "type" changed', (s) => (s.properties.a.type = 'number')],
            ['#/properties/a/maxLength: "maxLength" added', (s) => (s.properties.a.maxLength = 3)],
            ['#/properties/a/format: "format" added', (s) => (s.properties.a.format = 'uuid')],
            ['#/required: "a" no longer required', (s) => (s.required = [])],
            ['#/properties/b/properties/c/enum: "enum" added', (s) => (s.properties.b.properties.c.enum = [1])],
            ['#/additionalProperties: "additionalProperties" added', (s) => (s.additionalProperties = false)],
            ['#/properties/a/default: "default" added', (s) => (s.properties.a.default = 'x')],
        ];
        for (const [reason, f] of edits) {
            for (const mode of modes) {
                const r = compareSchemaChange(base, edit(f), mode);
                assert.equal(r.level, 'major', reason);
                assert.ok(r.reasons.includes(reason), `${JSON.stringify(r.reasons)} should include ${reason}`);
            }
        }
    });
    test('definitions: adding one is minor, changing one is judged inside, removing one is major', () => {
        const a = { definitions: { x: { type: 'string' } }, properties: { p: { $ref: '#/definitions/x' } } };
        assert.equal(compareSchemaChange(a, { ...a, definitions: { ...a.definitions, y: { type: 'number' } } }, 'forward').level, 'minor');
        assert.equal(compareSchemaChange(a, { ...a, definitions: { x: { type: 'string', description: 'd' } } }, 'forward').level, 'patch');
        assert.equal(compareSchemaChange(a, { ...a, definitions: {} }, 'forward').level, 'major');
        assert.equal(compareSchemaChange(a, { ...a, properties: { p: { $ref: '#/definitions/y' } } }, 'none').level, 'major');
    });
    test('subschemas of items and combinators are diffed structurally', () => {
        const a = { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } }, allOf: [{ title: 'one' }] };
        assert.equal(compareSchemaChange(a, { ...a, items: { ...a.items, properties: { x: { type: 'string' }, y: {} } } }, 'forward').level, 'minor');
        assert.equal(compareSchemaChange(a, { ...a, allOf: [{ title: 'uno' }] }, 'forward').level, 'patch');
        assert.equal(compareSchemaChange(a, { ...a, allOf: [{ title: 'one' }, { title: 'two' }] }, 'forward').level, 'major');
        assert.equal(compareSchemaChange(a, { ...a, items: [a.items] }, 'none').level, 'major');
    });
});
// ------------------------------------------------------------------------------------------------
// Properties over generated schemas.
const nameArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/);
const annotationsArb = fc.record({ title: fc.string({ maxLength: 8 }), description: fc.string({ maxLength: 8 }) }, { requiredKeys: [] });
const { schema: schemaArb } = fc.letrec((tie) => ({
    schema: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.record({ type: fc.constantFrom('string', 'number', 'integer', 'boolean'), format: fc.constantFrom(undefined, 'uuid', 'date-time') }).map(({ type, format }) => (format === undefined || type !== 'string' ? { type } : { type, format })), tie('object'), tie('schema').map((items) => ({ type: 'array', items }))),
    object: fc
        .tuple(fc.dictionary(nameArb, tie('schema'), { maxKeys: 4 }), annotationsArb, fc.array(fc.boolean(), { maxLength: 4 }))
        .map(([properties, annotations, requiredFlags]) => {
        const names = Object.keys(properties);
        const required = names.filter((_, i) => requiredFlags[i] === true);
        return { ...annotations, type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
    }),
}));
const objectSchemaArb = schemaArb.filter((s) => s['type'] === 'object');
const modeArb = fc.constantFrom('compatible', 'forward', 'none');
/** Every object schema node in the tree, with a way to reach it in a copy. */
function objectNodes(schema) {
    const out = [];
    const visit = (node) => {
        if (node['type'] === 'object')
            out.push(node);
        const props = node['properties'];
        for (const child of Object.values(props ?? {}))
            visit(child);
        if (node['items'] !== undefined)
            visit(node['items']);
    };
    visit(schema);
    return out;
}
function allNodes(schema) {
    const out = [schema];
    const props = schema['properties'];
    for (const child of Object.values(props ?? {}))
        out.push(...allNodes(child));
    if (schema['items'] !== undefined)
        out.push(...allNodes(schema['items']));
    return out;
}
describe('compareSchemaChange properties', () => {
    test('property: a schema compared with itself (or a copy) is none', () => {
        fc.assert(fc.property(schemaArb, modeArb, (s, mode) => compareSchemaChange(s, structuredClone(s), mode).level === 'none'));
    });
    test('property: adding a random optional property to any object schema is minor', () => {
        fc.assert(fc.property(objectSchemaArb, fc.nat(), nameArb, schemaArb, modeArb, (s, pick, name, propSchema, mode) => {
            const next = structuredClone(s);
            const nodes = objectNodes(next);
            const target = nodes[pick % nodes.length];
            const props = target['properties'];
            fc.pre(!Object.hasOwn(props, name));
            props[name] = propSchema;
            return compareSchemaChange(s, next, mode).level === 'minor';
        }));
    });
    test('property: changing only titles and descriptions is patch', () => {
        fc.assert(fc.property(schemaArb, fc.array(fc.tuple(fc.nat(), fc.constantFrom('title', 'description'), fc.string({ maxLength: 6 })), { minLength: 1 }), modeArb, (s, edits, mode) => {
            const next = structuredClone(s);
            const nodes = allNodes(next);
            for (const [pick, keyword, text] of edits)
                nodes[pick % nodes.length][keyword] = text;
            // Guarantee at least one real change: the root description gets a value it did not have.
            next['description'] = `${String(s['description'] ?? '')}!`;
            return compareSchemaChange(s, next, mode).level === 'patch';
        }));
    });
    test('property: removing any property is major in every mode', () => {
        fc.assert(fc.property(objectSchemaArb, fc.nat(), modeArb, (s, pick, mode) => {
            const next = structuredClone(s);
            const withProps = objectNodes(next).filter((n) => Object.keys(n['properties']).length > 0);
            fc.pre(withProps.length > 0);
            const target = withProps[pick % withProps.length];
            const props = target['properties'];
            delete props[Object.keys(props)[0]];
            return compareSchemaChange(s, next, mode).level === 'major';
        }));
    });
});
//# sourceMappingURL=schema-evolution.test.js.map