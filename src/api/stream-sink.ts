/**
 * A StreamSink over a raw HTTP response, tied to the stream's AbortController:
 * - the response closing (client gone) aborts the stream, also when it closed before this was called:
 *   a client that disconnects during an asynchronous step of opening (authentication, a Raft round)
 *   emitted 'close' before anyone listened, and its stream would hold its slots for good;
 * - drain() waits until the socket drains, the response closes, or the stream is aborted: a close by
 *   the service (blacklist, readers change, shutdown) must end a stream whose client stopped reading.
 *
 * With `Accept-Encoding: gzip` the lines go through a gzip stream that is flushed (Z_SYNC_FLUSH) after
 * every line, so each batch reaches the client when it is written, as without compression: gzip would
 * otherwise hold up to 16 KiB, and a stream of small batches or keep-alives would stall. Backpressure
 * passes through: a full socket stops the pipe, gzip's buffer fills and its write() returns false.
 */
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { constants, createGzip } from 'node:zlib';
import type { StreamSink } from '../consumption/low-level-stream.js';

export interface StreamResponse {
  sink: StreamSink;
  /** Ends the response (with gzip: after the gzip trailer). */
  end(): void;
}

export function responseSink(raw: ServerResponse, abort: AbortController): StreamSink {
  return streamResponse(raw, abort, false).sink;
}

/** The headers a stream response adds for its encoding. */
export function streamEncodingHeaders(gzip: boolean): Record<string, string> {
  return gzip ? { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' } : {};
}

export function streamResponse(raw: ServerResponse, abort: AbortController, gzip: boolean): StreamResponse {
  raw.on('close', () => abort.abort());
  if (raw.destroyed) abort.abort();
  const signal = abort.signal;
  let target: Writable = raw;
  let write = (line: Buffer) => raw.write(line);
  let end = () => {
    if (!raw.writableEnded) raw.end();
  };
  if (gzip) {
    const gz = createGzip();
    gz.pipe(raw);
    // A client gone: nothing will read gzip's output any more.
    raw.on('close', () => {
      gz.unpipe(raw);
      gz.destroy();
    });
    gz.on('error', () => abort.abort());
    target = gz;
    write = (line) => {
      if (gz.destroyed) return true;
      const more = gz.write(line);
      gz.flush(constants.Z_SYNC_FLUSH);
      return more;
    };
    end = () => {
      if (gz.destroyed || gz.writableEnded) {
        if (!raw.writableEnded) raw.end();
        return;
      }
      // pipe() ends the response once gzip has written its trailer.
      gz.end();
    };
  }
  const sink: StreamSink = {
    write,
    drain: () =>
      new Promise<void>((resolve) => {
        if (signal.aborted || raw.destroyed) return resolve();
        const done = () => {
          target.off('drain', done);
          raw.off('close', done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        target.on('drain', done);
        raw.on('close', done);
        signal.addEventListener('abort', done, { once: true });
      }),
  };
  return { sink, end };
}

/**
 * Whether the client accepts a gzip response (RFC 9110 Accept-Encoding: `gzip`, `x-gzip` or `*`
 * with a q-value above 0, and gzip not refused explicitly).
 */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(',') : header;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of text.split(',')) {
    const [name = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    let q = 1;
    for (const p of params) {
      const m = /^q=([0-9.]+)$/.exec(p);
      if (m !== null) q = Number(m[1]);
    }
    if (Number.isNaN(q)) continue;
    if (name === 'gzip' || name === 'x-gzip') gzip = q;
    else if (name === '*') any = q;
  }
  return (gzip ?? any ?? 0) > 0;
}
