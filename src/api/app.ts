/**
 * buildApp(deps): the fastify application, one plugin per resource. Request bodies are taken as raw
 * Buffers for every content type: publishing needs the submitted text to measure event sizes, and one
 * JSON parse path gives one answer (400 Problem) to malformed bodies everywhere.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import fastifyCompress from '@fastify/compress';
import { problems } from '../core/problem.js';
import { BrookLogController } from './access-log.js';
import type { AppDeps } from './deps.js';
import { installAuth } from './auth-hooks.js';
import { installClusterHooks } from './cluster-hooks.js';
import { flowIdFrom } from './flow-id.js';
import { installRequestDecoding } from './request-decoding.js';
import { readRawBody } from './raw-body.js';
import { installBodyIdleTimeout } from './body-timeouts.js';
import { clientErrorHandler, errorHandler, sendProblem, toProblem } from './problem-reply.js';
import { clusterRoutes } from './routes/cluster.js';
import { eventTypeRoutes } from './routes/event-types.js';
import { eventRoutes } from './routes/events.js';
import { metricsRoutes } from './routes/metrics.js';
import { timelineRoutes } from './routes/timelines.js';
import { partitionRoutes } from './routes/partitions.js';
import { registryRoutes } from './routes/registry.js';
import { settingsRoutes } from './routes/settings.js';
import { subscriptionStreamRoutes } from './routes/subscription-streams.js';
import { subscriptionRoutes } from './routes/subscriptions.js';
import { installOpenApi } from './openapi/plugin.js';
import { openApiRoutes } from './routes/openapi.js';
import { consoleRoutes } from './routes/console.js';

export interface BrookApp {
  app: FastifyInstance;
  /** Ends open streams (shutdown): they finish their current line and close. */
  closeStreams(): void;
  /** Requests whose response has not finished (streams included). */
  inFlight(): number;
  /** Every registered route as "METHOD /pattern" (the permission table must cover them). */
  routes: string[];
}

export function buildApp(deps: AppDeps): BrookApp {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: (req) => flowIdFrom(req.headers['x-flow-id']),
    logController: new BrookLogController(),
    bodyLimit: deps.http.bodyBytesMax,
    // fastify's default (0) turns off Node's own limit; Node checks it every connectionsCheckingInterval.
    requestTimeout: deps.http.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, deps.http.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(deps.http.requestTimeoutMs / 4))),
    },
    // Requests that arrive while the node shuts down get our own 503 Problem (hook below), not fastify's
    // plain JSON (found by the jepsen-like data workload's protocol check during graceful restarts).
    return503OnClosing: false,
    // Node's own header limit (16 KiB) answers 431; keep fastify from buffering huge URLs otherwise.
    routerOptions: { maxParamLength: 1024 },
    // Errors fastify raises before routing (an invalid percent-encoding, an over-long path parameter)
    // and those of Node's HTTP parser answer Problems like every other error.
    frameworkErrors: (err, request, reply) => {
      reply.header('X-Flow-Id', request.id);
      sendProblem(reply, toProblem(err).problem);
    },
    clientErrorHandler,
  });

  const routes: string[] = [];
  app.addHook('onRoute', (r) => {
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) routes.push(`${m} ${r.url}`);
  });

  app.removeAllContentTypeParsers();
  // The body as one Buffer without fastify's copy of a body that arrived in one chunk (raw-body.ts).
  app.addContentTypeParser('*', (request, payload, done) => readRawBody(request, payload, done));
  // Compressed request bodies are decoded by Brook (gzip, deflate and zstd, limit on the decoded
  // bytes: request-decoding.ts); @fastify/compress only compresses answers (gzip when asked, above
  // 1 KiB). Streams are hijacked and compress themselves, flushed per batch (stream-sink.ts).
  installRequestDecoding(app);
  installBodyIdleTimeout(app, deps.http.bodyIdleTimeoutMs);
  app.register(fastifyCompress, { global: true, globalDecompression: false, encodings: ['gzip'], threshold: 1024 });

  // In-flight requests, counted on the raw response so hijacked streams are included; shutdown waits
  // for them before cutting the connections that are left (idle keep-alive or never used).
  // Shutting down: a request on a connection still open is answered with a retriable 503 Problem, and
  // the connection is closed.
  // One callback-style hook for both (every hook, and every async one more so, costs each request a
  // turn of fastify's hook runner; a batch of 10 events is a few hundred microseconds in all).
  let inFlight = 0;
  let closing = false;
  const ended = () => inFlight--;
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Flow-Id', request.id);
    inFlight++;
    reply.raw.once('close', ended);
    if (!closing) {
      done();
      return;
    }
    reply.header('Connection', 'close');
    sendProblem(reply, problems.unavailable('This node is shutting down; retry on another node.'));
  });
  app.setErrorHandler(errorHandler);
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.setNotFoundHandler((request, reply) => {
    sendProblem(reply, problems.notFound(`No resource at ${request.method} ${request.url.split('?')[0]}`));
  });

  installAuth(app, deps.auth);
  installClusterHooks(app, deps);

  // The OpenAPI document learns the routes as they are registered: first, before any route.
  installOpenApi(app);
  const streams = new Set<AbortController>();
  app.register(clusterRoutes, { deps });
  app.register(eventTypeRoutes, { deps });
  app.register(eventRoutes, { deps, streams });
  app.register(partitionRoutes, { deps });
  app.register(metricsRoutes, { deps });
  app.register(timelineRoutes, { deps });
  app.register(registryRoutes, { deps });
  app.register(settingsRoutes, { deps });
  app.register(subscriptionRoutes, { deps });
  app.register(subscriptionStreamRoutes, { deps, streams });
  app.register(openApiRoutes);
  app.register(consoleRoutes);

  return {
    app,
    closeStreams() {
      for (const s of streams) s.abort();
    },
    inFlight: () => inFlight,
    routes,
  };
}
