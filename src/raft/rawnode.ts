/**
 * The host's handle on one Raft group member: inputs go in through methods, effects come out as
 * Ready values (etcd's RawNode). A Ready is a batch of work the host must carry out in order:
 *
 *   1. Persist, durably (fsync) when `mustSync`: install `snapshot` if present, then append
 *      `entries` (discarding any stored entry at or after the first new index), then record
 *      `hardState`. Entries must be durable no later than the hard state that refers to them (in
 *      one atomic batch is best). Several groups' Readies may share one fsync.
 *   2. Send `messages`, only after step 1 is durable: votes, append acknowledgements and the
 *      leader's appends all promise durability of what step 1 wrote. Messages may be dropped,
 *      duplicated or reordered by the transport; Raft tolerates that.
 *   3. Apply: restore the state machine from `snapshot` if present, then apply `committedEntries`
 *      in order. For an entry of type 'confChange', call `applyConfChange(entry)` and record the
 *      returned ConfState with the applied index. `readStates` answer earlier readIndex() calls:
 *      a read for a context is served once the applied index reaches its `index`.
 *   4. Call `advance(ready)`.
 *
 * Between ready() and advance() the host may keep calling step(), tick(), propose() etc. (for
 * example while an fsync is in flight); their effects show in the next Ready. Only one Ready may be
 * outstanding at a time. If the process crashes at any point, the host restarts from what step 1
 * made durable, constructing a new RawNode over the same storage.
 */
import { assert } from '../core/assert.js';
import { decodeConfChange, isConfStateEqual } from './confchange.js';
import type { RaftConfig } from './config.js';
import { validateConfig, withDefaults } from './config.js';
import { Raft } from './raft.js';
import type { ProposeResult } from './raft.js';
import type { ProgressState } from './progress.js';
import type {
  ConfChange,
  ConfState,
  Damage,
  Entry,
  HardState,
  Index,
  Message,
  NodeId,
  ReadState,
  Snapshot,
  SoftState,
  StateType,
  Term,
} from './types.js';
import { isHardStateEqual } from './types.js';

export interface Ready {
  /** Present when the leader or the role changed since the last Ready (informational). */
  readonly softState: SoftState | undefined;
  /** Present when term, vote or commit changed: persist it (step 1). */
  readonly hardState: HardState | undefined;
  /** Answers to readIndex() calls (step 3). */
  readonly readStates: readonly ReadState[];
  /** Entries to append to stable storage (step 1). */
  readonly entries: readonly Entry[];
  /** A snapshot from the leader to install (steps 1 and 3). */
  readonly snapshot: Snapshot | undefined;
  /** Entries to apply to the state machine, in order (step 3). All are already durable after step 1. */
  readonly committedEntries: readonly Entry[];
  /** Messages to send after step 1 is durable (step 2). */
  readonly messages: readonly Message[];
  /** Whether step 1 needs an fsync (term, vote or entries changed); a commit-only change does not. */
  readonly mustSync: boolean;
  /**
   * The member's damage (RaftConfig.damaged) was repaired by what this Ready and earlier ones persist:
   * the host records that it is no longer damaged in the same write as step 1.
   */
  readonly repaired: boolean;
  /**
   * Present when the core found this member damaged while running (a leader counts entries it lacks):
   * the host records the damage in the same write as step 1, so a restart does not forget it.
   */
  readonly damaged: Damage | undefined;
  /**
   * Present once a member whose past term was unknown (Damage.termUnknown) has learned a term floor
   * from a majority of the other voters: the host records in the same write (with the hard state at
   * that term) that its damage term is at least this and that its term is no longer unknown, so a
   * restart does not ask again, and a restart before that write does.
   */
  readonly termFloor: Term | undefined;
}

export interface ProgressStatus {
  readonly match: Index;
  readonly next: Index;
  readonly state: ProgressState;
  readonly isLearner: boolean;
  readonly recentActive: boolean;
  /** The member's latest accepted append answer said it is incomplete (types.ts incompleteAck); the leader's own flag for itself. */
  readonly incomplete: boolean;
}

export interface Status {
  readonly id: NodeId;
  readonly term: Term;
  readonly vote: NodeId;
  readonly commit: Index;
  readonly applied: Index;
  readonly lastIndex: Index;
  readonly lead: NodeId;
  readonly state: StateType;
  readonly leadTransferee: NodeId;
  readonly confState: ConfState;
  /** Only on the leader: each member's replication progress. */
  readonly progress: ReadonlyMap<NodeId, ProgressStatus> | undefined;
  /** Only on the leader: the index of its term's first entry (the no-op it appended on election). */
  readonly termStart: Index | undefined;
  /** The damage this member has not been repaired from yet (RaftConfig.damaged), or null. */
  readonly damaged: Damage | null;
  /**
   * Only on a candidate or pre-candidate: the answers counted in its current campaign (granted or
   * not), itself included. The simulator checks that each grant counted is one of the current term.
   */
  readonly votes: ReadonlyMap<NodeId, boolean> | undefined;
}

