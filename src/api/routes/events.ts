/**
 * POST /event-types/{name}/events (publishing) and GET /event-types/{name}/events (low-level stream).
 */
import type { FastifyPluginAsync } from 'fastify';
import { isProblem, problems } from '../../core/problem.js';
import type { Offset } from '../../core/offset.js';
import { encodeBatchLine, lowLevelCursorJson } from '../../consumption/batch-line.js';
import { cursorShapeError } from '../../consumption/cursors.js';
import { runLowLevelStream } from '../../consumption/low-level-stream.js';
import { parseStreamParams } from '../../consumption/stream-params.js';
import type { AppDeps } from '../deps.js';
import { headHold } from '../stream-hold.js';
import { acceptsGzip, streamEncodingHeaders, streamResponse } from '../stream-sink.js';

type NameParams = { name: string };

/** X-Svc-Cursors, or its alias X-Nakadi-Cursors for clients of the original service. */
function cursorsHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers['x-svc-cursors'] ?? headers['x-nakadi-cursors'];
  return Array.isArray(v) ? v[0] : v;
}

export const eventRoutes: FastifyPluginAsync<{ deps: AppDeps; streams: Set<AbortController> }> = async (app, { deps, streams }) => {
  app.post<{ Params: NameParams }>('/event-types/:name/events', { bodyLimit: deps.http.publishBodyBytesMax }, async (request, reply) => {
    const started = deps.clock.monotonicMs();
    let outcome: Awaited<ReturnType<typeof deps.publisher.publish>>;
    try {
      deps.access.checkWrite(request.principal, deps.eventTypes.record(request.params.name).eventType);
      const body = request.body;
      if (!Buffer.isBuffer(body) || body.length === 0) throw problems.malformedJson('A JSON array of events is required');
      outcome = await deps.publisher.publish(request.params.name, body, request.id);
    } catch (err) {
      // Refusals (403 blacklist or authorization, 404, 400 ...) count among publish requests by status too.
      deps.observer?.published(request.params.name, 0, deps.clock.monotonicMs() - started, isProblem(err) ? err.status : 500);
      throw err;
    }
    deps.observer?.published(request.params.name, outcome.eventCount, deps.clock.monotonicMs() - started, outcome.status);
    if (outcome.status === 200) return reply.code(200).send();
    if (outcome.status === 207) request.log.warn({ eventType: request.params.name }, 'publish partly failed');
    return reply.code(outcome.status).type('application/json').send(JSON.stringify(outcome.items));
  });

  app.get<{ Params: NameParams; Querystring: Record<string, unknown> }>('/event-types/:name/events', async (request, reply) => {
    const rec = deps.eventTypes.record(request.params.name);
    deps.access.checkConsume(request.principal, rec.eventType);
    const params = parseStreamParams(request.query);

    // Starting positions: the cursors given, or every partition from its newest event.
    const header = cursorsHeader(request.headers);
    let starts: { partition: string; after: Offset }[];
    if (header === undefined) {
      starts = rec.storage.partitions.map((p) => ({ partition: p, after: deps.cursors.bounds(rec, p).newest }));
    } else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(header);
      } catch {
        throw problems.invalidCursorsHeader('X-Svc-Cursors must be a JSON array of cursors');
      }
      if (!Array.isArray(parsed) || parsed.length === 0) {
        throw problems.invalidCursorsHeader('X-Svc-Cursors must be a non-empty JSON array of cursors');
      }
      const seen = new Set<string>();
      const wanted = parsed.map((c, i) => {
        const shape = cursorShapeError(c, `X-Svc-Cursors[${i}]`);
        if (shape !== null) throw problems.invalidCursorsHeader(shape);
        const { partition, offset } = c as { partition: string; offset: string };
        if (seen.has(partition)) throw problems.invalidCursor(`Partition "${partition}" appears twice in X-Svc-Cursors`);
        seen.add(partition);
        return { partition, offset };
      });
      // A cursor another node handed out may be a little ahead of this node's copy: wait for it briefly.
      starts = await Promise.all(wanted.map(async ({ partition, offset }) => ({ partition, after: await deps.cursors.resolveCatchingUp(rec, partition, offset, deps.cluster?.cursorCatchUpMs() ?? 0) })));
    }

    // The head shows what was read above (the event type, its partitions): it leaves once that is
    // released (stream-hold.ts). Nothing from here to the head awaits, so nothing applied after this
    // wait is read for it.
    const held = headHold(deps.cluster);
    if (held !== undefined) await held;

    // limit_consumers_number: the per-partition connection limit (429) applies (on by default).
    const release = deps.features.isEnabled('limit_consumers_number') ? deps.limiter.acquire(rec.eventType.name, starts.map((s) => s.partition)) : () => undefined;
    const abort = new AbortController();
    streams.add(abort);
    const unregister = deps.openStreams.add({
      kind: 'low_level',
      eventTypes: [rec.eventType.name],
      app: request.principal.uid,
      close: (reason) => {
        request.log.info({ eventType: rec.eventType.name, reason }, 'low-level stream closed by the service');
        abort.abort();
      },
    });
    const raw = reply.raw;
    const gzip = acceptsGzip(request.headers['accept-encoding']);
    reply.hijack();
    raw.writeHead(200, { 'Content-Type': 'application/x-json-stream', 'X-Flow-Id': request.id, ...streamEncodingHeaders(gzip) });
    // Send the head now: without it Node holds the 200 until the first line, which on an idle stream is
    // the first keep-alive (batch_flush_timeout, 30 s by default), and the client cannot tell the
    // stream is open.
    raw.flushHeaders();
    deps.observer?.streamOpened();

    const out = streamResponse(raw, abort, gzip);
    // Lines are not held (stream-hold.ts says why).
    const sink = out.sink;
    let events = 0;
    let bytes = 0;
    // Cursors are formatted with the event type's timelines as they are now (a switch may happen while streaming).
    const current = () => deps.eventTypes.find(rec.eventType.name) === undefined ? rec : deps.eventTypes.record(rec.eventType.name);
    request.log.info({ eventType: rec.eventType.name, partitions: starts.length, params }, 'low-level stream opened');
    try {
      const end = await runLowLevelStream(
        deps.reader,
        sink,
        {
          topic: rec.storage.topic,
          partitions: starts,
          params,
          monotonicMs: () => deps.clock.monotonicMs(),
          encode: (b) => {
            const line = encodeBatchLine(lowLevelCursorJson(b.partition, deps.cursors.formatCursor(current(), b.partition, b.cursor)), b.events);
            events += b.events.length;
            bytes += line.length;
            deps.observer?.streamed(rec.eventType.name, b.events.length, line.length);
            return line;
          },
        },
        abort.signal,
      );
      request.log.info({ eventType: rec.eventType.name, end, events, bytes }, 'low-level stream closed');
    } catch (err) {
      request.log.warn({ err, eventType: rec.eventType.name, events }, 'low-level stream failed');
    } finally {
      release();
      unregister();
      streams.delete(abort);
      deps.observer?.streamClosed();
      out.end();
    }
  });
};
