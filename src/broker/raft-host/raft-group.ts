/**
 * One Raft group member on this node, as the node's Ready loop (node-host.ts) drives it: the RawNode,
 * its durable log (RaftLogStore), the state machine it applies to (a GroupApplier), and the proposals
 * this node made that wait for their entry to be applied.
 *
 * The group does no I/O of its own and owns no timer: the node host ticks it, takes its Ready, writes
 * it in the node's shared write and calls back `persisted`, `apply` and `advance` in the order of the
 * Ready contract (src/raft/rawnode.ts). So a thousand groups cost one timer and one fsync per window.
 *
 * Proposals are keyed by (term, index): after losing and regaining leadership a new proposal can land
 * at an index an old, failed one had; each must be answered on its own. An entry applied at a
 * proposal's index with another term means the proposal was overwritten: it failed, and says so.
 */
import { nodeOfMember } from '../../core/member-id.js';
import { invariantFailed } from '../../core/assert.js';
import { noNode, RawNode } from '../../raft/index.js';
import type { ConfState, Entry, Index, Message, NodeId, Ready, Snapshot, StateType, Term } from '../../raft/index.js';
import type { RaftLogStore } from '../raft-log-store.js';
import { PendingProposals } from './pending-proposals.js';

/** The state machine a group applies its committed entries to. */
export interface GroupApplier<Outcome> {
  /** Applies one committed normal entry (the no-op of a new leader too: empty data). */
  apply(entry: Entry): Outcome;
  /** A configuration change was applied at `index` (the state machine's applied index moves). */
  applied(index: Index): void;
  /** The state was replaced by a snapshot from the leader (installed durably already). */
  restore(snapshot: Snapshot): void;
  /**
   * Why a snapshot from a peer could not be restored, or undefined: checked when it arrives, before the
   * core takes it (it would be stored before it is restored, and a bad one would stop the node at every start).
   */
  snapshotProblem?(snapshot: Snapshot): string | undefined;
}

/**
 * Why a proposal did not commit. `leader` is the node to try instead (noNode: unknown). 'timeout': it
 * may still commit; 'expired': it waited past its deadline before it was proposed (batch-coalescer.ts),
 * so it never will.
 */
export class ProposalFailedError extends Error {
  override name = 'ProposalFailedError';
  constructor(
    readonly reason: 'notLeader' | 'overwritten' | 'timeout' | 'expired' | 'refused' | 'closed',
    message: string,
    readonly leader: NodeId = noNode,
    readonly term: Term = 0,
    /** The storage error behind a 'refused' (a full disk), passed on to the client. */
    readonly storageError?: Error,
  ) {
    super(message);
  }
}

interface Pending<Outcome> {
  readonly term: Term;
  readonly index: Index;
  readonly deadlineMs: number;
  readonly resolve: (r: Applied<Outcome>) => void;
  readonly reject: (err: ProposalFailedError) => void;
}

export interface Applied<Outcome> {
  readonly index: Index;
  readonly term: Term;
  readonly outcome: Outcome;
}

/** What a member is, as its last Ready said. */
export interface GroupState {
  readonly role: StateType;
  readonly lead: NodeId;
  readonly term: Term;
}

export interface RaftGroupOptions {
  readonly id: number;
  readonly self: NodeId;
  readonly store: RaftLogStore;
  /** The configuration as of `applied` (the store's own is as of its snapshot). */
  readonly conf: ConfState;
  readonly applied: Index;
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  readonly random: { int(n: number): number };
  readonly uncommittedBytesMax?: number;
  /** See the Raft config's heartbeatWhileReplicating (default true: heartbeats go to every member). */
  readonly heartbeatWhileReplicating?: boolean;
  /**
   * The group's voters as this node knows them (the placement's replicas, the cluster's members), asked
   * for their terms by a member whose past term is unknown (its store's damage says termUnknown). A
   * function when that view changes (a partition's placement during a replica move): it is asked again
   * on every tick while the member probes, and a new view starts the probe over (src/raft, setProbePeers).
   */
  readonly termProbePeers?: readonly NodeId[] | (() => readonly NodeId[]);
  /**
   * Whether this member answers a term probe addressed to `member`, another member id of its node: a
   * former member of the metadata group whose data directory this one replaced (docs/metadata-raft.md,
   * "A wiped directory is a new member"). Absent: never (partition groups name members by node id).
   */
  readonly answersProbeFor?: (member: NodeId) => boolean;
}

