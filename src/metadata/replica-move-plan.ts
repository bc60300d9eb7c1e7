/**
 * Carrying out a replica move: the next thing a partition group's leader does. PURE.
 *
 * The stored placement (placement-changes.ts) says where the move stands; the group's Raft
 * configuration says what the group has done. The leader compares the two on every round and takes
 * the one action that brings them a step closer, so a crash or a change of leader at any point
 * resumes where the move stood: every action is safe to take again (a configuration change the group
 * already has is refused by the core as unchanged; a metadata step already recorded is refused by
 * the state machine as out of order).
 *
 * The order of a move from A to B:
 * 1. metadata `add_learner` (the operator) -> the group adds B as a learner. B's node opens an empty
 *    replica and the leader brings it up to date (appends, or a snapshot and log shipping).
 * 2. once B is caught up: metadata `promote` is recorded, then the group adds B as a voter (caught up
 *    is checked again: a new leader resuming the move may find B behind).
 * 3. the group removes A; if A leads, it first hands leadership to a caught-up voter (B preferred).
 * 4. metadata `remove` is recorded: A's node sees it holds no replica and drops its data. Recording it
 *    only after the group removed A means a node drops a replica only once the group no longer counts it.
 * A cancelled move (metadata `cancel`, before `promote`) leaves a learner the group then removes.
 *
 * Promotion waits until the learner is caught up: a voter that lags far behind adds to the quorum a
 * member that cannot acknowledge new entries until it has fetched the whole log, so a group of three
 * that lost one more node would stop. Raft's safety does not depend on it; availability does.
 *
 * A former member (its node's data directory was wiped and runs a new member since:
 * partition-member-replacement.ts) is run by nobody and never votes or acknowledges again, so the
 * order changes where one takes part:
 * - a former `from` (the replacement of a wiped member, or any move away from it) leaves the group
 *   first, before the new member is added. Kept until step 3, it made the promoted group one of four
 *   voters, three of them live, that needs three: one more fault among those three (the new member
 *   losing the tail of its log, so that it neither votes nor campaigns until a leader repairs it) left
 *   it without a leader for good, although two live members held everything. Removed first, the group
 *   needs the same two live members it needed already.
 * - a former `to` whose promotion the metadata has recorded (wiped after that, before or after the
 *   group made it a voter) will never catch up, and the metadata cannot cancel a promoted move: the
 *   move goes on without it (`from` leaves, `remove` is recorded), and the replacement of the former
 *   member, now a replica of the placement, follows as for any other.
 */

export interface MoveProgress {
  /** The highest index the leader knows the member holds. */
  readonly match: number;
  /** Whether the member answered within the last election timeout. */
  readonly recentActive: boolean;
  /** The leader's replication state for it: only 'replicate' is streaming entries normally. */
  readonly state: 'probe' | 'replicate' | 'snapshot';
  /**
   * The member said it is incomplete (raft/types.ts incompleteAck): it holds the Raft log, but not yet
   * the retained partition log before its snapshot, which it is still fetching from another replica.
   */
  readonly incomplete?: boolean;
}

export interface MoveView {
  readonly self: number;
  /** The stored placement, as this node's metadata has applied it. */
  readonly placement: {
    readonly replicas: readonly number[];
    readonly learners?: readonly number[];
    readonly moving?: { readonly from: number; readonly to: number };
  };
  /** The group's configuration as applied here. */
  readonly conf: { readonly voters: readonly number[]; readonly learners: readonly number[] };
  /** The group's commit index as the leader knows it. */
  readonly commit: number;
  /**
   * The index of the leader's term's first entry (its election no-op); absent: 0. A learner is
   * promoted only once it durably holds it (see caughtUp).
   */
  readonly termStart?: number;
  /** The leader's view of each member (absent: this node does not lead). */
  readonly progress: ReadonlyMap<number, MoveProgress> | undefined;
  /** A leadership transfer under way (0: none). */
  readonly leadTransferee: number;
  /**
   * Whether a member is a former one (partition-member-replacement.ts isFormerMember, over the
   * registrations this node's metadata applied): nobody runs it. Absent: none is.
   */
  readonly former?: (member: number) => boolean;
}

export type MoveAction =
  | { readonly kind: 'idle' }
  | { readonly kind: 'wait'; readonly why: string }
  | { readonly kind: 'confChange'; readonly change: { readonly type: 'addLearner' | 'addVoter' | 'removeNode'; readonly nodeId: number } }
  | { readonly kind: 'record'; readonly step: 'promote' | 'remove' | 'rejoin'; readonly from: number; readonly to: number }
  | { readonly kind: 'transfer'; readonly to: number };

/**
 * Entries a learner may still lack when it is promoted: a learner streaming entries is always a few
 * behind a leader that is taking writes, so "holds everything" would wait forever under load.
 */
export const promoteLagEntriesMax = 64;

