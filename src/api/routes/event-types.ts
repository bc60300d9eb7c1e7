/** The event type registry: /event-types and /event-types/{name}/schemas. */
import type { FastifyPluginAsync } from 'fastify';
import { parsePaging } from '../../registry/event-type-service.js';
import type { Principal } from '../../auth/principal.js';
import { problems } from '../../core/problem.js';
import type { AppDeps } from '../deps.js';
import { parseJsonBody } from '../json-body.js';

type NameParams = { name: string };

/**
 * check_owning_application: a caller may create resources only for its own application (its uid); the
 * administrator for any. Brook has no application registry, so this is its meaning of the toggle.
 */
export function checkOwningApplication(deps: AppDeps, p: Principal, body: unknown): void {
  if (p.admin || !deps.features.isEnabled('check_owning_application')) return;
  const owner = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['owning_application'] : undefined;
  if (typeof owner === 'string' && owner !== p.uid) {
    throw problems.unprocessable(`owning_application "${owner}" is not the caller's application "${p.uid}" (feature check_owning_application)`);
  }
}

export const eventTypeRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const svc = deps.eventTypes;

  app.get('/event-types', async () => svc.list());

  app.post('/event-types', async (request, reply) => {
    const body = parseJsonBody(request.body);
    checkOwningApplication(deps, request.principal, body);
    const name = await svc.create(body);
    request.log.info({ eventType: name }, 'event type created');
    return reply.code(201).send();
  });

  app.get<{ Params: NameParams }>('/event-types/:name', async (request) => svc.get(request.params.name));

  app.put<{ Params: NameParams }>('/event-types/:name', async (request, reply) => {
    deps.access.checkAdmin(request.principal, svc.get(request.params.name));
    await svc.update(request.params.name, parseJsonBody(request.body));
    request.log.info({ eventType: request.params.name }, 'event type updated');
    return reply.code(200).send();
  });

  app.delete<{ Params: NameParams }>('/event-types/:name', async (request, reply) => {
    deps.access.checkAdmin(request.principal, svc.get(request.params.name));
    await svc.delete(request.params.name, request.principal.admin);
    request.log.info({ eventType: request.params.name }, 'event type deleted');
    return reply.code(200).send();
  });

  app.get<{ Params: NameParams; Querystring: Record<string, unknown> }>('/event-types/:name/schemas', async (request) => {
    const { limit, offset } = parsePaging(request.query);
    return svc.schemas(request.params.name, limit, offset);
  });

  app.get<{ Params: NameParams & { version: string } }>('/event-types/:name/schemas/:version', async (request) =>
    svc.schema(request.params.name, request.params.version),
  );
};