export class RaftGroup<Outcome> {
  readonly id: number;
  readonly self: NodeId;
  readonly store: RaftLogStore;
  raw: RawNode;
  #applier: GroupApplier<Outcome> | undefined;
  #conf: ConfState;
  #applied: Index;
  #lead: NodeId = noNode;
  #role: StateType = 'follower';
  #term: Term;
  /** The proposals waiting for their entry, by index (one per term that proposed at an index). */
  readonly #pending = new PendingProposals<Pending<Outcome>>();
  /** Called when the leader or role changed (after the Ready that says so). */
  onLeaderChange: ((lead: NodeId, term: Term) => void) | undefined;
  /** Set by the node host: the group has new work for its Ready loop (a proposal). */
  onWork: (() => void) | undefined;
  /**
   * Called by the node host at the start of a turn that takes this group's Ready, so that what was
   * gathered since the last turn is proposed now, as one entry (a partition's batch coalescer).
   */
  beforeReady: (() => void) | undefined;
  /** Called after entries were applied (readers wake up). */
  onApplied: (() => void) | undefined;
  /** Called when the role, the leader or the term changed (after the Ready that says so), with what it was before. */
  onChange: ((now: GroupState, before: GroupState) => void) | undefined;
  /**
   * Called by the node host once a Ready is written and its committed entries applied, before
   * advance: what a Ready says beyond entries (answers to readIndex, damage found, damage repaired).
   */
  onReadyDone: ((rd: Ready) => void) | undefined;
  /** Called on every tick of the node host that reaches this group (after its Raft ticks). */
  onTick: ((nowMs: number) => void) | undefined;
  /**
   * The owner has work under way that needs the group awake and ticking (reads waiting for a
   * ReadIndex round or for entries to apply): it neither quiesces nor stays quiesced meanwhile.
   */
  busy: (() => boolean) | undefined;
  /** Decorates a message of this group as the node host sends it (the metadata group's read leases). */
  outgoing: ((m: Message) => Message) | undefined;
  /** Called after the core took a message of this group from a peer (the metadata group's read leases). */
  received: ((m: Message) => void) | undefined;
  /** Ticks since the group last had entries to write or apply (quiescence waits for a few). */
  #idleTicks = 0;

  constructor(o: RaftGroupOptions) {
    this.id = o.id;
    this.self = o.self;
    this.store = o.store;
    this.#o = o;
    this.#conf = o.conf;
    this.#applied = o.applied;
    this.raw = this.#newRawNode();
    this.#term = o.store.storage.hardState().term;
  }

  readonly #o: RaftGroupOptions;

