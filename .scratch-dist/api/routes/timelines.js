import { parseJsonBody } from '../json-body.js';
export const timelineRoutes = async (app, { deps }) => {
    const svc = deps.timelines;
    app.post('/storages', async (request, reply) => {
        const storage = await svc.createStorage(parseJsonBody(request.body));
        request.log.info({ storage }, 'storage created');
        return reply.code(201).send(storage);
    });
    app.get('/storages', async () => svc.listStorages());
    app.get('/storages/:id', async (request) => svc.getStorage(request.params.id));
    app.delete('/storages/:id', async (request, reply) => {
        await svc.deleteStorage(request.params.id);
        request.log.info({ storage: request.params.id }, 'storage deleted');
        return reply.code(204).send();
    });
    app.post('/event-types/:name/timelines', async (request, reply) => {
        const timeline = await svc.createTimeline(request.params.name, parseJsonBody(request.body));
        request.log.info({ eventType: request.params.name, timeline }, 'timeline created: new writes go to it');
        return reply.code(201).send();
    });
    app.get('/event-types/:name/timelines', async (request) => svc.listTimelines(request.params.name));
    app.delete('/event-types/:name/timelines/:id', async (request, reply) => {
        svc.deleteTimeline(request.params.name, request.params.id);
        return reply.code(200).send();
    });
};
//# sourceMappingURL=timelines.js.map