/**
 * The hooks that make every route cluster-aware without the routes knowing (installed by buildApp
 * before the resource plugins, so they apply to all of them):
 *
 * - The request's flow id is bound to its asynchronous context, so a metadata write forwarded to the
 *   Raft leader carries the client's X-Flow-Id.
 * - Publishing, consumption and timeline switches are served on every node (partitions are Raft
 *   groups; a switch is a command of the metadata group and of the partition groups).
 * - Metadata reads are linearizable: before an /event-types, /settings or /subscriptions request is handled, the
 *   node confirms with the metadata leader that it has applied everything committed (ReadIndex). A
 *   client that created an event type on one node sees it at once on every other node. On a single
 *   node this costs nothing. A feature toggle write (POST /settings/features) reads nothing first and
 *   skips the round.
 */
import type { FastifyInstance } from 'fastify';
import { runInFlow } from '../observability/flow-context.js';
import type { AppDeps } from './deps.js';

export function installClusterHooks(app: FastifyInstance, deps: AppDeps): void {
  app.addHook('onRequest', (request, _reply, done) => {
    runInFlow(request.id, done);
  });
  const cluster = deps.cluster;
  if (cluster === undefined) return;
  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.url.startsWith('/event-types') && !request.url.startsWith('/settings') && !request.url.startsWith('/subscriptions')) {
      done();
      return;
    }
    if (request.method === 'POST' && request.url.startsWith('/settings/features')) {
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
    wait.then(() => done(), (err: Error) => done(err));
  });
}
