/**
 * The node's Raft host: one Ready loop, one timer and one write path for every Raft group this node
 * is a member of (docs/replication.md, "One host for many groups").
 *
 * Each turn of the loop takes one Ready from every group that has work (at most `groupsPerTurnMax`,
 * so one busy group cannot starve the others), and then, following the Ready contract of
 * src/raft/rawnode.ts for all of them at once:
 *
 *   1. writes every group's entries, hard state and snapshot, and the rows the state machines asked
 *      for since the last turn, in ONE atomic KV write, fsynced if any group needs it: one fsync per
 *      node per turn, whatever the number of groups (the window is the time the previous write took);
 *   2. sends the messages a leader sends (appends, heartbeats, snapshots) while that write is in
 *      flight, because they do not depend on the leader's own disk (Raft thesis §10.2.1): a leader
 *      counts its own copy toward commitment only after advance() reports it durable, exactly like a
 *      follower's acknowledgement; every other message (votes, acknowledgements) waits for the write,
 *      and leaves with the next turn's sends of this step (one transport call: a node that leads some
 *      groups and follows others sent each peer two messages per turn), or at the loop's end;
 *   3. applies committed entries: those already durable here before this turn at once, the rest after
 *      the write; installs snapshots;
 *   4. advances every group, and goes round again while any has work. A group whose next Ready then
 *      holds only committed entries (a group of one commits what its own write made durable) is applied
 *      at once, in this turn (#applyCommitted).
 *
 * Deferred: a turn that would write nothing but the state machines' rows (offset index rows,
 * applied index) writes nothing: they go into the next write (the next turn that writes entries, a
 * term or vote, a snapshot; a flushRows(); at the latest the next tick), in call order before that
 * turn's own records. A hard state that only moves the commit index is not written at all (except
 * the metadata group's, written as such a deferred row: raft-log-store.ts, keepsCommit)
 * (raft-log-store.ts: a commit index is learnt again from the leader, and a group of one recommits its
 * own log at open); rows need not be durable before anything is answered (they are rebuilt by
 * applying the log again from the stored applied index, with which they are written atomically). Writing them at once put a second write on every publish's path: after each
 * write of entries came a turn that wrote only the commit index and the rows of those entries, and
 * the batches that arrived meanwhile waited for it before their own turn could start.
 *
 * A write the KV refused without applying anything (a full disk) is retried with backoff: every group
 * stands still meanwhile (proposals time out with a retriable error) and goes on once space is freed.
 * A proposal is told the write was not applied only if its entry is stored nowhere: one that is
 * durable here or was sent to followers may still commit, and its outcome is unknown.
 * Any other failure (a failed fsync, a broken invariant) is fatal for the node.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../core/ports.js';
import { KvWriteError, type KvBatch, type OrderedKv } from '../../log/index.js';
import { noNode } from '../../raft/index.js';
import type { Entry, Message, MessageType, NodeId, Ready } from '../../raft/index.js';
import type { NodeDisk } from '../node-disk.js';
import type { RaftGroup } from './raft-group.js';
import { GroupIdSet, GroupTimes } from './group-slots.js';
import { termJumpMax } from '../../transport/limits.js';
import { nodeOfMember } from '../../core/member-id.js';

/** One group's messages of a turn. */
export interface GroupMessages {
  readonly group: number;
  readonly messages: readonly Message[];
}

/** How the host reaches peers (the gRPC transport, which writes once per peer per call; the simulator's network). */
export interface GroupTransport {
  send(groups: readonly GroupMessages[]): void;
  /**
   * Tells every peer that sent nothing to for `quietMs` that this node is alive: the node-level
   * heartbeat by which the peers' hosts see this node live while its groups are quiesced.
   */
  ping?(quietMs: number): void;
}

/** A repeating timer (setInterval in production, virtual time in the simulator). */
export interface TickSource {
  every(ms: number, fn: () => void): () => void;
}

export const systemTicks: TickSource = {
  every(ms, fn) {
    const t = setInterval(fn, ms);
    return () => clearInterval(t);
  },
};

/**
 * How the host defers its loop and waits (the event loop in production). The simulator passes its
 * own, so that every turn and every wait is an event of its seeded queue and a seed replays exactly.
 */
export interface HostScheduler {
  /** Runs `fn` in a later turn of the event loop. */
  soon(fn: () => void): void;
  sleep(ms: number): Promise<void>;
}

