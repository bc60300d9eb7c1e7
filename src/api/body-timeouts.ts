/**
 * A request body that stops midway must not hold its connection and its buffered bytes for good (eight
 * such requests once held 350 MB). Two bounds, both answered 408 with a Problem and the connection
 * closed:
 * - the whole request (headers and body) must arrive within `requestTimeoutMs`: Node's requestTimeout,
 *   set in app.ts (fastify's default turns Node's off); it catches a body that drips a byte now and then;
 * - a body that sends nothing for `bodyIdleTimeoutMs` is cut at once, here: the socket's idle timer runs
 *   while the body is being read and stops when it is complete.
 * Neither touches streams: a GET's request is complete once its headers are in, and the idle timer is
 * only armed for requests with a body (and disarmed once it has arrived), so a stream's long response,
 * quiet between keep-alives, is never cut. "With a body" is read from the headers (a Content-Length
 * above 0, or a Transfer-Encoding), not from `req.complete`: hooks that run synchronously from the
 * request event see a bodiless GET not yet complete, and its 'end' comes only if someone reads it.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { clientErrorHandler } from './problem-reply.js';

export function installBodyIdleTimeout(app: FastifyInstance, bodyIdleTimeoutMs: number): void {
  // Callback style: an async hook costs every request a promise and a microtask turn.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const req = request.raw;
    const socket: Socket | undefined = req.socket;
    if (!hasBody(req) || req.complete || socket === undefined || socket.destroyed) return done(null, payload);
    const idle = () => {
      request.log.info({ bodyIdleTimeoutMs }, 'request body idle too long; closing the connection');
      if (reply.raw.headersSent) socket.destroy();
      else clientErrorHandler(Object.assign(new Error('request body idle'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
    };
    const disarm = () => {
      req.off('timeout', idle);
      if (!socket.destroyed) socket.setTimeout(0);
    };
    // Node emits 'timeout' on an incomplete request when its socket times out; with a listener there,
    // Node leaves the socket to it.
    req.on('timeout', idle);
    req.once('end', disarm);
    req.once('close', disarm);
    socket.setTimeout(bodyIdleTimeoutMs);
    done(null, payload);
  });
}

/** Whether a request carries a body, from its headers (HTTP/1.1: a Content-Length or a Transfer-Encoding). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}
