// Goal: per-resource authorization follows interface.md ("Authentication" 4, 5) and compatibility.md
// (wildcard): a subject {data_type: kind, value: uid} matches an attribute when both are equal, the
// wildcard matches everyone authenticated, the administrator always passes, read_scopes/write_scopes
// are enforced, and the blacklist applies to everyone.
// Method: examples over a small matrix of principals and event types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProblem } from '../core/problem.js';
import type { BlacklistType, EventType } from '../metadata/types.js';
import type { Principal } from './principal.js';
import { matches, ResourceAccess } from './resource-access.js';
import { bearerToken, OffAuthenticator, StaticTokenAuthenticator, TokenInfoAuthenticator } from './authenticators.js';

const who = (uid: string, type = 'user', scopes: string[] = [], admin = false): Principal => ({ uid, type, scopes: new Set(scopes), admin });
const et = (over: Partial<EventType> = {}): EventType => ({
  name: 'orders', owning_application: 'app', category: 'business', enrichment_strategies: ['metadata_enrichment'],
  partition_strategy: 'random', compatibility_mode: 'forward',
  schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' },
  options: { retention_time: 1000 }, created_at: 't0', updated_at: 't0', ...over,
});
const authz = {
  admins: [{ data_type: 'user', value: 'alice' }],
  readers: [{ data_type: 'service', value: 'reader-svc' }],
  writers: [{ data_type: 'user', value: 'bob' }],
};
const blocked = new Set<string>();
const access = new ResourceAccess({ blacklisted: (t: BlacklistType, n: string) => blocked.has(`${t}:${n}`) });
const forbidden = (fn: () => void) => assert.throws(fn, (e) => isProblem(e) && e.status === 403);

test('matching: data_type and value must both be equal; the wildcard matches anyone', () => {
  assert.ok(matches({ data_type: 'user', value: 'bob' }, authz.writers));
  assert.ok(!matches({ data_type: 'service', value: 'bob' }, authz.writers), 'same uid, other kind');
  assert.ok(!matches({ data_type: 'user', value: 'bobby' }, authz.writers));
  assert.ok(matches({ data_type: 'service', value: 'x' }, [{ data_type: 'user', value: 'y' }, { data_type: '*', value: '*' }]));
  assert.ok(!matches({ data_type: 'user', value: 'x' }, [{ data_type: '*', value: 'x' }]), 'only the full */* pair is the wildcard');
});

test('an event type without authorization is open; with it, each operation needs its list', () => {
  const open = et();
  access.checkRead(who('anyone'), open);
  access.checkWrite(who('anyone'), open);
  access.checkAdmin(who('anyone'), open);
  const guarded = et({ authorization: authz });
  access.checkRead(who('reader-svc', 'service'), guarded);
  forbidden(() => access.checkRead(who('reader-svc', 'user'), guarded));
  forbidden(() => access.checkRead(who('bob'), guarded));
  access.checkWrite(who('bob'), guarded);
  forbidden(() => access.checkWrite(who('alice'), guarded));
  access.checkAdmin(who('alice'), guarded);
  forbidden(() => access.checkAdmin(who('bob'), guarded));
});

test('the administrator always passes the lists and the scopes', () => {
  const guarded = et({ authorization: authz, read_scopes: ['x.read'], write_scopes: ['x.write'] });
  const admin = who('root', 'user', [], true);
  access.checkRead(admin, guarded);
  access.checkWrite(admin, guarded);
  access.checkAdmin(admin, guarded);
});

test('deprecated read_scopes and write_scopes: one of the listed scopes is needed; empty means anyone', () => {
  const scoped = et({ read_scopes: ['x.read', 'y.read'], write_scopes: ['x.write'] });
  access.checkRead(who('a', 'user', ['y.read']), scoped);
  forbidden(() => access.checkRead(who('a', 'user', ['x.write']), scoped));
  access.checkWrite(who('a', 'user', ['x.write']), scoped);
  forbidden(() => access.checkWrite(who('a', 'user', ['x.read']), scoped));
  access.checkRead(who('a'), et({ read_scopes: [] }));
});

