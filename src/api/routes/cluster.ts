/**
 * GET /cluster: this node's view of the cluster (members, metadata leader and term, Raft indexes).
 * POST /cluster/partitions/{group}/move: moves a replica of a partition ({"from", "to"}), answered 202
 * once the move is recorded; DELETE cancels a move whose new replica is not promoted yet
 * (administrator-only; rules in broker/move-service.ts, docs/replication.md "Moving a replica").
 * POST /cluster/partitions/{group}/accept-loss: this node's damaged replica of the partition, its only
 * one, takes what it holds as the partition's log and leads again; POST /cluster/accept-loss does so
 * for every such partition of this node (administrator-only; broker/loss-service.ts, docs/replication.md
 * "Accepting the loss of a sole replica"). GET /cluster/partitions/{group}/replica: this node's replica of
 * the partition (damage, last term and index, term floor), as the lever for a partition whose every
 * replica is damaged compares them.
 * GET /health: 200 "OK" while the node serves HTTP, without authentication, as the original service
 * answered it: for load balancers and orchestrators' liveness and readiness probes.
 */
import type { FastifyInstance } from 'fastify';
import { problems } from '../../core/problem.js';
import type { AppDeps } from '../deps.js';
import { parseJsonBody } from '../json-body.js';

export async function clusterRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const cluster = opts.deps.cluster;
  app.get('/health', async (_request, reply) => reply.type('text/plain').send('OK'));
  app.get('/cluster', async () => {
    if (cluster === undefined) throw problems.notFound('This node runs without a cluster module');
    return cluster.view();
  });
  const moves = () => {
    if (opts.deps.moves === undefined) throw problems.notFound('This node runs without a cluster module');
    return opts.deps.moves;
  };
  app.post<{ Params: { group: string } }>('/cluster/partitions/:group/move', async (request, reply) => {
    const moved = await moves().start(request.params.group, parseJsonBody(request.body));
    request.log.info({ move: moved }, 'replica move started');
    return reply.code(202).send(moved);
  });
  app.delete<{ Params: { group: string } }>('/cluster/partitions/:group/move', async (request, reply) => {
    const moved = await moves().cancel(request.params.group);
    request.log.info({ move: moved }, 'replica move cancelled');
    return reply.code(202).send(moved);
  });
  const losses = () => {
    if (opts.deps.losses === undefined) throw problems.notFound('This node runs without a cluster module');
    return opts.deps.losses;
  };
  // The service logs each acceptance at error level with what was kept and lost.
  app.post<{ Params: { group: string }; Querystring: { replica?: string } }>('/cluster/partitions/:group/accept-loss', async (request) =>
    losses().accept(request.params.group, { replica: request.query.replica, authorization: request.headers.authorization }),
  );
  app.post('/cluster/accept-loss', async () => losses().acceptAll());
  app.get<{ Params: { group: string } }>('/cluster/partitions/:group/replica', async (request) => losses().report(request.params.group));
}
