// Goal: the operator entry point of replica moves answers bad requests with the right Problem and
// status (unknown node, unknown group, malformed body, nothing to cancel) and is reserved to the
// administrator. A valid move, the 409 of a second one and a cancel need other nodes: the cluster test
// (src/broker/replica-move.cluster.test.ts) checks them.
// Method: a single broker with a static token file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEventType, call, startTestBroker, type TestBroker } from '../testing/broker-harness.js';
import { allScopes, bearer, tokenFile } from '../testing/auth-fixtures.js';

const tokens = { admin: { uid: 'brook-admin', scopes: [] }, alice: { uid: 'alice', type: 'user', scopes: allScopes } };
let broker: TestBroker;
before(async () => {
  broker = await startTestBroker({ auth: 'static', authTokensFile: tokenFile(tokens) });
});
after(async () => {
  await broker.destroy();
});

const admin = bearer('admin');
type View = { members: { id: number }[]; partitions: { event_type: string; group: number; replicas: number[]; learners: number[]; moving: unknown }[] };

async function problem(method: string, path: string, body: unknown, status: number, detail: RegExp): Promise<void> {
  const res = await call(broker.url, method, path, body, admin);
  assert.equal(res.status, status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  assert.match((res.body as { detail: string }).detail, detail);
}

test('moving a replica: Problem answers for bad requests, and only the administrator may', async () => {
  assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('moves.a'), admin)).status, 201);
  const view = (await call(broker.url, 'GET', '/cluster', undefined, admin)).body as View;
  const p = view.partitions.find((x) => x.event_type === 'moves.a')!;
  const url = `/cluster/partitions/${p.group}/move`;
  await problem('POST', url, { from: p.replicas[0], to: 42 }, 422, /Node 42 is not a member/);
  await problem('POST', url, { from: 42, to: p.replicas[0] }, 422, /Node 42 is not a member/);
  await problem('POST', url, { from: p.replicas[0], to: p.replicas[0] }, 422, /cannot move to the node it is on/);
  await problem('POST', url, { from: 'one', to: 2 }, 422, /node ids/);
  await problem('POST', url, { from: 1, to: 2, extra: true }, 422, /Unknown field/);
  await problem('POST', url, [1, 2], 422, /must be an object/);
  await problem('POST', url, '{broken', 400, /./);
  await problem('POST', '/cluster/partitions/999999/move', { from: 1, to: 2 }, 404, /No partition is replicated by group 999999/);
  await problem('POST', '/cluster/partitions/-1/move', { from: 1, to: 2 }, 404, /No partition/);
  await problem('DELETE', url, undefined, 409, /no move in flight/);
  assert.equal((await call(broker.url, 'POST', url, { from: p.replicas[0], to: 2 }, bearer('alice'))).status, 403, 'not the administrator');
  assert.equal((await call(broker.url, 'DELETE', url, undefined, bearer('alice'))).status, 403, 'not the administrator');
});

test('accepting a loss: refused with a Problem where nothing is damaged, and only the administrator may', async () => {
  assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('losses.a'), admin)).status, 201);
  const view = (await call(broker.url, 'GET', '/cluster', undefined, admin)).body as View & { accepted_losses: unknown[] };
  const p = view.partitions.find((x) => x.event_type === 'losses.a')!;
  const url = `/cluster/partitions/${p.group}/accept-loss`;
  // Its replica opens in the background after the creation: until then the answer says it is not open.
  let res = await call(broker.url, 'POST', url, undefined, admin);
  for (let i = 0; i < 100 && /not open/.test(res.text); i++) {
    await new Promise((r) => setTimeout(r, 50));
    res = await call(broker.url, 'POST', url, undefined, admin);
  }
  assert.equal(res.status, 409, res.text);
  assert.match((res.body as { detail: string }).detail, /is not damaged/);
  assert.equal((await call(broker.url, 'POST', '/cluster/partitions/999999/accept-loss', undefined, admin)).status, 404);
  // --replica: a node id; naming a node other than the sole replica's is refused.
  await problem('POST', `${url}?replica=one`, undefined, 400, /replica must be a node id/);
  await problem('POST', `${url}?replica=7`, undefined, 409, /Node 7 holds no replica of group/);
  assert.equal((await call(broker.url, 'POST', `${url}?replica=1`, undefined, bearer('alice'))).status, 403, 'not the administrator');
  const all = await call(broker.url, 'POST', '/cluster/accept-loss', undefined, admin);
  assert.deepEqual(all.body, { accepted: [], refused: [] });
  assert.deepEqual(view.accepted_losses, [], 'GET /cluster lists none');
  assert.equal((await call(broker.url, 'POST', url, undefined, bearer('alice'))).status, 403, 'not the administrator');
  assert.equal((await call(broker.url, 'POST', '/cluster/accept-loss', undefined, bearer('alice'))).status, 403, 'not the administrator');
  // The replica as the lever for a partition whose every replica is damaged compares them.
  const report = await call(broker.url, 'GET', `/cluster/partitions/${p.group}/replica`, undefined, admin);
  assert.equal(report.status, 200, report.text);
  const r = report.body as { group: number; event_type: string; damage: string | null; probing: boolean; term: number; last_term: number; last_index: number; term_floor: number };
  assert.deepEqual([r.group, r.event_type, r.damage, r.probing], [p.group, 'losses.a', null, false]);
  assert.ok(r.last_index > 0 && r.last_term > 0 && r.last_term <= r.term && r.term <= r.term_floor, JSON.stringify(r));
  await problem('GET', '/cluster/partitions/999999/replica', undefined, 404, /No partition is replicated by group 999999/);
  await problem('GET', '/cluster/partitions/x1/replica', undefined, 404, /No partition is replicated by group "x1"/);
  assert.equal((await call(broker.url, 'GET', `/cluster/partitions/${p.group}/replica`, undefined, bearer('alice'))).status, 403, 'not the administrator');
});
