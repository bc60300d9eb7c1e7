/**
 * Authentication and route permissions for every request (interface.md, "Authentication"): the
 * configured authenticator turns the Authorization header into a Principal (401 Problem otherwise,
 * with WWW-Authenticate), then the route's permission from auth/permissions.ts is checked (403).
 * Per-resource rules (event type authorization, blacklist) are checked by the routes, which know the
 * resource. Installed before every other hook that may answer, so nothing is served unauthenticated.
 */
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticators.js';
import { checkPermission, permissionOf, type PermissionOptions } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { isProblem } from '../core/problem.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling; set by the authentication hook before any route runs. */
    principal: Principal;
  }
}

/** The caller of a public route (no token asked for): no scopes, not the administrator. */
const anonymous: Principal = { uid: '', type: 'anonymous', scopes: new Set(), admin: false };

export interface AuthDeps {
  authenticator: Authenticator;
  options: PermissionOptions;
}

export function installAuth(app: FastifyInstance, auth: AuthDeps): void {
  app.decorateRequest('principal', null as unknown as Principal);
  // A callback hook, not an async one: when the principal is known at once (authenticator.known: no
  // authentication, a token file, a cached token) the request goes on without a promise or a turn.
  app.addHook('onRequest', (request, reply, done) => {
    // HEAD is answered by the GET route.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const permission = permissionOf(method, request.routeOptions.url);
    if (permission.kind === 'public') {
      request.principal = anonymous;
      done();
      return;
    }
    const refused = (err: unknown): Error => {
      if (isProblem(err) && err.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="brook"');
      return err as Error;
    };
    // `done` is called once, outside the try blocks: it runs the rest of the request synchronously,
    // whose errors are not this hook's.
    const authenticated = (principal: Principal): void => {
      request.principal = principal;
      let denied: Error | undefined;
      try {
        checkPermission(principal, permission, auth.options);
      } catch (err) {
        denied = err as Error;
      }
      done(denied);
    };
    let known: Principal | undefined;
    try {
      known = auth.authenticator.known?.(request.headers.authorization);
    } catch (err) {
      done(refused(err));
      return;
    }
    if (known !== undefined) {
      authenticated(known);
      return;
    }
    auth.authenticator.authenticate(request.headers.authorization).then(authenticated, (err: unknown) => done(refused(err)));
  });
}
