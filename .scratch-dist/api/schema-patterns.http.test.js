// Goal (issue 10): a schema pattern cannot freeze the node. `^(a+)+$` on a 30-character value froze a
// node for 23 s; now `pattern` and `patternProperties` run in linear time, and a pattern that cannot
// (a backreference, lookaround) is refused at creation with 422 naming the pattern.
// Method: a real broker; events that made V8 backtrack for minutes are published, with one generous
// bound per request as a hang detector (not a speed check), then the node must still serve.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
let broker;
let base;
before(async () => {
    broker = await startTestBroker();
    base = `http://127.0.0.1:${broker.port}`;
});
after(async () => {
    await broker.destroy();
});
function withSchema(name, schema) {
    return businessEventType(name, { schema: { type: 'json_schema', schema: JSON.stringify(schema) } });
}
/** Publishes and returns the status; fails if the node took longer than a hang would allow. */
async function publishWithin(name, events) {
    const started = Date.now();
    const r = await call(base, 'POST', `/event-types/${name}/events`, events);
    const tookMs = Date.now() - started;
    // V8 needs minutes for these values (2^32 backtracking steps); a linear engine, milliseconds.
    assert.ok(tookMs < 15_000, `the publish took ${tookMs} ms: the node was frozen`);
    return { status: r.status, body: r.body };
}
test('issue 10: `^(a+)+$` on a 33-character value is answered at once (422 at validating) and the node keeps serving', async () => {
    const schema = { type: 'object', properties: { order_number: { type: 'string' }, code: { type: 'string', pattern: '^(a+)+$' } }, required: ['order_number'] };
    assert.equal((await call(base, 'POST', '/event-types', withSchema('pat.evil', schema))).status, 201);
    const bad = await publishWithin('pat.evil', [businessEvent('O-1', { code: 'a'.repeat(32) + '!' })]);
    assert.equal(bad.status, 422);
    const items = bad.body;
    assert.equal(items[0]?.step, 'validating');
    assert.match(items[0]?.detail ?? '', /code: must match pattern/);
    assert.equal((await publishWithin('pat.evil', [businessEvent('O-2', { code: 'a'.repeat(32) })])).status, 200);
    assert.equal((await call(base, 'GET', '/event-types/pat.evil')).status, 200);
});
test('issue 10: patternProperties run in linear time too', async () => {
    const schema = { type: 'object', properties: { order_number: { type: 'string' } }, patternProperties: { '^(a+)+$': { type: 'string' } }, required: ['order_number'] };
    assert.equal((await call(base, 'POST', '/event-types', withSchema('pat.props', schema))).status, 201);
    // The key does not match, so the event is valid; the point is that matching it ends.
    const r = await publishWithin('pat.props', [businessEvent('O-1', { ['a'.repeat(32) + '!']: 5 })]);
    assert.equal(r.status, 200);
    const typed = await publishWithin('pat.props', [businessEvent('O-2', { aaaa: 5 })]);
    assert.equal(typed.status, 422, 'a matching key is checked against its schema');
});
test('issue 10: a pattern that cannot run in linear time is refused at creation and update with 422 naming it', async () => {
    for (const [where, schema] of [
        ['pattern', { type: 'object', properties: { x: { type: 'string', pattern: '^(a)\\1$' } } }],
        ['patternProperties', { type: 'object', patternProperties: { '^a(?=b)': {} } }],
    ]) {
        const r = await call(base, 'POST', '/event-types', withSchema(`pat.refused.${where}`, schema));
        assert.equal(r.status, 422, r.text);
        assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
        const detail = r.body.detail;
        assert.match(detail, /cannot run in linear time/);
        assert.match(detail, /\^(\(a\)\\\\1\$|a\(\?=b\))/);
    }
    assert.equal((await call(base, 'POST', '/event-types', withSchema('pat.update', { type: 'object', properties: { x: { type: 'string' } } }))).status, 201);
    const u = await call(base, 'PUT', '/event-types/pat.update', withSchema('pat.update', { type: 'object', properties: { x: { type: 'string' }, y: { type: 'string', pattern: '(?<!a)b' } } }));
    assert.equal(u.status, 422, u.text);
    assert.match(u.body.detail, /cannot run in linear time/);
});
//# sourceMappingURL=schema-patterns.http.test.js.map