/** /storages and /event-types/{name}/timelines (administrator-only, auth/permissions.ts); rules in broker/timeline-service.ts. */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../deps.js';
import { parseJsonBody } from '../json-body.js';

export const timelineRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const svc = deps.timelines;

  app.post('/storages', async (request, reply) => {
    const storage = await svc.createStorage(parseJsonBody(request.body));
    request.log.info({ storage }, 'storage created');
    return reply.code(201).send(storage);
  });
  app.get('/storages', async () => svc.listStorages());
  app.get<{ Params: { id: string } }>('/storages/:id', async (request) => svc.getStorage(request.params.id));
  app.delete<{ Params: { id: string } }>('/storages/:id', async (request, reply) => {
    await svc.deleteStorage(request.params.id);
    request.log.info({ storage: request.params.id }, 'storage deleted');
    return reply.code(204).send();
  });

  app.post<{ Params: { name: string } }>('/event-types/:name/timelines', async (request, reply) => {
    const timeline = await svc.createTimeline(request.params.name, parseJsonBody(request.body));
    request.log.info({ eventType: request.params.name, timeline }, 'timeline created: new writes go to it');
    return reply.code(201).send();
  });
  app.get<{ Params: { name: string } }>('/event-types/:name/timelines', async (request) => svc.listTimelines(request.params.name));
  app.delete<{ Params: { name: string; id: string } }>('/event-types/:name/timelines/:id', async (request, reply) => {
    svc.deleteTimeline(request.params.name, request.params.id);
    return reply.code(200).send();
  });
};
