/**
 * A StreamSink over a raw HTTP response, tied to the stream's AbortController:
 * - the response closing (client gone) aborts the stream, also when it closed before this was called:
 *   a client that disconnects during an asynchronous step of opening (authentication, a Raft round)
 *   emitted 'close' before anyone listened, and its stream would hold its slots for good;
 * - drain() waits until the socket drains, the response closes, or the stream is aborted: a close by
 *   the service (blacklist, readers change, shutdown) must end a stream whose client stopped reading.
 */
import type { ServerResponse } from 'node:http';
import type { StreamSink } from '../consumption/low-level-stream.js';

export function responseSink(raw: ServerResponse, abort: AbortController): StreamSink {
  raw.on('close', () => abort.abort());
  if (raw.destroyed) abort.abort();
  const signal = abort.signal;
  return {
    write: (line) => raw.write(line),
    drain: () =>
      new Promise<void>((resolve) => {
        if (signal.aborted || raw.destroyed) return resolve();
        const done = () => {
          raw.off('drain', done);
          raw.off('close', done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        raw.on('drain', done);
        raw.on('close', done);
        signal.addEventListener('abort', done, { once: true });
      }),
  };
}
