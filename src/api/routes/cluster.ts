/**
 * GET /cluster: this node's view of the cluster (members, metadata leader and term, Raft indexes).
 * GET /health: 200 "OK" while the node serves HTTP, without authentication, as the original service
 * answered it: for load balancers and orchestrators' liveness and readiness probes.
 */
import type { FastifyInstance } from 'fastify';
import { problems } from '../../core/problem.js';
import type { AppDeps } from '../deps.js';

export async function clusterRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const cluster = opts.deps.cluster;
  app.get('/health', async (_request, reply) => reply.type('text/plain').send('OK'));
  app.get('/cluster', async () => {
    if (cluster === undefined) throw problems.notFound('This node runs without a cluster module');
    return cluster.view();
  });
}
