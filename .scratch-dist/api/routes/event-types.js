import { parsePaging } from '../../registry/event-type-service.js';
import { problems } from '../../core/problem.js';
import { parseJsonBody } from '../json-body.js';
/**
 * check_owning_application: a caller may create resources only for its own application (its uid); the
 * administrator for any. Brook has no application registry, so this is its meaning of the toggle.
 */
export function checkOwningApplication(deps, p, body) {
    if (p.admin || !deps.features.isEnabled('check_owning_application'))
        return;
    const owner = typeof body === 'object' && body !== null ? body['owning_application'] : undefined;
    if (typeof owner === 'string' && owner !== p.uid) {
        throw problems.unprocessable(`owning_application "${owner}" is not the caller's application "${p.uid}" (feature check_owning_application)`);
    }
}
export const eventTypeRoutes = async (app, { deps }) => {
    const svc = deps.eventTypes;
    app.get('/event-types', async () => svc.list());
    app.post('/event-types', async (request, reply) => {
        const body = parseJsonBody(request.body);
        checkOwningApplication(deps, request.principal, body);
        const name = await svc.create(body);
        request.log.info({ eventType: name }, 'event type created');
        return reply.code(201).send();
    });
    app.get('/event-types/:name', async (request) => svc.get(request.params.name));
    app.put('/event-types/:name', async (request, reply) => {
        deps.access.checkAdmin(request.principal, svc.get(request.params.name));
        await svc.update(request.params.name, parseJsonBody(request.body));
        request.log.info({ eventType: request.params.name }, 'event type updated');
        return reply.code(200).send();
    });
    app.delete('/event-types/:name', async (request, reply) => {
        deps.access.checkAdmin(request.principal, svc.get(request.params.name));
        await svc.delete(request.params.name, request.principal.admin);
        request.log.info({ eventType: request.params.name }, 'event type deleted');
        return reply.code(200).send();
    });
    app.get('/event-types/:name/schemas', async (request) => {
        const { limit, offset } = parsePaging(request.query);
        return svc.schemas(request.params.name, limit, offset);
    });
    app.get('/event-types/:name/schemas/:version', async (request) => svc.schema(request.params.name, request.params.version));
};
//# sourceMappingURL=event-types.js.map