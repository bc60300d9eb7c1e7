/**
 * GET /openapi.json: the OpenAPI 3 document of the interface (openapi/plugin.ts builds it from the
 * registered routes), and /docs/: an interactive page on it (@fastify/swagger-ui, whose assets come
 * from its npm package, no CDN). Both are public: they describe the interface and hold no data; the
 * page's "Try it out" calls carry the bearer token a person enters.
 */
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync } from 'fastify';

export const openApiRoutes: FastifyPluginAsync = async (app) => {
  app.get('/openapi.json', async () => app.swagger());
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { url: '/openapi.json', deepLinking: true, docExpansion: 'list' },
    // The page loads its document from /openapi.json; swagger-ui's own copy under /docs/json is the same.
    staticCSP: false,
  });
};