  /** A Raft node over what is durable, as a restarted process would build it. */
  #newRawNode(): RawNode {
    const storage = this.store.storage;
    const conf = this.#conf;
    return new RawNode({
      id: this.self,
      storage: {
        // What is applied was committed, even if the stored commit index lags: the host applies
        // entries durable before a turn while the turn's write (with the new commit) is in flight,
        // and that write may be refused (reset).
        initialState: () => {
          const hs = storage.hardState();
          return { hardState: hs.commit < this.#applied ? { ...hs, commit: this.#applied } : hs, confState: conf };
        },
        entries: (lo, hi, max) => storage.entries(lo, hi, max),
        term: (i) => storage.term(i),
        firstIndex: () => storage.firstIndex(),
        lastIndex: () => storage.lastIndex(),
        snapshot: () => storage.snapshot(),
      },
      applied: this.#applied,
      electionTicks: this.#o.electionTicks,
      heartbeatTicks: this.#o.heartbeatTicks,
      random: this.#o.random,
      preVote: true,
      checkQuorum: true,
      // A member whose log was found damaged (a lost write-ahead-log tail) neither votes nor leads
      // until its leader has repaired it (src/raft, `damaged`).
      damaged: this.store.coreDamage(),
      // A member whose past term is unknown (a wiped directory) learns a term floor from them first.
      termProbePeers: this.#probePeers(),
      ...(this.#o.uncommittedBytesMax === undefined ? {} : { uncommittedBytesMax: this.#o.uncommittedBytesMax }),
      ...(this.#o.heartbeatWhileReplicating === undefined ? {} : { heartbeatWhileReplicating: this.#o.heartbeatWhileReplicating }),
    });
  }

  /** See RaftGroupOptions.answersProbeFor. */
  answersProbeFor(member: NodeId): boolean {
    return member !== this.self && (this.#o.answersProbeFor?.(member) ?? false);
  }

  #probePeers(): readonly NodeId[] {
    const p = this.#o.termProbePeers;
    return typeof p === 'function' ? p() : (p ?? []);
  }

  /**
   * The node's write of this group's Ready was refused (a full disk) and nothing of it was stored:
   * the group goes on as if this process had restarted from its disk (its unsynced entries are gone,
   * it is a follower at its durable term), and the proposals waiting here fail with the reason. A
   * group of one then elects itself again at once. A proposal at or below `mayCommitUpTo` is not
   * told "not stored": its entry is durable here from an earlier write (the group commits it again
   * after the reset) or a leader sent it to followers before its own write (appends go out first),
   * so it may still commit; its outcome is unknown, as for a client of a crashed leader. Only the
   * proposals above were stored nowhere and fail with the reason.
   */
  reset(reason: Error, mayCommitUpTo = 0): void {
    this.close(reason, mayCommitUpTo);
    const before: GroupState = { role: this.#role, lead: this.#lead, term: this.#term };
    this.#lead = noNode;
    this.#role = 'follower';
    this.raw = this.#newRawNode();
    this.#term = this.store.storage.hardState().term;
    // Its owner hears of it like of any change (a read sent to the former leader is asked again).
    if (before.lead !== noNode) this.onLeaderChange?.(noNode, this.#term);
    if (before.role !== 'follower' || before.lead !== noNode || before.term !== this.#term) this.onChange?.({ role: 'follower', lead: noNode, term: this.#term }, before);
    if (this.isSingleton()) this.raw.campaign();
  }

  /** The applier is set after construction: it may need the group (to read its log). */
  setApplier(a: GroupApplier<Outcome>): void {
    this.#applier = a;
  }

  get applied(): Index {
    return this.#applied;
  }

  get conf(): ConfState {
    return this.#conf;
  }

  /** Ticks without a word from the leader after which a follower campaigns (at the earliest). */
  get electionTicks(): number {
    return this.#o.electionTicks;
  }

  get leader(): NodeId {
    return this.#lead;
  }

  /**
   * The members of the configuration on node `node`: the node id itself for partition groups; in the
   * metadata group a node can hold a member of another incarnation (core/member-id.ts), and while one
   * replaces another, both.
   */
  membersOn(node: NodeId): NodeId[] {
    const out: NodeId[] = [];
    for (const id of this.#conf.voters) if (nodeOfMember(id) === node) out.push(id);
    for (const id of this.#conf.learners) if (nodeOfMember(id) === node) out.push(id);
    return out;
  }

  get term(): Term {
    return this.#term;
  }

  isLeader(): boolean {
    return this.raw.isLeader();
  }

  /** Whether this node is the only voter (it can elect itself at once). */
  isSingleton(): boolean {
    return this.#conf.learners.length === 0 && this.#conf.voters.length === 1 && this.#conf.voters[0] === this.self;
  }

  /**
   * Appends `data` if this node leads, and resolves once the entry is applied here. `expectedTerm`
   * (0: any) is the epoch the caller routed for: a leader of another term refuses, so a batch meant
   * for a deposed leader is never acknowledged by a newer one it did not reach (the caller retries).
   */
  propose(data: Uint8Array, deadlineMs: number, expectedTerm: Term = 0): Promise<Applied<Outcome>> {
    if (!this.raw.isLeader()) {
      return Promise.reject(new ProposalFailedError('notLeader', `node ${this.self} does not lead group ${this.id}`, this.#lead, this.#term));
    }
    const term = this.raw.term;
    if (expectedTerm !== 0 && expectedTerm !== term) {
      return Promise.reject(new ProposalFailedError('notLeader', `group ${this.id} is at term ${term}, not ${expectedTerm}`, this.self, term));
    }
    const r = this.raw.propose(data);
    if (!r.ok) {
      if (r.reason === 'notLeader' || r.reason === 'leadershipTransfer') {
        return Promise.reject(new ProposalFailedError('notLeader', `group ${this.id}: ${r.reason}`, this.#lead, term));
      }
      return Promise.reject(new ProposalFailedError('refused', `group ${this.id} refused the proposal (${r.reason})`, this.self, term));
    }
    this.onWork?.();
    return new Promise((resolve, reject) => {
      this.#pending.add({ term: r.term, index: r.firstIndex, deadlineMs, resolve, reject });
    });
  }

  // ------------------------------------------------------------------ driven by the node host

  step(m: Message): void {
    this.raw.step(m);
    this.received?.(m);
  }

  /** Step 3 of the Ready contract for one committed entry. */
  applyEntry(e: Entry): void {
    if (!(e.index === this.#applied + 1)) invariantFailed(`group ${this.id}: entry ${e.index} applied after ${this.#applied}`);
    let outcome: Outcome | undefined;
    let applied = false;
    if (e.type === 'confChange') {
      this.#conf = this.raw.applyConfChange(e);
      this.#applier!.applied(e.index);
    } else {
      outcome = this.#applier!.apply(e);
      applied = true;
    }
    this.#applied = e.index;
    const waiting = this.#pending.takeUpTo(e.index);
    if (waiting === undefined) return;
    for (const p of waiting) {
      // Only the proposal of the entry's own term is this entry; one of another term was overwritten
      // by a newer leader's log (it did not commit and never will).
      if (p.index === e.index && p.term === e.term && applied) p.resolve({ index: e.index, term: e.term, outcome: outcome as Outcome });
      else p.reject(new ProposalFailedError('overwritten', `group ${this.id}: leadership changed before entry ${p.index} of term ${p.term} committed`, this.#lead, this.#term));
    }
  }

  /** Why a snapshot from a peer cannot be installed (the state machine's check), or undefined. */
  snapshotProblem(s: Snapshot): string | undefined {
    return this.#applier?.snapshotProblem?.(s);
  }

  installSnapshot(s: Snapshot): void {
    this.#conf = s.metadata.confState;
    this.#applied = s.metadata.index;
    this.#applier!.restore(s);
    for (const p of this.#pending.takeUpTo(s.metadata.index) ?? []) {
      p.reject(new ProposalFailedError('overwritten', `group ${this.id}: replaced by a snapshot before entry ${p.index} was applied here`, this.#lead, this.#term));
    }
  }

  /** Observes a Ready's soft and hard state before it is handled. */
  observe(rd: Ready): void {
    if (rd.entries.length > 0 || rd.committedEntries.length > 0 || rd.snapshot !== undefined) this.#idleTicks = 0;
    const before: GroupState = { role: this.#role, lead: this.#lead, term: this.#term };
    if (rd.hardState !== undefined) this.#term = rd.hardState.term;
    if (rd.softState !== undefined) this.#role = rd.softState.state;
    if (rd.softState !== undefined && rd.softState.lead !== this.#lead) {
      this.#lead = rd.softState.lead;
      this.onLeaderChange?.(this.#lead, this.#term);
    }
    if (this.onChange !== undefined && (before.role !== this.#role || before.lead !== this.#lead || before.term !== this.#term)) {
      this.onChange({ role: this.#role, lead: this.#lead, term: this.#term }, before);
    }
  }

  /** A tick of the node host: `n` Raft ticks (0 when the host runs late), expiry of proposals, the owner's hook. */
  tick(n: number, nowMs: number): void {
    this.#idleTicks += n;
    // A member learning its term floor asks the voters of the current view (a move may have ended).
    if (n > 0 && this.raw.probing && typeof this.#o.termProbePeers === 'function') this.raw.setTermProbePeers(this.#o.termProbePeers());
    if (n > 0) this.raw.tick(n);
    this.expire(nowMs);
    this.onTick?.(nowMs);
  }

  /**
   * Quiesces this group if it leads it and it is idle: no entry written or applied for a few heartbeat
   * periods (followers have heard the last commit index), no proposal waiting, everything committed
   * applied here, the owner not busy; the core checks the rest (src/raft, Raft.quiesce).
   */
  maybeQuiesce(): boolean {
    if (this.raw.quiesced) return true;
    if (!this.raw.isLeader() || this.#pending.size > 0 || this.#idleTicks < 2 * this.#o.heartbeatTicks + 1) return false;
    if (this.#applied < this.raw.commitIndex || this.busy?.() === true) return false;
    return this.raw.quiesce();
  }

  /**
   * Fails proposals whose deadline passed (the node host calls this on its ticks). Not in a group of
   * one: its entries commit as soon as its own write completes, so a proposal there can only wait for
   * the node's disk, and failing it would tell a client "failed" about a batch that is then stored (a
   * retry stores it twice). It waits for the write instead, which either stores it (applied,
   * answered) or is refused (reset fails it with the reason, nothing stored).
   */
  expire(nowMs: number): void {
    if (this.#pending.size === 0 || this.isSingleton()) return;
    for (const p of this.#pending.takeExpired(nowMs)) {
      p.reject(new ProposalFailedError('timeout', `group ${this.id}: entry ${p.index} did not commit in time (no quorum?); it may still commit`, this.#lead, this.#term));
    }
  }

  close(reason?: Error, mayCommitUpTo = 0): void {
    const err = reason === undefined ? new ProposalFailedError('closed', `group ${this.id} closed on this node`, noNode, this.#term) : new ProposalFailedError('refused', reason.message, noNode, this.#term, reason);
    for (const p of this.#pending.takeAll()) {
      if (reason !== undefined && p.index <= mayCommitUpTo) {
        p.reject(new ProposalFailedError('timeout', `group ${this.id}: a write was refused (${reason.message}) after entry ${p.index} was stored or sent; it may still commit`, noNode, this.#term));
      } else p.reject(err);
    }
  }
}