/**
 * Whether `node` is caught up enough to become a voter: answering, streaming, within a few entries of
 * the commit index, and holding the whole retained log (not still fetching the log before the
 * snapshot it installed): promoted earlier, it would replace a full copy of the retained log by a
 * partial one once the old replica is removed. And it holds an entry of the leader's term (its match,
 * acknowledged durably, reaches the term's first entry): a new member starts damaged as of the term it
 * opened in, a member that lost its log's tail as of its last term, and a damaged member neither votes
 * nor campaigns until a leader's append gives it an entry of that leader's term (raft.ts,
 * #maybeRepaired); its match can reach the commit index without one, through a snapshot of older
 * entries (host seed 17 of a branch: a learner
 * promoted on a snapshot of term 4, its crash before the entries of term 7 were durable, and then a
 * second member's loss left four voters with two that would not vote).
 */
export function caughtUp(view: MoveView, node: number): boolean {
  const pr = view.progress?.get(node);
  if (pr === undefined || !pr.recentActive || pr.state !== 'replicate' || pr.incomplete === true) return false;
  return pr.match > 0 && pr.match >= (view.termStart ?? 0) && pr.match + promoteLagEntriesMax >= view.commit;
}

const idle: MoveAction = { kind: 'idle' };
const wait = (why: string): MoveAction => ({ kind: 'wait', why });

/** The next action of the group's leader (`progress` present) for the move in flight, if any. */
export function nextMoveAction(view: MoveView): MoveAction {
  if (view.progress === undefined) return idle;
  const { placement, conf } = view;
  const placed = new Set([...placement.replicas, ...(placement.learners ?? [])]);
  const inConf = (n: number) => conf.voters.includes(n) || conf.learners.includes(n);
  const moving = placement.moving;
  if (moving === undefined) {
    // A learner the metadata no longer lists (a cancelled move) leaves the group. Voters are never
    // removed without a move in flight: a leader whose metadata lags could otherwise remove a member
    // whose promotion it has not applied yet.
    const stray = conf.learners.find((n) => !placed.has(n));
    if (stray !== undefined) return { kind: 'confChange', change: { type: 'removeNode', nodeId: stray } };
    return rejoinAction(view);
  }
  const { from, to } = moving;
  // Whether the member leaving is still in the group.
  const fromInGroup = inConf(from);
  const strayLearner = conf.learners.find((n) => !placed.has(n));
  if (strayLearner !== undefined) return { kind: 'confChange', change: { type: 'removeNode', nodeId: strayLearner } };
  const promotedInMetadata = placement.replicas.includes(to);
  const former = view.former ?? (() => false);
  // A former member leaving goes first (see the module comment): it never votes, so its removal costs nothing.
  if (former(from) && fromInGroup && view.self !== from) return { kind: 'confChange', change: { type: 'removeNode', nodeId: from } };
  // A former member promoted in metadata is passed over: nothing would ever catch it up (module comment).
  const toGone = promotedInMetadata && former(to);
  if (!inConf(to) && !toGone) return { kind: 'confChange', change: { type: 'addLearner', nodeId: to } };
  if (conf.learners.includes(to) && !toGone) {
    if (!caughtUp(view, to)) return wait(`node ${to} is catching up`);
    return promotedInMetadata ? { kind: 'confChange', change: { type: 'addVoter', nodeId: to } } : { kind: 'record', step: 'promote', from, to };
  }
  // `to` votes in the group (or is a former member passed over).
  if (!promotedInMetadata) return wait(`the metadata applied here has not recorded the promotion of node ${to}`);
  if (fromInGroup) {
    if (view.self !== from) return { kind: 'confChange', change: { type: 'removeNode', nodeId: from } };
    // The leader leaves: leadership goes first to a caught-up voter, which then removes this node.
    if (view.leadTransferee !== 0) return wait(`leadership is moving to node ${view.leadTransferee}`);
    const heirs = [to, ...conf.voters.filter((n) => n !== to && n !== from)].filter((n) => conf.voters.includes(n));
    const progress = view.progress;
    const heir = heirs.find((n) => caughtUp(view, n) && progress.get(n)!.match >= view.commit);
    return heir === undefined ? wait('no voter is caught up to take the leadership') : { kind: 'transfer', to: heir };
  }
  return { kind: 'record', step: 'remove', from, to };
}

/**
 * The learners an accepted loss of the whole group left (metadata partition.loss: the kept member the
 * only voter, the others learners that rejoin empty) are made voters again, one at a time, in
 * placement order, as a move promotes its learner: once caught up, `rejoin` is recorded in the
 * metadata, then the group adds the voter (caught up is checked again, as for a move). No move is in
 * flight (a move waits for none of this, and a rejoin waits for the move).
 */
function rejoinAction(view: MoveView): MoveAction {
  const { placement, conf } = view;
  const inConf = (n: number) => conf.voters.includes(n) || conf.learners.includes(n);
  // Recorded in the metadata, still a learner in the group: promote it.
  const recorded = placement.replicas.find((n) => conf.learners.includes(n));
  if (recorded !== undefined) return caughtUp(view, recorded) ? { kind: 'confChange', change: { type: 'addVoter', nodeId: recorded } } : wait(`node ${recorded} is catching up`);
  const next = (placement.learners ?? []).find((n) => !conf.voters.includes(n));
  if (next === undefined) return idle;
  if (!inConf(next)) return { kind: 'confChange', change: { type: 'addLearner', nodeId: next } };
  if (!caughtUp(view, next)) return wait(`node ${next} is catching up`);
  return { kind: 'record', step: 'rejoin', from: next, to: next };
}