export class RawNode {
  readonly #raft: Raft;
  #prevSoftState: SoftState;
  #prevHardState: HardState;
  #outstanding: Ready | undefined = undefined;
  /** Conf change entries of the outstanding Ready that the host has not yet applied, in order. */
  #confChangesToApply: Entry[] = [];

  constructor(config: RaftConfig) {
    const cfg = withDefaults(config);
    validateConfig(cfg);
    this.#raft = new Raft(cfg);
    this.#prevSoftState = { lead: this.#raft.lead, state: this.#raft.state };
    this.#prevHardState = this.#raft.hardState();
  }

  get id(): NodeId {
    return this.#raft.id;
  }

  /** The current term: what status().term says, without building a status (hosts ask per proposal). */
  get term(): Term {
    return this.#raft.term;
  }

  /** The hard state as it stands now (the next Ready's, if it changed). */
  get hardState(): HardState {
    return this.#raft.hardState();
  }

  /** The commit index: what status().commit says, without building a status. */
  get commitIndex(): Index {
    return this.#raft.log.committed;
  }

  /** The index of the last entry in the log (stored or not yet). */
  get lastIndex(): Index {
    return this.#raft.log.lastIndex();
  }

  /**
   * Whether the entry at the commit index is of the current term: on a leader, that an entry of its
   * term committed, so its commit index covers every entry committed in earlier terms.
   */
  get committedInTerm(): boolean {
    return this.#raft.log.term(this.#raft.log.committed) === this.#raft.term;
  }

  /**
   * Advances logical time by one tick (the host calls this at a fixed interval, e.g. every 100 ms), or
   * by `times` ticks at once when the host catches up (one heartbeat round at most: Raft.tick).
   */
  tick(times = 1): void {
    this.#raft.tick(times);
  }

  /** Feeds a message received from a peer. The host validates untrusted input before this point. */
  step(m: Message): void {
    this.#raft.step(m);
  }

  /** Forces an election now (tests and operator tooling); Pre-Vote still applies if enabled. */
  campaign(): void {
    this.#raft.hup(false);
  }

  /**
   * The operator accepts the loss of what this damaged sole voter lacks, and it campaigns at once:
   * it leads at a term above `floor` (its node's term ceiling) and its damage term (Raft.acceptLoss).
   * Returns why it was refused (nothing changed), or undefined.
   */
  acceptLoss(floor: Term): string | undefined {
    const refused = this.#raft.acceptLoss(floor);
    if (refused === undefined) this.#raft.hup(false);
    return refused;
  }

  /**
   * The operator accepts the loss of a group whose every member is damaged: this one keeps its log and
   * becomes the only voter, the others its learners (Raft.acceptLossAsOnlyVoter). It campaigns at its
   * next election timeout, once the host has applied the changes. `healthy`: a member that is not
   * damaged is forced too (a group whose healthy members are too few to elect a leader). Returns why it
   * was refused (nothing changed), or undefined.
   */
  acceptLossAsOnlyVoter(floor: Term, o: { healthy?: boolean } = {}): string | undefined {
    const r = this.#raft.acceptLossAsOnlyVoter(floor, o);
    return 'refused' in r ? r.refused : undefined;
  }

  /**
   * Proposes one entry. On success the entry is at (term, index): once an entry with that index is
   * applied, the proposal committed if and only if the applied entry has that term.
   */
  propose(data: Uint8Array): ProposeResult {
    return this.#raft.propose([data]);
  }

  /** Proposes several entries at once (contiguous indexes firstIndex..lastIndex, same term). */
  proposeMany(datas: readonly Uint8Array[]): ProposeResult {
    return this.#raft.propose(datas);
  }

  /** Proposes a single-server membership change; refused while another is pending. */
  proposeConfChange(cc: ConfChange): ProposeResult {
    return this.#raft.proposeConfChange(cc);
  }

