// Goal: compatibility modes and schema evolution over real HTTP (issue 2 point 1, interface.md
// "Compatibility mode rules", compatibility.md "Schema versions"): which PUT schema changes each mode
// accepts and the semantic version each produces (patch/minor/major), which mode changes are allowed,
// and the schema history endpoints GET /event-types/{name}/schemas (newest first, limit/offset,
// _links) and /schemas/{version|latest}.
// Method: one real broker for the file; each test evolves its own event type through PUT and reads
// the result back through GET.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
let broker;
let base;
before(async () => {
    broker = await startTestBroker();
    base = `http://127.0.0.1:${broker.port}`;
});
after(async () => {
    await broker.destroy();
});
const v1 = {
    type: 'object',
    properties: { order_number: { type: 'string' }, amount: { type: 'number' } },
    required: ['order_number'],
};
function withSchema(schema, over = {}) {
    return { type: 'json_schema', schema: JSON.stringify(schema), ...over };
}
function assertProblem(r, status, detailIncludes) {
    assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text}`);
    assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const p = r.body;
    assert.equal(p['status'], status);
    assert.equal(typeof p['title'], 'string');
    if (detailIncludes !== undefined)
        assert.ok(String(p['detail']).includes(detailIncludes), `detail "${p['detail']}" lacks "${detailIncludes}"`);
}
/** Creates an event type in the given mode with schema v1 and returns a PUT function for it. */
async function eventTypeIn(name, mode, schema = v1) {
    const body = businessEventType(name, { compatibility_mode: mode, schema: withSchema(schema) });
    const r = await call(base, 'POST', '/event-types', body);
    assert.equal(r.status, 201, r.text);
    return {
        put: (next, over = {}) => call(base, 'PUT', `/event-types/${name}`, { ...body, schema: withSchema(next), ...over }),
        version: async () => (await call(base, 'GET', `/event-types/${name}`)).body['schema']['version'],
        mode: async () => (await call(base, 'GET', `/event-types/${name}`)).body['compatibility_mode'],
    };
}
async function expectVersion(r, version, expected) {
    assert.equal(r.status, 200, r.text);
    assert.equal(await version(), expected);
}
const withDescription = { ...v1, description: 'An order was placed' };
const withTitle = { ...v1, title: 'Order' };
const withOptional = { ...v1, properties: { ...v1.properties, note: { type: 'string' } } };
const withNewRequired = { ...v1, properties: { ...v1.properties, currency: { type: 'string' } }, required: ['order_number', 'currency'] };
const withAmountRequired = { ...v1, required: ['order_number', 'amount'] };
const withoutAmount = { ...v1, properties: { order_number: { type: 'string' } } };
const withAmountString = { ...v1, properties: { ...v1.properties, amount: { type: 'string' } } };
const withOrderOptional = { ...v1, required: [] };
describe('forward mode (the default)', () => {
    test('title or description changes are a patch', async () => {
        const et = await eventTypeIn('sch.fwd.patch', 'forward');
        await expectVersion(await et.put(withDescription), et.version, '1.0.1');
        await expectVersion(await et.put({ ...withDescription, title: 'Order' }), et.version, '1.0.2');
    });
    test('a new optional property is a minor change', async () => {
        const et = await eventTypeIn('sch.fwd.minor', 'forward');
        await expectVersion(await et.put(withOptional), et.version, '1.1.0');
    });
    test('a new required property and marking a property required are minor changes', async () => {
        const et = await eventTypeIn('sch.fwd.required', 'forward');
        await expectVersion(await et.put(withNewRequired), et.version, '1.1.0');
        const et2 = await eventTypeIn('sch.fwd.mark', 'forward');
        await expectVersion(await et2.put(withAmountRequired), et2.version, '1.1.0');
    });
    test('a minor change resets the patch number', async () => {
        const et = await eventTypeIn('sch.fwd.reset', 'forward');
        await expectVersion(await et.put(withTitle), et.version, '1.0.1');
        await expectVersion(await et.put({ ...withOptional, title: 'Order' }), et.version, '1.1.0');
    });
    test('removing a property, changing a type or dropping required are refused with 422', async () => {
        const et = await eventTypeIn('sch.fwd.major', 'forward');
        for (const next of [withoutAmount, withAmountString, withOrderOptional]) {
            assertProblem(await et.put(next), 422, 'schema');
        }
        assert.equal(await et.version(), '1.0.0');
    });
    test('an identical schema (even re-serialized) keeps the version and adds no history entry', async () => {
        const et = await eventTypeIn('sch.fwd.same', 'forward');
        const reordered = { required: ['order_number'], properties: { amount: { type: 'number' }, order_number: { type: 'string' } }, type: 'object' };
        await expectVersion(await et.put(reordered), et.version, '1.0.0');
        const page = (await call(base, 'GET', '/event-types/sch.fwd.same/schemas')).body;
        assert.equal(page['items'].length, 1);
    });
    test('full JSON Schema (additionalProperties, patternProperties, not) is usable', async () => {
        await eventTypeIn('sch.fwd.full', 'forward', { ...v1, additionalProperties: { type: 'string' }, not: { required: ['x'] } });
    });
});
describe('compatible mode', () => {
    test('title/description are a patch and new optional properties a minor change', async () => {
        const et = await eventTypeIn('sch.cmp.ok', 'compatible');
        await expectVersion(await et.put(withDescription), et.version, '1.0.1');
        await expectVersion(await et.put({ ...withOptional, description: 'An order was placed' }), et.version, '1.1.0');
    });
    test('new required properties, marking required, removals and type changes get 422', async () => {
        const et = await eventTypeIn('sch.cmp.refused', 'compatible');
        for (const next of [withNewRequired, withAmountRequired, withoutAmount, withAmountString]) {
            assertProblem(await et.put(next), 422, 'schema');
        }
        assert.equal(await et.version(), '1.0.0');
    });
    test('not, patternProperties, additionalProperties and additionalItems are unsupported', async () => {
        const cases = [
            { ...v1, not: { required: ['x'] } },
            { ...v1, patternProperties: { '^x': { type: 'string' } } },
            { ...v1, additionalProperties: false },
            { ...v1, properties: { ...v1.properties, tags: { type: 'array', items: [{ type: 'string' }], additionalItems: false } } },
        ];
        for (const schema of cases) {
            const r = await call(base, 'POST', '/event-types', businessEventType('sch.cmp.keyword', { compatibility_mode: 'compatible', schema: withSchema(schema) }));
            assertProblem(r, 422, 'compatible');
        }
        assertProblem(await call(base, 'GET', '/event-types/sch.cmp.keyword'), 404);
    });
});
describe('none mode', () => {
    test('any change is accepted; incompatible ones are a major change', async () => {
        const et = await eventTypeIn('sch.none.major', 'none');
        await expectVersion(await et.put(withAmountString), et.version, '2.0.0');
        await expectVersion(await et.put({ ...withoutAmount, title: 'x' }), et.version, '3.0.0');
        await expectVersion(await et.put({ ...withoutAmount, title: 'y' }), et.version, '3.0.1');
        await expectVersion(await et.put({ ...withoutAmount, title: 'y', properties: { ...withoutAmount.properties, z: { type: 'integer' } } }), et.version, '3.1.0');
    });
    test('a new required property is a major change in none', async () => {
        const et = await eventTypeIn('sch.none.required', 'none');
        await expectVersion(await et.put(withNewRequired), et.version, '2.0.0');
    });
});
describe('compatibility mode changes', () => {
    test('none -> forward -> compatible is allowed', async () => {
        const et = await eventTypeIn('sch.mode.up', 'none');
        assert.equal((await et.put(v1, { compatibility_mode: 'forward' })).status, 200);
        assert.equal(await et.mode(), 'forward');
        assert.equal((await et.put(v1, { compatibility_mode: 'compatible' })).status, 200);
        assert.equal(await et.mode(), 'compatible');
        assert.equal(await et.version(), '1.0.0', 'a mode change alone does not change the schema version');
    });
    test('none -> compatible directly is refused', async () => {
        const et = await eventTypeIn('sch.mode.skip', 'none');
        assertProblem(await et.put(v1, { compatibility_mode: 'compatible' }), 422, 'compatibility_mode');
        assert.equal(await et.mode(), 'none');
    });
    test('changes towards a looser mode are refused', async () => {
        for (const [from, to] of [['forward', 'none'], ['compatible', 'forward'], ['compatible', 'none']]) {
            const et = await eventTypeIn(`sch.mode.${from}.${to}`, from);
            assertProblem(await et.put(v1, { compatibility_mode: to }), 422, 'compatibility_mode');
            assert.equal(await et.mode(), from);
        }
    });
    test('omitting compatibility_mode in PUT keeps the stored mode', async () => {
        const et = await eventTypeIn('sch.mode.keep', 'none');
        assert.equal((await et.put(withTitle, { compatibility_mode: undefined })).status, 200);
        assert.equal(await et.mode(), 'none');
    });
    test('a change to compatible checks the schema under the new mode', async () => {
        const et = await eventTypeIn('sch.mode.strict', 'forward', { ...v1, additionalProperties: true });
        assertProblem(await et.put({ ...v1, additionalProperties: true }, { compatibility_mode: 'compatible' }), 422, 'additionalProperties');
        assert.equal(await et.mode(), 'forward');
    });
    test('issue 10: PUT of what GET served (read-only created_at, updated_at, schema.created_at, schema.version included) is accepted; they are ignored', async () => {
        const et = await eventTypeIn('sch.put.created', 'forward');
        const read = (await call(base, 'GET', '/event-types/sch.put.created')).body;
        const same = await call(base, 'PUT', '/event-types/sch.put.created', { ...read, owning_application: 'changed-app' });
        assert.equal(same.status, 200, same.text);
        const afterSame = (await call(base, 'GET', '/event-types/sch.put.created')).body;
        assert.equal(afterSame['owning_application'], 'changed-app');
        assert.deepEqual(afterSame['schema'], read['schema'], 'same schema: same version and created_at');
        assert.equal(afterSame['created_at'], read['created_at']);
        // A schema change sent with the old read-only values gets a new version and time, not the ones sent.
        const changedSchema = { ...afterSame, schema: { ...afterSame['schema'], schema: JSON.stringify({ ...v1, title: 'changed' }) } };
        const r = await call(base, 'PUT', '/event-types/sch.put.created', changedSchema);
        assert.equal(r.status, 200, r.text);
        assert.equal(await et.version(), '1.0.1');
        const afterChange = (await call(base, 'GET', '/event-types/sch.put.created')).body;
        assert.notEqual(afterChange['schema']['created_at'], read['schema']['created_at']);
        assert.equal(afterChange['created_at'], read['created_at']);
    });
});
describe('GET /event-types/{name}/schemas', () => {
    // Five versions: 1.0.0, 1.0.1, 1.0.2, 1.0.3, 1.0.4 (title changes).
    const name = 'sch.history';
    const titles = ['t1', 't2', 't3', 't4'];
    before(async () => {
        const et = await eventTypeIn(name, 'forward');
        for (const title of titles)
            assert.equal((await et.put({ ...v1, title })).status, 200);
    });
    const page = async (query = '') => {
        const r = await call(base, 'GET', `/event-types/${name}/schemas${query}`);
        assert.equal(r.status, 200, r.text);
        return r.body;
    };
    test('lists every version newest first with type, schema, version and created_at', async () => {
        const p = await page();
        assert.deepEqual(p.items.map((s) => s['version']), ['1.0.4', '1.0.3', '1.0.2', '1.0.1', '1.0.0']);
        for (const s of p.items) {
            assert.equal(s['type'], 'json_schema');
            assert.equal(typeof s['schema'], 'string');
            assert.ok(!Number.isNaN(Date.parse(s['created_at'])));
        }
        assert.equal(p.items[0]['schema'], JSON.stringify({ ...v1, title: 't4' }));
        assert.equal(p.items[4]['schema'], JSON.stringify(v1));
        assert.deepEqual(p._links, {}, 'a single page has neither prev nor next');
    });
    test('limit and offset page through the history with _links prev and next', async () => {
        const first = await page('?limit=2');
        assert.deepEqual(first.items.map((s) => s['version']), ['1.0.4', '1.0.3']);
        assert.equal(first._links.prev, undefined);
        assert.ok(first._links.next !== undefined);
        const href = first._links.next.href;
        assert.match(href, /^\/event-types\/sch\.history\/schemas\?/);
        assert.match(href, /offset=2/);
        assert.match(href, /limit=2/);
        const second = await page(href.slice(href.indexOf('?')));
        assert.deepEqual(second.items.map((s) => s['version']), ['1.0.2', '1.0.1']);
        assert.ok(second._links.prev !== undefined && second._links.next !== undefined);
        assert.match(second._links.prev.href, /offset=0/);
        const third = await page(second._links.next.href.slice(second._links.next.href.indexOf('?')));
        assert.deepEqual(third.items.map((s) => s['version']), ['1.0.0']);
        assert.equal(third._links.next, undefined);
        assert.ok(third._links.prev !== undefined);
        const back = await page(third._links.prev.href.slice(third._links.prev.href.indexOf('?')));
        assert.deepEqual(back.items.map((s) => s['version']), ['1.0.2', '1.0.1']);
    });
    test('an offset past the end gives no items', async () => {
        const p = await page('?offset=10');
        assert.deepEqual(p.items, []);
        assert.equal(p._links.next, undefined);
    });
    test('invalid limit or offset gets 400', async () => {
        for (const q of ['?limit=abc', '?limit=-1', '?limit=0', '?offset=-3', '?offset=1.5']) {
            assertProblem(await call(base, 'GET', `/event-types/${name}/schemas${q}`), 400);
        }
    });
    test('GET /schemas/{version} returns that version', async () => {
        const r = await call(base, 'GET', `/event-types/${name}/schemas/1.0.2`);
        assert.equal(r.status, 200, r.text);
        const s = r.body;
        assert.equal(s['version'], '1.0.2');
        assert.equal(s['schema'], JSON.stringify({ ...v1, title: 't2' }));
        const first = (await call(base, 'GET', `/event-types/${name}/schemas/1.0.0`)).body;
        assert.equal(first['schema'], JSON.stringify(v1));
    });
    test('GET /schemas/latest returns the newest version, equal to the event type schema', async () => {
        const r = await call(base, 'GET', `/event-types/${name}/schemas/latest`);
        assert.equal(r.status, 200, r.text);
        const et = (await call(base, 'GET', `/event-types/${name}`)).body;
        assert.deepEqual(r.body, et['schema']);
        assert.equal(r.body['version'], '1.0.4');
    });
    test('an unknown version gets 404', async () => {
        for (const v of ['9.9.9', '1.0', 'newest']) {
            assertProblem(await call(base, 'GET', `/event-types/${name}/schemas/${v}`), 404);
        }
    });
    test('the history of an unknown event type gets 404', async () => {
        assertProblem(await call(base, 'GET', '/event-types/sch.none.such/schemas'), 404);
        assertProblem(await call(base, 'GET', '/event-types/sch.none.such/schemas/latest'), 404);
    });
});
//# sourceMappingURL=schemas.http.test.js.map