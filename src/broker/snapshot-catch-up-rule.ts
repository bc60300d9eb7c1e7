/**
 * How a follower sent a snapshot of a partition group catches up: pure rules, without I/O
 * (partition-history-fetch.ts fetches). A partition group's snapshot is only its small state
 * (offsets, de-duplication window); the events are the log, so a follower that lacks entries before
 * the snapshot fetches them, before the snapshot (log shipping) or after it (the history).
 */

/** What a snapshot message finds on the follower. */
export interface SnapshotArrival {
  /** What the replica applied. */
  readonly applied: number;
  /** The snapshot's index and term. */
  readonly snapshotIndex: number;
  readonly snapshotTerm: number;
  /** The term of the follower's own entry at the snapshot's index (undefined: it has none). */
  readonly termAtSnapshotIndex: number | undefined;
  /** The term of the message, and the group's current term. */
  readonly messageTerm: number;
  readonly groupTerm: number;
  /** Whether this node can fetch entries from others (a transport with FetchLog). */
  readonly canFetch: boolean;
  /** Where the leader's log starts by the snapshot's image (its retention), undefined: unknown. */
  readonly leaderLogStart: number | undefined;
}

/**
 * - 'group': the group takes the message itself. A log that already holds the snapshot's last entry
 *   holds everything before it (Log Matching): the group fast-forwards its commit index and applies
 *   those entries itself; fetching and applying them here too would apply them twice. A snapshot from
 *   a leader of an older term than the group has seen is dropped by the group: applying what it
 *   covers here would put the replica ahead of its group, which would then apply those entries again.
 *   Nothing to fetch with, or nothing lacking: the same.
 * - 'withoutLog': retention removed the entries this replica lacks from the leader's log: it takes
 *   the snapshot without them and fetches the log the leader still holds, up to the snapshot,
 *   afterwards (the history).
 * - 'fetchFirst': it fetches the entries after what it applied up to the snapshot's index, stores
 *   and applies them; then the snapshot finds its state already there.
 */
export function snapshotPath(a: SnapshotArrival): 'group' | 'withoutLog' | 'fetchFirst' {
  if (a.applied >= a.snapshotIndex || a.termAtSnapshotIndex === a.snapshotTerm || a.messageTerm < a.groupTerm || !a.canFetch) return 'group';
  if (a.leaderLogStart !== undefined && a.applied + 1 < a.leaderLogStart) return 'withoutLog';
  return 'fetchFirst';
}

/**
 * The pause before the next try of a history fetch: it doubles every round over the replicas (200 ms
 * after the first round failed on every one of them) up to 5 s, so that a cut or a leader change is
 * waited out without a replica asked in a tight loop.
 */
export function historyRetryMs(attempt: number, peers: number): number {
  return Math.min(5000, 200 * 2 ** Math.min(5, Math.floor(attempt / Math.max(1, peers))));
}
