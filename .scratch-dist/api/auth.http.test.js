// Goal: every authentication mode with real tokens (issue 5, point 1; docs/security.md): off, a static
// token file, a token-info URL (with its cache, and 503 when it fails), JWT against a JWKS URL and
// against a PEM key; bad input (no token, malformed header, oversize token, oversize headers, expired
// or badly signed JWTs, garbage) gets a clear 401/431 Problem, never a crash.
// Method: real brokers over HTTP; the token-info service and the JWKS are served by this test.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { allScopes, bearer, tokenFile } from '../testing/auth-fixtures.js';
const brokers = [];
const servers = [];
after(async () => {
    await Promise.all(brokers.map((b) => b.destroy()));
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});
async function broker(over) {
    const b = await startTestBroker(over);
    brokers.push(b);
    return b;
}
async function serve(handler) {
    const s = createServer((req, res) => {
        const { status, body } = handler(new URL(req.url ?? '/', 'http://x'), req.headers);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
    servers.push(s);
    await new Promise((r) => s.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${s.address().port}`;
}
const is401 = (r, what) => {
    assert.equal(r.status, 401, what);
    assert.match(r.headers.get('content-type') ?? '', /problem\+json/, what);
    assert.equal(r.body.status, 401, what);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/, what);
};
test('off: no token needed, every caller is the administrator', async () => {
    const b = await broker({ auth: 'off' });
    assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('auth.off'))).status, 201);
    assert.equal((await call(b.url, 'GET', '/settings/features')).status, 200, 'an admin route');
});
test('static: a listed token works with its scopes; missing, unknown, malformed and oversize tokens are 401; oversize headers 431', async () => {
    const file = tokenFile({ 'tok-writer': { uid: 'writer-app', scopes: allScopes }, 'tok-nothing': { uid: 'idle-app', scopes: [] } });
    const b = await broker({ auth: 'static', authTokensFile: file });
    assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('auth.static'), bearer('tok-writer'))).status, 201);
    assert.equal((await call(b.url, 'GET', '/event-types/auth.static', undefined, bearer('tok-nothing'))).status, 200, 'authenticated routes need no scope');
    assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('auth.static2'), bearer('tok-nothing'))).status, 403);
    is401(await call(b.url, 'GET', '/event-types'), 'no header');
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer('tok-unknown')), 'unknown token');
    is401(await call(b.url, 'GET', '/event-types', undefined, { authorization: 'Basic d3JpdGVyOnB3' }), 'Basic');
    is401(await call(b.url, 'GET', '/event-types', undefined, { authorization: 'Bearer' }), 'no token after Bearer');
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer('x'.repeat(10_000))), 'a 10 KB token');
    const huge = await call(b.url, 'GET', '/event-types', undefined, bearer('y'.repeat(20_000)));
    assert.equal(huge.status, 431, 'headers over 16 KiB');
    assert.match(huge.headers.get('content-type') ?? '', /problem\+json/);
    assert.equal(huge.body.status, 431, `a Problem: ${huge.text}`);
    is401(await call(b.url, 'GET', '/no/such/route'), 'authentication comes before routing');
    // The health check alone needs no token (load balancers and orchestrators' probes), also with a bad one.
    for (const headers of [{}, bearer('tok-unknown')]) {
        const health = await call(b.url, 'GET', '/health', undefined, headers);
        assert.equal(health.status, 200);
        assert.equal(health.text, 'OK');
    }
    is401(await call(b.url, 'GET', '/cluster'), '/cluster is not public');
    // The broker still serves after all that.
    assert.equal((await call(b.url, 'GET', '/event-types', undefined, bearer('tok-writer'))).status, 200);
});
test('scopes as the interface lists them, with the default prefix and with another one', async () => {
    const tokens = {
        writer: { uid: 'w', scopes: ['svc.event_type.write', 'svc.event_stream.write'] },
        reader: { uid: 'r', scopes: ['svc.event_stream.read'] },
        config: { uid: 'c', scopes: ['svc.config.write'] },
    };
    const b = await broker({ auth: 'static', authTokensFile: tokenFile(tokens) });
    const as = (t) => bearer(t);
    assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('auth.sc'), as('writer'))).status, 201);
    assert.equal((await call(b.url, 'PUT', '/event-types/auth.sc', businessEventType('auth.sc'), as('reader'))).status, 403, 'PUT needs event_type.write');
    assert.equal((await call(b.url, 'POST', '/event-types/auth.sc/events', [], as('reader'))).status, 403, 'publishing needs event_stream.write');
    assert.equal((await call(b.url, 'POST', '/event-types/auth.sc/events', [], as('writer'))).status, 200);
    for (const [m, path, body] of [
        ['GET', '/event-types/auth.sc/events'],
        ['GET', '/event-types/auth.sc/partitions'],
        ['POST', '/event-types/auth.sc/cursors-lag', []],
        ['GET', '/registry/partition-strategies'],
        ['GET', '/subscriptions'],
        ['POST', '/subscriptions', { owning_application: 'w', event_types: ['auth.sc'] }],
    ]) {
        const r = await call(b.url, m, path, body, as('writer'));
        assert.equal(r.status, 403, `${m} ${path} without event_stream.read`);
        assert.match(r.body.detail, /svc\.event_stream\.read/);
    }
    assert.equal((await call(b.url, 'GET', '/event-types/auth.sc/partitions', undefined, as('reader'))).status, 200);
    assert.equal((await call(b.url, 'DELETE', '/event-types/auth.sc', undefined, as('writer'))).status, 403, 'DELETE needs config.write');
    assert.equal((await call(b.url, 'DELETE', '/event-types/auth.sc', undefined, as('config'))).status, 200);
    const prefixed = await broker({ auth: 'static', authTokensFile: tokenFile({ t: { uid: 'p', scopes: ['brook.event_stream.read'] } }), authScopePrefix: 'brook.' });
    assert.equal((await call(prefixed.url, 'GET', '/registry/partition-strategies', undefined, as('t'))).status, 200);
});
test('static: a malformed token file stops the start with a reason', async () => {
    await assert.rejects(startTestBroker({ auth: 'static', authTokensFile: tokenFile({ t: { uid: '' } }) }), /uid/);
    await assert.rejects(startTestBroker({ auth: 'static', authTokensFile: '/nonexistent/tokens.json' }), /token file/);
});
test('tokeninfo: answers become principals, are cached, and an unreachable or failing service is 503', async () => {
    let hits = 0;
    let failing = false;
    const url = await serve((u, headers) => {
        hits++;
        if (failing)
            return { status: 500, body: { error: 'down' } };
        const token = u.searchParams.get('access_token');
        if (headers['authorization'] !== `Bearer ${token}`)
            return { status: 400, body: { error: 'header and query differ' } };
        if (token === 'ti-good')
            return { status: 200, body: { uid: 'ti-app', scope: allScopes, realm: '/services', expires_in: 3600 } };
        if (token === 'ti-rfc')
            return { status: 200, body: { active: true, client_id: 'rfc-app', scope: 'svc.event_stream.read' } };
        if (token === 'ti-inactive')
            return { status: 200, body: { active: false } };
        if (token === 'ti-busy')
            return { status: 429, body: { error: 'slow down' } };
        if (token === 'ti-exp')
            return { status: 200, body: { active: true, client_id: 'exp-app', scope: 'svc.event_stream.read', exp: Math.floor(Date.now() / 1000) + 2 } };
        return { status: 401, body: { error: 'invalid_token' } };
    });
    const b = await broker({ auth: 'tokeninfo', authTokenInfoUrl: `${url}/oauth2/tokeninfo`, authTokenInfoCacheMs: 60_000 });
    assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('auth.ti'), bearer('ti-good'))).status, 201);
    const before = hits;
    for (let i = 0; i < 5; i++)
        assert.equal((await call(b.url, 'GET', '/event-types', undefined, bearer('ti-good'))).status, 200);
    assert.equal(hits, before, 'cached: the token-info service is not asked again');
    assert.equal((await call(b.url, 'GET', '/registry/partition-strategies', undefined, bearer('ti-rfc'))).status, 200, 'RFC 7662 answer with a space-separated scope');
    assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('auth.ti2'), bearer('ti-rfc'))).status, 403, 'only the read scope');
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer('ti-inactive')), 'inactive');
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer('ti-bad')), 'refused by token-info');
    assert.equal((await call(b.url, 'GET', '/event-types', undefined, bearer('ti-busy'))).status, 503, 'a rate-limited token-info service is not the token\'s fault');
    // RFC 7662's exp bounds the cache (60 s here): asked again once the token has expired.
    assert.equal((await call(b.url, 'GET', '/event-types', undefined, bearer('ti-exp'))).status, 200);
    const beforeExp = hits;
    assert.equal((await call(b.url, 'GET', '/event-types', undefined, bearer('ti-exp'))).status, 200);
    assert.equal(hits, beforeExp, 'cached while the token lives');
    await new Promise((r) => setTimeout(r, 2100));
    assert.equal((await call(b.url, 'GET', '/event-types', undefined, bearer('ti-exp'))).status, 200);
    assert.equal(hits, beforeExp + 1, 'asked again after exp');
    failing = true;
    const down = await call(b.url, 'GET', '/event-types', undefined, bearer('ti-other'));
    assert.equal(down.status, 503, `a failing token-info service is not the client's fault: ${down.text}`);
    assert.equal((await call(b.url, 'GET', '/event-types', undefined, bearer('ti-good'))).status, 200, 'a cached token keeps working during the outage');
    const gone = await broker({ auth: 'tokeninfo', authTokenInfoUrl: 'http://127.0.0.1:1/tokeninfo', authTimeoutMs: 500 });
    assert.equal((await call(gone.url, 'GET', '/event-types', undefined, bearer('any'))).status, 503);
});
test('jwt: a JWKS URL or a PEM key; valid, expired, badly signed, wrong issuer/audience and garbage tokens', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const other = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const jwks = await serve(() => ({ status: 200, body: { keys: [jwk] } }));
    const sign = (claims, key = privateKey, exp = '5m') => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuedAt().setIssuer('https://issuer.test').setAudience('brook').setExpirationTime(exp).sign(key);
    const b = await broker({ auth: 'jwt', authJwksUrl: `${jwks}/.well-known/jwks.json`, authJwtIssuer: 'https://issuer.test', authJwtAudience: 'brook' });
    const good = await sign({ sub: 'jwt-app', scope: allScopes.join(' '), type: 'service' });
    assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('auth.jwt'), bearer(good))).status, 201);
    const readOnly = await sign({ sub: 'jwt-reader', scp: ['svc.event_stream.read'] });
    assert.equal((await call(b.url, 'GET', '/registry/partition-strategies', undefined, bearer(readOnly))).status, 200, 'scp as an array');
    assert.equal((await call(b.url, 'POST', '/event-types', businessEventType('auth.jwt2'), bearer(readOnly))).status, 403);
    const expired = await sign({ sub: 'jwt-app', scope: 'svc.event_stream.read' }, privateKey, Math.floor(Date.now() / 1000) - 60);
    const r = await call(b.url, 'GET', '/event-types', undefined, bearer(expired));
    is401(r, 'expired');
    assert.match(r.body.detail, /expired/);
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer(await sign({ sub: 'x' }, other.privateKey))), 'signed by another key');
    const wrongIssuer = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer('https://evil.test').setAudience('brook').setExpirationTime('5m').sign(privateKey);
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer(wrongIssuer)), 'wrong issuer');
    const wrongAudience = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer('https://issuer.test').setAudience('other').setExpirationTime('5m').sign(privateKey);
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer(wrongAudience)), 'wrong audience');
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer('abc.def.ghi')), 'garbage');
    is401(await call(b.url, 'GET', '/event-types', undefined, bearer(await sign({ scope: 'svc.event_stream.read' }))), 'no sub claim');
    // A JWKS that is unreachable, failing or broken is an outage, not a bad token (as for token-info):
    // 503, and the same token works once the JWKS is back.
    let jwksState = 'down';
    const flaky = await serve(() => jwksState === 'down' ? { status: 500, body: { error: 'down' } } : jwksState === 'garbage' ? { status: 200, body: '<html>' } : jwksState === 'invalid' ? { status: 200, body: { keys: 'x' } } : { status: 200, body: { keys: [jwk] } });
    const flakyBroker = await broker({ auth: 'jwt', authJwksUrl: `${flaky}/jwks` });
    for (const state of ['down', 'garbage', 'invalid']) {
        jwksState = state;
        const out = await call(flakyBroker.url, 'GET', '/event-types', undefined, bearer(good));
        assert.equal(out.status, 503, `JWKS ${state}: ${out.text}`);
        assert.match(out.headers.get('content-type') ?? '', /problem\+json/);
    }
    jwksState = 'up';
    assert.equal((await call(flakyBroker.url, 'GET', '/event-types', undefined, bearer(good))).status, 200, 'the JWKS is back');
    is401(await call(flakyBroker.url, 'GET', '/event-types', undefined, bearer(await sign({ sub: 'x' }, other.privateKey))), 'JWKS up: other signer');
    const pem = await exportSPKI(publicKey);
    const withKey = await broker({ auth: 'jwt', authJwtKey: pem });
    assert.equal((await call(withKey.url, 'GET', '/event-types', undefined, bearer(good))).status, 200);
    is401(await call(withKey.url, 'GET', '/event-types', undefined, bearer(await sign({ sub: 'x' }, other.privateKey))), 'PEM key: other signer');
});
//# sourceMappingURL=auth.http.test.js.map