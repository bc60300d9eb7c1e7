/** GET /metrics (the JSON object of compatibility.md) and GET /metrics/prometheus (text exposition); administrator-only (auth/permissions.ts). */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../deps.js';

export const metricsRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  app.get('/metrics', async () => deps.metrics.json());
  app.get('/metrics/prometheus', async (_request, reply) => reply.type(deps.metrics.contentType).send(await deps.metrics.prometheus()));
};