  /**
   * Applies a committed 'confChange' entry from the outstanding Ready's committedEntries; the host
   * must call it for each such entry, in order, while applying. Returns the new configuration.
   */
  applyConfChange(entry: Entry): ConfState {
    const expected = this.#confChangesToApply.shift();
    assert(expected !== undefined, `applyConfChange(${entry.index}) without a pending conf change entry`);
    assert(
      expected.index === entry.index && expected.term === entry.term,
      `applyConfChange(${entry.index}) out of order: expected ${expected.index}`,
    );
    return this.#raft.applyConfChange(decodeConfChange(entry.data));
  }

  /** Asks the leader to hand leadership to `to` (a voter). Returns false if this node is not the leader. */
  transferLeadership(to: NodeId): boolean {
    return this.#raft.transferLeadership(to);
  }

  /**
   * Quiesces this leader if its group is idle (see Raft.quiesce): it stops ticking and heartbeating,
   * and tells its followers so in the next Ready. Returns whether it is quiesced.
   */
  quiesce(): boolean {
    return this.#raft.quiesce();
  }

  /**
   * Wakes a quiesced member; `electionElapsed`: ticks since its leader was last heard from (its host
   * knows that from the leader's node). Messages and requests wake it by themselves.
   */
  wake(electionElapsed = 0): void {
    this.#raft.wake(electionElapsed);
  }

  /**
   * Whether this member is incomplete: it holds the Raft log the group counts, but not yet all the
   * data its host keeps beside it (a partition replica fetching the retained log before its
   * snapshot). Its accepted append answers say so, and its leader's status shows it in progress.
   */
  setIncomplete(incomplete: boolean): void {
    this.#raft.setIncomplete(incomplete);
  }

  get incomplete(): boolean {
    return this.#raft.incomplete;
  }

  /** Whether this member is learning its term floor (Damage.termUnknown): it takes nothing until it has. */
  get probing(): boolean {
    return this.#raft.probing;
  }

  /**
   * Tells a member learning its term floor the voters as its host knows them now (the config's
   * termProbePeers at start): on a change it asks the new ones and counts only their answers (see
   * Raft.setProbePeers). Nothing happens once the floor is learned. A group of one lists itself.
   */
  setTermProbePeers(known: readonly NodeId[]): void {
    assert(known.length > 0, 'termProbePeers of a member whose past term is unknown cannot be empty (a group of one lists itself)');
    this.#raft.setProbePeers(known);
  }

  /** Whether this member is quiesced (its ticks do nothing until it wakes). */
  get quiesced(): boolean {
    return this.#raft.quiesced;
  }

  /** Requests a linearizable read; see Raft.readIndex. `context` must be unique cluster-wide. */
  readIndex(context: string): boolean {
    return this.#raft.readIndex(context);
  }

  reportUnreachable(id: NodeId): void {
    this.#raft.reportUnreachable(id);
  }

  reportSnapshot(id: NodeId, delivered: boolean): void {
    this.#raft.reportSnapshot(id, delivered);
  }

  #softState(): SoftState {
    return { lead: this.#raft.lead, state: this.#raft.state };
  }

