import { parseJsonBody } from '../json-body.js';
export const settingsRoutes = async (app, { deps }) => {
    app.get('/settings/features', async () => ({ items: deps.features.list() }));
    app.post('/settings/features', async (request, reply) => {
        const set = await deps.features.set(parseJsonBody(request.body));
        request.log.info(set, 'feature toggled');
        return reply.code(204).send();
    });
    app.get('/settings/blacklist', async () => deps.blacklist.view());
    app.put('/settings/blacklist/:type/:name', async (request, reply) => {
        await deps.blacklist.set(request.params.type, request.params.name, true);
        request.log.info({ type: request.params.type, name: request.params.name }, 'blacklisted');
        return reply.code(204).send();
    });
    app.delete('/settings/blacklist/:type/:name', async (request, reply) => {
        await deps.blacklist.set(request.params.type, request.params.name, false);
        request.log.info({ type: request.params.type, name: request.params.name }, 'removed from the blacklist');
        return reply.code(204).send();
    });
};
//# sourceMappingURL=settings.js.map