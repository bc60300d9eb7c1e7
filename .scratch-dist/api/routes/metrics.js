export const metricsRoutes = async (app, { deps }) => {
    app.get('/metrics', async () => deps.metrics.json());
    app.get('/metrics/prometheus', async (_request, reply) => reply.type(deps.metrics.contentType).send(await deps.metrics.prometheus()));
};
//# sourceMappingURL=metrics.js.map