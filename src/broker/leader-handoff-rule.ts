/**
 * To whom a partition's leader hands its leadership: pure rules over the placement and the leader's
 * view of its followers (raft Status), without I/O (partition-leader-balance.ts asks the transfers).
 * A transfer goes only to a voter that holds the leader's whole log, so that it never costs
 * availability beyond the moment of the hand-over.
 */
import { noNode, type NodeId, type ProgressStatus, type Status } from '../raft/index.js';

export type LeaderView = Pick<Status, 'progress' | 'lastIndex' | 'leadTransferee'>;

/** Whether a follower is up to date with the leader's log and answering (a transfer to it is quick). */
const caughtUp = (pr: ProgressStatus | undefined, st: LeaderView): pr is ProgressStatus => pr !== undefined && pr.recentActive && !pr.incomplete && pr.match === st.lastIndex;

/**
 * The preferred leader (the first replica of the placement) a complete leader hands back to, or
 * undefined: not when it leads itself, is not a voter, is the node a move takes the replica from (it
 * is leaving: leadership moves away from it, not back), lags, is still fetching the retained log
 * before its snapshot (incomplete), or a transfer is in flight. `status` is read only when the rest
 * allows a transfer.
 */
export function handBackTo(self: NodeId, voters: readonly NodeId[], placement: { readonly replicas: readonly NodeId[]; readonly moving?: { readonly from: NodeId } } | undefined, status: () => LeaderView): NodeId | undefined {
  const preferred = placement?.replicas[0];
  if (preferred === undefined || preferred === self || !voters.includes(preferred)) return undefined;
  if (placement?.moving?.from === preferred) return undefined;
  const st = status();
  if (!caughtUp(st.progress?.get(preferred), st) || st.leadTransferee !== noNode) return undefined;
  return preferred;
}

/**
 * The heir of a leader that is itself incomplete (still fetching the retained log before its
 * snapshot): a complete voter in replicate state that holds its whole log, the placement's order
 * first (the preferred leader first). A transfer that did not happen (`lastTried`: the heir cannot
 * campaign, a damaged member) is not asked of the same heir again while another is able: the next
 * able one after it, round the list. Undefined: none is able, or a transfer is in flight.
 */
export function handOffHeir(self: NodeId, voters: readonly NodeId[], preferred: readonly NodeId[], st: LeaderView, lastTried: NodeId | undefined): NodeId | undefined {
  const progress = st.progress;
  if (progress === undefined || st.leadTransferee !== noNode) return undefined;
  // `>>> 0` puts a voter the placement does not list after all it lists.
  const heirs = [...voters].filter((n) => n !== self).sort((a, b) => (preferred.indexOf(a) >>> 0) - (preferred.indexOf(b) >>> 0));
  const able = heirs.filter((n) => {
    const pr = progress.get(n);
    return caughtUp(pr, st) && pr.state === 'replicate';
  });
  return able[(lastTried === undefined ? -1 : able.indexOf(lastTried)) + 1] ?? able[0];
}
