/**
 * The web console (GET /console/...; GET / redirects there): static files built into dist/console
 * by `npm run build` (the sources are plain HTML, JS and CSS in src/console, uPlot is copied from its
 * npm package; no CDN). Every node serves it. The console is a single page that routes in the
 * browser, so an address that is not a file (/console/event-types/order.placed) answers the page,
 * which then shows that view. The files hold no data and need no token: the page calls the same API
 * with the token a person gives it, and so never holds more privileges than that token.
 */
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { problems } from '../../core/problem.js';
/** dist/console, beside dist/api. */
export const consoleRoot = fileURLToPath(new URL('../../console/', import.meta.url));
/** A file of the console, or undefined when the path names none (or tries to leave the folder). */
function consoleFile(path) {
    if (path === '' || path.includes('..') || path.includes('\\') || path.includes('\0'))
        return undefined;
    const abs = consoleRoot + path;
    return existsSync(abs) && statSync(abs).isFile() ? path : undefined;
}
export const consoleRoutes = async (app) => {
    await app.register(fastifyStatic, { root: consoleRoot, serve: false });
    app.get('/', async (_request, reply) => reply.redirect('/console/'));
    app.get('/console', async (_request, reply) => reply.redirect('/console/'));
    app.get('/console/*', async (request, reply) => {
        if (!existsSync(consoleRoot + 'index.html'))
            throw problems.notFound('The console was not built (npm run build)');
        const file = consoleFile(request.params['*']);
        // Pages get no-cache so a new build shows at once; assets are small and revalidated by ETag.
        if (file === undefined)
            return reply.header('Cache-Control', 'no-cache').sendFile('index.html');
        return reply.sendFile(file);
    });
};
//# sourceMappingURL=console.js.map