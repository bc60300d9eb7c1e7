/**
 * The hooks that make every route cluster-aware without the routes knowing (installed by buildApp
 * before the resource plugins, so they apply to all of them):
 *
 * - The flow id of a request that may write metadata is bound to its asynchronous context, so a
 *   metadata write forwarded to the Raft leader carries the client's X-Flow-Id (reads and publishes
 *   open no flow: see flow-context.ts).
 * - Publishing, consumption and timeline switches are served on every node (partitions are Raft
 *   groups; a switch is a command of the metadata group and of the partition groups).
 * - Metadata reads are linearizable: before an /event-types, /settings or /subscriptions request is handled, the
 *   node confirms with the metadata leader that it has applied everything committed (ReadIndex). A
 *   client that created an event type on one node sees it at once on every other node. On a single
 *   node this costs nothing. A feature toggle write (POST /settings/features) reads nothing first and
 *   skips the round. Publishing (POST /event-types/:name/events) reads under a metadata read lease
 *   where the node holds one (docs/metadata-raft.md, "Read leases"), and takes the round otherwise.
 * - The answer of such a request leaves only once everything the node applied is released (visible on
 *   every lease holder; answerBarrier). The barrier is checked before the handler runs, and the handler
 *   reads later (after the hook's continuation, after awaits of its own, such as a publish's
 *   validation): an entry applied in between may not be released yet. Checked as the answer leaves,
 *   the rule covers every read the answer was built from. Streams write their head and lines
 *   themselves, past onSend: they wait for the same release in their routes (stream-hold.ts).
 *
 * Every decision is made on the route fastify matched (its pattern), never on the raw URL: the router
 * decodes percent-escapes, so `POST /event-types/x/%74imelines` reaches the timelines route while its
 * raw URL matches no pattern written for `/timelines`, and `/%65vent-types/x` is an event type route.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, onSendHookHandler } from 'fastify';
import { isProblem, problems } from '../core/problem.js';
import { endFlow, runInFlow } from '../observability/flow-context.js';
import type { AppDeps, ClusterPort } from './deps.js';
import { problemContentType } from './problem-reply.js';

/** Routes whose handlers read replicated metadata and so wait for the read barrier. */
function readsMetadata(route: string | undefined): boolean {
  return route !== undefined && (route === '/event-types' || route.startsWith('/event-types/') || route.startsWith('/settings/') || route === '/subscriptions' || route.startsWith('/subscriptions/'));
}

/**
 * Whether a request opens a flow: anything but reads and publishes. A subscription stream (a GET that
 * proposes its session's opening) opens none either: it lasts as long as its consumer and would keep
 * the hooks on for good; its proposals are labelled with the node's own flow id. Cursor commits (POST)
 * do open one, for as long as the commit takes.
 */
export function mayWriteMetadata(method: string, route: string | undefined): boolean {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  return !(method === 'POST' && route === '/event-types/:name/events');
}

/** Whether a request to `route` with `method` reads metadata first (the read barrier, the answer's hold). */
function readsBeforeAnswering(method: string, route: string | undefined): boolean {
  // A blind write: setting a toggle reads no state first, and its own commit orders it after every
  // write acknowledged before it. (Event type writes check the current state first, so they keep the
  // barrier.)
  return readsMetadata(route) && !(method === 'POST' && route === '/settings/features');
}

const publishRoute = '/event-types/:name/events';

/**
 * The onSend hook of the routes that read metadata: the answer waits until everything this node
 * applied is released. On the common path (released) it calls `done` at once and allocates nothing.
 * When the release wait gives up (answerBarrier rejects) the answer becomes a 503: what the handler
 * read may not be visible everywhere.
 */
function holdAnswer(cluster: ClusterPort): onSendHookHandler {
  return (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => {
    // A 5xx answer (a barrier that failed, a shutdown) shows no metadata: it is not held.
    const wait = reply.statusCode >= 500 ? undefined : cluster.answerBarrier?.();
    if (wait === undefined) {
      done(null, payload);
      return;
    }
    wait.then(
      () => done(null, payload),
      (err: unknown) => {
        if (reply.statusCode < 300 && request.method === 'POST' && request.routeOptions.url === publishRoute) {
          // A publish answered 200 or 207 has stored its batch: a 503 now would tell the producer to
          // send it again, and the retry would store it twice. What the answer shows of metadata is
          // only that the event type took the batch, which the barrier before the handler released.
          request.log.warn({ err }, 'publish answered although the metadata applied since its read barrier was not released in time');
          done(null, payload);
          return;
        }
        const problem = isProblem(err) ? err : problems.unavailable('The metadata this node read could not be confirmed visible everywhere in time; retry.');
        request.log.warn({ problem: problem.toJSON() }, 'answer withheld: the metadata it read was not released in time');
        reply.code(problem.status).type(problemContentType);
        done(null, JSON.stringify(problem.toJSON()));
      },
    );
  };
}

export function installClusterHooks(app: FastifyInstance, deps: AppDeps): void {
  const hold = deps.cluster?.answerBarrier === undefined ? undefined : holdAnswer(deps.cluster);
  if (hold !== undefined) {
    // A route-level onSend hook only on the routes that read metadata, so no other route runs it; the
    // routes of the resource plugins are added after this hook (buildApp installs it first).
    app.addHook('onRoute', (r) => {
      const methods: readonly HTTPMethods[] = Array.isArray(r.method) ? r.method : [r.method as HTTPMethods];
      if (!methods.some((m) => readsBeforeAnswering(m, r.url))) return;
      r.onSend = r.onSend === undefined ? [hold] : Array.isArray(r.onSend) ? [hold, ...r.onSend] : [hold, r.onSend];
    });
  }
  // A flow (flow-context.ts) only for requests that may write metadata: opening one turns on the
  // process's async hooks until the last one ends, and every publish would pay for them.
  app.addHook('onRequest', (request, reply, done) => {
    if (!mayWriteMetadata(request.method, request.routeOptions.url)) {
      done();
      return;
    }
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      endFlow();
    };
    reply.raw.once('finish', end);
    reply.raw.once('close', end);
    runInFlow(request.id, done);
  });
  const cluster = deps.cluster;
  if (cluster === undefined) return;
  app.addHook('preHandler', (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (!readsBeforeAnswering(request.method, route)) {
      done();
      return;
    }
    // Publishing, the hot path, reads under a metadata read lease where this node holds one.
    const wait = request.method === 'POST' && route === '/event-types/:name/events' && cluster.publishBarrier !== undefined ? cluster.publishBarrier() : cluster.readBarrier();
    if (wait === undefined) {
      done();
      return;
    }
    wait.then(() => done(), (err: Error) => done(err));
  });
}
