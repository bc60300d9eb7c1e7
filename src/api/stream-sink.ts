/** A StreamSink over a raw HTTP response: write() as Node answers it, drain() until the socket drains or closes. */
import type { ServerResponse } from 'node:http';
import type { StreamSink } from '../consumption/low-level-stream.js';

export function responseSink(raw: ServerResponse): StreamSink {
  return {
    write: (line) => raw.write(line),
    drain: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        raw.on('drain', done);
        raw.on('close', done);
      }),
  };
}
