/** POST/GET /subscriptions, GET/PUT/DELETE /subscriptions/{id}. (Streaming, cursors and stats: subscription-streams.ts.) */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { parsePaging } from '../../core/paging.js';
import { problems } from '../../core/problem.js';
import type { AppDeps } from '../deps.js';
import { checkOwningApplication } from './event-types.js';
import { requireHighLevelApi } from './high-level-api.js';
import { parseJsonBody } from '../json-body.js';
import type { Subscription } from '../../metadata/types.js';

type IdParams = { id: string };

function listFilter(query: Record<string, unknown>): { eventTypes: string[]; owningApplication: string | undefined } {
  const et = query['event_type'];
  const eventTypes = et === undefined ? [] : Array.isArray(et) ? et.map(String) : [String(et)];
  if (eventTypes.some((t) => t === '')) throw problems.badRequest('Query parameter event_type must not be empty');
  const owner = query['owning_application'];
  if (Array.isArray(owner)) throw problems.badRequest('Query parameter owning_application may be given once');
  if (owner === '') throw problems.badRequest('Query parameter owning_application must not be empty');
  return { eventTypes, owningApplication: owner === undefined ? undefined : String(owner) };
}

/**
 * The subscription `id`, once the caller may do `op` with it (auth/resource-access.ts): read access to
 * each of its event types, and its authorization section. 404 for an unknown id.
 */
export function authorizedSubscription(deps: AppDeps, request: FastifyRequest, id: string, op: 'view' | 'consume' | 'admin'): Subscription {
  const sub = deps.subscriptions.get(id);
  deps.access.checkSubscription(request.principal, sub, sub.event_types.map((name) => deps.eventTypes.get(name)), op);
  return sub;
}

export const subscriptionRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const svc = deps.subscriptions;
  requireHighLevelApi(app, deps);

  app.post('/subscriptions', async (request, reply) => {
    const body = parseJsonBody(request.body);
    checkOwningApplication(deps, request.principal, body);
    // Creating a subscription needs read access to each of its event types (the unknown ones get the service's 422).
    const names = (body as { event_types?: unknown } | null)?.event_types;
    if (Array.isArray(names)) {
      for (const name of names) {
        const et = typeof name === 'string' ? deps.eventTypes.find(name) : undefined;
        if (et !== undefined) deps.access.checkRead(request.principal, et);
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

  app.get<{ Querystring: Record<string, unknown> }>('/subscriptions', async (request) => {
    const filter = listFilter(request.query);
    const { limit, offset } = parsePaging(request.query);
    return svc.list(filter, limit, offset);
  });

  app.get<{ Params: IdParams }>('/subscriptions/:id', async (request) => authorizedSubscription(deps, request, request.params.id, 'view'));

  app.put<{ Params: IdParams }>('/subscriptions/:id', async (request, reply) => {
    authorizedSubscription(deps, request, request.params.id, 'admin');
    const updated = await svc.update(request.params.id, parseJsonBody(request.body));
    request.log.info({ subscription: updated.id }, 'subscription authorization updated');
    return reply.code(204).send();
  });

  app.delete<{ Params: IdParams }>('/subscriptions/:id', async (request, reply) => {
    authorizedSubscription(deps, request, request.params.id, 'admin');
    await svc.delete(request.params.id);
    request.log.info({ subscription: request.params.id }, 'subscription deleted');
    return reply.code(204).send();
  });
};
