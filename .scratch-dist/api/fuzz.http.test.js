// Goal (issue 10, "Keeping it fixed"): no request, however hostile, breaks the node. Over every route
// (malformed and deep JSON, huge numbers, duplicate keys, invalid UTF-8, compressed and corrupt bodies,
// odd content types, hostile cursors, query values and path parameters):
// - no 5xx but the documented 503 (a feature toggle, the metadata group busy);
// - every error is a Problem (application/problem+json whose status is the HTTP status), except the
//   publish answers the interface defines as arrays of BatchItemResponse (207, 422);
// - no half-written batch: the tracked event type holds exactly the events of the batches answered 200;
// - the node still serves correctly afterwards (create, publish, read back), and its memory stays bounded.
// Method: fast-check over the generators of testing/http-fuzz.ts against one real broker, seeded.
// `npm test` runs a bounded number of cases; for a longer run (see README):
//   BROOK_FUZZ_RUNS=5000 BROOK_FUZZ_SEED=7 node --test dist/api/fuzz.http.test.js
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { fuzzRequest, sendFuzz } from '../testing/http-fuzz.js';
import { openStream, readEvents, closeStream } from '../testing/stream-client.js';
const runs = Number(process.env['BROOK_FUZZ_RUNS'] ?? 250);
const seed = Number(process.env['BROOK_FUZZ_SEED'] ?? 10);
let broker;
let base;
const fixtures = { tracked: 'fuzz.orders', other: 'fuzz.other', subscription: '' };
before(async () => {
    broker = await startTestBroker({ httpBodyIdleTimeoutMs: 2000, httpRequestTimeoutMs: 5000 });
    base = `http://127.0.0.1:${broker.port}`;
    for (const name of [fixtures.tracked, fixtures.other]) {
        assert.equal((await call(base, 'POST', '/event-types', businessEventType(name, { default_statistic: { messages_per_minute: 1, message_size: 1, read_parallelism: 2, write_parallelism: 2 } }))).status, 201);
    }
    const sub = await call(base, 'POST', '/subscriptions', { owning_application: 'fuzz', event_types: [fixtures.tracked], read_from: 'begin' });
    assert.equal(sub.status, 201);
    fixtures.subscription = sub.body.id;
});
after(async () => {
    await broker.destroy();
});
const problemStatuses = /^application\/problem\+json/;
/** Why an answer breaks the rules, or undefined. */
function violation(r, a) {
    if (a.status >= 500 && a.status !== 503)
        return `answered ${a.status}`;
    if (a.status < 400)
        return undefined;
    const type = String(a.headers['content-type'] ?? '');
    if (r.route === 'POST /event-types/:name/events' && (a.status === 422 || a.status === 207) && type.startsWith('application/json')) {
        const items = JSON.parse(a.body.toString());
        return Array.isArray(items) ? undefined : 'a publish 422 that is not an array of BatchItemResponse';
    }
    if (!problemStatuses.test(type))
        return `error ${a.status} with content type ${type}`;
    if (a.truncated)
        return `error ${a.status} longer than the reader takes`;
    let p;
    try {
        p = JSON.parse(a.body.toString());
    }
    catch {
        return `error ${a.status} whose body is not JSON`;
    }
    if (p.status !== a.status)
        return `Problem status ${String(p.status)} on an HTTP ${a.status}`;
    if (typeof p.title !== 'string' || typeof p.type !== 'string')
        return 'Problem without type or title';
    return undefined;
}
async function storedEvents(name) {
    const r = await call(base, 'GET', `/event-types/${name}/partitions`);
    assert.equal(r.status, 200, r.text);
    return r.body.reduce((n, p) => n + (p.newest_available_offset.toUpperCase() === 'BEGIN' ? 0 : Number(p.newest_available_offset.slice(-18)) + 1), 0);
}
test('issue 10: hostile requests over every route: no 5xx but 503, Problems, no half-written batch, the node still serves', { timeout: Math.max(300_000, runs * 2_000) }, async () => {
    const rssBefore = process.memoryUsage().rss;
    let acked = 0;
    const statuses = new Map();
    await fc.assert(fc.asyncProperty(fuzzRequest(fixtures), async (r) => {
        const a = await sendFuzz(broker.port, r);
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        const why = violation(r, a);
        assert.equal(why, undefined, `${r.method} ${r.path.slice(0, 200)} (${JSON.stringify(r.headers).slice(0, 300)}): ${why}\n${a.body.toString().slice(0, 500)}`);
        if (r.route === 'POST /event-types/:name/events' && r.path.startsWith(`/event-types/${fixtures.tracked}/events`)) {
            assert.notEqual(a.status, 207, 'no storage failure expected');
            if (a.status === 200)
                acked += JSON.parse(r.plain.toString()).length;
        }
    }), { numRuns: runs, seed, endOnFailure: true });
    if (process.env["BROOK_FUZZ_VERBOSE"] !== undefined)
        console.log(JSON.stringify([...statuses].sort()));
    // No half-written batch: exactly the events of the batches answered 200.
    assert.equal(await storedEvents(fixtures.tracked), acked, `statuses seen: ${JSON.stringify([...statuses])}`);
    // Undo what the fuzzer may have switched off, then the node must serve as new.
    for (const [feature, enabled] of [['disable_event_type_creation', false], ['disable_event_type_deletion', false], ['disable_subscription_creation', false], ['high_level_api', true]]) {
        assert.equal((await call(base, 'POST', '/settings/features', { feature, enabled })).status, 204);
    }
    const blacklist = (await call(base, 'GET', '/settings/blacklist')).body;
    for (const [side, kinds] of Object.entries(blacklist)) {
        for (const [kind, names] of Object.entries(kinds)) {
            const type = `${side === 'consumers' ? 'CONSUMER' : 'PRODUCER'}_${kind === 'apps' ? 'APP' : 'ET'}`;
            for (const n of names)
                assert.equal((await call(base, 'DELETE', `/settings/blacklist/${type}/${encodeURIComponent(n)}`)).status, 204);
        }
    }
    assert.equal((await call(base, 'GET', '/health')).status, 200);
    assert.equal((await call(base, 'POST', '/event-types', businessEventType('fuzz.after'))).status, 201);
    assert.equal((await call(base, 'POST', '/event-types/fuzz.after/events', [businessEvent('A-1'), businessEvent('A-2')])).status, 200);
    const s = await openStream(base, 'fuzz.after', 'batch_limit=2', { 'X-Svc-Cursors': JSON.stringify([{ partition: '0', offset: 'BEGIN' }]) });
    try {
        const lines = await readEvents(s, 2);
        assert.deepEqual(lines.flatMap((l) => l.events ?? []).map((e) => e.order_number), ['A-1', 'A-2']);
    }
    finally {
        await closeStream(s);
    }
    const grownMiB = (process.memoryUsage().rss - rssBefore) / 1048576;
    assert.ok(grownMiB < 1024, `RSS grew by ${Math.round(grownMiB)} MiB`);
});
//# sourceMappingURL=fuzz.http.test.js.map