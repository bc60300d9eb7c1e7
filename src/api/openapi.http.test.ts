// Goal: GET /openapi.json describes the interface truly (issue 11): the document is valid OpenAPI 3,
// every route the broker serves is in it and nothing else is, and what real requests get back (status,
// media type, body, every line of a stream) is what the document says. The console, the document and
// its interactive page are served without a token when authentication is on.
// Method: a real broker over HTTP; the document is checked by an OpenAPI validator from npm, and each
// answer of a tour over every operation is validated with ajv against the response schema the
// document gives for that path, method, status and media type (testing/openapi-conformance.ts, which
// broker-harness's call() also runs on every answer of every HTTP test). A status the document does not
// list for an operation fails the test as much as a body that does not match or a field it does not
// describe.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { interactiveDocsRoutes, routePermissions } from '../auth/permissions.js';
import { allScopes, bearer, tokenFile } from '../testing/auth-fixtures.js';
import { businessEvent, businessEventType, call, readLines, startTestBroker, type TestBroker } from '../testing/broker-harness.js';
import { compileDocument, violations, type Compiled } from '../testing/openapi-conformance.js';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>;
  components: object;
};

let broker: TestBroker;
let doc: Doc;
let compiled: Compiled;
/** Operations ("get /event-types/{name}") whose answers were checked. */
const exercised = new Set<string>();

before(async () => {
  broker = await startTestBroker();
  const res = await call(broker.url, 'GET', '/openapi.json');
  assert.equal(res.status, 200);
  doc = res.body as Doc;
  compiled = compileDocument(doc);
});
after(async () => {
  await broker.destroy();
});

/** "/event-types/:name" -> "/event-types/{name}" */
const template = (route: string) => route.replace(/:(\w+)/g, '{$1}');
const uiRoutes = new Set(['GET /', 'GET /console', 'GET /console/*', ...interactiveDocsRoutes]);

/**
 * Checks one answer against the document (status, media type, body, no undescribed field:
 * testing/openapi-conformance.ts); `path` is the document's template, `url` the address called.
 */
function conforms(method: string, path: string, url: string, status: number, contentType: string | null, text: string): void {
  assert.ok(doc.paths[path]?.[method.toLowerCase()] !== undefined, `${method} ${path} is not in the document`);
  assert.deepEqual(violations(compiled, { method, path: url, status, contentType, text }), [], `${method} ${url} -> ${status}`);
  exercised.add(`${method.toLowerCase()} ${path}`);
}

/** Calls the broker and checks the answer; returns it. */
async function check(method: string, route: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await call(broker.url, method, url, body, headers);
  conforms(method, template(route), url, res.status, res.headers.get('content-type'), res.text);
  return res;
}

/** Opens a stream, reads `n` lines and checks the status, media type and every line. */
async function checkStream(route: string, url: string, n: number, headers: Record<string, string> = {}) {
  const res = await fetch(broker.url + url, { headers });
  const lines = await readLines(res, (l) => l.length >= n, 10_000);
  conforms('GET', template(route), url, res.status, res.headers.get('content-type'), lines.map((l) => JSON.stringify(l)).join('\n'));
  return { res, lines };
}

test('the document is valid OpenAPI 3 (checked by @seriousme/openapi-schema-validator)', async () => {
  const validator = new Validator();
  const result = await validator.validate(doc as unknown as Parameters<Validator['validate']>[0]);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
  assert.equal(validator.version, '3.0');
});

