/**
 * Replacing a metadata member whose data directory was wiped (or lost its raft state) by the new
 * member that directory started as: the next configuration change the metadata leader makes. PURE.
 *
 * A directory that holds no metadata raft state and does not found the group starts as a new member
 * (core/member-id.ts: another incarnation of its node) and registers in the metadata (`node.disk`
 * with its `member`). The registration is the trigger, and the leader's configuration and the
 * registrations it has applied are the whole state: the leader compares them on every round and takes
 * the one change that brings them a step closer, so a crash or a new leader resumes where the
 * replacement stood, and a change the group already made is simply not asked for again. Both come
 * from the same log applied in order, so the leader never sees a member in the configuration whose
 * registration it has not applied.
 *
 * The order, one change at a time (Ongaro's thesis §4.1; the core refuses a change while the previous
 * one is unapplied):
 * 1. add the new member M as a learner. It catches up (entries, or a snapshot) without counting in any
 *    quorum. The node's former member O still counts, but it is gone: its directory is M's now.
 * 2. remove O. From here on nothing from O counts (the core counts votes and acknowledgements of
 *    configured members only), so a vote its former self granted, or an acknowledgement it sent just
 *    before the wipe, can no longer elect anybody or commit anything. Removing a member that cannot
 *    answer anyway costs no availability: three voters with O gone need both others, as do two.
 * 3. promote M once caught up (answering, streaming, near the commit index): a voter far behind would
 *    make a group of three that loses one more node stop until it caught up.
 * Step 1 first keeps the plan stateless: a learner on a node whose former member it replaces is always
 * one to promote, since the metadata group has no learners otherwise. (Removing O first would leave a
 * learner and nothing in the configuration to tell that its node votes.)
 *
 * A node none of whose members is in the configuration (a node added to the peer list after the
 * cluster was founded) is not added: the metadata group keeps the voters it was founded with, and each
 * node replaces only its own member. A registration without a member (a founder's directory that lost
 * raft writes keeps its member, the node id) asks for nothing.
 */
import { memberLabel, nodeOfMember } from '../core/member-id.js';

export interface MemberProgress {
  readonly match: number;
  readonly recentActive: boolean;
  readonly state: 'probe' | 'replicate' | 'snapshot';
}

export interface ReplacementView {
  /** The leader's own member id. */
  readonly self: number;
  readonly conf: { readonly voters: readonly number[]; readonly learners: readonly number[] };
  /** The registrations applied here (metadata/disk-registry.ts): a node and its directory's new member. */
  readonly registrations: Iterable<{ readonly node: number; readonly member?: number | undefined }>;
  /** The leader's view of every member. */
  readonly progress: ReadonlyMap<number, MemberProgress>;
  readonly commit: number;
}

export type ReplacementAction =
  | { readonly kind: 'idle' }
  | { readonly kind: 'wait'; readonly member: number; readonly why: string }
  | {
      readonly kind: 'confChange';
      readonly change: { readonly type: 'addLearner' | 'addVoter' | 'removeNode'; readonly nodeId: number };
      /** The member replaced and its replacement, and what the step does (for the log). */
      readonly replaced: number | undefined;
      readonly by: number;
      readonly why: string;
    };

/** Entries a learner may still lack when promoted (it streams a few behind a leader taking writes). */
export const promoteLagEntriesMax = 64;

export function caughtUp(view: ReplacementView, member: number): boolean {
  const pr = view.progress.get(member);
  if (pr === undefined || !pr.recentActive || pr.state !== 'replicate') return false;
  return pr.match > 0 && pr.match + promoteLagEntriesMax >= view.commit;
}

/** The next configuration change the metadata leader makes to replace a member, if any. */
export function nextReplacement(view: ReplacementView): ReplacementAction {
  const { conf } = view;
  const regs = [...view.registrations].filter((r) => r.member !== undefined && nodeOfMember(r.member) === r.node).sort((a, b) => a.node - b.node);
  let waiting: ReplacementAction | undefined;
  for (const r of regs) {
    const m = r.member!;
    const onNode = [...conf.voters, ...conf.learners].filter((id) => nodeOfMember(id) === r.node);
    if (onNode.length === 0) continue;
    const former = onNode.filter((id) => id !== m);
    const label = memberLabel(m);
    if (!onNode.includes(m)) {
      const replaced = former.find((id) => conf.voters.includes(id)) ?? former[0];
      return { kind: 'confChange', change: { type: 'addLearner', nodeId: m }, replaced, by: m, why: `adding ${label} as a learner: it catches up from the leader without counting in any quorum` };
    }
    const gone = former.find((id) => id !== view.self);
    if (gone !== undefined) {
      return { kind: 'confChange', change: { type: 'removeNode', nodeId: gone }, replaced: gone, by: m, why: `removing ${memberLabel(gone)}, whose data directory ${label} replaced: nothing it sent counts any more` };
    }
    if (former.length > 0) {
      // The leader itself is the member to remove: it cannot be while its node runs the new one.
      waiting ??= { kind: 'wait', member: m, why: `the leader is the former member ${memberLabel(view.self)} of node ${r.node}` };
      continue;
    }
    if (conf.learners.includes(m)) {
      if (caughtUp(view, m)) return { kind: 'confChange', change: { type: 'addVoter', nodeId: m }, replaced: undefined, by: m, why: `promoting ${label} to voter: it has caught up` };
      waiting ??= { kind: 'wait', member: m, why: `${label} is catching up before it is promoted to voter` };
    }
  }
  return waiting ?? { kind: 'idle' };
}
