import { problems } from '../core/problem.js';
import { runInFlow } from '../observability/flow-context.js';
import { sendProblem } from './problem-reply.js';
/** A timeline switch moves partition logs (listing timelines reads only metadata). */
function switchesTimeline(method, route) {
    return (route === '/event-types/:name/timelines' || route === '/event-types/:name/timelines/:id') && method !== 'GET';
}
/** Routes whose handlers read replicated metadata and so wait for the read barrier. */
function readsMetadata(route) {
    return route !== undefined && (route === '/event-types' || route.startsWith('/event-types/') || route.startsWith('/settings/') || route === '/subscriptions' || route.startsWith('/subscriptions/'));
}
export function installClusterHooks(app, deps) {
    app.addHook('onRequest', (request, _reply, done) => {
        runInFlow(request.id, done);
    });
    const cluster = deps.cluster;
    if (cluster === undefined)
        return;
    app.addHook('onRequest', (request, reply, done) => {
        if (!cluster.switchesTimelines() && switchesTimeline(request.method, request.routeOptions.url)) {
            reply.header('X-Flow-Id', request.id);
            sendProblem(reply, problems.unavailable('This node is part of a multi-node cluster, where timeline switches are not available yet (single-node clusters switch timelines).'));
            return;
        }
        done();
    });
    app.addHook('preHandler', (request, _reply, done) => {
        const route = request.routeOptions.url;
        if (!readsMetadata(route)) {
            done();
            return;
        }
        if (request.method === 'POST' && route === '/settings/features') {
            // A blind write: setting a toggle reads no state first, and its own commit orders it after
            // every write acknowledged before it. (Event type writes check the current state first, so
            // they keep the barrier.)
            done();
            return;
        }
        const wait = cluster.readBarrier();
        if (wait === undefined) {
            done();
            return;
        }
        wait.then(() => done(), (err) => done(err));
    });
}
//# sourceMappingURL=cluster-hooks.js.map