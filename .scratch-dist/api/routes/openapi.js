/**
 * GET /openapi.json: the OpenAPI 3 document of the interface (openapi/plugin.ts builds it from the
 * registered routes), and /docs/: an interactive page on it (@fastify/swagger-ui, whose assets come
 * from its npm package, no CDN). Both are public: they describe the interface and hold no data; the
 * page's "Try it out" calls carry the bearer token a person enters.
 */
import swaggerUi from '@fastify/swagger-ui';
export const openApiRoutes = async (app) => {
    app.get('/openapi.json', async () => app.swagger());
    await app.register(swaggerUi, {
        routePrefix: '/docs',
        // The page loads the same document from /docs/json (the plugin's own route).
        uiConfig: { deepLinking: true, docExpansion: 'list' },
        staticCSP: false,
    });
};
//# sourceMappingURL=openapi.js.map