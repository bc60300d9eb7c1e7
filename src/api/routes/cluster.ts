/** GET /cluster: this node's view of the cluster (members, metadata leader and term, Raft indexes). */
import type { FastifyInstance } from 'fastify';
import { problems } from '../../core/problem.js';
import type { AppDeps } from '../deps.js';

export async function clusterRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const cluster = opts.deps.cluster;
  app.get('/cluster', async () => {
    if (cluster === undefined) throw problems.notFound('This node runs without a cluster module');
    return cluster.view();
  });
}
