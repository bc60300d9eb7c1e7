/**
 * The Raft properties of invariants.ts, checked on every partition group of the host simulation from
 * the outside (what each member's RawNode says after every event, what its host persists and what it
 * applies), plus one the early-send host makes necessary:
 *
 * - DurableQuorum: when a leader's commit index moves, the entry it names is durable (its write has
 *   completed) on a majority of the voters. A leader sends appends before its own write (thesis
 *   §10.2.1) and must count its own copy only once it is durable; a leader that counts an unsynced
 *   copy of its own commits on fewer durable copies than a majority, which this check sees at once.
 * - TermFloor (invariants.ts): a member opened with its past term unknown (a wiped directory) takes no
 *   term below the highest term committed when it opened.
 * - PromotedUnrepaired (partition groups): a leader makes a learner a voter only once it knows the
 *   learner durably holds an entry of the leader's term (its match reaches the term's first entry). A
 *   new or damaged member votes only once it holds such an entry (raft.ts, #maybeRepaired), and its
 *   match can reach the commit index without one, through a snapshot of older terms: promoted then,
 *   the group gains a voter that does not vote, which shows as lost availability only when another
 *   member fails before the leader's next append repairs it (replica-move-plan.ts, caughtUp). Checked
 *   where the proposal is made, as CommitOwnTerm checks its rule where a commit index moves.
 * - ProbeAnswerUnadded: a member answers a term probe addressed to its node's former member (counted
 *   in that member's place) only once it holds the configuration entry that added it (raft.ts, the
 *   termProbe case): before, its term may be below one the former member acknowledged entries in,
 *   and the asker learns too low a floor (TermFloor sees that only with a term layout made on
 *   purpose). Checked as the answer leaves: the host sends a Ready's messages before it applies that
 *   Ready, so the configuration then is the one the answer was given under.
 */
import type { RaftGroup } from '../broker/raft-host/raft-group.js';
import type { MirrorStorage, PersistRequest } from '../broker/raft-log-store.js';
import type { Entry, Index, Message, NodeId, Term } from '../raft/index.js';
import { bootstrapState } from '../raft/index.js';
import { Invariants, InvariantViolation } from './invariants.js';
import { chainHash } from './kv.js';

export class GroupWatch {
  readonly group: number;
  readonly #inv: Invariants;
  /** Each member's durable log as its latest incarnation left it. */
  readonly #durable = new Map<NodeId, MirrorStorage>();
  readonly #leaderOf = new Map<NodeId, Term>();
  #durableChecked = 0;
  /** Members whose disk lost fsynced data: the leader may count them from before the loss. */
  readonly #lostData = new Set<NodeId>();
  /**
   * Each member's voters as last observed. A leader decides a commit with the configuration it has
   * applied at that moment; a configuration change committed in an event is applied in that same event
   * (the host applies after its write), so the voters observed after the event are not those that
   * decided it: DurableQuorum counts the voters observed before.
   */
  readonly #votersSeen = new Map<NodeId, readonly NodeId[]>();
  // The other way round, a change committed and applied in an event can decide a later commit of the
  // same event: a voter removed at 105 leaves three voters, and 106 commits on two of them (seeds 116
  // and 231 of SEEDS=300 once replica moves removed voters). The two configurations are one change
  // apart, so a majority of either is a quorum Raft allows: DurableQuorum accepts either.
  elections = 0;
  /** See #countOldTermQuorum. */
  oldTermQuorums = 0;
  /** Learners a leader proposed to make voters (PromotedUnrepaired's chances to fire). */
  promotions = 0;
  readonly #promotions: boolean;
  /** Term probes answered for a former member (ProbeAnswerUnadded's chances to fire). */
  probeAnswersForFormer = 0;
  /** Term probes for a former member refused by its node's new member because it is not in its configuration yet. */
  probesBeforeAdded = 0;
  /** A broken rule seen inside a production call (the caller could swallow a throw there): thrown at the next observe. */
  #violation: InvariantViolation | undefined;

  /** `promotions`: check PromotedUnrepaired (partition groups, whose learners a move promotes). */
  constructor(group: number, founders: readonly NodeId[], rules = true, promotions = false) {
    this.group = group;
    this.#promotions = promotions && rules;
    this.#inv = new Invariants({ rules });
    this.#inv.bootstrapped(bootstrapState(founders).entries);
  }

