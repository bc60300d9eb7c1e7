import { checkPermission, permissionOf } from '../auth/permissions.js';
import { isProblem } from '../core/problem.js';
/** The caller of a public route (no token asked for): no scopes, not the administrator. */
const anonymous = { uid: '', type: 'anonymous', scopes: new Set(), admin: false };
export function installAuth(app, auth) {
    app.decorateRequest('principal', null);
    app.addHook('onRequest', async (request, reply) => {
        // HEAD is answered by the GET route.
        const method = request.method === 'HEAD' ? 'GET' : request.method;
        const permission = permissionOf(method, request.routeOptions.url);
        if (permission.kind === 'public') {
            request.principal = anonymous;
            return;
        }
        try {
            request.principal = await auth.authenticator.authenticate(request.headers.authorization);
        }
        catch (err) {
            if (isProblem(err) && err.status === 401)
                reply.header('WWW-Authenticate', 'Bearer realm="brook"');
            throw err;
        }
        checkPermission(request.principal, permission, auth.options);
    });
}
//# sourceMappingURL=auth-hooks.js.map