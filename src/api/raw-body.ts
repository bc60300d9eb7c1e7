/**
 * The request body as one Buffer, for every content type (app.ts). Fastify's own reader (`parseAs:
 * 'buffer'`) concatenates the chunks it read even when there is only one, a copy of every body: Node's
 * HTTP parser already hands each chunk over in an ArrayBuffer of its own (a copy out of the socket's
 * read buffer, never a view of it), so a body that arrived in one chunk is taken as it is and only a
 * body of several chunks is concatenated. The decoders of compressed bodies hand out chunks that are
 * never written again either (zlib moves on to a fresh output buffer, fzstd makes one per block). A publish of (b) (10 events of 500 bytes, ~5.5 KB) arrives
 * in one chunk; the copy was a sixth of the ArrayBuffer bytes the node a publish arrives at makes for it.
 *
 * Otherwise this is fastify's reader, answering the same errors: a Content-Length or a body above the
 * route's limit is 413 (FST_ERR_CTP_BODY_TOO_LARGE, also when the decoded stream of a compressed body
 * says more bytes came over the wire than the limit: request-decoding.ts), a body whose length is not
 * its Content-Length 400 (FST_ERR_CTP_INVALID_CONTENT_LENGTH), a stream error 400 unless it carries a
 * 4xx status of its own.
 */
import type { Readable } from 'node:stream';
import { errorCodes, type FastifyRequest } from 'fastify';

type Done = (err: Error | null, body?: Buffer) => void;

/** The stream fastify hands the parser: the request, or the decoded body of request-decoding.ts. */
type Payload = Readable & { receivedEncodedLength?: number };

export function readRawBody(request: FastifyRequest, payload: Payload, done: Done): void {
  new BodyReader(request, payload, done).start();
}

/** One body being read. Its listeners are bound methods, not closures made per request (body-timeouts.ts says why). */
class BodyReader {
  readonly #payload: Payload;
  readonly #done: Done;
  readonly #limit: number;
  readonly #contentLength: number;
  #first: Buffer | undefined = undefined;
  #more: Buffer[] | undefined = undefined;
  #received = 0;
  readonly #onData: (chunk: Buffer | string) => void;
  readonly #onEnd: (err?: Error | null) => void;

  constructor(request: FastifyRequest, payload: Payload, done: Done) {
    this.#payload = payload;
    this.#done = done;
    this.#limit = request.routeOptions.bodyLimit;
    this.#contentLength = Number(request.headers['content-length']);
    this.#onData = this.#data.bind(this);
    this.#onEnd = this.#end.bind(this);
  }

  start(): void {
    if (this.#contentLength > this.#limit) {
      this.#done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    const p = this.#payload;
    p.on('data', this.#onData);
    p.on('end', this.#onEnd);
    p.on('error', this.#onEnd);
    p.resume();
  }

  #stop(): void {
    const p = this.#payload;
    p.removeListener('data', this.#onData);
    p.removeListener('end', this.#onEnd);
    p.removeListener('error', this.#onEnd);
  }

  #data(data: Buffer | string): void {
    // A decoding stream could emit strings (fastify's reader allows for it too).
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    this.#received += chunk.length;
    if (this.#received > this.#limit || (this.#payload.receivedEncodedLength ?? 0) > this.#limit) {
      this.#stop();
      this.#done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    if (this.#first === undefined) this.#first = chunk;
    else (this.#more ??= []).push(chunk);
  }

  #end(err?: Error | null): void {
    this.#stop();
    if (err !== undefined && err !== null) {
      const status = (err as { statusCode?: unknown }).statusCode;
      if (!(typeof status === 'number' && status >= 400)) (err as { statusCode?: number }).statusCode = 400;
      this.#done(err);
      return;
    }
    const wire = this.#payload.receivedEncodedLength || this.#received;
    if (!Number.isNaN(this.#contentLength) && wire !== this.#contentLength) {
      this.#done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    const first = this.#first;
    if (first === undefined) this.#done(null, Buffer.alloc(0));
    else if (this.#more === undefined) this.#done(null, first);
    else this.#done(null, Buffer.concat([first, ...this.#more], this.#received));
  }
}