  hasReady(): boolean {
    if (this.#outstanding !== undefined) return false;
    const r = this.#raft;
    const ss = this.#softState();
    return (
      ss.lead !== this.#prevSoftState.lead ||
      ss.state !== this.#prevSoftState.state ||
      !isHardStateEqual(r.hardState(), this.#prevHardState) ||
      r.pendingBroadcast ||
      r.msgs.length > 0 ||
      r.readStates.length > 0 ||
      r.repaired ||
      r.newlyDamaged !== null ||
      r.termFloor !== undefined ||
      r.log.unstable.entries.length > 0 ||
      r.log.unstable.snapshot !== undefined ||
      r.log.hasNextCommittedEntries()
    );
  }

  /**
   * Whether the next Ready holds committed entries (and the commit index that moved) and nothing else:
   * no entries or snapshot to persist, no term, vote, role or leader change, no message, no read state,
   * no damage news. Such a Ready needs no write (a commit index need not be durable) and nothing sent:
   * its host may handle it at once, e.g. right after the advance() that committed them (a group of
   * one commits what its own write made durable).
   */
  hasCommittedOnly(): boolean {
    if (this.#outstanding !== undefined) return false;
    const r = this.#raft;
    if (!r.log.hasNextCommittedEntries()) return false;
    const hs = r.hardState();
    return (
      hs.term === this.#prevHardState.term &&
      hs.vote === this.#prevHardState.vote &&
      r.lead === this.#prevSoftState.lead &&
      r.state === this.#prevSoftState.state &&
      !r.pendingBroadcast &&
      r.msgs.length === 0 &&
      r.readStates.length === 0 &&
      !r.repaired &&
      r.newlyDamaged === null &&
      r.termFloor === undefined &&
      r.log.unstable.entries.length === 0 &&
      r.log.unstable.snapshot === undefined
    );
  }

  /** Collects the work accumulated since the last Ready. Call advance() when it is done. */
  ready(): Ready {
    assert(this.#outstanding === undefined, 'ready() called again before advance()');
    const r = this.#raft;
    r.flushBroadcast();
    const ss = this.#softState();
    const hs = r.hardState();
    const softChanged = ss.lead !== this.#prevSoftState.lead || ss.state !== this.#prevSoftState.state;
    const hardChanged = !isHardStateEqual(hs, this.#prevHardState);
    const entries = [...r.log.unstable.entries];
    const committedEntries = r.log.hasNextCommittedEntries()
      ? r.log.nextCommittedEntries(r.cfg.readyCommittedBytesMax)
      : [];
    const rd: Ready = {
      softState: softChanged ? ss : undefined,
      hardState: hardChanged ? hs : undefined,
      readStates: r.readStates,
      entries,
      snapshot: r.log.unstable.snapshot,
      committedEntries,
      messages: r.msgs,
      mustSync:
        entries.length > 0 ||
        r.log.unstable.snapshot !== undefined ||
        r.repaired ||
        r.newlyDamaged !== null ||
        r.termFloor !== undefined ||
        hs.term !== this.#prevHardState.term ||
        hs.vote !== this.#prevHardState.vote,
      repaired: r.repaired,
      damaged: r.newlyDamaged ?? undefined,
      termFloor: r.termFloor,
    };
    r.repaired = false;
    r.newlyDamaged = null;
    r.termFloor = undefined;
    r.msgs = [];
    r.readStates = [];
    this.#prevSoftState = ss;
    this.#prevHardState = hs;
    this.#confChangesToApply = committedEntries.filter((e) => e.type === 'confChange');
    this.#outstanding = rd;
    return rd;
  }

  /** Acknowledges that the host has persisted, sent and applied everything in `rd`. */
  advance(rd: Ready): void {
    assert(this.#outstanding === rd, 'advance() with a Ready that is not the outstanding one');
    assert(
      this.#confChangesToApply.length === 0,
      `advance() before applying conf change entry ${this.#confChangesToApply[0]?.index}`,
    );
    const r = this.#raft;
    this.#outstanding = undefined;
    if (rd.snapshot !== undefined) {
      r.log.unstable.stableSnapTo(rd.snapshot.metadata.index);
      r.log.appliedTo(rd.snapshot.metadata.index);
    }
    const last = rd.entries[rd.entries.length - 1];
    if (last !== undefined) r.onPersisted(last.index, last.term);
    const lastApplied = rd.committedEntries[rd.committedEntries.length - 1];
    if (lastApplied !== undefined) {
      r.log.appliedTo(lastApplied.index);
      r.reduceUncommittedBytes(rd.committedEntries);
    }
  }

  status(): Status {
    const r = this.#raft;
    let progress: Map<NodeId, ProgressStatus> | undefined;
    if (r.state === 'leader') {
      progress = new Map();
      for (const [id, pr] of r.trk.progress) {
        progress.set(id, {
          match: pr.match,
          next: pr.next,
          state: pr.state,
          isLearner: pr.isLearner,
          recentActive: pr.recentActive,
          incomplete: id === r.id ? r.incomplete : pr.incomplete,
        });
      }
    }
    return {
      id: r.id,
      term: r.term,
      vote: r.vote,
      commit: r.log.committed,
      applied: r.log.applied,
      lastIndex: r.log.lastIndex(),
      lead: r.lead,
      state: r.state,
      leadTransferee: r.leadTransferee,
      confState: r.trk.confState(),
      progress,
      termStart: r.state === 'leader' ? r.termStart : undefined,
      damaged: r.damaged,
      votes: r.state === 'candidate' || r.state === 'preCandidate' ? new Map(r.trk.votes) : undefined,
    };
  }

  /** Whether this node would currently be counted as a leader by peers (convenience for hosts). */
  isLeader(): boolean {
    return this.#raft.state === 'leader' && this.#raft.lead === this.#raft.id;
  }

  /** Test and simulator access to the log's term lookup (e.g. for invariant checks). */
  termAt(i: Index): Term | undefined {
    return this.#raft.log.term(i);
  }

  /** The first index still held (in storage or unstable). */
  firstIndex(): Index {
    return this.#raft.log.firstIndex();
  }

  /** Whether `conf` is exactly this node's current configuration (assertions in hosts). */
  hasConfState(conf: ConfState): boolean {
    return isConfStateEqual(conf, this.#raft.trk.confState());
  }
}