export const systemScheduler: HostScheduler = {
  soon: (fn) => void setImmediate(fn),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/**
 * The phases of the commit path the host times (for metrics; docs/benchmarks.md reads them):
 * - wait: a group had work (a proposal, a message, a tick) until a turn took its Ready: the turn
 *   under way when the work came, and the turns ahead of it;
 * - write: one turn's KV write, fsync included when the turn needs one;
 * - followerAck: a follower received entries until it sent the acknowledgement (its wait, its write);
 * - ackApply: a leader received an acknowledgement until it applied the entries it committed (the
 *   wait for the turn that applies what the acknowledgement committed).
 */
export type HostPhase = 'wait' | 'write' | 'followerAck' | 'ackApply';

export interface NodeHostOptions {
  readonly self: NodeId;
  readonly kv: OrderedKv;
  readonly tickMs: number;
  readonly clock: Clock;
  readonly ticks: TickSource;
  readonly logger: Logger;
  /** Groups whose Ready is handled in one turn. */
  readonly groupsPerTurnMax?: number;
  /** The node's disk: numbers each turn's write once for the lost-tail check (node-disk.ts). */
  readonly disk?: NodeDisk;
  /**
   * Idle groups quiesce (no ticks, no heartbeats) unless this is false. A quiesced follower is woken
   * when its leader's node has not been heard from (a message or a ping) for `livenessMs`; a quiesced
   * leader when fewer than a majority of its voters' nodes have been.
   */
  readonly quiescence?: boolean;
  /** Defaults to ten tick periods (an election timeout with the default ticks). */
  readonly livenessMs?: number;
  /** Defaults to the event loop (systemScheduler). */
  readonly scheduler?: HostScheduler;
  /** The disk failed or an invariant broke: the node must stop. */
  readonly onFatal: (err: unknown) => void;
  /**
   * Told of every message addressed to another member id on this node than the group's own (before it
   * is dropped or answered for): a peer that addresses a member the node does not run knows of another
   * directory of this node, which may be a later one (superseded-directory.ts).
   */
  readonly onOtherMember?: (group: number, to: number) => void;
  /** Told how long each phase of the commit path took (metrics). */
  readonly onPhase?: (phase: HostPhase, durationMs: number) => void;
}

/** Message types only a leader sends; none promises anything about the leader's own disk. */
const leaderMessages: ReadonlySet<MessageType> = new Set<MessageType>(['app', 'heartbeat', 'snap', 'timeoutNow', 'readIndexResp']);
/** How long after a refused write new proposals fail at once, before one probes the disk again. */
const refusedRetryMs = 200;
const catchUpTicksMax = 3;

interface Turn {
  readonly group: RaftGroup<unknown>;
  readonly rd: Ready;
  /**
   * The group's last index durable before this turn and not rewritten by it (0 when the Ready installs
   * a snapshot): committed entries up to it may be applied before the turn's write completes.
   */
  readonly durableLast: number;
  /** When the first acknowledgement this Ready answers arrived (for onPhase 'ackApply'). */
  readonly ackAt: number | undefined;
  /** Committed entries applied before the write resolved. */
  early: number;
}

export class RaftNodeHost {
  readonly #o: NodeHostOptions;
  readonly #groups = new Map<number, RaftGroup<unknown>>();
  /** Groups with work for the next turn (a Set<number> in effect; group-slots.ts says why not one). */
  readonly #dirty = new GroupIdSet();
  /** Groups whose Readies wait (a follower fetching the log it lacks before it takes a snapshot). */
  readonly #paused = new Set<number>();
  #rows: ((b: KvBatch) => void)[] = [];
  /**
   * What a turn sends after its write (acknowledgements, votes), held until the next turn's sends
   * before its write, which go in the same transport call: one message per peer instead of two. The
   * next turn starts in the same run of the event loop (a microtask after this one's end), so nothing
   * waits longer than the applying in between; when no turn follows, the loop's end sends it.
   */
  #held: GroupMessages[] = [];
  #flushed: (() => void)[] = [];
  #transport: GroupTransport | undefined;
  #looping = false;
  #loopDone: Promise<void> = Promise.resolve();
  /** Resolves when the turn under way (if any) has finished: a busy loop may go on for long after it. */
  #turnDone: Promise<void> = Promise.resolve();
  #stopTicks: (() => void) | undefined;
  #tickOriginMs = 0;
  #ticks = 0;
  #closed = false;
  /** Set while the KV refuses the node's writes (a full disk): the reason, for those who must fail. */
  #refusal: KvWriteError | undefined;
  #refusedAtMs = 0;
  /** When each peer's node was last heard from (a message of any group, or a ping), monotonic ms. */
  readonly #heardMs = new Map<NodeId, number>();
  /** Each peer's process incarnation as its batches last said it: a new one means the peer restarted. */
  readonly #incarnations = new Map<NodeId, string>();
  /** Snapshots from peers that failed their state machine's check (dropped before the core saw them). */
  #droppedSnapshots = 0;
  /** Messages whose term was more than termJumpMax ahead of their group's. */
  #droppedTerms = 0;
  /** Turns and writes, for observation (and tests of "one write per turn"). */
  readonly stats = { turns: 0, writes: 0, durableWrites: 0, readies: 0, quiesced: 0, woken: 0, peerRestarts: 0, deferred: 0, appliedAtOnce: 0, ceilingRaises: 0, messagesSent: 0, messagesReceived: 0, sends: 0, stampedMessagesSent: 0, batchesSent: 0, batchesReceived: 0, commitsInWrite: 0, commitInWriteMicros: 0 };
  /**
   * Raft messages sent and received, per type (brook_raft_messages_total): which kinds a request
   * costs. The batches (batchesSent, batchesReceived) are what the transport pays for per peer: one
   * stream message each, whatever the number of Raft messages in it.
   */
  readonly messageTypes = { sent: new Map<MessageType, number>(), received: new Map<MessageType, number>() };
  /** Per group, since when it has had work no turn has taken (monotonic ms; for onPhase 'wait'). */
  readonly #workSince = new GroupTimes();
  /** Per group, since when entries received as a follower wait for their acknowledgement. */
  readonly #entriesSince = new GroupTimes();
  /** Per group, since when an acknowledgement received as a leader waits for an apply. */
  readonly #ackSince = new GroupTimes();
  /** Whether a turn's write is in flight (the next turn waits for it). */
  #writing = false;
  /**
   * Per group led here, since when a commit an acknowledgement made during a turn's write waits for
   * that write (stats commitsInWrite, commitInWriteMicros): the leader's own write on the commit path.
   */
  readonly #commitInWriteSince = new Map<number, number>();

  constructor(o: NodeHostOptions) {
    this.#o = o;
  }

  start(transport: GroupTransport | undefined): void {
    this.#transport = transport;
    this.#tickOriginMs = this.#o.clock.monotonicMs();
    this.#stopTicks = this.#o.ticks.every(this.#o.tickMs, () => this.#onTick());
  }

  setTransport(t: GroupTransport | undefined): void {
    this.#transport = t;
  }

  add(g: RaftGroup<unknown>): void {
    if (this.#groups.has(g.id)) throw new Error(`group ${g.id} is already hosted`);
    this.#groups.set(g.id, g);
    g.onWork = () => this.kick(g.id);
    this.kick(g.id);
  }

  /** Stops hosting a group (its proposals fail); waits for a turn that may be handling it. */
  async remove(id: number): Promise<void> {
    const g = this.#groups.get(id);
    if (g === undefined) return;
    this.#groups.delete(id);
    this.#dirty.forget(id);
    this.#paused.delete(id);
    for (const m of [this.#workSince, this.#entriesSince, this.#ackSince]) m.forget(id);
    g.close();
    await this.#turnDone;
  }

  /**
   * The KV's reason while it refuses writes: a new proposal fails with it at once instead of waiting
   * for its deadline. After `refusedRetryMs` one is let through again to find out whether space came
   * back (its write is the probe).
   */
  get refusal(): KvWriteError | undefined {
    if (this.#refusal !== undefined && this.#o.clock.monotonicMs() - this.#refusedAtMs >= refusedRetryMs) return undefined;
    return this.#refusal;
  }

  group(id: number): RaftGroup<unknown> | undefined {
    return this.#groups.get(id);
  }

  groups(): IterableIterator<RaftGroup<unknown>> {
    return this.#groups.values();
  }

  /**
   * Stops handling a group's Readies (and ticking it) until resume(); resolves once a turn that may
   * be handling it has finished. Messages still step into it and show in its next Ready.
   */
  async pause(id: number): Promise<void> {
    this.#paused.add(id);
    await this.#turnDone;
  }

  resume(id: number): void {
    this.#paused.delete(id);
    this.kick(id);
  }

  /** A group may have work (a proposal, a received message): handle it in the next turn. */
  kick(id: number): void {
    this.#markWork(id);
    this.#dirty.add(id);
    this.#schedule();
  }

  /**
   * Rows a state machine wants written (not fsynced) with the next write, e.g. an offset index: the
   * next turn that writes anyway (entries, a term or vote, a snapshot), a flushRows(), or at the latest
   * the next tick. They do not start a write of their own (see "Deferred" in the header).
   */
  writeRows(fill: (b: KvBatch) => void): void {
    this.#rows.push(fill);
  }

  /** Resolves once every row asked for before the call is written (not fsynced). */
  flushRows(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.#flushed.push(resolve);
      this.#schedule();
    });
  }

  /**
   * A batch or a message came from `peer`: its node is alive. `incarnation` (a fresh id per process
   * start, when the transport carries one) tells a restarted peer from its former self.
   */
  heard(peer: NodeId, incarnation?: string): void {
    this.#heardMs.set(peer, this.#o.clock.monotonicMs());
    // Only a batch's arrival says its incarnation (a message's, receive(), says none).
    if (incarnation !== undefined) this.stats.batchesReceived++;
    if (incarnation === undefined || incarnation === '') return;
    const before = this.#incarnations.get(peer);
    this.#incarnations.set(peer, incarnation);
    if (before !== undefined && before !== incarnation) this.#peerRestarted(peer);
  }

  /**
   * A process start leads nothing: every group here that still takes `peer` for its leader learned
   * that from the peer's former self. A quiesced one would wait for its leader's node to go silent,
   * which the restarted node's pings never let happen; if the restarted member cannot campaign (its
   * log was found damaged) nobody would ever elect (host simulation seeds 1245, 1286, 1658). Such a
   * group wakes as if its leader had not been heard from for an election timeout: it no longer
   * refuses (pre-)votes for a live leader, and campaigns within its randomized timeout (so the
   * members woken together do not all campaign at the same tick); a group whose leader really is the
   * restarted node again hears from it in a newer term and follows it.
   *
   * And every group this node leads with the peer as a member probes it again: the leader's progress
   * for it is its former self's, and the new process may hold less (a wiped data directory, a lost
   * write-ahead log tail: it comes back empty or damaged and may not campaign). A quiesced leader sent
   * it nothing, and a damaged member cannot campaign to wake it, so such a replica stayed unrepaired
   * (empty, yet in sync by its stale progress) until a write or a leadership change woke its group.
   * In probe state the leader does not quiesce again until the member has answered.
   */
  #peerRestarted(peer: NodeId): void {
    this.stats.peerRestarts++;
    let woken = 0;
    let probed = 0;
    for (const g of this.#groups.values()) {
      if (g.raw.isLeader()) {
        const members = g.membersOn(peer);
        if (members.length === 0) continue;
        if (g.raw.quiesced) this.#wake(g);
        for (const m of members) g.raw.reportUnreachable(m);
        this.kick(g.id);
        probed++;
        continue;
      }
      if (g.leader === noNode || nodeOfMember(g.leader) !== peer || !g.raw.quiesced) continue;
      this.stats.woken++;
      g.raw.wake(g.electionTicks);
      woken++;
    }
    this.#o.logger.info({ peer, woken, probed }, 'a peer node restarted: the quiesced groups it led wake to elect, the groups led here probe it again');
  }

  receive(group: number, sent: Message): boolean {
    let m = sent;
    if (this.#closed) return true;
    this.stats.messagesReceived++;
    this.messageTypes.received.set(m.type, (this.messageTypes.received.get(m.type) ?? 0) + 1);
    this.heard(nodeOfMember(m.from));
    const g = this.#groups.get(group);
    if (g === undefined) return false;
    // Addressed to another member on this node: a former member of the group whose data directory
    // this one replaced (core/member-id.ts). It is not ours to answer: dropped, as Raft takes a lost
    // message. But for a term probe: a member that lost its state asks the cluster's nodes under the
    // ids it knows, and one that nobody answers for could keep it waiting for good. The member that
    // replaced it answers in its place, marked so (`index`), and only once it holds the configuration
    // entry that added it (src/raft, Raft.step; docs/metadata-raft.md, "A wiped directory is a new member").
    if (m.to !== g.self) {
      this.#o.onOtherMember?.(group, m.to);
      if (m.type !== 'termProbe' || m.index !== 0 || !g.answersProbeFor(m.to)) return true;
      m = { ...m, to: g.self, index: m.to };
    }
    // A term far ahead of the group's is a buggy peer's: taken, it could leave no term to elect with.
    if (m.term > g.term + termJumpMax) {
      this.#droppedTerms++;
      if (this.#droppedTerms <= 10 || this.#droppedTerms % 100 === 0) {
        this.#o.logger.warn({ group, from: m.from, type: m.type, term: m.term, ownTerm: g.term, dropped: this.#droppedTerms }, 'dropped a message whose term is implausibly far ahead');
      }
      return true;
    }
    if (m.type === 'snap' && m.snapshot !== undefined) {
      const problem = g.snapshotProblem(m.snapshot);
      if (problem !== undefined) {
        this.#droppedSnapshots++;
        if (this.#droppedSnapshots <= 10 || this.#droppedSnapshots % 100 === 0) {
          this.#o.logger.warn({ group, from: m.from, term: m.term, index: m.snapshot.metadata.index, problem, dropped: this.#droppedSnapshots }, 'dropped a malformed snapshot from a peer');
        }
        return true;
      }
    }
    if (this.#o.onPhase !== undefined) {
      const now = this.#o.clock.monotonicMs();
      if (m.type === 'app' && m.entries.length > 0 && !this.#entriesSince.has(group)) this.#entriesSince.set(group, now);
      else if (m.type === 'appResp' && !m.reject && !this.#ackSince.has(group)) this.#ackSince.set(group, now);
    }
    try {
      // A message wakes a quiesced follower (the core does that itself), which must count how long
      // ago its leader was heard from; a leader decides itself (an answer to its heartbeat does not wake it).
      // A term probe (or its answer) changes nothing on the member it reaches, not its quiescence either.
      if (g.raw.quiesced && !g.raw.isLeader() && m.type !== 'termProbe' && m.type !== 'termProbeResp') this.#wake(g);
      const commitBefore = this.#writing && m.type === 'appResp' ? g.raw.commitIndex : -1;
      g.step(m);
      if (commitBefore >= 0 && g.raw.commitIndex > commitBefore && !this.#commitInWriteSince.has(group)) {
        this.stats.commitsInWrite++;
        this.#commitInWriteSince.set(group, this.#o.clock.monotonicMs());
      }
    } catch (err) {
      this.#fatal(err);
      return true;
    }
    this.kick(group);
    return true;
  }

  /** The transport cannot reach node `peer`: every member there is probed again. */
  unreachable(peer: NodeId): void {
    for (const g of this.#groups.values()) for (const m of g.membersOn(peer)) g.raw.reportUnreachable(m);
  }

  /** Whether the snapshot of `group` sent to node `peer` was delivered (to whichever member is there). */
  snapshotStatus(group: number, peer: NodeId, delivered: boolean): void {
    const g = this.#groups.get(group);
    if (g === undefined) return;
    for (const m of g.membersOn(peer)) g.raw.reportSnapshot(m, delivered);
    this.kick(group);
  }

  // ------------------------------------------------------------------ the loop

  #schedule(): void {
    if (this.#looping || this.#closed) return;
    this.#looping = true;
    this.#loopDone = new Promise<void>((done) => {
      (this.#o.scheduler ?? systemScheduler).soon(() => {
        this.#loop().then(done, (err: unknown) => {
          this.#fatal(err);
          done();
        });
      });
    });
  }

  async #loop(): Promise<void> {
    try {
      while (!this.#closed && (this.#hasWork() || this.#flushed.length > 0)) {
        const turn = this.#turn();
        this.#turnDone = turn.then(
          () => undefined,
          () => undefined,
        );
        await turn;
      }
    } finally {
      // The last turn's answers leave now (held for a next turn that did not come).
      this.#sendHeld();
      this.#looping = false;
    }
  }

  /** Sends what the last turn held back (#held), alone. */
  #sendHeld(): void {
    if (this.#held.length === 0) return;
    const held = this.#held;
    this.#held = [];
    this.#send(held);
  }

  #hasWork(): boolean {
    if (this.#paused.size === 0) return this.#dirty.size > 0;
    for (const id of this.#dirty) if (!this.#paused.has(id)) return true;
    return false;
  }

  async #turn(): Promise<void> {
    this.stats.turns++;
    const max = this.#o.groupsPerTurnMax ?? 256;
    const turns: Turn[] = [];
    for (const id of this.#dirty) {
      if (turns.length >= max) break;
      if (this.#paused.has(id)) continue;
      const g = this.#groups.get(id);
      // What the group gathered since the last turn goes in now (before it leaves the dirty set, so
      // the proposal's kick does not add it back).
      g?.beforeReady?.();
      this.#dirty.delete(id);
      this.#phaseSince(this.#workSince, id, 'wait');
      // The acknowledgements received since the group's last turn: if they committed anything, it is
      // in this Ready; if there is none or it commits nothing, no commit waited for them.
      const ackAt = this.#ackSince.get(id);
      this.#ackSince.delete(id);
      if (g === undefined) {
        // Kicked for a group not hosted (any more): nothing keeps its records.
        this.#dirty.forget(id);
        for (const m of [this.#workSince, this.#entriesSince, this.#ackSince]) m.forget(id);
        continue;
      }
      if (!g.raw.hasReady()) continue;
      const stored = g.store.storage.lastIndex();
      const rd = g.raw.ready();
      g.observe(rd);
      // Entries this Ready writes replace what is stored from their first index on (a follower taking
      // a new leader's entries): only those before it are durable here as they are.
      const firstNew = rd.entries[0]?.index;
      const durableLast = firstNew === undefined ? stored : Math.min(stored, firstNew - 1);
      turns.push({ group: g, rd, durableLast: rd.snapshot === undefined ? durableLast : 0, ackAt, early: 0 });
    }
    this.stats.readies += turns.length;
    const flushed = this.#flushed;
    this.#flushed = [];
    const mustSync = turns.some((t) => t.rd.mustSync);
    // Deferred (see the header): a turn that would write only rows waits for the next write instead
    // of writing now. A hard state that only moves the commit index is not written at all (raft-log-
    // store.ts), so such a turn has nothing of its own to write.
    const defer = !mustSync && flushed.length === 0 && turns.every((t) => t.rd.snapshot === undefined && t.rd.entries.length === 0 && !t.rd.repaired && t.rd.damaged === undefined && t.rd.termFloor === undefined && !t.group.store.writesHardState(t.rd.hardState));
    let rows: ((b: KvBatch) => void)[] = [];
    if (defer) {
      // A store that keeps its commit index (the metadata group's: raft-log-store.ts) writes it with
      // the next write, in call order before that write's own records.
      for (const t of turns) if (t.rd.hardState !== undefined && t.group.store.keepsCommit) this.#rows.push((b) => t.group.store.fill(b, t.rd));
      this.stats.deferred++;
    } else {
      rows = this.#rows;
      this.#rows = [];
    }
    // A Ready that only repairs or marks damage writes too: the mark is what a restart goes by.
    const needsWrite = !defer && (rows.length > 0 || turns.some((t) => t.rd.snapshot !== undefined || t.rd.entries.length > 0 || t.group.store.writesHardState(t.rd.hardState) || t.rd.repaired || t.rd.damaged !== undefined || t.rd.termFloor !== undefined));
    // 1. One write for every group (started here, awaited below).
    const written = needsWrite ? this.#write(turns, rows, mustSync) : Promise.resolve(true);
    // 1b. No message leaves with a term above the node's durable term ceiling (node-disk.ts): a lost
    // tail could take the term with it, and the damaged member would start below it. Terms rise at
    // elections only, so this costs a marker write per election, not per turn; until it is durable
    // nothing of the turn is sent, not even what a leader sends early.
    let termUsed = 0;
    // The group's term as this turn's Ready left it (RaftGroup.observe took any new hard state).
    for (const t of turns) termUsed = Math.max(termUsed, t.group.term);
    const raised = this.#o.disk?.raiseTermCeiling(termUsed);
    if (raised !== undefined) {
      // What the last turn held does not wait for the marker (its terms are below the ceiling).
      this.#sendHeld();
      this.stats.ceilingRaises++;
      // The write may fail while the raise is under way: it is observed below (await written).
      written.catch(() => undefined);
      try {
        await raised;
      } catch (err) {
        // The marker cannot be written: the node stops (as when its raft log cannot be); the turn's
        // write is waited for so that its outcome is not left unobserved.
        await written.catch(() => false);
        throw err;
      }
    }
    // 2. What a leader sends does not wait for its own disk.
    const early: GroupMessages[] = [];
    const late: GroupMessages[] = [];
    /** Per group, the last entry sent before the write: it may commit whatever becomes of the write. */
    const sentUpTo = new Map<number, number>();
    for (const t of turns) {
      if (t.rd.messages.length === 0) continue;
      const e = t.rd.messages.filter((m) => leaderMessages.has(m.type));
      if (e.length > 0) early.push({ group: t.group.id, messages: e });
      for (const m of e) if (m.entries.length > 0) sentUpTo.set(t.group.id, Math.max(sentUpTo.get(t.group.id) ?? 0, m.entries[m.entries.length - 1]!.index));
      if (e.length < t.rd.messages.length) late.push({ group: t.group.id, messages: t.rd.messages.filter((m) => !leaderMessages.has(m.type)) });
    }
    // With what the previous turn held back: one transport call, one message per peer.
    if (this.#held.length > 0) {
      const out = this.#held;
      this.#held = [];
      for (const gm of early) out.push(gm);
      this.#send(out);
    } else if (early.length > 0) this.#send(early);
    // 3a. Committed entries that were durable here before this turn need not wait for its write.
    for (const t of turns) {
      const ce = t.rd.committedEntries;
      while (t.early < ce.length && ce[t.early]!.index <= t.durableLast) t.group.applyEntry(ce[t.early++]!);
      if (t.early > 0) this.#ackApplied(t);
    }
    this.#writing = needsWrite;
    const ok = await written;
    this.#writing = false;
    if (this.#commitInWriteSince.size > 0) {
      // Committed during the write (by acknowledgements alone, or with this node's copy durable
      // before it): applied only by the next turn, which waits for this one.
      const now = this.#o.clock.monotonicMs();
      for (const since of this.#commitInWriteSince.values()) this.stats.commitInWriteMicros += Math.round((now - since) * 1000);
      this.#commitInWriteSince.clear();
    }
    if (!ok) {
      for (const t of turns) {
        // Entries durable here before the write, or sent to followers, may still commit.
        t.group.reset(this.#refusal!, Math.max(t.group.store.storage.lastIndex(), sentUpTo.get(t.group.id) ?? 0));
        this.#dirty.add(t.group.id);
      }
      this.#flushed.unshift(...flushed);
      // Do not spin on a full disk: the next attempt comes with the next tick or proposal.
      await (this.#o.scheduler ?? systemScheduler).sleep(refusedRetryMs);
      return;
    }
    for (const f of flushed) f();
    for (const t of turns) t.group.store.persisted(t.rd);
    if (late.length > 0) {
      // Held for the next turn's sends (#held); this turn's early sends already took the last turn's.
      for (const gm of late) this.#held.push(gm);
      for (const gm of late) if (gm.messages.some((m) => m.type === 'appResp')) this.#phaseSince(this.#entriesSince, gm.group, 'followerAck');
    }
    // 3b, 4. Apply the rest and advance.
    for (const t of turns) {
      const g = t.group;
      if (t.rd.snapshot !== undefined) g.installSnapshot(t.rd.snapshot);
      const ce: readonly Entry[] = t.rd.committedEntries;
      for (let i = t.early; i < ce.length; i++) g.applyEntry(ce[i]!);
      g.onReadyDone?.(t.rd);
      g.raw.advance(t.rd);
      if (t.early === 0 && ce.length > 0) this.#ackApplied(t);
      if (ce.length > 0 || t.rd.snapshot !== undefined) g.onApplied?.();
      this.#applyCommitted(g);
      if (this.#groups.get(g.id) === g && g.raw.hasReady()) {
        this.#markWork(g.id);
        this.#dirty.add(g.id);
      }
    }
  }

  /**
   * Applies at once what a group committed by the advance() that ended its part of the turn, when that
   * is all its next Ready holds (RawNode.hasCommittedOnly: nothing to write, nothing to send): a group
   * of one commits what its own write made durable. Taken by the next turn instead, those entries (and
   * the answers waiting for them) came after that turn's proposals and the filling of its write, and
   * a publish at a moderate rate paid a second turn of its own. Not when the hard state must be written
   * (a damaged member's term, raft-log-store.ts): the next turn writes it.
   */
  #applyCommitted(g: RaftGroup<unknown>): void {
    while (this.#groups.get(g.id) === g && !this.#paused.has(g.id) && g.raw.hasCommittedOnly() && !g.store.writesHardState(g.raw.hardState)) {
      const rd = g.raw.ready();
      this.stats.readies++;
      this.stats.appliedAtOnce++;
      g.observe(rd);
      for (const e of rd.committedEntries) g.applyEntry(e);
      g.store.persisted(rd);
      g.onReadyDone?.(rd);
      g.raw.advance(rd);
      g.onApplied?.();
    }
  }

  #send(groups: readonly GroupMessages[]): void {
    if (this.#transport === undefined) return;
    this.stats.sends++;
    // A group may stamp what it sends as it leaves (the metadata group's read leases: the time of the
    // send, not of the Ready). Only such a group's messages are copied: partition groups stamp
    // nothing, and a send of theirs allocates nothing here.
    let out = groups;
    /** The peer nodes this send reaches: the transport writes one batch to each. */
    const peers: NodeId[] = [];
    for (let i = 0; i < groups.length; i++) {
      const gm = groups[i]!;
      this.stats.messagesSent += gm.messages.length;
      for (const m of gm.messages) {
        this.messageTypes.sent.set(m.type, (this.messageTypes.sent.get(m.type) ?? 0) + 1);
        const node = nodeOfMember(m.to);
        if (!peers.includes(node)) peers.push(node);
      }
      const decorate = this.#groups.get(gm.group)?.outgoing;
      if (decorate === undefined) continue;
      // Counted apart: what the metadata group's read leases keep sending while anything publishes.
      this.stats.stampedMessagesSent += gm.messages.length;
      if (out === groups) out = groups.slice();
      (out as GroupMessages[])[i] = { group: gm.group, messages: gm.messages.map(decorate) };
    }
    this.stats.batchesSent += peers.length;
    this.#transport.send(out);
  }

  /**
   * The one write of a turn. A write the KV refused without storing any of it (a full disk) fails
   * the turn's Readies: each of their groups restarts from its disk (RaftGroup.reset) and its waiting
   * proposals fail with the KV's reason, exactly as if nothing had been asked — so a batch a client
   * is told failed never appears later. The state machines' rows go into the next write.
   */
  async #write(turns: readonly Turn[], rows: readonly ((b: KvBatch) => void)[], durable: boolean): Promise<boolean> {
    this.stats.writes++;
    if (durable) this.stats.durableWrites++;
    let seq = 0;
    const t0 = this.#o.clock.monotonicMs();
    try {
      await this.#o.kv.write((b) => {
        for (const fill of rows) fill(b);
        for (const t of turns) t.group.store.fill(b, t.rd);
        // One sequence number per turn, whatever the number of groups in it.
        if (this.#o.disk !== undefined) seq = this.#o.disk.stamp(b);
      }, { durable });
      if (durable) this.#o.disk?.durable(seq);
      this.#o.onPhase?.('write', this.#o.clock.monotonicMs() - t0);
    } catch (err) {
      if (!(err instanceof KvWriteError) || this.#closed) throw err;
      if (this.#refusal === undefined) this.#o.logger.error({ err: err.message, groups: turns.length }, 'raft log write refused (writes fail until it succeeds again)');
      this.#refusal = err;
      this.#refusedAtMs = this.#o.clock.monotonicMs();
      this.#rows.unshift(...rows);
      return false;
    }
    if (this.#refusal !== undefined) this.#o.logger.warn('raft log writes succeed again');
    this.#refusal = undefined;
    return true;
  }

  /** A group got work: its 'wait' starts now unless it already waits. */
  #markWork(id: number): void {
    if (this.#o.onPhase !== undefined && !this.#workSince.has(id)) this.#workSince.set(id, this.#o.clock.monotonicMs());
  }

  /** The turn applied its first committed entries: reports how long ago the acknowledgement came. */
  #ackApplied(t: Turn): void {
    if (t.ackAt !== undefined) this.#o.onPhase?.('ackApply', this.#o.clock.monotonicMs() - t.ackAt);
  }

  /** Reports the phase that started at `since[id]`, if any, and forgets it. */
  #phaseSince(since: GroupTimes, id: number, phase: HostPhase): void {
    const at = since.get(id);
    if (at === undefined) return;
    since.delete(id);
    this.#o.onPhase?.(phase, this.#o.clock.monotonicMs() - at);
  }

  // ------------------------------------------------------------------ time

  #onTick(): void {
    if (this.#closed) return;
    const now = this.#o.clock.monotonicMs();
    const due = Math.floor((now - this.#tickOriginMs) / this.#o.tickMs) - this.#ticks;
    const n = Math.min(due, catchUpTicksMax);
    this.#ticks += due;
    const quiescence = this.#o.quiescence !== false;
    try {
      for (const g of this.#groups.values()) {
        if (this.#paused.has(g.id)) continue;
        if (g.raw.quiesced) {
          // Asleep: costs nothing, unless its leader (or, on a leader, a majority) went silent or its
          // owner needs it ticking. Proposals still expire (a follower's, made while it led in an
          // earlier term, whose entries a newer leader replaced: nothing else will answer them).
          g.expire(now);
          if (!this.#mustWake(g, now)) continue;
          this.#wake(g);
        }
        g.tick(n, now);
        if (quiescence && g.maybeQuiesce()) this.stats.quiesced++;
        if (g.raw.hasReady()) {
          this.#markWork(g.id);
          this.#dirty.add(g.id);
        }
      }
    } catch (err) {
      this.#fatal(err);
      return;
    }
    // The node-level heartbeat: peers see this node alive while the groups they share are quiesced.
    if (quiescence) this.#transport?.ping?.(this.#o.tickMs);
    // Deferred rows are written at the latest now (a flush nobody waits for).
    if (this.#rows.length > 0 && this.#flushed.length === 0) this.#flushed.push(() => undefined);
    if (this.#hasWork() || this.#flushed.length > 0) this.#schedule();
  }

  #livenessMs(): number {
    return this.#o.livenessMs ?? 10 * this.#o.tickMs;
  }

  /** Whether the node of member `peer` was heard from lately. */
  #live(peer: NodeId, now: number): boolean {
    const node = nodeOfMember(peer);
    if (node === this.#o.self) return true;
    const at = this.#heardMs.get(node);
    return at !== undefined && now - at <= this.#livenessMs();
  }

  #mustWake(g: RaftGroup<unknown>, now: number): boolean {
    if (g.busy?.() === true) return true;
    if (!g.raw.isLeader()) return g.leader === noNode || !this.#live(g.leader, now);
    const voters = g.conf.voters;
    let live = 0;
    for (const v of voters) if (this.#live(v, now)) live++;
    return 2 * live <= voters.length;
  }

  /** Wakes a quiesced group; a follower counts the ticks since its leader's node was last heard from. */
  #wake(g: RaftGroup<unknown>): void {
    this.stats.woken++;
    const lead = g.leader;
    const at = lead === noNode || nodeOfMember(lead) === this.#o.self ? undefined : this.#heardMs.get(nodeOfMember(lead));
    const now = this.#o.clock.monotonicMs();
    g.raw.wake(at === undefined ? 0 : Math.floor((now - at) / this.#o.tickMs));
  }

  #fatal(err: unknown): void {
    if (this.#closed) return;
    this.#o.logger.fatal({ err }, 'raft host failed');
    void this.close();
    this.#o.onFatal(err);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopTicks?.();
    for (const g of this.#groups.values()) g.close();
    await this.#loopDone;
    // What was deferred is written (not fsynced) before the KV closes: a clean stop leaves the applied
    // state as it was, and nothing of it needs redoing at the next start.
    const rows = this.#rows.splice(0);
    if (rows.length > 0) {
      try {
        await this.#o.kv.write((b) => {
          for (const fill of rows) fill(b);
        }, { durable: false });
      } catch (err) {
        this.#o.logger.warn({ err: (err as Error).message }, 'the last rows were not written at close (the groups apply their logs again at the next start)');
      }
    }
    for (const f of this.#flushed.splice(0)) f();
  }
}
