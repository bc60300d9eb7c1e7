/** GET/POST /settings/features. (Administrator-only once authentication lands, issue 5.) */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../deps.js';
import { parseJsonBody } from '../json-body.js';

export const settingsRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  app.get('/settings/features', async () => ({ items: deps.features.list() }));

  app.post('/settings/features', async (request, reply) => {
    const set = await deps.features.set(parseJsonBody(request.body));
    request.log.info(set, 'feature toggled');
    return reply.code(204).send();
  });
};
