/** GET /registry/partition-strategies and /registry/enrichment-strategies. */
import type { FastifyPluginAsync } from 'fastify';
import { enrichmentStrategyNames, partitionStrategyNames } from '../../registry/index.js';
import type { AppDeps } from '../deps.js';

export const registryRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app) => {
  app.get('/registry/partition-strategies', async () => partitionStrategyNames);
  app.get('/registry/enrichment-strategies', async () => enrichmentStrategyNames);
};
