/**
 * The high-level API of a subscription: GET /subscriptions/{id}/events (the stream), POST/GET/PATCH
 * /subscriptions/{id}/cursors, GET /subscriptions/{id}/stats. The rules live in the hub
 * (consumption/subscription-hub.ts); this file maps them to HTTP.
 */
import type { FastifyPluginAsync } from 'fastify';
import { problems } from '../../core/problem.js';
import type { AppDeps } from '../deps.js';
import { parseJsonBody } from '../json-body.js';
import { headHold } from '../stream-hold.js';
import { acceptsGzip, streamEncodingHeaders, streamResponse } from '../stream-sink.js';
import { requireHighLevelApi } from './high-level-api.js';
import { authorizedSubscription } from './subscriptions.js';

type IdParams = { id: string };

/** X-Svc-StreamId, or X-Nakadi-StreamId for clients of the original service. */
function streamIdHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers['x-svc-streamid'] ?? headers['x-nakadi-streamid'];
  return Array.isArray(v) ? v[0] : v;
}

export const subscriptionStreamRoutes: FastifyPluginAsync<{ deps: AppDeps; streams: Set<AbortController> }> = async (app, { deps, streams }) => {
  const hub = deps.hub;
  requireHighLevelApi(app, deps);

  app.get<{ Params: IdParams; Querystring: Record<string, unknown> }>('/subscriptions/:id/events', async (request, reply) => {
    const subscription = request.params.id;
    // A consumer that lost read access to any of the event types or to the subscription, or is
    // blacklisted, cannot consume.
    const eventTypes = authorizedSubscription(deps, request, subscription, 'consume').event_types;
    for (const name of eventTypes) deps.access.checkConsume(request.principal, deps.eventTypes.get(name));
    // Registered before stream.open goes through Raft: a readers change or a blacklist entry applied
    // meanwhile was not seen by the check above, and must still close this stream (it then ends at once).
    const abort = new AbortController();
    const unregister = deps.openStreams.add({
      kind: 'subscription',
      subscription,
      eventTypes,
      app: request.principal.uid,
      close: (reason) => {
        request.log.info({ subscription, reason }, 'subscription stream closed by the service');
        abort.abort();
      },
    });
    let opened: Awaited<ReturnType<typeof hub.open>>;
    try {
      opened = await hub.open(subscription, request.query);
    } catch (err) {
      unregister();
      throw err;
    }
    // The head shows the subscription and its open session: it leaves once what the node applied is
    // released (stream-hold.ts); refused with a 503 past the wait's deadline, the session is closed.
    const held = headHold(deps.cluster);
    if (held !== undefined) {
      try {
        await held;
      } catch (err) {
        unregister();
        opened.cancel();
        throw err;
      }
    }
    streams.add(abort);
    const raw = reply.raw;
    const gzip = acceptsGzip(request.headers['accept-encoding']);
    reply.hijack();
    raw.writeHead(200, {
      ...streamEncodingHeaders(gzip),
      'Content-Type': 'application/x-json-stream',
      'X-Flow-Id': request.id,
      'X-Svc-StreamId': opened.id,
      'X-Nakadi-StreamId': opened.id,
    });
    // The head goes out now: the client needs the stream id before the first batch to commit it.
    raw.flushHeaders();
    // A client gone while the session was being opened aborts at once (see responseSink): the stream
    // would otherwise hold its session (and partitions) for good, waiting for a drain that never comes.
    const out = streamResponse(raw, abort, gzip);
    // Lines are not held (stream-hold.ts says why).
    request.log.info({ subscription, stream: opened.id, params: opened.params }, 'subscription stream opened');
    try {
      await opened.run(out.sink, abort.signal);
    } catch (err) {
      request.log.warn({ err, subscription, stream: opened.id }, 'subscription stream failed');
    } finally {
      unregister();
      streams.delete(abort);
      out.end();
    }
  });

  app.post<{ Params: IdParams }>('/subscriptions/:id/cursors', async (request, reply) => {
    const streamId = streamIdHeader(request.headers);
    if (streamId === undefined || streamId === '') throw problems.missingHeader('Header X-Svc-StreamId is required to commit cursors');
    authorizedSubscription(deps, request, request.params.id, 'consume');
    const results = await hub.commit(request.params.id, streamId, parseJsonBody(request.body));
    if (results === undefined) return reply.code(204).send();
    return reply.code(200).send({ items: results });
  });

  app.get<{ Params: IdParams }>('/subscriptions/:id/cursors', async (request) => {
    authorizedSubscription(deps, request, request.params.id, 'view');
    return { items: hub.committed(request.params.id) };
  });

  app.patch<{ Params: IdParams }>('/subscriptions/:id/cursors', async (request, reply) => {
    authorizedSubscription(deps, request, request.params.id, 'admin');
    await hub.reset(request.params.id, parseJsonBody(request.body));
    return reply.code(204).send();
  });

  app.get<{ Params: IdParams }>('/subscriptions/:id/stats', async (request) => {
    authorizedSubscription(deps, request, request.params.id, 'view');
    return { items: hub.stats(request.params.id) };
  });
};