  /** A member opened the group (at start or restart). */
  opened(node: NodeId, g: RaftGroup<unknown>): void {
    this.#durable.set(node, g.store.storage);
    this.#votersSeen.delete(node);
    this.#leaderOf.delete(node);
    this.#inv.notLeader(node);
    const st = g.raw.status();
    if (st.damaged?.termUnknown === true) this.#inv.termUnknown(node, st.term);
    if (this.#promotions) this.#watchPromotions(node, g);
  }

  /** PromotedUnrepaired: wraps the member's proposal of configuration changes (as the node wraps its store). */
  #watchPromotions(node: NodeId, g: RaftGroup<unknown>): void {
    const raw = g.raw;
    const propose = raw.proposeConfChange.bind(raw);
    raw.proposeConfChange = (cc) => {
      const st = raw.status();
      const res = propose(cc);
      if (!res.ok || cc.type !== 'addVoter' || st.progress === undefined || !st.confState.learners.includes(cc.nodeId)) return res;
      this.promotions++;
      const match = st.progress.get(cc.nodeId)?.match ?? 0;
      const termStart = st.termStart ?? 0;
      if (match < termStart && this.#violation === undefined) {
        this.#violation = new InvariantViolation(
          'PromotedUnrepaired',
          `group ${this.group}: leader ${node} of term ${st.term} (first entry ${termStart}, commit ${st.commit}) proposed learner ${cc.nodeId} as a voter at ${res.firstIndex}, its match ${match} below its term`,
        );
      }
      return res;
    };
  }

  /** The member's disk lost fsynced writes (a fault the damaged-replica rule must handle). */
  lostData(node: NodeId): void {
    this.#lostData.add(node);
  }

  /** The network delivered a granted vote. */
  voteGranted(candidate: NodeId, voter: NodeId, term: Term): void {
    this.#inv.voteGranted(candidate, voter, term);
  }

  /** A member's host is about to record `rd` as durable: its entries must match every other copy. */
  persisted(node: NodeId, g: RaftGroup<unknown>, rd: PersistRequest): void {
    const first = rd.entries[0];
    if (first === undefined || rd.snapshot !== undefined) return;
    const st = g.store.storage;
    let prevTerm: Term | undefined;
    try {
      prevTerm = first.index - 1 >= st.firstIndex() - 1 ? st.term(first.index - 1) : undefined;
    } catch {
      prevTerm = undefined;
    }
    const terms = new Map<Index, Term>(rd.entries.map((e) => [e.index, e.term]));
    this.#inv.logMatching(node, rd.entries, {
      termAt: (i) => terms.get(i) ?? (i === first.index - 1 ? prevTerm : undefined),
      firstIndex: () => first.index,
    });
  }

  /** A member sends `m`, a term probe's answer that is counted for a former member of its node (ProbeAnswerUnadded). */
  probeAnswered(g: RaftGroup<unknown>, m: Message): void {
    if (m.type !== 'termProbeResp' || m.index === 0) return;
    const conf = g.raw.status().confState;
    if (m.reject) {
      // The window the rule is for: asked for its former member before it is in its configuration.
      if (!conf.voters.includes(m.from) && !conf.learners.includes(m.from)) this.probesBeforeAdded++;
      return;
    }
    this.probeAnswersForFormer++;
    if (!this.#inv.rules) return;
    if (conf.voters.includes(m.from) || conf.learners.includes(m.from) || this.#violation !== undefined) return;
    this.#violation = new InvariantViolation(
      'ProbeAnswerUnadded',
      `group ${this.group}: member ${m.from} answered ${m.to}'s term probe for former member ${m.index} with term ${m.term}, not yet in its configuration (voters [${conf.voters.join(',')}], learners [${conf.learners.join(',')}])`,
    );
  }

  /** A member applied `e` (every member must apply the same entry at an index). */
  applied(node: NodeId, e: Entry): void {
    this.#inv.stateMachineSafety(node, e.index, chainHash(0, e));
  }

  /** After every event, for every running member; true when it has just become leader. */
  observe(node: NodeId, g: RaftGroup<unknown>): boolean {
    if (this.#violation !== undefined) throw this.#violation;
    let elected = false;
    const raw = g.raw;
    const st = raw.status();
    if (st.state === 'leader') {
      this.#inv.electionSafety(node, st.term);
      if (this.#leaderOf.get(node) !== st.term) {
        this.#leaderOf.set(node, st.term);
        this.elections++;
        elected = true;
        this.#inv.leaderCompleteness(node, st.term, raw);
        this.#inv.voteQuorum(node, st.term, st.confState.voters);
      }
      if (st.progress !== undefined) this.#countOldTermQuorum(st.commit, st.term, st.confState.voters, st.progress, raw);
      this.#leaderCommit(node, st.term, st.commit, st.confState.voters, raw);
    } else {
      // A leader can move its commit index and step down in one event: committing its own removal
      // (a replica move away from it) applies the change in the same event, and a leader that is no
      // longer a voter becomes a follower of the same term (seeds 521 and 1170 of SEEDS=2000). Its
      // commit index of that term can only come from its own leadership (one leader per term), so it
      // is checked and recorded as a leader's before the node counts as a follower.
      if (this.#leaderOf.get(node) === st.term) this.#leaderCommit(node, st.term, st.commit, st.confState.voters, raw);
      this.#leaderOf.delete(node);
      this.#inv.notLeader(node);
      if (st.state === 'candidate' && st.votes !== undefined) this.#inv.voteTally(node, st.term, st.votes);
    }
    this.#inv.committedPrefix(node, st.commit, raw);
    this.#inv.termFloor(node, st.term);
    // status() builds confState afresh: nothing else holds these arrays.
    this.#votersSeen.set(node, st.confState.voters);
    return elected;
  }

  /** What a leader's commit index of `term` covers: own-term rule, the committed prefix, DurableQuorum. */
  #leaderCommit(node: NodeId, term: Term, commit: Index, votersAfter: readonly NodeId[], raw: RaftGroup<unknown>['raw']): void {
    this.#inv.leaderCommitRule(node, term, commit, raw);
    this.#inv.leaderCommitted(node, term, commit, raw);
    if (this.#inv.rules && commit > this.#durableChecked) {
      this.#durableChecked = commit;
      this.#durableQuorum(node, commit, raw.termAt(commit), this.#votersSeen.get(node) ?? votersAfter, votersAfter);
    }
  }

  /**
   * Counts the moments a majority of the leader's voters (itself by what is durable) match an entry
   * above its commit index that is of an earlier term: where counting replicas would commit an old
   * entry (figure 8), the chances a broken §5.4.2 rule gets to show.
   */
  #countOldTermQuorum(commit: Index, term: Term, voters: readonly NodeId[], progress: ReadonlyMap<NodeId, { match: Index }>, raw: { termAt(i: Index): Term | undefined }): void {
    const matches = voters.map((v) => progress.get(v)?.match ?? 0).sort((a, b) => b - a);
    const q = matches[Math.floor(voters.length / 2)]!;
    if (q > commit && raw.termAt(q) !== term) this.oldTermQuorums++;
  }

  #durableQuorum(leader: NodeId, index: Index, term: Term | undefined, voters: readonly NodeId[], votersAfter: readonly NodeId[]): void {
    if (term === undefined) return;
    const holders: NodeId[] = [];
    for (const v of new Set([...voters, ...votersAfter])) {
      const st = this.#durable.get(v);
      if (st === undefined || st.lastIndex() < index) continue;
      if (index < st.firstIndex() || st.term(index) === term) holders.push(v);
    }
    const majorityOf = (vs: readonly NodeId[]) => 2 * vs.filter((v) => holders.includes(v)).length > vs.length;
    if (majorityOf(voters) || majorityOf(votersAfter)) return;
    // A member that lost fsynced data may still be counted from before the loss; then this is the
    // fault's doing, and the other checks decide whether it did harm.
    if (voters.some((v) => this.#lostData.has(v))) return;
    throw new InvariantViolation(
      'DurableQuorum',
      `group ${this.group}: leader ${leader} committed ${index}@${term} durable only on [${holders.join(',')}] of voters [${voters.join(',')}]`,
    );
  }
}
