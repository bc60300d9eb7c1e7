/**
 * The Raft state machine (Ongaro & Ousterhout 2014; Ongaro's thesis 2014), shaped like etcd's raft:
 * every input (a received message, a tick, a proposal) mutates the state and queues messages in
 * `msgs`; nothing here does I/O, reads a clock or draws randomness other than through the injected
 * generator. RawNode (rawnode.ts) packages the effects into Ready values for the host.
 *
 * Durability model: the leader counts its own log towards the commit index only up to what the host
 * has persisted (it learns that in `onPersisted`), and every message is sent only after the Ready
 * that produced it has been persisted. So "committed" always means "durable on a majority".
 */
import { assert, unreachable } from '../core/assert.js';
import { applyConfChangeToState, encodeConfChange } from './confchange.js';
import type { ResolvedConfig } from './config.js';
import { RaftLog } from './log.js';
import type { Progress } from './progress.js';
import { ReadOnly } from './read-only.js';
import { CompactedError } from './storage.js';
import { ProgressTracker } from './tracker.js';
import type {
  ConfChange,
  ConfState,
  Damage,
  Entry,
  EntryType,
  HardState,
  Index,
  Message,
  NodeId,
  ReadState,
  Snapshot,
  StateType,
  Term,
} from './types.js';
import { assertIndex, campaignTransfer, commitOnlyAppend, damagedReject, entriesBytes, incompleteAck, makeMessage, noNode, quiesceContext } from './types.js';

/** Why a proposal was not appended. None of these is an error of the caller's making except 'invalid'. */
export type ProposalDropReason =
  /** Only the leader appends; the host forwards the request to `lead` (or retries if none). */
  | 'notLeader'
  /** A leadership transfer is under way; proposals resume on the new leader. */
  | 'leadershipTransfer'
  /** The previous membership change has not been applied yet (one change at a time). */
  | 'confChangePending'
  /** Too many uncommitted bytes: back off until commits catch up. */
  | 'uncommittedBytesMax'
  /** The membership change makes no sense against the current configuration. */
  | 'invalid';

export type ProposeResult =
  | { readonly ok: true; readonly term: Term; readonly firstIndex: Index; readonly lastIndex: Index }
  | { readonly ok: false; readonly reason: ProposalDropReason };

/** Election timeouts an incomplete member waits beyond the randomized one before it campaigns. */
export const incompleteElectionDelayTimeouts = 2;

/** Heartbeat answers with a full, unacknowledged inflight window before the leader re-probes. */
const stalledHeartbeatsMax = 3;

interface PendingRead {
  readonly from: NodeId;
  readonly context: string;
}

/** One answer to a term probe: the term, and the member that gave it (the one asked, or a member answering for it). */
interface ProbeAnswer {
  readonly term: Term;
  readonly by: NodeId;
}

export class Raft {
  readonly id: NodeId;
  readonly cfg: ResolvedConfig;
  term: Term = 0;
  vote: NodeId = noNode;
  lead: NodeId = noNode;
  state: StateType = 'follower';
  readonly log: RaftLog;
  readonly trk: ProgressTracker;
  /** Messages produced since the last Ready, in order. */
  msgs: Message[] = [];
  readStates: ReadState[] = [];

  electionElapsed = 0;
  heartbeatElapsed = 0;
  randomizedElectionTimeout = 0;
  leadTransferee: NodeId = noNode;
  /** Index of the latest membership change the leader may have appended; none can be proposed until it is applied. */
  pendingConfIndex: Index = 0;
  /** On a leader: the index of the no-op it appended on election, its term's first entry (0 otherwise). */
  termStart: Index = 0;
  uncommittedBytes = 0;
  /**
   * Proposals appended, or the commit index advanced, since the last Ready: their broadcast is
   * coalesced into as few appends as possible (flushBroadcast).
   */
  pendingBroadcast = false;
  /** Set while this member's durable state is damaged: it neither votes nor campaigns (config.ts). */
  damaged: Damage | null;
  /** The damage was repaired since the last Ready (the host records that in the same write). */
  repaired = false;
  /** Damage found while running (a leader counts entries this member lacks) since the last Ready. */
  newlyDamaged: Damage | null = null;
  /**
   * The term floor learned since the last Ready (see #probe): the host makes it durable with the hard
   * state and clears the damage's termUnknown in the same write, before any message of this member
   * acknowledges anything.
   */
  termFloor: Term | undefined = undefined;
  /**
   * Quiesced: an idle group's member that neither ticks nor heartbeats (CockroachDB's quiescence,
   * TiKV's hibernation). A leader quiesces when nothing is under way and every member holds and has
   * committed its whole log, and tells them so (heartbeats with quiesceContext); a follower quiesces
   * on such a heartbeat from its leader if it holds and has committed the whole log too. Any message
   * (but a heartbeat answer on the leader) or local request wakes it. A quiesced follower never times
   * out: its host must wake it when the leader's node is no longer heard from (wake()).
   */
  quiesced = false;
  /**
   * The host says this member is incomplete (RawNode.setIncomplete): it holds the Raft log, but not
   * yet all the data its host keeps beside it. Its accepted append answers say so (incompleteAck).
   */
  incomplete = false;

  readonly #readOnly: ReadOnly;
  /** Reads that arrived before the leader committed an entry of its term (thesis §6.4 step 1). */
  #pendingReads: PendingRead[] = [];
  /**
   * Set while this member learns a term floor (Damage.termUnknown). It starts empty in a group its
   * data directory may have belonged to, at a term that may be below one it acknowledged entries in:
   * taking the appends of a leader deposed since, it could help that leader commit over an entry a
   * newer leader committed with its former self's acknowledgement. So it first asks the other voters
   * for their terms and takes the highest of `needed` answers (a majority of the voters, itself not
   * counted). An entry committed in term T is on a majority M of the voters, each of which had a term
   * >= T and never goes back (a member that lost a log tail restarts at its term ceiling; one whose
   * past is unknown answers `reject` and is not counted): |answers| + |M without this member| > the
   * number of other voters, so one answerer is in M and reports >= T. Until then it takes nothing
   * (appends, heartbeats, snapshots, votes are dropped) and adopts no term.
   */
  #probe: { readonly peers: readonly NodeId[]; readonly needed: number; readonly answers: Map<NodeId, ProbeAnswer>; elapsed: number } | null = null;

  constructor(cfg: ResolvedConfig) {
    this.id = cfg.id;
    this.cfg = cfg;
    this.log = new RaftLog(cfg.storage);
    this.trk = new ProgressTracker(cfg.inflightAppendsMax, cfg.inflightBytesMax);
    this.#readOnly = new ReadOnly(cfg.pendingReadsMax);
    this.damaged = cfg.damaged;
    const { hardState, confState } = cfg.storage.initialState();
    this.trk.applyConf(confState, this.log.lastIndex());
    this.#loadState(hardState);
    if (cfg.applied > 0) {
      assert(cfg.applied >= this.log.applied, `applied ${cfg.applied} is before the snapshot ${this.log.applied}`);
      this.log.appliedTo(cfg.applied);
    }
    this.becomeFollower(this.term, noNode);
    if (this.damaged?.termUnknown === true) this.#startProbe(cfg.termProbePeers);
  }

