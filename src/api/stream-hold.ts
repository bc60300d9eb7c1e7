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
 * - its lines are not held. Holding a line until everything its node applied is released would make
 *   every stream on a follower wait up to two heartbeats (~200 ms) whenever any metadata write is
 *   unreleased there, and in a cluster whose consumers commit cursors some write nearly always is: a
 *   stream waiting for its line as for a full socket would then send about one line per release
 *   (a few lines a second). So a line can show a metadata change (a timeline switch in its cursors, the
 *   partitions a rebalance gave its session, the cursor a taken-over partition starts after) up to
 *   about two heartbeats before every lease holder shows it: a client that reads the same metadata on
 *   another node in that window can see the older state (docs/metadata-raft.md, "Streams").
 */
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
