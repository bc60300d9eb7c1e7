// Goal: every route the HTTP layer registers has an explicit permission (interface.md, "Authentication"
// 2 and 3), so none is served by accident with the deny-by-default fallback or without thought; and the
// scope and administrator checks answer 403 as the table says.
// Method: the route registrations are read from the sources (as architecture.test.ts reads imports)
// and compared with the table; examples for the checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isProblem } from '../core/problem.js';
import { checkPermission, interactiveDocsRoutes, permissionOf, routePermissions } from './permissions.js';
const routesDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'api', 'routes');
test('every registered route is in the permission table, and the table names no route that does not exist', () => {
    const registered = new Set();
    for (const file of readdirSync(routesDir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
        const text = readFileSync(join(routesDir, file), 'utf8');
        for (const m of text.matchAll(/app\.(get|post|put|delete|patch)(?:<[^(]*?>)?\(\s*'([^']+)'/g))
            registered.add(`${m[1].toUpperCase()} ${m[2]}`);
    }
    // Routes a plugin registers (the interactive OpenAPI page); openapi.http.test.ts checks them on a real broker.
    for (const r of interactiveDocsRoutes)
        registered.add(r);
    assert.ok(registered.size >= 30, `found only ${registered.size} routes; is the pattern still right?`);
    for (const r of registered)
        assert.ok(r in routePermissions, `${r} has no entry in routePermissions`);
    for (const r of Object.keys(routePermissions))
        assert.ok(registered.has(r), `routePermissions lists ${r}, which is not registered`);
});
const p = (scopes, admin = false) => ({ uid: 'u', type: 'user', scopes: new Set(scopes), admin });
const opts = { scopePrefix: 'svc.', eventTypeDeletionAdminOnly: false };
const denied = (fn) => assert.throws(fn, (e) => isProblem(e) && e.status === 403);
test('scopes, the administrator and the deny-by-default fallback', () => {
    checkPermission(p(['svc.event_stream.read']), permissionOf('GET', '/event-types/:name/events'), opts);
    denied(() => checkPermission(p(['svc.event_stream.write']), permissionOf('GET', '/event-types/:name/events'), opts));
    denied(() => checkPermission(p(['brook.event_stream.read']), permissionOf('GET', '/event-types/:name/events'), opts));
    checkPermission(p(['brook.event_stream.read']), permissionOf('GET', '/event-types/:name/events'), { ...opts, scopePrefix: 'brook.' });
    denied(() => checkPermission(p(['svc.event_type.write', 'svc.config.write', 'svc.event_stream.write', 'svc.event_stream.read']), permissionOf('GET', '/settings/features'), opts));
    checkPermission(p([], true), permissionOf('GET', '/settings/features'), opts);
    denied(() => checkPermission(p(['svc.event_stream.read']), permissionOf('GET', '/some/new/route'), opts));
    checkPermission(p([]), permissionOf('GET', undefined), opts);
    checkPermission(p(['svc.config.write']), permissionOf('DELETE', '/event-types/:name'), opts);
    denied(() => checkPermission(p(['svc.config.write']), permissionOf('DELETE', '/event-types/:name'), { ...opts, eventTypeDeletionAdminOnly: true }));
});
//# sourceMappingURL=permissions.test.js.map