  // ---------------------------------------------------------------------------------------------
  // Learning a term floor (Damage.termUnknown)

  #startProbe(known: readonly NodeId[]): void {
    const peers = [...new Set(known)].filter((id) => id !== this.id).sort((a, b) => a - b);
    const n = peers.length + 1;
    // A majority of the n voters, itself not counted: for an odd n that is ceil(n / 2) of the others,
    // the fewest the overlap argument (#probe) needs; for an even n one more, so that the answers
    // still meet every commit quorum when the real configuration has one member more or less than
    // the host's view (a membership change the host has not seen). Never more than there are others.
    const needed = Math.min(peers.length, Math.floor(n / 2) + 1);
    this.#probe = { peers, needed, answers: new Map(), elapsed: 0 };
    if (needed === 0) this.#finishProbe();
    else for (const id of peers) this.#send({ type: 'termProbe', to: id });
  }

  /** Whether this member is still learning its term floor (it takes nothing until it has). */
  get probing(): boolean {
    return this.#probe !== null;
  }

  /**
   * The host's view of the voters changed while this member learns its floor (a replica move began,
   * ended or was cancelled). The count of answers is for one view: kept on a view that lists a member
   * gone since (a cancelled move's learner, a moved replica's old node, whose data is dropped and who
   * never answers again), it would wait for good; kept on answers given before the view changed, it
   * could count a member that joined the commit quorums only since with a term from before. So the
   * probe starts over: every voter of the new view is asked now, and only their answers count.
   */
  setProbePeers(known: readonly NodeId[]): void {
    const p = this.#probe;
    if (p === null) return;
    const peers = [...new Set(known)].filter((id) => id !== this.id).sort((a, b) => a - b);
    if (peers.length === p.peers.length && peers.every((id, i) => id === p.peers[i])) return;
    this.#startProbe(known);
  }

  /** Asks again, every heartbeat period, the voters that have not answered yet. */
  #tickProbe(): void {
    const p = this.#probe!;
    if (++p.elapsed < this.cfg.heartbeatTicks) return;
    p.elapsed = 0;
    for (const id of p.peers) if (!p.answers.has(id)) this.#send({ type: 'termProbe', to: id });
  }

  #handleProbeAnswer(m: Message): void {
    const p = this.#probe;
    // The member asked: the answerer, or the former member of its node it answers for (`index`, set
    // by the answerer's host: docs/metadata-raft.md, "A wiped directory is a new member"). Its answer
    // is counted in the former member's place; it said `reject` unless it holds the configuration
    // entry that added it, whose term is at least that of every entry committed with the former
    // member's acknowledgement (the argument is in the doc).
    const slot = m.index !== 0 ? m.index : m.from;
    // Not probing (any more), a member not asked, or one whose own past term is unknown: not counted.
    if (p === null || m.reject || !p.peers.includes(slot)) return;
    // One answerer fills one place: a member asked under its own id is not also counted for a former
    // member of its node, nor for two of them (the overlap argument counts distinct members).
    if (slot !== m.from && p.peers.includes(m.from)) return;
    for (const [s, a] of p.answers) if (s !== slot && a.by === m.from) return;
    const had = p.answers.get(slot);
    p.answers.set(slot, { term: Math.max(m.term, had?.by === m.from ? had.term : 0), by: m.from });
    if (p.answers.size >= p.needed) this.#finishProbe();
  }

  #finishProbe(): void {
    const p = this.#probe!;
    let floor = this.term;
    for (const a of p.answers.values()) floor = Math.max(floor, a.term);
    this.#probe = null;
    const d = this.damaged!;
    // Still damaged (it lacks what it acknowledged): only a leader of a term >= the floor repairs it.
    this.damaged = { term: Math.max(d.term, floor), index: d.index };
    this.termFloor = floor;
    if (floor > this.term) this.becomeFollower(floor, noNode);
  }

  #loadState(hs: HardState): void {
    assertIndex(hs.term, 'stored term');
    assertIndex(hs.commit, 'stored commit');
    assert(
      hs.commit <= this.log.lastIndex(),
      `stored commit ${hs.commit} is beyond the last stored index ${this.log.lastIndex()}: entries must be durable before the hard state`,
    );
    this.log.commitTo(hs.commit);
    this.term = hs.term;
    this.vote = hs.vote;
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.committed };
  }

  // ---------------------------------------------------------------------------------------------
  // Sending

  #send(fields: Pick<Message, 'type' | 'to'> & Partial<Message>): void {
    assert(fields.to !== this.id, `node ${this.id} sending ${fields.type} to itself`);
    const m = makeMessage({ from: this.id, term: this.term, ...fields });
    this.msgs.push(m);
  }

  /**
   * Sends an append (or a snapshot, if the entries are compacted) to `to` if its progress allows.
   * Returns whether a message was sent. With `sendIfEmpty` false, an append without entries is not
   * sent (used to fill the pipeline without flooding empty appends).
   */
  #sendAppend(to: NodeId, sendIfEmpty: boolean, broadcast = false): boolean {
    const pr = this.trk.progress.get(to);
    if (pr === undefined || pr.isPaused()) return false;
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    let ents: Entry[] | undefined;
    if (prevTerm !== undefined) {
      try {
        ents = this.log.entriesFrom(pr.next, this.cfg.appendBytesMax, this.cfg.appendEntriesMax);
      } catch (e) {
        if (!(e instanceof CompactedError)) throw e;
      }
    }
    if (prevTerm === undefined || ents === undefined) return this.#sendSnapshot(to, pr);
    if (ents.length === 0 && !sendIfEmpty) return false;
    const bytes = entriesBytes(ents);
    // An empty append to a follower that acknowledged all it was sent only moves its commit index: it
    // need not be answered (types.ts commitOnlyAppend). Nor, in a broadcast (a commit, proposals), one
    // to a follower whose entries up to prevIndex are in flight: its answer to them is on its way and
    // says the same, and if they were lost it rejects this append, which is answered (groups with
    // heartbeatWhileReplicating false only: the metadata group's read leases hear a follower's applied
    // index in its answers). Elsewhere (an answer to a heartbeat, a rejection) the leader sends an
    // empty append to hear where the member is.
    const commitOnly = ents.length === 0 && pr.state === 'replicate' && !pr.incomplete && (pr.match === prevIndex || (broadcast && pr.match < prevIndex && !this.cfg.heartbeatWhileReplicating));
    this.#send({ type: 'app', to, index: prevIndex, logTerm: prevTerm, entries: ents, commit: this.log.committed, context: commitOnly ? commitOnlyAppend : '' });
    pr.sentEntries(ents.length, prevIndex + ents.length, bytes);
    pr.sentSinceHeartbeat = true;
    return true;
  }

  #sendSnapshot(to: NodeId, pr: Progress): boolean {
    // A follower that has not been heard from lately is probably down; do not ship it a snapshot.
    if (!pr.recentActive) return false;
    const snap = this.log.snapshot();
    if (snap === undefined) return false; // temporarily unavailable: retried on a later heartbeat
    assert(snap.metadata.index > 0, 'need a non-empty snapshot for a follower behind the first index');
    this.#send({ type: 'snap', to, snapshot: snap });
    pr.becomeSnapshot(snap.metadata.index);
    return true;
  }

  /**
   * Sends appends to `to` until its window is full or nothing is left to send; the first one even if
   * it is empty, unless `sendIfEmpty` is false.
   */
  #sendAppendsFilling(to: NodeId, broadcast = false, sendIfEmpty = true): void {
    if (!this.#sendAppend(to, sendIfEmpty, broadcast)) return;
    const pr = this.trk.progress.get(to)!;
    while (pr.state === 'replicate' && pr.next <= this.log.lastIndex() && this.#sendAppend(to, false)) {
      // Pipelining: each iteration ships the next batch while earlier ones are in flight.
    }
  }

  #bcastAppend(): void {
    for (const id of this.trk.progress.keys()) {
      if (id !== this.id) this.#sendAppendsFilling(id, true);
    }
  }

  #sendHeartbeat(to: NodeId, context: string): void {
    const pr = this.trk.progress.get(to)!;
    // A follower may not have the leader's whole committed prefix; it must never commit beyond
    // what it is known to hold.
    const commit = Math.min(pr.match, this.log.committed);
    this.#send({ type: 'heartbeat', to, commit, context });
  }

  #bcastHeartbeat(context: string): void {
    for (const id of this.trk.progress.keys()) {
      if (id !== this.id) this.#sendHeartbeat(id, context);
    }
  }

  /**
   * The heartbeat round of a tick: every member gets a heartbeat, but (config heartbeatWhileReplicating
   * false) one that appends reach anyway (see the config's comment). With a busy group the heartbeats
   * and their answers were half of the Raft messages between three loaded nodes (docs/replication.md).
   * Each skip needs an accepted answer since the last round, so a member that stops answering, or
   * whose appends are lost, gets its heartbeat again by the next round; a full window (what lost
   * appends leave, see #handleHeartbeatResponse) is never skipped.
   */
  #heartbeatRound(context: string): void {
    const skipping = !this.cfg.heartbeatWhileReplicating && context === '';
    for (const [id, pr] of this.trk.progress) {
      if (id === this.id) continue;
      const skip = skipping && pr.state === 'replicate' && pr.sentSinceHeartbeat && pr.ackedSinceHeartbeat && !pr.incomplete && !pr.inflights.full();
      pr.sentSinceHeartbeat = false;
      pr.ackedSinceHeartbeat = false;
      if (!skip) this.#sendHeartbeat(id, context);
    }
  }

  /** Called by RawNode before building a Ready: ships proposals appended, and commits made, since the last one. */
  flushBroadcast(): void {
    if (!this.pendingBroadcast) return;
    this.pendingBroadcast = false;
    if (this.state === 'leader') this.#bcastAppend();
  }

  // ---------------------------------------------------------------------------------------------
  // State transitions

  #reset(term: Term): void {
    if (this.term !== term) {
      assert(term > this.term, `term moving back from ${this.term} to ${term}`);
      this.term = term;
      this.vote = noNode;
    }
    this.lead = noNode;
    this.quiesced = false;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.randomizedElectionTimeout = this.cfg.electionTicks + this.cfg.random.int(this.cfg.electionTicks);
    this.#abortLeaderTransfer();
    this.trk.resetVotes();
    this.trk.resetProgress(this.log.lastIndex(), this.id, this.log.lastStableIndex());
    this.pendingConfIndex = 0;
    this.termStart = 0;
    this.uncommittedBytes = 0;
    this.pendingBroadcast = false;
    this.#readOnly.reset();
    this.#pendingReads = [];
  }

  becomeFollower(term: Term, lead: NodeId): void {
    this.#reset(term);
    this.lead = lead;
    this.state = 'follower';
  }

  #becomePreCandidate(): void {
    assert(this.state !== 'leader', 'a leader cannot become a pre-candidate');
    // Pre-Vote changes neither the term nor the vote: a failed pre-election leaves no trace.
    this.state = 'preCandidate';
    this.trk.resetVotes();
    this.lead = noNode;
  }

  #becomeCandidate(): void {
    assert(this.state !== 'leader', 'a leader cannot become a candidate');
    this.#reset(this.term + 1);
    this.vote = this.id;
    this.state = 'candidate';
  }

  #becomeLeader(): void {
    assert(this.state === 'candidate', `becoming leader from ${this.state}`);
    this.#reset(this.term);
    this.lead = this.id;
    this.state = 'leader';
    const self = this.trk.progress.get(this.id);
    assert(self !== undefined, 'a leader must be a member of its configuration');
    self.becomeReplicate();
    self.match = this.log.lastStableIndex();
    // Any unapplied entry might be a membership change: a new leader proposes none until everything
    // up to its election is applied (which also fixes the single-server-change bug Ongaro described
    // in 2015, since it implies an entry of this term is committed first).
    this.pendingConfIndex = this.log.lastIndex();
    // The no-op of §8: committing an entry of the new term commits all earlier ones and lets
    // ReadIndex proceed.
    this.termStart = this.log.lastIndex() + 1;
    const appended = this.#appendEntries([{ type: 'normal', data: new Uint8Array(0) }]);
    assert(appended, 'the leader no-op is never refused');
    this.#bcastAppend();
  }

  #promotable(): boolean {
    // A damaged member may lack entries it acknowledged: as leader it could lose committed writes.
    return this.trk.isVoter(this.id) && this.damaged === null && this.log.unstable.snapshot === undefined;
  }

  /** Whether (applied, committed] holds a membership change (or a snapshot not yet installed). */
  #hasUnappliedConfChanges(): boolean {
    const log = this.log;
    if (log.applied >= log.committed) return false;
    if (log.applied < log.firstIndex() - 1) return true;
    let lo = log.applied + 1;
    const hi = log.committed + 1;
    while (lo < hi) {
      const page = log.slice(lo, hi, 4 * 1024 * 1024);
      assert(page.length > 0, 'empty page while scanning unapplied entries');
      for (const e of page) if (e.type === 'confChange') return true;
      lo = page[page.length - 1]!.index + 1;
    }
    return false;
  }

  /** Starts an election (or a pre-election) if this node may. */
  hup(transfer: boolean): void {
    if (this.state === 'leader') return;
    this.quiesced = false;
    if (!this.#promotable()) return;
    // A node that has not yet applied a committed membership change might campaign under a
    // configuration two steps old, whose majorities need not overlap the newest one's.
    if (this.#hasUnappliedConfChanges()) return;
    if (this.cfg.preVote && !transfer) this.#campaign('preElection', false);
    else this.#campaign('election', transfer);
  }

  #campaign(kind: 'preElection' | 'election', transfer: boolean): void {
    let voteTerm: Term;
    let type: 'vote' | 'preVote';
    if (kind === 'preElection') {
      this.#becomePreCandidate();
      type = 'preVote';
      // Ask with the term we would use, without adopting it yet.
      voteTerm = this.term + 1;
    } else {
      this.#becomeCandidate();
      type = 'vote';
      voteTerm = this.term;
    }
    this.trk.recordVote(this.id, true);
    if (this.trk.tallyVotes() === 'won') {
      // A single-voter group wins at once.
      if (kind === 'preElection') this.#campaign('election', transfer);
      else this.#becomeLeader();
      return;
    }
    const lastIndex = this.log.lastIndex();
    const lastTerm = this.log.lastTerm();
    for (const id of this.trk.voters) {
      if (id === this.id) continue;
      this.#send({
        type,
        to: id,
        term: voteTerm,
        index: lastIndex,
        logTerm: lastTerm,
        context: transfer ? campaignTransfer : '',
      });
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Ticks

  /**
   * `times` ticks at once (a host catching up after its event loop lagged): time passes as for that
   * many calls, but a leader of a group with heartbeatWhileReplicating false sends at most one
   * heartbeat round. The rounds after the first would leave together with it, before any answer to it
   * (on a loaded machine every member got three heartbeats at once, and the members the first round
   * skipped got one from the next). Other groups (the metadata group) keep one round per tick.
   */
  tick(times = 1): void {
    let rounds = 0;
    for (let i = 0; i < times; i++) {
      if (this.#probe !== null) this.#tickProbe();
      if (this.quiesced) continue;
      if (this.state === 'leader') rounds += this.#tickHeartbeat(rounds === 0 || this.cfg.heartbeatWhileReplicating) ? 1 : 0;
      else this.#tickElection();
    }
  }

  #tickElection(): void {
    this.electionElapsed++;
    // An incomplete member (setIncomplete) waits two election timeouts longer than the others: a
    // complete member that can win times out first and leads, yet a group whose only candidate is
    // incomplete still elects it (its Raft log is whole: safety does not depend on this).
    const timeout = this.randomizedElectionTimeout + (this.incomplete ? incompleteElectionDelayTimeouts * this.cfg.electionTicks : 0);
    if (this.#promotable() && this.electionElapsed >= timeout) {
      this.electionElapsed = 0;
      this.hup(false);
    }
  }

  /** One tick of a leader; whether it made a heartbeat round (only if `round` allows one). */
  #tickHeartbeat(round: boolean): boolean {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.cfg.electionTicks) {
      this.electionElapsed = 0;
      if (this.cfg.checkQuorum) {
        if (!this.trk.quorumActive(this.id)) {
          // Partitioned from a majority: stop acting as leader so that clients go elsewhere.
          this.becomeFollower(this.term, noNode);
          return false;
        }
        for (const [id, pr] of this.trk.progress) pr.recentActive = id === this.id;
      }
      // A transfer that did not finish within an election timeout has failed; resume proposals.
      if (this.leadTransferee !== noNode) this.#abortLeaderTransfer();
    }
    for (const pr of this.trk.progress.values()) {
      if (pr.state === 'snapshot' && ++pr.snapshotTicks >= this.cfg.snapshotRetryTicks) {
        // The snapshot or its answer was lost: probe again, which resends it if still needed.
        pr.becomeProbe();
      }
    }
    if (this.heartbeatElapsed >= this.cfg.heartbeatTicks) {
      this.heartbeatElapsed = 0;
      if (!round) return false;
      this.#heartbeatRound(this.#readOnly.lastPendingContext() ?? '');
      return true;
    }
    return false;
  }

  // ---------------------------------------------------------------------------------------------
  // Local inputs

  /** Appends entries as leader; false if the uncommitted-bytes bound refuses them. */
  #appendEntries(items: ReadonlyArray<{ type: EntryType; data: Uint8Array }>): boolean {
    const li = this.log.lastIndex();
    const ents: Entry[] = items.map((it, i) => ({ term: this.term, index: li + 1 + i, type: it.type, data: it.data }));
    const bytes = entriesBytes(ents);
    // A single proposal larger than the bound is still accepted when nothing is uncommitted, so
    // that no proposal is refused forever.
    if (this.uncommittedBytes > 0 && this.uncommittedBytes + bytes > this.cfg.uncommittedBytesMax) return false;
    this.uncommittedBytes += bytes;
    this.log.append(ents);
    return true;
  }

  /** Frees the uncommitted-bytes budget of entries handed out for applying. */
  reduceUncommittedBytes(applied: readonly Entry[]): void {
    if (this.state !== 'leader') return;
    this.uncommittedBytes = Math.max(0, this.uncommittedBytes - entriesBytes(applied));
  }

  propose(datas: readonly Uint8Array[]): ProposeResult {
    assert(datas.length > 0, 'proposing nothing');
    if (this.state !== 'leader') return { ok: false, reason: 'notLeader' };
    this.wake(0);
    if (this.leadTransferee !== noNode) return { ok: false, reason: 'leadershipTransfer' };
    return this.#proposeEntries(datas.map((data) => ({ type: 'normal' as const, data })));
  }

  #proposeEntries(items: ReadonlyArray<{ type: EntryType; data: Uint8Array }>): ProposeResult {
    if (!this.#appendEntries(items)) return { ok: false, reason: 'uncommittedBytesMax' };
    // Followers get the entries when the host next asks for a Ready; the leader counts them for
    // itself once the host reports them persisted (onPersisted).
    this.pendingBroadcast = true;
    const lastIndex = this.log.lastIndex();
    return { ok: true, term: this.term, firstIndex: lastIndex - items.length + 1, lastIndex };
  }

  proposeConfChange(cc: ConfChange): ProposeResult {
    if (this.state !== 'leader') return { ok: false, reason: 'notLeader' };
    this.wake(0);
    if (this.leadTransferee !== noNode) return { ok: false, reason: 'leadershipTransfer' };
    if (this.pendingConfIndex > this.log.applied) return { ok: false, reason: 'confChangePending' };
    const cur = this.trk.confState();
    const next = applyConfChangeToState(cur, cc);
    const unchanged =
      next.voters.length === cur.voters.length &&
      next.learners.length === cur.learners.length &&
      next.voters.every((v, i) => cur.voters[i] === v) &&
      next.learners.every((v, i) => cur.learners[i] === v);
    if (unchanged) return { ok: false, reason: 'invalid' };
    if (next.voters.length === 0) return { ok: false, reason: 'invalid' };
    const r = this.#proposeEntries([{ type: 'confChange', data: encodeConfChange(cc) }]);
    if (r.ok) this.pendingConfIndex = r.lastIndex;
    return r;
  }

  /**
   * Applies a committed membership change (the host calls this through RawNode while applying the
   * entry) and returns the new configuration, which the host records with its applied index.
   */
  applyConfChange(cc: ConfChange): ConfState {
    const conf = applyConfChangeToState(this.trk.confState(), cc);
    this.trk.applyConf(conf, this.log.lastIndex());
    if (this.state === 'leader') {
      if (!this.trk.isVoter(this.id)) {
        // Removed or demoted: a leader that is not a voter must not keep counting itself.
        this.becomeFollower(this.term, noNode);
        return conf;
      }
      if (this.leadTransferee !== noNode && !this.trk.isVoter(this.leadTransferee)) this.#abortLeaderTransfer();
      if (!this.#maybeCommitAndBroadcast()) {
        for (const id of this.trk.progress.keys()) if (id !== this.id) this.#sendAppend(id, false);
      }
    } else if (this.state !== 'follower' && !this.trk.isVoter(this.id)) {
      this.becomeFollower(this.term, noNode);
    }
    return conf;
  }

  transferLeadership(to: NodeId): boolean {
    if (this.state !== 'leader') return false;
    this.wake(0);
    if (to === this.id || !this.trk.isVoter(to)) return false;
    if (this.leadTransferee === to) return true;
    this.#abortLeaderTransfer();
    // The transfer must finish within an election timeout (thesis §3.10).
    this.electionElapsed = 0;
    this.leadTransferee = to;
    const pr = this.trk.progress.get(to)!;
    if (pr.match === this.log.lastIndex()) this.#send({ type: 'timeoutNow', to });
    else this.#sendAppend(to, true);
    return true;
  }

  #abortLeaderTransfer(): void {
    this.leadTransferee = noNode;
  }

  /**
   * Requests a linearizable read index for `context` (unique cluster-wide). The answer arrives as a
   * ReadState in a later Ready. Returns false if the request was dropped (no leader known, or too
   * many pending): the host retries.
   */
  readIndex(context: string): boolean {
    this.wake(0);
    if (this.state === 'leader') return this.#leaderReadIndex(this.id, context);
    if (this.lead === noNode) return false;
    if (this.state !== 'follower') return false;
    this.#send({ type: 'readIndex', to: this.lead, context });
    return true;
  }

  #leaderReadIndex(from: NodeId, context: string): boolean {
    if (this.log.term(this.log.committed) !== this.term) {
      // A new leader does not know the latest commit index until an entry of its own term commits.
      if (this.#pendingReads.length >= this.cfg.pendingReadsMax) return false;
      this.#pendingReads.push({ from, context });
      return true;
    }
    return this.#startReadRound(from, context);
  }

  #startReadRound(from: NodeId, context: string): boolean {
    if (this.trk.isSingleton()) {
      this.#answerRead(from, context, this.log.committed);
      return true;
    }
    if (!this.#readOnly.addRequest(this.log.committed, from, context)) return false;
    this.#readOnly.recvAck(this.id, context);
    this.#bcastHeartbeat(context);
    return true;
  }

  #answerRead(from: NodeId, context: string, index: Index): void {
    if (from === this.id) this.readStates.push({ index, context });
    else this.#send({ type: 'readIndexResp', to: from, index, context });
  }

  #releasePendingReads(): void {
    if (this.#pendingReads.length === 0) return;
    const reads = this.#pendingReads;
    this.#pendingReads = [];
    for (const r of reads) this.#startReadRound(r.from, r.context);
  }

  /** The host persisted entries up to (index, term): a leader may now count them for itself. */
  onPersisted(index: Index, term: Term): void {
    this.log.stableTo(index, term);
    if (this.state !== 'leader') return;
    const self = this.trk.progress.get(this.id);
    if (self === undefined) return;
    if (self.maybeUpdate(this.log.lastStableIndex())) this.#maybeCommitAndBroadcast();
  }

  /**
   * Advances the commit index from the voters' progress; if it moved, broadcasts it with the next
   * Ready (flushBroadcast), like a proposal. Messages leave only with a Ready anyway, so this costs no
   * latency, and a follower gets one append per Ready instead of an empty append carrying the commit
   * index followed by the append of the entries proposed since: on a busy partition that was every
   * other Raft message, with its acknowledgement (docs/benchmarks.md, "Three nodes, 2026-11-27
   * afternoon").
   */
  #maybeCommitAndBroadcast(): boolean {
    if (!this.log.maybeCommit(this.trk.committed(), this.term)) return false;
    this.#releasePendingReads();
    // A group of one has nobody to tell (and its host may apply such a commit at once).
    if (this.trk.progress.size > 1) this.pendingBroadcast = true;
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // Receiving messages

  step(m: Message): void {
    assertIndex(m.term, 'message term');
    assertIndex(m.index, 'message index');
    assertIndex(m.logTerm, 'message log term');
    assertIndex(m.commit, 'message commit');
    assert(m.to === this.id, `message for ${m.to} delivered to ${this.id}`);
    if (m.from === this.id) return;
    // A term probe is answered in any state and changes nothing here (it does not even wake a
    // quiesced member). The answer carries this member's current term; a member still learning its
    // own floor has none to give.
    // Addressed to a former member of this member's node (`index`: the host answers for it only with
    // a member that replaced it), the answer counts in that member's place, so it needs more: this
    // member holds the configuration entry that added it (it is in the configuration it applied).
    // Before that its term may be below one the former member acknowledged entries in.
    if (m.type === 'termProbe') {
      const unknown = this.#probe !== null || (m.index !== 0 && !this.trk.isMember(this.id));
      this.#send({ type: 'termProbeResp', to: m.from, reject: unknown, index: m.index });
      return;
    }
    if (m.type === 'termProbeResp') {
      this.#handleProbeAnswer(m);
      return;
    }
    // Learning its term floor: it takes nothing and adopts no term (a deposed leader's append would
    // otherwise be acknowledged). Leaders retry; the member answers once it knows its floor.
    if (this.#probe !== null) return;
    // Any message wakes a quiesced member, but the answers to the heartbeats of a leader's own term
    // (among them those to the heartbeats that told its followers it quiesces).
    if (this.quiesced && !(this.state === 'leader' && m.type === 'heartbeatResp' && m.term === this.term)) this.wake(0);

    if (m.term > this.term) {
      if (m.type === 'vote' || m.type === 'preVote') {
        const force = m.context === campaignTransfer;
        const inLease = this.cfg.checkQuorum && this.lead !== noNode && this.electionElapsed < this.cfg.electionTicks;
        // A node that heard from a live leader within the minimum election timeout ignores votes:
        // the leader lease that keeps a removed or partitioned node from deposing a healthy leader.
        if (!force && inLease) return;
      }
      if (m.type === 'preVote') {
        // Answering a pre-vote never changes our term.
      } else if (m.type === 'preVoteResp' && !m.reject) {
        // A granted pre-vote carries the term we asked about; we adopt it only when we win.
      } else if (m.type === 'app' || m.type === 'heartbeat' || m.type === 'snap') {
        this.becomeFollower(m.term, m.from);
      } else {
        this.becomeFollower(m.term, noNode);
      }
    } else if (m.term < this.term) {
      if ((this.cfg.checkQuorum || this.cfg.preVote) && (m.type === 'heartbeat' || m.type === 'app')) {
        // A stale leader (cut off by a partition) that never hears a higher term would keep its
        // term; with Pre-Vote, no one else would ever tell it. Answer so that it steps down.
        this.#send({ type: 'appResp', to: m.from });
      } else if (m.type === 'preVote') {
        // Tell the pre-candidate our term, so that it can catch up instead of waiting forever.
        this.#send({ type: 'preVoteResp', to: m.from, reject: true });
      }
      return;
    }

    if (m.type === 'vote' || m.type === 'preVote') {
      this.#handleVoteRequest(m);
      return;
    }
    switch (this.state) {
      case 'follower':
        this.#stepFollower(m);
        return;
      case 'preCandidate':
      case 'candidate':
        this.#stepCandidate(m);
        return;
      case 'leader':
        this.#stepLeader(m);
        return;
      default:
        unreachable(this.state);
    }
  }

  #handleVoteRequest(m: Message): void {
    if (this.damaged !== null) {
      // Its vote of this term may be lost and its log may lack entries it acknowledged: granting
      // could elect a second leader in a term, or a leader without a committed entry.
      this.#send({ type: m.type === 'vote' ? 'voteResp' : 'preVoteResp', to: m.from, reject: true });
      return;
    }
    const canVote =
      this.vote === m.from ||
      (this.vote === noNode && this.lead === noNode) ||
      (m.type === 'preVote' && m.term > this.term);
    const respType = m.type === 'vote' ? 'voteResp' : 'preVoteResp';
    if (canVote && this.log.isUpToDate(m.index, m.logTerm)) {
      // The answer carries the term asked about (for a pre-vote, a term we have not adopted).
      this.#send({ type: respType, to: m.from, term: m.term });
      if (m.type === 'vote') {
        this.electionElapsed = 0;
        this.vote = m.from;
      }
    } else {
      this.#send({ type: respType, to: m.from, reject: true });
    }
  }

  #stepFollower(m: Message): void {
    switch (m.type) {
      case 'app':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.#handleAppend(m);
        return;
      case 'heartbeat':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.#handleHeartbeat(m);
        return;
      case 'snap':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.#handleSnapshot(m);
        return;
      case 'timeoutNow':
        // Leadership transfer: campaign at once, skipping Pre-Vote and the others' lease.
        this.hup(true);
        return;
      case 'readIndexResp':
        this.readStates.push({ index: m.index, context: m.context });
        return;
      case 'readIndex':
        // Forwarded to us by a node that thinks we lead; we do not. It will time out and retry.
        return;
      default:
        // Stale answers meant for the node we used to be (leader or candidate).
        return;
    }
  }

  #stepCandidate(m: Message): void {
    switch (m.type) {
      case 'app':
      case 'heartbeat':
      case 'snap':
        // A leader exists in our term (for a pre-candidate, in our current term): follow it.
        this.becomeFollower(m.term, m.from);
        this.#stepFollower(m);
        return;
      case 'voteResp':
      case 'preVoteResp': {
        const mine = this.state === 'candidate' ? 'voteResp' : 'preVoteResp';
        if (m.type !== mine) return;
        this.trk.recordVote(m.from, !m.reject);
        const result = this.trk.tallyVotes();
        if (result === 'won') {
          if (this.state === 'preCandidate') this.#campaign('election', false);
          else this.#becomeLeader();
        } else if (result === 'lost') {
          this.becomeFollower(this.term, noNode);
        }
        return;
      }
      default:
        return;
    }
  }

  #stepLeader(m: Message): void {
    if (m.type === 'app' || m.type === 'snap' || m.type === 'heartbeat') {
      assert(false, `leader ${this.id} of term ${this.term} got ${m.type} from ${m.from} in the same term`);
    }
    if (m.type === 'readIndex') {
      if (!this.trk.isMember(m.from)) return;
      this.#leaderReadIndex(m.from, m.context);
      return;
    }
    const pr = this.trk.progress.get(m.from);
    if (pr === undefined) return; // not (or no longer) a member
    switch (m.type) {
      case 'appResp':
        pr.recentActive = true;
        if (m.reject) this.#handleAppendRejected(m, pr);
        else this.#handleAppendAccepted(m, pr);
        return;
      case 'heartbeatResp':
        this.#handleHeartbeatResponse(m, pr);
        return;
      default:
        return;
    }
  }

  #handleAppendRejected(m: Message, pr: Progress): void {
    if (m.context === damagedReject && m.rejectHint < pr.match) {
      // The follower lost entries it had acknowledged: its match is void, probe from what it holds.
      pr.forgetMatch(m.rejectHint);
      this.#sendAppend(m.from, true);
      return;
    }
    // Fast backtracking (thesis §5.3 optimisation, as in etcd): the follower says its log may match
    // at rejectHint with term logTerm. Every entry of ours after the last one whose term is <=
    // logTerm cannot match, so probe from there instead of one index per round trip.
    let nextProbe = m.rejectHint;
    if (m.logTerm > 0) nextProbe = this.log.findConflictByTerm(m.rejectHint, m.logTerm);
    if (pr.maybeDecrTo(m.index, nextProbe)) {
      if (pr.state === 'replicate') pr.becomeProbe();
      this.#sendAppend(m.from, true);
    }
  }

  #handleAppendAccepted(m: Message, pr: Progress): void {
    // Answers arrive in the order the member sent them: the latest says whether it is incomplete.
    pr.incomplete = m.context === incompleteAck;
    pr.ackedSinceHeartbeat = true;
    const oldPaused = pr.isPaused();
    if (pr.maybeUpdate(m.index) || (pr.match === m.index && pr.state === 'probe')) {
      if (pr.state === 'probe') {
        pr.becomeReplicate();
      } else if (pr.state === 'snapshot' && pr.match + 1 >= this.log.firstIndex()) {
        // The follower installed the snapshot (or caught up otherwise): replicate from its match.
        pr.becomeProbe();
        pr.becomeReplicate();
      } else if (pr.state === 'replicate') {
        pr.inflights.freeLE(m.index);
      }
      if (!this.#maybeCommitAndBroadcast()) {
        // A member that was paused (probed) may lack the commit index: it gets an append even if
        // empty. Otherwise only entries it was not sent yet: an empty append here (the answer to an
        // entry while the next one is in flight) only repeated what that entry's answer will say, and
        // was answered too (as etcd does, which sends an empty one only to a member that was paused).
        // Groups with heartbeatWhileReplicating true (the metadata group, whose read leases hear a
        // follower's applied index in its answers) keep the empty append.
        if (oldPaused || (this.cfg.heartbeatWhileReplicating && pr.match < this.log.lastIndex())) this.#sendAppendsFilling(m.from);
        else if (pr.match < this.log.lastIndex()) this.#sendAppendsFilling(m.from, false, false);
      }
      if (m.from === this.leadTransferee && pr.match === this.log.lastIndex()) {
        this.#send({ type: 'timeoutNow', to: m.from });
      }
    }
  }

  #handleHeartbeatResponse(m: Message, pr: Progress): void {
    pr.recentActive = true;
    pr.msgAppFlowPaused = false;
    if (pr.state === 'replicate' && pr.inflights.full()) {
      // The follower is alive but has acknowledged none of a full window for several heartbeat
      // rounds: appends were lost (a transport that drops messages reports nothing). Fall back to
      // probing from its match, which resends what is missing.
      if (++pr.stalledHeartbeats >= stalledHeartbeatsMax) pr.becomeProbe();
    } else {
      pr.stalledHeartbeats = 0;
    }
    // A member last seen incomplete is sent an (empty) append each heartbeat: its answer says whether
    // it still is. The one answer it sends when it becomes complete can be lost, or overtaken by an
    // older answer that still said incomplete; the leader would then hold it incomplete for good (a
    // learner never promoted) in an idle group, which sends no other append.
    if (pr.match < this.log.lastIndex() || pr.state === 'probe' || pr.incomplete) this.#sendAppend(m.from, true);
    if (m.context === '') return;
    const acks = this.#readOnly.recvAck(m.from, m.context);
    if (acks === undefined || !this.trk.hasQuorum(acks)) return;
    for (const rs of this.#readOnly.advance(m.context)) this.#answerRead(rs.from, rs.context, rs.index);
  }

  #handleAppend(m: Message): void {
    if (m.index < this.log.committed) {
      // Everything up to our commit index matches the leader already.
      this.#send({ type: 'appResp', to: m.from, index: this.log.committed, context: this.#ackContext() });
      return;
    }
    for (let k = 0; k < m.entries.length; k++) {
      const e = m.entries[k]!;
      assert(e.index === m.index + 1 + k, `append entries from ${m.from} are not contiguous`);
      assert(e.term <= m.term, `entry term ${e.term} above the leader's term ${m.term}`);
    }
    const lastNew = this.log.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
    if (lastNew !== undefined) {
      if (this.damaged !== null) this.#maybeRepaired(m, lastNew);
      // The leader holds this member's log as matching up to m.index already; an answer would only
      // repeat that. A damaged or incomplete member answers anyway: what it says is news to the leader.
      if (m.context === commitOnlyAppend && m.entries.length === 0 && this.damaged === null && !this.incomplete) return;
      this.#send({ type: 'appResp', to: m.from, index: lastNew, context: this.#ackContext() });
      return;
    }
    // Reject with a hint: the largest index <= m.index whose term is <= m.logTerm. The leader can
    // skip everything after it.
    let hintIndex = Math.min(m.index, this.log.lastIndex());
    hintIndex = this.log.findConflictByTerm(hintIndex, m.logTerm);
    const hintTerm = this.log.term(hintIndex) ?? 0;
    const context = this.damaged === null ? '' : damagedReject;
    this.#send({ type: 'appResp', to: m.from, index: m.index, reject: true, rejectHint: hintIndex, logTerm: hintTerm, context });
  }

  /**
   * A damaged member is repaired once its log matches the leader's (term m.term) up to lastNew and
   * that covers: the damage (index, term), every entry the leader knows committed (m.commit), and an
   * entry of the leader's own term, which (leader completeness) follows every entry committed in an
   * earlier term. Its log then holds everything committed, as a healthy follower's does. The entries
   * are in this Ready or an earlier one, so they are durable no later than the `repaired` mark.
   */
  #maybeRepaired(m: Message, lastNew: Index): void {
    const d = this.damaged!;
    if (m.term < d.term || lastNew < d.index || lastNew < m.commit) return;
    if (this.log.term(lastNew) !== m.term) return;
    this.damaged = null;
    this.repaired = true;
    // Whatever it voted for in this term before the damage is unknown; the leader of the term is the
    // one vote that cannot elect anybody else, so it stands for it.
    if (this.vote === noNode) this.vote = m.from;
  }

  /**
   * The operator accepts the loss (docs/replication.md, "Accepting the loss of a sole replica"): this
   * damaged member is the only voter of its group and nobody can repair it, so what it holds becomes
   * the group's log and whatever it lacks is gone. It stops being damaged (the host removes the mark
   * in the write of the next Ready, with the hard state) and moves to a term at or above `floor` (the
   * highest term its node may have used: the term ceiling) and its damage term, with no vote; the
   * caller then campaigns, so it leads at a term above every term it could have known. Refused
   * (returns why) when it is not damaged, still learning a term floor, or not the sole voter: a group
   * with another member is repaired by it, never told to forget.
   */
  acceptLoss(floor: Term): string | undefined {
    assertIndex(floor, 'acceptLoss floor');
    const d = this.damaged;
    if (d === null) return 'this member is not damaged';
    if (this.#probe !== null) return 'this member is still learning its term floor';
    if (this.trk.voters.length !== 1 || this.trk.voters[0] !== this.id || this.trk.learners.length > 0) {
      return `this member is not the only member of its group (voters ${this.trk.voters.join(', ')}; learners ${this.trk.learners.join(', ') || 'none'}): another member can repair it`;
    }
    this.damaged = null;
    this.repaired = true;
    const term = Math.max(this.term, floor, d.term);
    this.becomeFollower(term, noNode);
    return undefined;
  }

  /**
   * The operator accepts the loss of a group whose every member is damaged (docs/replication.md,
   * "Accepting the loss of a partition whose every replica is damaged"): nobody can repair anybody, so
   * this member's log becomes the group's and it becomes the group's only voter, the other members its
   * learners, which it then brings up to its log (their divergent tails are overwritten by the entries
   * of its higher term). As acceptLoss, it stops being damaged (the Ready says `repaired`) and moves to
   * a term above `floor` (the caller gives the highest term, damage term and term ceiling any member's
   * node reported, its own included) and its damage term, with no vote. The configuration changes (this member made a
   * voter if it was a learner, every other voter made a learner) are appended at that term and
   * committed by this member alone, as etcd's --force-new-cluster does: the hard state of the same
   * Ready carries their commit, so a restart after it finds the new configuration. It campaigns once
   * the host has applied them (its next election timeout: a member with a committed change it has not
   * applied does not campaign). Refused (returns why) when it is not damaged, still learning a term
   * floor, not a member, installing a snapshot, or a committed change is not applied yet.
   */
  acceptLossAsOnlyVoter(floor: Term, o: { healthy?: boolean } = {}): { refused: string } | { changes: ConfChange[] } {
    assertIndex(floor, 'acceptLossAsOnlyVoter floor');
    const d = this.damaged;
    // A healthy member only when the caller says so: a group whose healthy members are too few to
    // elect a leader is stuck like one whose every member is damaged (group-loss-choice.ts).
    if (d === null && o.healthy !== true) return { refused: 'this member is not damaged' };
    if (this.#probe !== null) return { refused: 'this member is still learning its term floor' };
    const conf = this.trk.confState();
    if (!conf.voters.includes(this.id) && !conf.learners.includes(this.id)) return { refused: 'this member is not in its group\'s configuration' };
    if (this.log.unstable.snapshot !== undefined) return { refused: 'this member is installing a snapshot' };
    if (this.#hasUnappliedConfChanges()) return { refused: 'a committed membership change is not applied yet; try again' };
    const changes: ConfChange[] = [];
    // A voter first, so the configuration never lacks one while the entries are applied one by one.
    if (!conf.voters.includes(this.id)) changes.push({ type: 'addVoter', nodeId: this.id });
    for (const v of conf.voters) if (v !== this.id) changes.push({ type: 'addLearner', nodeId: v });
    if (d !== null) {
      this.damaged = null;
      this.repaired = true;
    }
    // Strictly above every term any member may have written entries at: another member may hold an
    // entry of term `floor` at the index of a change, and two entries of one index and term are taken
    // for the same entry (Raft's log matching), so that member would keep its own in place of it.
    this.becomeFollower(Math.max(this.term, floor, d?.term ?? 0) + 1, noNode);
    if (changes.length > 0) {
      const first = this.log.lastIndex() + 1;
      this.log.append(changes.map((cc, k) => ({ type: 'confChange' as const, term: this.term, index: first + k, data: encodeConfChange(cc) })));
      this.log.commitTo(this.log.lastIndex());
    }
    return { changes };
  }

  #handleHeartbeat(m: Message): void {
    // A leader never names a commit index beyond what this member acknowledged (min of its match and
    // the commit). One beyond our log means entries acknowledged before were lost: the member is
    // damaged (found now if the host did not find it at start), not a reason to stop the node.
    if (m.commit > this.log.lastIndex() && this.damaged === null) {
      this.damaged = { term: this.term, index: m.commit };
      this.newlyDamaged = this.damaged;
    }
    if (this.damaged !== null && m.commit > this.log.committed) {
      // The leader's match for a damaged member may be from before the loss, and what it holds after
      // its commit index may be older versions of the entries it acknowledged (a lost write-ahead-log
      // tail brings back what those writes replaced): take no commit index from a heartbeat, only
      // from appends, which show what matches. The leader sends no append to a member it counts as
      // up to date: tell it that its match for us is void (it forgets it, types.ts damagedReject), or
      // the member would never be repaired.
      const last = this.log.committed;
      this.#send({ type: 'appResp', to: m.from, index: m.commit, reject: true, rejectHint: last, logTerm: this.log.term(last) ?? 0, context: damagedReject });
      this.#send({ type: 'heartbeatResp', to: m.from, context: m.context });
      return;
    }
    this.log.commitTo(m.commit);
    this.#send({ type: 'heartbeatResp', to: m.from, context: m.context });
    // The leader quiesces: so does this member if it holds and has committed the whole log (else it
    // goes on ticking: it will hear from the leader again, or time out and wake it with a pre-vote).
    if (m.context === quiesceContext && this.state === 'follower' && this.lead === m.from && this.log.committed === this.log.lastIndex()) this.quiesced = true;
  }

  #handleSnapshot(m: Message): void {
    const s = m.snapshot;
    assert(s !== undefined, `snap message from ${m.from} carries no snapshot`);
    if (this.#restore(s)) {
      this.#send({ type: 'appResp', to: m.from, index: this.log.lastIndex(), context: this.#ackContext() });
    } else {
      this.#send({ type: 'appResp', to: m.from, index: this.log.committed, context: this.#ackContext() });
    }
  }

  #restore(s: Snapshot): boolean {
    const { index, term, confState } = s.metadata;
    if (index <= this.log.committed) return false;
    assert(this.state === 'follower', `restoring a snapshot as ${this.state}`);
    // The snapshot's configuration may not include us yet: a node added after the snapshot was
    // taken learns of its own membership from the entries that follow it. (etcd refuses such
    // snapshots, which strands a learner added after the latest snapshot until the next one.)
    if (this.log.matchTerm(index, term)) {
      // We already hold the snapshot's last entry, hence (Log Matching) all before it: fast-forward.
      this.log.commitTo(index);
      return false;
    }
    this.log.restore(s);
    this.trk.applyConf(confState, this.log.lastIndex());
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // Quiescence

  /**
   * Quiesces this leader if nothing is under way: no proposal, transfer or read in flight, its own
   * log durable and committed, and every member (learners too) holding all of it, replicating, and
   * not seen incomplete;
   * then tells every member so with a heartbeat (quiesceContext) that names the commit index. Returns
   * whether it is quiesced. It stops ticking and heartbeating until a message or a request wakes it.
   */
  quiesce(): boolean {
    if (this.quiesced) return true;
    if (this.state !== 'leader' || this.damaged !== null) return false;
    if (this.leadTransferee !== noNode || this.pendingBroadcast || this.#pendingReads.length > 0 || this.#readOnly.lastPendingContext() !== undefined) return false;
    const last = this.log.lastIndex();
    if (this.log.committed !== last || this.log.lastStableIndex() !== last) return false;
    for (const [id, pr] of this.trk.progress) {
      // A member seen incomplete keeps the group awake: its heartbeats ask it again (above).
      if (id !== this.id && (pr.match !== last || pr.state !== 'replicate' || pr.incomplete)) return false;
    }
    this.quiesced = true;
    this.#bcastHeartbeat(quiesceContext);
    return true;
  }

  /**
   * Wakes a quiesced member. `electionElapsed` is how many ticks ago its leader was last heard from
   * (the host knows it from the leader's node): a follower woken because that node went silent
   * campaigns (and grants votes, its leader lease being over) as soon as a follower that had kept
   * ticking would have. A leader starts a fresh CheckQuorum period.
   */
  /**
   * The host says whether this member is incomplete (types.ts incompleteAck). A follower tells its
   * leader at once with an answer that acknowledges its commit index (its log matches the leader's up
   * to there), so the leader's view does not wait for the next append (an idle or quiesced group
   * sends none).
   */
  setIncomplete(incomplete: boolean): void {
    if (this.incomplete === incomplete) return;
    this.incomplete = incomplete;
    if (this.state === 'follower' && this.lead !== noNode) this.#send({ type: 'appResp', to: this.lead, index: this.log.committed, context: this.#ackContext() });
  }

  #ackContext(): string {
    return this.incomplete ? incompleteAck : '';
  }

  wake(electionElapsed: number): void {
    if (!this.quiesced) return;
    this.quiesced = false;
    if (this.state === 'leader') {
      this.electionElapsed = 0;
      this.heartbeatElapsed = 0;
      for (const [id, pr] of this.trk.progress) pr.recentActive = id === this.id;
    } else {
      this.electionElapsed = Math.max(this.electionElapsed, electionElapsed);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Host feedback

  /** The transport could not reach `id`: probe it again instead of streaming into the void. */
  reportUnreachable(id: NodeId): void {
    // A quiesced leader sends nothing: no reason to probe (nor to wake for it).
    if (this.state !== 'leader' || this.quiesced) return;
    const pr = this.trk.progress.get(id);
    if (pr !== undefined && pr.state === 'replicate') pr.becomeProbe();
  }

  /** The transport reports whether the snapshot it was asked to send to `id` was delivered. */
  reportSnapshot(id: NodeId, delivered: boolean): void {
    if (this.state !== 'leader') return;
    const pr = this.trk.progress.get(id);
    if (pr === undefined || pr.state !== 'snapshot') return;
    if (!delivered) pr.pendingSnapshot = 0;
    // Either way wait for the follower's answer in probe state (etcd does the same).
    pr.becomeProbe();
    pr.msgAppFlowPaused = true;
  }
}