test('every route the broker serves is in the document, and the document names no other', () => {
  const expected = new Set(
    Object.keys(routePermissions)
      .filter((r) => !uiRoutes.has(r))
      .map((r) => {
        const [m, p] = r.split(' ');
        return `${m!.toLowerCase()} ${template(p!)}`;
      }),
  );
  const documented = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`)));
  assert.ok(expected.size >= 40, `only ${expected.size} routes?`);
  for (const r of expected) assert.ok(documented.has(r), `${r} is served but not documented`);
  for (const r of documented) assert.ok(expected.has(r), `${r} is documented but not served`);
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      const statuses = Object.keys(op.responses);
      assert.ok(statuses.some((s) => s.startsWith('2')), `${m} ${p} documents no success`);
      for (const s of statuses.filter((x) => Number(x) >= 400 && !(p.endsWith('/events') && m === 'post' && x === '422'))) {
        assert.deepEqual(Object.keys(op.responses[s]!.content ?? {}), ['application/problem+json'], `${m} ${p} ${s} must be a Problem`);
      }
    }
  }
});

test('real answers of every operation conform to the document', async () => {
  const et = 'openapi.order';
  const subEt = 'openapi.sub';
  // Node and registry.
  await check('GET', '/health', '/health');
  await check('GET', '/cluster', '/cluster');
  await check('GET', '/openapi.json', '/openapi.json');
  await check('GET', '/registry/partition-strategies', '/registry/partition-strategies');
  await check('GET', '/registry/enrichment-strategies', '/registry/enrichment-strategies');

  // Event types, with the errors the tests of the registry check.
  const ef = { default_statistic: { messages_per_minute: 10, message_size: 100, read_parallelism: 2, write_parallelism: 2 } };
  assert.equal((await check('POST', '/event-types', '/event-types', businessEventType(et, ef))).status, 201);
  assert.equal((await check('POST', '/event-types', '/event-types', businessEventType(et, ef))).status, 409);
  assert.equal((await check('POST', '/event-types', '/event-types', '{broken')).status, 400);
  assert.equal((await check('POST', '/event-types', '/event-types', businessEventType('openapi.bad', { category: 'nope' }))).status, 422);
  assert.equal((await check('POST', '/event-types', '/event-types', businessEventType(subEt))).status, 201);
  await check('GET', '/event-types', '/event-types');
  const got = await check('GET', '/event-types/:name', `/event-types/${et}`);
  assert.equal((await check('GET', '/event-types/:name', '/event-types/openapi.none')).status, 404);
  const updated = { ...(got.body as Record<string, unknown>) };
  const schema = JSON.parse((updated['schema'] as { schema: string }).schema) as { properties: Record<string, unknown> };
  schema.properties['note'] = { type: 'string' };
  updated['schema'] = { type: 'json_schema', schema: JSON.stringify(schema) };
  assert.equal((await check('PUT', '/event-types/:name', `/event-types/${et}`, updated)).status, 200);
  // Replica moves: a single node has no other node to move to (422); unknown groups 404; nothing to cancel 409.
  const clusterView = (await call(broker.url, 'GET', '/cluster')).body as { partitions: { event_type: string; group: number }[] };
  const someGroup = clusterView.partitions.find((p) => p.event_type === et)!.group;
  assert.equal((await check('POST', '/cluster/partitions/:group/move', `/cluster/partitions/${someGroup}/move`, { from: 1, to: 99 })).status, 422);
  assert.equal((await check('POST', '/cluster/partitions/:group/move', '/cluster/partitions/4000000000/move', { from: 1, to: 2 })).status, 404);
  assert.equal((await check('DELETE', '/cluster/partitions/:group/move', `/cluster/partitions/${someGroup}/move`)).status, 409);
  assert.equal((await check('DELETE', '/cluster/partitions/:group/move', '/cluster/partitions/x/move')).status, 404);
  // Accepting a loss: this node's replicas are not damaged (409); unknown groups 404; nothing to accept over the node.
  assert.equal((await check('POST', '/cluster/partitions/:group/accept-loss', `/cluster/partitions/${someGroup}/accept-loss`)).status, 409);
  assert.equal((await check('POST', '/cluster/partitions/:group/accept-loss', '/cluster/partitions/4000000000/accept-loss')).status, 404);
  assert.deepEqual((await check('POST', '/cluster/accept-loss', '/cluster/accept-loss')).body, { accepted: [], refused: [] });
  assert.equal((await check('GET', '/cluster/partitions/:group/replica', `/cluster/partitions/${someGroup}/replica`)).status, 200);
  assert.equal((await check('GET', '/cluster/partitions/:group/replica', '/cluster/partitions/4000000000/replica')).status, 404);
  await check('GET', '/event-types/:name/schemas', `/event-types/${et}/schemas?limit=1`);
  await check('GET', '/event-types/:name/schemas/:version', `/event-types/${et}/schemas/latest`);
  assert.equal((await check('GET', '/event-types/:name/schemas/:version', `/event-types/${et}/schemas/9.9.9`)).status, 404);

  // Publishing: 200 without a body, 422 with one item per event.
  assert.equal((await check('POST', '/event-types/:name/events', `/event-types/${et}/events`, [businessEvent('A-1'), businessEvent('A-2'), businessEvent('A-3')])).status, 200);
  const bad = await check('POST', '/event-types/:name/events', `/event-types/${et}/events`, [businessEvent('A-4'), { metadata: businessEvent('x').metadata }]);
  assert.equal(bad.status, 422);
  await check('POST', '/event-types/:name/events', `/event-types/${subEt}/events`, [businessEvent('S-1')]);

  // Partitions and cursor tools.
  const parts = (await check('GET', '/event-types/:name/partitions', `/event-types/${et}/partitions`)).body as { partition: string; newest_available_offset: string }[];
  const full = parts.find((p) => p.newest_available_offset !== 'BEGIN')!;
  await check('GET', '/event-types/:name/partitions', `/event-types/${et}/partitions?cursors=${encodeURIComponent(JSON.stringify([{ partition: full.partition, offset: 'BEGIN' }]))}`);
  await check('GET', '/event-types/:name/partitions/:partition', `/event-types/${et}/partitions/${full.partition}?consumed_offset=BEGIN`);
  assert.equal((await check('GET', '/event-types/:name/partitions/:partition', `/event-types/${et}/partitions/99`)).status, 404);
  const begin = { partition: full.partition, offset: 'BEGIN' };
  const newest = { partition: full.partition, offset: full.newest_available_offset };
  await check('POST', '/event-types/:name/cursor-distances', `/event-types/${et}/cursor-distances`, [{ initial_cursor: begin, final_cursor: newest }]);
  await check('POST', '/event-types/:name/cursors-lag', `/event-types/${et}/cursors-lag`, [begin]);
  await check('POST', '/event-types/:name/shifted-cursors', `/event-types/${et}/shifted-cursors`, [{ ...newest, shift: -1 }]);
  assert.equal((await check('POST', '/event-types/:name/cursors-lag', `/event-types/${et}/cursors-lag`, [{ partition: '99', offset: 'BEGIN' }])).status, 422);

  // The low-level stream: every line is an EventStreamBatch.
  const cursors = parts.map((p) => ({ partition: p.partition, offset: 'BEGIN' }));
  const low = await checkStream('/event-types/:name/events', `/event-types/${et}/events?batch_limit=1&stream_limit=3&batch_flush_timeout=1`, 3, { 'X-Svc-Cursors': JSON.stringify(cursors) });
  assert.equal(low.lines.length, 3);
  assert.equal((await check('GET', '/event-types/:name/events', `/event-types/${et}/events`, undefined, { 'X-Svc-Cursors': 'nope' })).status, 400);

  // Subscriptions: create (201, then 200), list, stream, commit, cursors, reset, stats, delete.
  const subBody = { owning_application: 'openapi-app', event_types: [subEt], read_from: 'begin' };
  const created = await check('POST', '/subscriptions', '/subscriptions', subBody);
  assert.equal(created.status, 201);
  assert.equal((await check('POST', '/subscriptions', '/subscriptions', subBody)).status, 200);
  assert.equal((await check('POST', '/subscriptions', '/subscriptions', { owning_application: 'x', event_types: ['openapi.none'] })).status, 422);
  const id = (created.body as { id: string }).id;
  await check('GET', '/subscriptions', '/subscriptions?owning_application=openapi-app');
  await check('GET', '/subscriptions/:id', `/subscriptions/${id}`);
  assert.equal((await check('GET', '/subscriptions/:id', `/subscriptions/${crypto.randomUUID()}`)).status, 404);
  const sres = await fetch(`${broker.url}/subscriptions/${id}/events?batch_flush_timeout=1&max_uncommitted_events=10`);
  const streamId = sres.headers.get('x-svc-streamid')!;
  const slines = await readLines(sres, (l) => l.some((x) => (x as { events?: unknown[] }).events !== undefined), 10_000);
  conforms('GET', '/subscriptions/{id}/events', `/subscriptions/${id}/events`, sres.status, sres.headers.get('content-type'), slines.map((l) => JSON.stringify(l)).join('\n'));
  const withEvents = slines.find((x) => (x as { events?: unknown[] }).events !== undefined) as { cursor: object };
  const commit = await check('POST', '/subscriptions/:id/cursors', `/subscriptions/${id}/cursors`, { items: [withEvents.cursor] }, { 'X-Svc-StreamId': streamId });
  assert.ok(commit.status === 204 || commit.status === 200, commit.text);
  assert.equal((await check('POST', '/subscriptions/:id/cursors', `/subscriptions/${id}/cursors`, { items: [withEvents.cursor] }, { 'X-Svc-StreamId': streamId })).status, 200);
  assert.equal((await check('POST', '/subscriptions/:id/cursors', `/subscriptions/${id}/cursors`, { items: [withEvents.cursor] })).status, 400);
  const committed = await check('GET', '/subscriptions/:id/cursors', `/subscriptions/${id}/cursors`);
  await check('GET', '/subscriptions/:id/stats', `/subscriptions/${id}/stats`);
  const items = (committed.body as { items: { event_type: string; partition: string }[] }).items.map((c) => ({ event_type: c.event_type, partition: c.partition, offset: 'BEGIN' }));
  assert.equal((await check('PATCH', '/subscriptions/:id/cursors', `/subscriptions/${id}/cursors`, { items })).status, 204);
  const subAuth = { admins: [{ data_type: 'user', value: 'a' }], readers: [{ data_type: '*', value: '*' }] };
  assert.equal((await check('PUT', '/subscriptions/:id', `/subscriptions/${id}`, { authorization: subAuth })).status, 204);
  assert.equal((await check('PUT', '/subscriptions/:id', `/subscriptions/${id}`, { consumer_group: 'changed', authorization: subAuth })).status, 422);
  await check('GET', '/subscriptions/:id', `/subscriptions/${id}`);
  assert.equal((await check('DELETE', '/subscriptions/:id', `/subscriptions/${id}`)).status, 204);

  // Administration.
  await check('GET', '/settings/features', '/settings/features');
  assert.equal((await check('POST', '/settings/features', '/settings/features', { feature: 'check_partitions_keys', enabled: true })).status, 204);
  assert.equal((await check('POST', '/settings/features', '/settings/features', { feature: 'no_such_feature', enabled: true })).status, 400);
  assert.equal((await check('PUT', '/settings/blacklist/:type/:name', '/settings/blacklist/CONSUMER_APP/openapi-bad')).status, 204);
  await check('GET', '/settings/blacklist', '/settings/blacklist');
  assert.equal((await check('DELETE', '/settings/blacklist/:type/:name', '/settings/blacklist/CONSUMER_APP/openapi-bad')).status, 204);
  assert.equal((await check('PUT', '/settings/blacklist/:type/:name', '/settings/blacklist/NOPE/x')).status, 400);
  const storage = { id: 'openapi-s', storage_type: 'broker', broker_configuration: {} };
  assert.equal((await check('POST', '/storages', '/storages', storage)).status, 201);
  await check('GET', '/storages', '/storages');
  await check('GET', '/storages/:id', '/storages/openapi-s');
  assert.equal((await check('GET', '/storages/:id', '/storages/none')).status, 404);
  assert.equal((await check('POST', '/event-types/:name/timelines', `/event-types/${et}/timelines`, { storage_id: 'openapi-s' })).status, 201);
  const timelines = await check('GET', '/event-types/:name/timelines', `/event-types/${et}/timelines`);
  const tl = (timelines.body as { id: string }[])[0]!;
  assert.ok([404, 422].includes((await check('DELETE', '/event-types/:name/timelines/:id', `/event-types/${et}/timelines/${tl.id}`)).status));
  assert.equal((await check('DELETE', '/storages/:id', '/storages/openapi-s')).status, 400, 'in use by the timeline');
  await check('GET', '/metrics', '/metrics');
  await check('GET', '/metrics/prometheus', '/metrics/prometheus');
  assert.equal((await check('DELETE', '/event-types/:name', `/event-types/${subEt}`)).status, 200);

  // Every documented operation was called at least once.
  const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
  const missed = documented.filter((o) => !exercised.has(o));
  assert.deepEqual(missed, [], 'operations the tour did not call');
});

test('with authentication on, the console, the document and its page need no token; the API answers the documented 401', async () => {
  const b = await startTestBroker({ auth: 'static', authTokensFile: tokenFile({ 'tok-admin': { uid: 'brook-admin', scopes: allScopes } }) });
  try {
    for (const path of ['/console/', '/console/event-types', '/openapi.json', '/docs/', '/docs/static/swagger-ui.css', '/docs/static/swagger-initializer.js', '/docs/json']) {
      const res = await fetch(b.url + path);
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
    }
    const root = await fetch(b.url + '/', { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/console/');
    const denied = await call(b.url, 'GET', '/event-types');
    assert.equal(denied.status, 401);
    conforms('GET', '/event-types', '/event-types', denied.status, denied.headers.get('content-type'), denied.text);
    assert.equal((await call(b.url, 'GET', '/event-types', undefined, bearer('tok-admin'))).status, 200);
  } finally {
    await b.destroy();
  }
});
