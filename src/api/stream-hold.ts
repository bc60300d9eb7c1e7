/**
 * Streams under the metadata answer hold (docs/metadata-raft.md, "Read leases"). The answer of a
 * request that read metadata leaves only once everything this node applied is released (visible on
 * every lease holder: answerBarrier, checked by cluster-hooks.ts as the answer leaves). A stream
 * (GET /event-types/{name}/events, GET /subscriptions/{id}/events) writes its own 200 head and then
 * its lines, which fastify's onSend hook never sees; both show metadata: the head that the event type
 * or subscription exists and the stream's session is open, every line what the node read for it then
 * (a cursor formatted with the event type's timelines, a partition a rebalance gave the session, a
 * committed offset it starts after). So:
 *
 * - the head waits for the same release (`headHold`); past its deadline the stream is refused with the
 *   503 Problem of other held answers, and nothing of it was shown;
 * - every line waits too (`heldSink`): a line is encoded from what the node applied when it is
 *   written, and goes out once that is released. On the common path (released) a line is written at
 *   once, without allocating. Held lines keep their order, and the stream waits as for a full socket
 *   (its write returns false, its drain() resolves once they went out). A wait that gives up (a lost
 *   metadata leader) ends the stream: its head is out, so it can only close, as a close by the service
 *   would, and the client reconnects to a node that can serve it.
 */
import type { StreamSink } from '../consumption/low-level-stream.js';
import { isProblem, problems } from '../core/problem.js';
import type { ClusterPort } from './deps.js';

/**
 * Waits until a stream's head may leave; undefined when it may now (a single node, everything
 * released). Rejects with a 503 Problem when the release is not confirmed in time.
 */
export function headHold(cluster: ClusterPort | undefined): Promise<void> | undefined {
  const wait = cluster?.answerBarrier?.();
  if (wait === undefined) return undefined;
  return wait.catch((err: unknown) => {
    throw isProblem(err) ? err : problems.unavailable('The metadata this node read for the stream could not be confirmed visible everywhere in time; retry.');
  });
}

export interface HeldSink {
  readonly sink: StreamSink;
  /** Resolves once no line is held (before the response ends, so held lines are not cut off). */
  settled(): Promise<void>;
}

/**
 * `inner` with every line held until `hold` says it may leave (undefined: now). `giveUp` is told when a
 * hold fails; the held lines are then dropped and later writes ignored (the caller ends the stream).
 */
export function heldSink(inner: StreamSink, hold: () => Promise<void> | undefined, giveUp: (err: unknown) => void): HeldSink {
  let queue: Buffer[] = [];
  let waiting: Promise<void> | undefined;
  // The last write to `inner` returned false: a drain() waits for it.
  let full = false;
  let failed = false;
  const innerDrain = (): Promise<void> =>
    inner.drain().then(() => {
      full = false;
    });
  const sink: StreamSink = {
    write(line) {
      if (failed) return true;
      if (waiting === undefined) {
        const w = hold();
        if (w === undefined) {
          full = !inner.write(line);
          return !full;
        }
        waiting = w.then(
          () => {
            // Released: every held line was encoded from what the node had applied by now.
            const lines = queue;
            queue = [];
            waiting = undefined;
            for (const l of lines) full = !inner.write(l);
          },
          (err: unknown) => {
            failed = true;
            queue = [];
            waiting = undefined;
            giveUp(err);
          },
        );
      }
      queue.push(line);
      return false;
    },
    drain() {
      if (waiting !== undefined) return waiting.then(() => (full && !failed ? innerDrain() : undefined));
      return full ? innerDrain() : Promise.resolve();
    },
  };
  return { sink, settled: () => waiting ?? Promise.resolve() };
}

/** The hold of a stream's lines on `cluster` (none without one). */
export function lineHold(cluster: ClusterPort | undefined): () => Promise<void> | undefined {
  if (cluster?.answerBarrier === undefined) return () => undefined;
  return () => cluster.answerBarrier?.();
}
