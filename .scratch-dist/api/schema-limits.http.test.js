// Goal (issue 10): schema complexity bounds answer over HTTP with 422 Problems that name the bound and
// follow the configuration (BROOK_SCHEMA_*); a schema nested 90,000 deep answers 422, not 500; and an
// event type at the enum bound publishes a 1,000-event batch (the 60,000-value enum took 15 s for one).
// Method: a real broker started with small bounds, so the bound is the configured one, not a default.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
let broker;
let base;
before(async () => {
    broker = await startTestBroker({ schemaEnumValuesMax: 2000, schemaDepthMax: 20, schemaObjectsMax: 200, schemaBytesMax: 200_000 });
    base = `http://127.0.0.1:${broker.port}`;
});
after(async () => {
    await broker.destroy();
});
function withSchema(name, schema) {
    return businessEventType(name, { schema: { type: 'json_schema', schema: typeof schema === 'string' ? schema : JSON.stringify(schema) } });
}
async function assert422(name, schema, detail) {
    const r = await call(base, 'POST', '/event-types', withSchema(name, schema));
    assert.equal(r.status, 422, r.text);
    assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
    assert.match(r.body.detail, detail);
}
test('issue 10: each configured bound answers 422 naming it', async () => {
    await assert422('lim.enum', { type: 'object', properties: { v: { enum: Array.from({ length: 3000 }, (_, i) => i) } } }, /enum of 3000 values at #\/properties\/v\/enum; at most 2000/);
    await assert422('lim.deep', `{"type":"object","properties":{"a":{"enum":[${'['.repeat(90_000)}${']'.repeat(90_000)}]}}}`, /nested deeper than 20 levels/);
    await assert422('lim.objects', { type: 'object', properties: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, {}])) }, /more than 200 objects and arrays/);
    await assert422('lim.bytes', { type: 'object', description: 'x'.repeat(200_001) }, /at most 200000 bytes/);
    assert.equal((await call(base, 'GET', '/event-types')).status, 200, 'the node still serves');
});
test('an event type at the enum bound takes a 1,000-event batch', async () => {
    const values = Array.from({ length: 2000 }, (_, i) => `code-${i}`);
    const schema = { type: 'object', properties: { order_number: { type: 'string' }, code: { enum: values } }, required: ['order_number'] };
    assert.equal((await call(base, 'POST', '/event-types', withSchema('lim.enum.ok', schema))).status, 201);
    const batch = Array.from({ length: 1000 }, (_, i) => businessEvent(`O-${i}`, { code: `code-${1999 - (i % 2000)}` }));
    const r = await call(base, 'POST', '/event-types/lim.enum.ok/events', batch);
    assert.equal(r.status, 200, r.text);
    const bad = await call(base, 'POST', '/event-types/lim.enum.ok/events', [businessEvent('X', { code: 'code-2000' })]);
    assert.equal(bad.status, 422);
    assert.match(bad.body[0].detail, /#\/code: must be equal to one of the allowed values/);
});
//# sourceMappingURL=schema-limits.http.test.js.map