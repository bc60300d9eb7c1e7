/**
 * Compressed request bodies (compatibility.md): `Content-Encoding: gzip` (or `x-gzip`), `deflate` or
 * `zstd` on POST, PUT and PATCH is decoded before anything else; `identity` is no coding; anything else
 * is 415. The most used Java client of the original service compresses every body it sends.
 *
 * The body limit applies to the DECODED bytes and is enforced while decoding: the decoded stream is
 * handed to fastify's body reader in place of the request (a preParsing hook), fastify counts what
 * it reads against the route's bodyLimit, and decoding runs only as fast as fastify reads (stream
 * backpressure), so a small body that inflates to gigabytes is cut at the limit with 413 having
 * produced at most the limit. `receivedEncodedLength` tells fastify how many bytes came over the
 * wire, which it checks against Content-Length.
 *
 * Decoding starts on the first read, so a request whose body fastify never reads (an empty body)
 * never starts a decoder that could fail with nobody listening.
 */
import { Readable, type Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isProblem, problems, type Problem } from '../core/problem.js';
import { ZstdDecoder } from './zstd-decoder.js';

const decodedMethods = new Set(['POST', 'PUT', 'PATCH']);

type Coding = 'gzip' | 'deflate' | 'zstd';

/** The one coding to undo, undefined for none; throws 415 for what Brook cannot decode. */
export function requestCoding(header: string | string[] | undefined): Coding | undefined {
  if (header === undefined) return undefined;
  const codings = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return undefined;
  if (codings.length > 1) {
    throw problems.unsupportedMediaType(`Content-Encoding "${String(header)}": at most one content coding is supported`);
  }
  const coding = codings[0]!;
  if (coding === 'gzip' || coding === 'x-gzip') return 'gzip';
  if (coding === 'deflate' || coding === 'zstd') return coding;
  throw problems.unsupportedMediaType(`Content-Encoding "${coding.slice(0, 64)}" is not supported; use gzip, deflate or zstd`);
}

function decoderFor(coding: Coding, limitBytes: number): Transform {
  switch (coding) {
    case 'gzip':
      return createGunzip();
    case 'deflate':
      // RFC 9110: "deflate" is the zlib format (RFC 1950) around deflate data.
      return createInflate();
    case 'zstd':
      return new ZstdDecoder(limitBytes);
  }
}

/** The decoded body as fastify reads it: a Readable fed by the decoder, counting both sides. */
class DecodedBody extends Readable {
  /** Bytes received over the wire (fastify compares them with Content-Length). */
  receivedEncodedLength = 0;
  #decoded = 0;
  #started = false;
  readonly #source: Readable;
  readonly #decoder: Transform;
  readonly #coding: Coding;
  readonly #limitBytes: number;

  constructor(source: Readable, coding: Coding, limitBytes: number) {
    super();
    this.#source = source;
    this.#coding = coding;
    this.#limitBytes = limitBytes;
    this.#decoder = decoderFor(coding, limitBytes);
  }

  override _read(): void {
    if (this.#started) {
      this.#decoder.resume();
      return;
    }
    this.#started = true;
    const source = this.#source;
    const decoder = this.#decoder;
    source.on('data', (chunk: Buffer) => {
      this.receivedEncodedLength += chunk.length;
    });
    source.on('error', (err) => this.#fail(err));
    source.on('aborted', () => this.#fail(problems.badRequest('The request body was not received completely')));
    decoder.on('data', (chunk: Buffer) => {
      this.#decoded += chunk.length;
      if (this.#decoded > this.#limitBytes) {
        this.#fail(problems.payloadTooLarge(`The decoded request body is larger than ${this.#limitBytes} bytes`));
        return;
      }
      if (!this.push(chunk)) decoder.pause();
    });
    decoder.on('end', () => this.push(null));
    decoder.on('error', (err) => this.#fail(err));
    source.pipe(decoder);
  }

  #fail(err: unknown): void {
    if (this.destroyed) return;
    // The request itself is not destroyed (that would close the socket before the answer is sent);
    // fastify answers the error with Connection: close.
    this.#source.unpipe(this.#decoder);
    this.#decoder.destroy();
    this.destroy(this.#problem(err));
  }

  #problem(err: unknown): Problem {
    if (isProblem(err)) return err;
    const reason = err instanceof Error ? err.message : String(err);
    return problems.badRequest(`The request body is not valid ${this.#coding} data (${reason})`);
  }
}

/** Whether fastify will read a body for this request at all (same test as fastify's). */
function hasBody(request: FastifyRequest): boolean {
  const h = request.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}

export function installRequestDecoding(app: FastifyInstance): void {
  // Callback style: an async hook costs every request a promise and a microtask turn.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (!decodedMethods.has(request.method)) return done(null, payload);
    const coding = requestCoding(request.headers['content-encoding']);
    if (coding === undefined || !hasBody(request)) return done(null, payload);
    done(null, new DecodedBody(payload, coding, request.routeOptions.bodyLimit));
  });
}
