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
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientErrorHandler } from './problem-reply.js';

export function installBodyIdleTimeout(app: FastifyInstance, bodyIdleTimeoutMs: number): void {
  // Callback style: an async hook costs every request a promise and a microtask turn.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const req = request.raw;
    const socket: Socket | undefined = req.socket;
    if (!hasBody(req) || req.complete || socket === undefined || socket.destroyed) return done(null, payload);
    const watch = new BodyIdleWatch(request, reply, socket, bodyIdleTimeoutMs);
    // Node emits 'timeout' on an incomplete request when its socket times out; with a listener there,
    // Node leaves the socket to it.
    req.on('timeout', watch.idle);
    req.once('end', watch.disarm);
    req.once('close', watch.disarm);
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

/**
 * One request's idle timer. Its listeners are methods bound per request, not arrows made per request:
 * V8 keeps a closure's optimized code only while some closure of it lives, so the per-request `disarm`
 * arrow (with Node's removeListener and setTimeout inlined into it) was compiled again after every full
 * GC, on every node (docs/benchmarks.md, "V8 on a warm cluster"); a bound method's code stays.
 */
class BodyIdleWatch {
  readonly #request: FastifyRequest;
  readonly #reply: FastifyReply;
  readonly #socket: Socket;
  readonly #ms: number;
  readonly idle: () => void;
  readonly disarm: () => void;

  constructor(request: FastifyRequest, reply: FastifyReply, socket: Socket, ms: number) {
    this.#request = request;
    this.#reply = reply;
    this.#socket = socket;
    this.#ms = ms;
    this.idle = this.#idle.bind(this);
    this.disarm = this.#disarm.bind(this);
  }

  #idle(): void {
    this.#request.log.info({ bodyIdleTimeoutMs: this.#ms }, 'request body idle too long; closing the connection');
    if (this.#reply.raw.headersSent) this.#socket.destroy();
    else clientErrorHandler(Object.assign(new Error('request body idle'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), this.#socket);
  }

  #disarm(): void {
    this.#request.raw.off('timeout', this.idle);
    if (!this.#socket.destroyed) this.#socket.setTimeout(0);
  }
}
