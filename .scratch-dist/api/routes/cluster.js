import { problems } from '../../core/problem.js';
import { parseJsonBody } from '../json-body.js';
export async function clusterRoutes(app, opts) {
    const cluster = opts.deps.cluster;
    app.get('/health', async (_request, reply) => reply.type('text/plain').send('OK'));
    app.get('/cluster', async () => {
        if (cluster === undefined)
            throw problems.notFound('This node runs without a cluster module');
        return cluster.view();
    });
    const moves = () => {
        if (opts.deps.moves === undefined)
            throw problems.notFound('This node runs without a cluster module');
        return opts.deps.moves;
    };
    app.post('/cluster/partitions/:group/move', async (request, reply) => {
        const moved = await moves().start(request.params.group, parseJsonBody(request.body));
        request.log.info({ move: moved }, 'replica move started');
        return reply.code(202).send(moved);
    });
    app.delete('/cluster/partitions/:group/move', async (request, reply) => {
        const moved = await moves().cancel(request.params.group);
        request.log.info({ move: moved }, 'replica move cancelled');
        return reply.code(202).send(moved);
    });
}
//# sourceMappingURL=cluster.js.map