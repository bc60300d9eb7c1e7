/** The feature toggle high_level_api: when disabled, every /subscriptions route answers 503. */
import type { FastifyInstance } from 'fastify';
import { problems } from '../../core/problem.js';
import type { AppDeps } from '../deps.js';

export function requireHighLevelApi(app: FastifyInstance, deps: AppDeps): void {
  app.addHook('preHandler', async () => {
    if (!deps.features.isEnabled('high_level_api')) {
      throw problems.unavailable('The subscription API is disabled by the feature toggle high_level_api');
    }
  });
}
