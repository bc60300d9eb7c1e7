import { parsePaging } from '../../core/paging.js';
import { problems } from '../../core/problem.js';
import { checkOwningApplication } from './event-types.js';
import { requireHighLevelApi } from './high-level-api.js';
import { parseJsonBody } from '../json-body.js';
function listFilter(query) {
    const et = query['event_type'];
    const eventTypes = et === undefined ? [] : Array.isArray(et) ? et.map(String) : [String(et)];
    if (eventTypes.some((t) => t === ''))
        throw problems.badRequest('Query parameter event_type must not be empty');
    const owner = query['owning_application'];
    if (Array.isArray(owner))
        throw problems.badRequest('Query parameter owning_application may be given once');
    if (owner === '')
        throw problems.badRequest('Query parameter owning_application must not be empty');
    return { eventTypes, owningApplication: owner === undefined ? undefined : String(owner) };
}
/**
 * The subscription `id`, once the caller may do `op` with it (auth/resource-access.ts): read access to
 * each of its event types, and its authorization section. 404 for an unknown id.
 */
export function authorizedSubscription(deps, request, id, op) {
    const sub = deps.subscriptions.get(id);
    deps.access.checkSubscription(request.principal, sub, sub.event_types.map((name) => deps.eventTypes.get(name)), op);
    return sub;
}
export const subscriptionRoutes = async (app, { deps }) => {
    const svc = deps.subscriptions;
    requireHighLevelApi(app, deps);
    app.post('/subscriptions', async (request, reply) => {
        const body = parseJsonBody(request.body);
        checkOwningApplication(deps, request.principal, body);
        // Creating a subscription needs read access to each of its event types (the unknown ones get the service's 422).
        const names = body?.event_types;
        if (Array.isArray(names)) {
            for (const name of names) {
                const et = typeof name === 'string' ? deps.eventTypes.find(name) : undefined;
                if (et !== undefined)
                    deps.access.checkRead(request.principal, et);
            }
        }
        const { subscription, created } = await svc.create(body);
        const location = `/subscriptions/${encodeURIComponent(subscription.id)}`;
        reply.header('Location', location);
        if (created) {
            request.log.info({ subscription: subscription.id }, 'subscription created');
            // Content-Location equal to Location: the body is the current representation (interface.md).
            return reply.code(201).header('Content-Location', location).send(subscription);
        }
        return reply.code(200).send(subscription);
    });
    app.get('/subscriptions', async (request) => {
        const filter = listFilter(request.query);
        const { limit, offset } = parsePaging(request.query);
        return svc.list(filter, limit, offset);
    });
    app.get('/subscriptions/:id', async (request) => authorizedSubscription(deps, request, request.params.id, 'view'));
    app.put('/subscriptions/:id', async (request, reply) => {
        authorizedSubscription(deps, request, request.params.id, 'admin');
        const updated = await svc.update(request.params.id, parseJsonBody(request.body));
        request.log.info({ subscription: updated.id }, 'subscription authorization updated');
        return reply.code(204).send();
    });
    app.delete('/subscriptions/:id', async (request, reply) => {
        authorizedSubscription(deps, request, request.params.id, 'admin');
        await svc.delete(request.params.id);
        request.log.info({ subscription: request.params.id }, 'subscription deleted');
        return reply.code(204).send();
    });
};
//# sourceMappingURL=subscriptions.js.map