test('the blacklist blocks producers and consumers by app and by event type, the administrator too', () => {
  const admin = who('root', 'user', [], true);
  blocked.add('PRODUCER_APP:bob');
  forbidden(() => access.checkWrite(who('bob'), et()));
  access.checkWrite(who('carol'), et());
  blocked.add('PRODUCER_ET:orders');
  forbidden(() => access.checkWrite(admin, et()));
  blocked.add('CONSUMER_APP:carol');
  forbidden(() => access.checkConsume(who('carol'), et()));
  access.checkRead(who('carol'), et()); // reading partitions is not consuming
  blocked.add('CONSUMER_ET:orders');
  forbidden(() => access.checkConsume(admin, et()));
  blocked.clear();
  access.checkConsume(who('carol'), et());
});

test('bearer tokens: the header must be "Bearer <token>" and the token bounded', () => {
  assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
  assert.equal(bearerToken('bearer abc'), 'abc');
  for (const bad of [undefined, '', 'Basic dXNlcg==', 'Bearer', 'Bearer a b', `Bearer ${'x'.repeat(9000)}`]) {
    assert.throws(() => bearerToken(bad), (e) => isProblem(e) && e.status === 401, String(bad).slice(0, 20));
  }
});

test('the static token file: entries become principals; a malformed file stops the start with a reason', async () => {
  const a = new StaticTokenAuthenticator(JSON.stringify({ tokens: { t1: { uid: 'reader-app', type: 'service', scopes: ['svc.event_stream.read'] }, t2: { uid: 'ops' } } }), 'ops');
  const p = await a.authenticate('Bearer t1');
  assert.deepEqual([p.uid, p.type, [...p.scopes], p.admin], ['reader-app', 'service', ['svc.event_stream.read'], false]);
  const admin = await a.authenticate('Bearer t2');
  assert.deepEqual([admin.type, admin.admin], ['user', true]);
  await assert.rejects(a.authenticate('Bearer nope'), (e) => isProblem(e) && e.status === 401);
  for (const bad of ['not json', '{}', '{"tokens":[]}', '{"tokens":{"t":{}}}', '{"tokens":{"t":{"uid":"u","scopes":"x"}}}']) {
    assert.throws(() => new StaticTokenAuthenticator(bad, 'ops'), Error, bad);
  }
});

test('known: the principal without waiting, the same as authenticate gives (or the same 401); undefined where authenticate must be asked', async () => {
  const a = new StaticTokenAuthenticator(JSON.stringify({ tokens: { t1: { uid: 'reader-app', type: 'service', scopes: ['s'] } } }), 'ops');
  assert.deepEqual(a.known('Bearer t1'), await a.authenticate('Bearer t1'));
  for (const header of ['Bearer nope', undefined, 'Basic abc']) {
    assert.throws(() => a.known(header), (e) => isProblem(e) && e.status === 401, String(header));
    await assert.rejects(a.authenticate(header), (e) => isProblem(e) && e.status === 401, String(header));
  }
  const off = new OffAuthenticator('ops');
  assert.equal(off.known(), await off.authenticate());
  let now = 1_000;
  const info = new TokenInfoAuthenticator({ url: 'http://127.0.0.1:1/tokeninfo', adminClientId: 'ops', cacheMs: 500, timeoutMs: 1_000, nowMs: () => now });
  assert.equal(info.known('Bearer t'), undefined, 'nothing cached: authenticate asks the service');
  assert.throws(() => info.known('Bearer'), (e) => isProblem(e) && e.status === 401);
  const realFetch = globalThis.fetch;
  let asked = 0;
  globalThis.fetch = (async () => {
    asked++;
    return new Response(JSON.stringify({ uid: 'u', scope: 'a b' }), { status: 200 });
  }) as typeof fetch;
  try {
    const p = await info.authenticate('Bearer t');
    assert.equal(asked, 1);
    assert.equal(info.known('Bearer t'), p, 'cached: known at once');
    assert.equal(info.known('Bearer other'), undefined, 'another token is not');
    now += 499;
    assert.equal(info.known('Bearer t'), p);
    now += 1;
    assert.equal(info.known('Bearer t'), undefined, 'expired: authenticate asks again');
  } finally {
    globalThis.fetch = realFetch;
  }
});
