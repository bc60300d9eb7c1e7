/**
 * What each route needs (interface.md, "Authentication" 2 and 3), as one table keyed by method and
 * route pattern, so a route cannot be added without deciding its permission (a test checks every
 * registered route is listed; an unlisted route needs the administrator). PURE.
 *
 * Per-resource rules (an event type's authorization lists, the blacklist) come on top, in
 * resource-access.ts, because they depend on the resource, not the route.
 */
import { problems } from '../core/problem.js';
import type { Principal } from './principal.js';

export type ScopeName = 'event_type.write' | 'config.write' | 'event_stream.write' | 'event_stream.read';

export type Permission =
  /**
   * Anyone, without a token: the health check (for load balancers and orchestrators), and what is
   * served to people and tools without data: the console's files, the OpenAPI document and its page.
   */
  | { kind: 'public' }
  /** Any authenticated caller. */
  | { kind: 'authenticated' }
  | { kind: 'scope'; scope: ScopeName }
  /** The administrator only. */
  | { kind: 'admin' }
  /** DELETE /event-types/{name}: the scope, and the administrator when configured so. */
  | { kind: 'event_type_delete' };

const read: Permission = { kind: 'scope', scope: 'event_stream.read' };
const admin: Permission = { kind: 'admin' };
const open: Permission = { kind: 'public' };

/**
 * The routes @fastify/swagger-ui registers under /docs (api/routes/openapi.ts) for the interactive
 * page on the OpenAPI document. They are not written out in api/routes/, so they are listed here.
 */
export const interactiveDocsRoutes: readonly string[] = [
  'GET /docs',
  'GET /docs/',
  'GET /docs/static/index.html',
  'GET /docs/static/swagger-initializer.js',
  'GET /docs/static/*',
  'GET /docs/json',
  'GET /docs/yaml',
];

export const routePermissions: Readonly<Record<string, Permission>> = {
  'GET /health': open,
  'GET /': open,
  'GET /console': open,
  'GET /console/*': open,
  'GET /openapi.json': open,
  ...Object.fromEntries(interactiveDocsRoutes.map((r) => [r, open])),
  'GET /cluster': { kind: 'authenticated' },
  'GET /event-types': { kind: 'authenticated' },
  'POST /event-types': { kind: 'scope', scope: 'event_type.write' },
  'GET /event-types/:name': { kind: 'authenticated' },
  'PUT /event-types/:name': { kind: 'scope', scope: 'event_type.write' },
  'DELETE /event-types/:name': { kind: 'event_type_delete' },
  'GET /event-types/:name/schemas': { kind: 'authenticated' },
  'GET /event-types/:name/schemas/:version': { kind: 'authenticated' },
  'POST /event-types/:name/events': { kind: 'scope', scope: 'event_stream.write' },
  'GET /event-types/:name/events': read,
  'GET /event-types/:name/partitions': read,
  'GET /event-types/:name/partitions/:partition': read,
  'POST /event-types/:name/cursor-distances': read,
  'POST /event-types/:name/cursors-lag': read,
  'POST /event-types/:name/shifted-cursors': read,
  'GET /registry/partition-strategies': read,
  'GET /registry/enrichment-strategies': read,
  'POST /subscriptions': read,
  'GET /subscriptions': read,
  'GET /subscriptions/:id': read,
  'PUT /subscriptions/:id': read,
  'DELETE /subscriptions/:id': read,
  'GET /subscriptions/:id/events': read,
  'POST /subscriptions/:id/cursors': read,
  'GET /subscriptions/:id/cursors': read,
  'PATCH /subscriptions/:id/cursors': read,
  'GET /subscriptions/:id/stats': read,
  'GET /settings/features': admin,
  'POST /settings/features': admin,
  'GET /settings/blacklist': admin,
  'PUT /settings/blacklist/:type/:name': admin,
  'DELETE /settings/blacklist/:type/:name': admin,
  'GET /storages': admin,
  'POST /storages': admin,
  'GET /storages/:id': admin,
  'DELETE /storages/:id': admin,
  'GET /event-types/:name/timelines': admin,
  'POST /event-types/:name/timelines': admin,
  'DELETE /event-types/:name/timelines/:id': admin,
  'POST /cluster/partitions/:group/move': admin,
  'DELETE /cluster/partitions/:group/move': admin,
  'POST /cluster/partitions/:group/accept-loss': admin,
  'POST /cluster/accept-loss': admin,
  'GET /cluster/partitions/:group/replica': admin,
  'GET /metrics': admin,
  'GET /metrics/prometheus': admin,
};

export interface PermissionOptions {
  /** Scope names are `<prefix><name>`, e.g. svc.event_stream.read. */
  scopePrefix: string;
  /** Deleting event types needs the administrator (besides svc.config.write). */
  eventTypeDeletionAdminOnly: boolean;
}

/** The permission of a route; routes not in the table need the administrator (deny by default). */
export function permissionOf(method: string, routeUrl: string | undefined): Permission {
  if (routeUrl === undefined) return { kind: 'authenticated' }; // no route: the 404 needs no more than a caller
  return routePermissions[`${method} ${routeUrl}`] ?? admin;
}

/** Throws a 403 Problem when the principal lacks the permission. */
export function checkPermission(p: Principal, perm: Permission, opts: PermissionOptions): void {
  if (p.admin) return;
  switch (perm.kind) {
    case 'public':
    case 'authenticated':
      return;
    case 'admin':
      throw problems.forbidden('This operation is restricted to the administrator');
    case 'event_type_delete':
      if (opts.eventTypeDeletionAdminOnly) throw problems.forbidden('Deleting event types is restricted to the administrator');
      return requireScope(p, 'config.write', opts);
    case 'scope':
      return requireScope(p, perm.scope, opts);
  }
}

function requireScope(p: Principal, scope: ScopeName, opts: PermissionOptions): void {
  const name = opts.scopePrefix + scope;
  if (!p.scopes.has(name)) throw problems.forbidden(`Scope "${name}" is required for this operation`);
}
