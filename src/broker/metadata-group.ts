/**
 * The metadata Raft group on this node: the host that drives a RawNode (src/raft) over the durable
 * log in the ordered KV (raft-log-store.ts) and the gRPC transport, and applies committed commands to
 * the metadata state machine. It is the node's MetadataProposer: a single node is a one-member group
 * that runs exactly this code with no transport.
 *
 * Ready handling follows rawnode.ts to the letter, one Ready at a time: (1) persist snapshot, entries
 * and hard state in one atomic KV write, fsynced when mustSync; (2) send the messages; (3) install the
 * snapshot into the state machine, apply the committed entries in order, answer read states; (4)
 * advance. Proposals and messages that arrive meanwhile show in the next Ready, which is how commands
 * are batched: one fsync covers every proposal that arrived while the previous one was running. One
 * exception to the order: committed entries that were already durable here before the Ready are
 * applied while its write is in flight (see #handleReady).
 *
 * Writes. On the leader, propose() appends the command and resolves with the state machine's answer
 * once the entry is applied here. If the entry applied at that index has another term, leadership was
 * lost and the command did not commit: 503. On a follower, propose() forwards the command to the
 * leader (gRPC Propose, with the flow id) and then waits until its own state machine has applied the
 * index the leader names, so that what a client wrote through this node is visible here at once. A
 * proposal whose outcome is unknown when its deadline passes fails with 503 (retriable).
 *
 * Reads. readBarrier() makes the next local read linearizable (Raft thesis §6.4, ReadIndex): the
 * leader confirms its leadership with a heartbeat round and names its commit index; once this node
 * has applied that far, every write acknowledged anywhere before the read began is visible. Concurrent
 * reads share one round; reads that arrive during a round share the next, started as soon as that one
 * is answered. A one-member group's leader answers at once: every write it acknowledged was applied
 * first.
 *
 * Time. A setInterval drives ticks from the monotonic clock: each interval ticks as many times as
 * whole tick periods have passed (at most a few, so a stalled event loop does not fire an election
 * at once).
 */
import type { Logger } from 'pino';
import { assert } from '../core/assert.js';
import type { Clock, Random } from '../core/ports.js';
import { problems, type Problem } from '../core/problem.js';
import { KvWriteError, type OrderedKv } from '../log/index.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { MetadataStateMachine, type ApplyResult } from '../metadata/state-machine.js';
import { currentFlowId } from '../observability/flow-context.js';
import { applyConfChangeToState, decodeConfChange, noNode, RawNode } from '../raft/index.js';
import type { ConfState, Entry, Index, Message, NodeId, Ready, ReadState, SoftState, Snapshot, Storage, Term } from '../raft/index.js';
import type { ForwardAnswer, ForwardedProposal, TransportHandler } from '../transport/index.js';
import { checkForwardedCommand, decodeCommand, decodeImage, decodeResult, encodeCommand, encodeImage, encodeResult } from './metadata-codec.js';
import type { NodeDisk } from './node-disk.js';
import { RaftLogStore } from './raft-log-store.js';

export interface MetadataProposer {
  propose(cmd: MetadataCommand): Promise<ApplyResult>;
}

/** The part of the transport the group uses (GrpcTransport implements it). */
export interface MetadataTransport {
  send(msgs: readonly Message[]): void;
  forward(to: NodeId, req: { command: Buffer; flowId: string; deadlineMs: number }): Promise<ForwardAnswer>;
  reachable(id: NodeId): boolean;
}

export interface MemberAddresses {
  readonly id: NodeId;
  readonly raftAddress?: string;
  readonly httpAddress?: string;
}

export interface MetadataGroupOptions {
  readonly self: NodeId;
  /** A fresh id per process start. */
  readonly incarnation: string;
  readonly kv: OrderedKv;
  /**
   * The founding voters (this node included), used only when the node's storage is empty; none when
   * the node joins an existing group (it then starts empty and damaged, see raft-log-store.ts).
   */
  readonly founders: readonly NodeId[];
  /** The node's disk (raft write numbering for the lost-tail check, node-disk.ts); absent in unit tests. */
  readonly disk?: NodeDisk;
  /** Known members and their addresses, for the cluster view. */
  readonly directory: readonly MemberAddresses[];
  readonly tickMs: number;
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  /** Applied entries between snapshots (log compaction). */
  readonly snapshotEntries: number;
  /** How long a proposal or a linearizable read may take before it fails with 503. */
  readonly proposalTimeoutMs: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** Called for every applied command, in order (after a restart, for those applied since the snapshot too). */
  readonly onApplied?: (cmd: MetadataCommand, result: ApplyResult) => void;
  /** Called when the state machine was replaced by a snapshot from the leader. */
  readonly onRestored?: (sm: MetadataStateMachine) => void;
  /** An invariant failed or the disk failed: the node must stop. */
  readonly onFatal?: (err: unknown) => void;
  /** Called when this node learns of a new metadata leader (or of none), for metrics. */
  readonly onLeaderChange?: (leader: NodeId | null, term: number) => void;
}

export interface ClusterMemberView {
  id: NodeId;
  self: boolean;
  suffrage: 'voter' | 'learner' | 'none';
  raft_address: string | null;
  http_address: string | null;
  reachable: boolean;
}

export interface ClusterView {
  id: NodeId;
  incarnation: string;
  role: string;
  members: ClusterMemberView[];
  metadata: {
    leader: NodeId | null;
    term: Term;
    commit_index: Index;
    applied_index: Index;
    last_index: Index;
    snapshot_index: Index;
    /** This member's raft state was found damaged: it neither votes nor leads until repaired. */
    raft_damaged: boolean;
    /** What was found, while damaged. */
    raft_damage: string | null;
  };
}

/** The metadata group's id in the KV key space (partition groups will take others). */
export const metadataGroupId = 0;
/** A node that ticks late by more than this many periods drops the rest (see the header). */
const catchUpTicksMax = 3;
/** The longest wait between two attempts to write a Ready, or a compaction, the KV refused (a full disk). */
const persistRetryMaxMs = 2000;
/** How long a follower waits before asking again when the leader it knew is not leader any more. */
const leaderRetryMs = 50;

interface PendingProposal {
  readonly term: Term;
  readonly resolve: (r: { result: ApplyResult; index: Index }) => void;
  readonly reject: (err: Problem) => void;
  readonly timer: NodeJS.Timeout;
}

interface Waiter {
  readonly index: Index;
  readonly deadlineMs: number;
  readonly resolve: () => void;
  readonly reject: (err: Problem) => void;
}

interface ReadWaiter {
  readonly deadlineMs: number;
  readonly resolve: () => void;
  readonly reject: (err: Problem) => void;
}

class NotLeader extends Error {}

export class RaftMetadataGroup implements MetadataProposer {
  readonly #o: MetadataGroupOptions;
  readonly #store: RaftLogStore;
  readonly #raw: RawNode;
  #sm: MetadataStateMachine;
  #conf: ConfState;
  #applied: Index;
  #transport: MetadataTransport | undefined;
  #lead: NodeId = noNode;
  #role: string = 'follower';
  #term: Term;

  /**
   * Proposals waiting for their entry, by index and then by term. One index can hold proposals of
   * several terms: a leader whose entries were never committed, then overwritten, that leads again
   * proposes at the same indexes. Only the entry applied there says which one (if any) committed, so
   * a proposal must be found, answered and dropped by (term, index), never by index alone.
   */
  #pending = new Map<Index, Map<Term, PendingProposal>>();
  #applyWaiters: Waiter[] = [];
  #readQueue: ReadWaiter[] = [];
  #readRound: { ctx: string; waiters: ReadWaiter[]; startedMs: number } | undefined;
  #readSeq = 0;

  #ticker: NodeJS.Timeout | undefined;
  #tickOriginMs = 0;
  #ticks = 0;
  #looping = false;
  #loopDone: Promise<void> = Promise.resolve();
  #closed = false;
  #compacting = false;
  /** Compaction writes the KV refused in a row (a full disk), and the earliest time to try again. */
  #compactRefusals = 0;
  #compactRetryAtMs = 0;

  private constructor(o: MetadataGroupOptions, store: RaftLogStore, sm: MetadataStateMachine, conf: ConfState, applied: Index) {
    this.#o = o;
    this.#store = store;
    this.#sm = sm;
    this.#conf = conf;
    this.#applied = applied;
    const storage = store.storage;
    // The core takes the configuration as of `applied` (the store's own is as of its snapshot).
    const view: Storage = {
      initialState: () => ({ hardState: storage.hardState(), confState: conf }),
      entries: (lo, hi, max) => storage.entries(lo, hi, max),
      term: (i) => storage.term(i),
      firstIndex: () => storage.firstIndex(),
      lastIndex: () => storage.lastIndex(),
      snapshot: () => storage.snapshot(),
    };
    this.#raw = new RawNode({
      id: o.self,
      storage: view,
      applied,
      electionTicks: o.electionTicks,
      heartbeatTicks: o.heartbeatTicks,
      random: o.random,
      preVote: true,
      checkQuorum: true,
      damaged: store.coreDamage(),
    });
    this.#term = storage.hardState().term;
  }

  /** Opens (or founds) the group from the KV and restores the state machine up to the stored commit. */
  static async open(o: MetadataGroupOptions): Promise<RaftMetadataGroup> {
    const log = o.logger;
    const store = await RaftLogStore.open(o.kv, metadataGroupId, { disk: o.disk });
    if (store.isEmpty) {
      // A node that lost raft state cannot tell whether it held this group (node-disk.ts): founding it
      // again (term 1, no vote) could vote twice in a term. It starts empty and damaged instead.
      const lost = o.disk?.identity.lostRaftState;
      if (lost !== undefined) await store.startEmpty([], `this node started with no metadata raft state after losing raft writes (${lost})`);
      else await store.startEmpty(o.founders, 'this node started with no metadata raft state and joined an existing cluster (a new member, or a former one whose data directory was wiped)');
      if (lost === undefined && o.founders.length > 0) log.info({ founders: o.founders }, 'founded the metadata raft group');
    }
    checkDamage(o, store);
    const storage = store.storage;
    const snap = storage.snapshot();
    const sm = snap.metadata.index > 0 ? decodeImage(snap.data) : new MetadataStateMachine();
    let conf = snap.metadata.confState;
    const hs = storage.hardState();
    let commit = Math.max(hs.commit, snap.metadata.index);
    const tail = storage.entries(snap.metadata.index + 1, storage.lastIndex() + 1, Number.MAX_SAFE_INTEGER);
    const confAt = (index: Index): ConfState => {
      let c = snap.metadata.confState;
      for (const e of tail) if (e.index <= index && e.type === 'confChange') c = applyConfChangeToState(c, decodeConfChange(e.data));
      return c;
    };
    const last = storage.lastIndex();
    const alone = (c: ConfState) => c.voters.length === 1 && c.voters[0] === o.self && c.learners.length === 0;
    if (commit < last && alone(confAt(commit)) && alone(confAt(last))) {
      // The only voter: every entry in its durable log was written by itself as leader and is
      // committed (a majority of one). The stored commit index may lag (it is written without an
      // fsync); taking the whole log now restores at open everything a client was told is done.
      commit = last;
      await store.persist({ snapshot: undefined, entries: [], hardState: { ...hs, commit }, mustSync: false });
    }
    const applied = commit;
    for (const e of tail.filter((x) => x.index <= applied)) {
      if (e.type === 'confChange') conf = applyConfChangeToState(conf, decodeConfChange(e.data));
      else if (e.data.byteLength > 0) {
        const cmd = decodeCommand(e.data);
        // Not inside `onApplied?.(...)`: an optional call skips evaluating its arguments.
        const result = sm.apply(sm.appliedIndex + 1, cmd);
        o.onApplied?.(cmd, result);
      }
    }
    log.info({ raftId: o.self, snapshotIndex: snap.metadata.index, applied, lastIndex: storage.lastIndex(), term: storage.hardState().term, voters: conf.voters, learners: conf.learners }, 'metadata raft group restored');
    return new RaftMetadataGroup(o, store, sm, conf, applied);
  }

  /** Starts ticking (and, for a group of one, campaigns at once). */
  start(transport: MetadataTransport | undefined): void {
    assert(this.#ticker === undefined, 'metadata group started twice');
    this.#transport = transport;
    if (this.#singleton()) this.#raw.campaign();
    this.#tickOriginMs = this.#o.clock.monotonicMs();
    this.#ticker = setInterval(() => this.#onTick(), this.#o.tickMs);
    this.#kick();
  }

  get state(): MetadataStateMachine {
    return this.#sm;
  }

  get self(): NodeId {
    return this.#o.self;
  }

  isLeader(): boolean {
    return this.#raw.isLeader();
  }

  /** Whether this node is the only member (publishing and consumption are served only then, for now). */
  isSingleNode(): boolean {
    const ids = new Set([...this.#conf.voters, ...this.#conf.learners, ...this.#o.directory.map((m) => m.id)]);
    ids.add(this.#o.self);
    return ids.size === 1;
  }

  /**
   * Asks this node, if it is the leader, to hand leadership to the voter `to` (Raft thesis §3.10).
   * The core refuses proposals until the transfer completes or, after an election timeout, is given
   * up; propose() waits meanwhile. False when this node is not the leader or `to` is no voter.
   */
  transferLeadership(to: NodeId): boolean {
    if (this.#closed) return false;
    const started = this.#raw.transferLeadership(to);
    this.#kick();
    return started;
  }

  #singleton(): boolean {
    return this.#conf.learners.length === 0 && this.#conf.voters.length === 1 && this.#conf.voters[0] === this.#o.self;
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  async propose(cmd: MetadataCommand): Promise<ApplyResult> {
    const data = encodeCommand(cmd);
    const deadlineMs = this.#now() + this.#o.proposalTimeoutMs;
    const flowId = currentFlowId() ?? `raft-${this.#o.incarnation}`;
    for (;;) {
      if (this.#closed) throw problems.unavailable('The node is shutting down; retry on another node.');
      const remainingMs = deadlineMs - this.#now();
      if (remainingMs <= 0) throw problems.unavailable('No metadata leader could take the write in time; retry later.');
      if (this.#raw.isLeader()) {
        try {
          return (await this.#proposeLocal(data, deadlineMs)).result;
        } catch (err) {
          if (!(err instanceof NotLeader)) throw err;
          // Refused although this node leads: a leadership transfer is pending. Retrying at once
          // would loop on microtasks only (awaiting a rejected promise never yields to timers or
          // I/O), so neither the ticks that give the transfer up nor the Ready that sends it, nor
          // any HTTP request, would run until the deadline. Wait a little, then look again.
          await this.#sleep(Math.min(leaderRetryMs, remainingMs));
          continue;
        }
      }
      const lead = this.#lead;
      if (lead === noNode || lead === this.#o.self || this.#transport === undefined) {
        await this.#sleep(Math.min(leaderRetryMs, remainingMs));
        continue;
      }
      const answer = await this.#transport.forward(lead, { command: data, flowId, deadlineMs: remainingMs });
      switch (answer.status) {
        case 'applied': {
          const result = decodeResult(answer.result);
          if (result === undefined) throw problems.unavailable(`The metadata leader (node ${lead}) sent a malformed answer.`);
          await this.#waitApplied(answer.index, deadlineMs);
          return result;
        }
        case 'notLeader':
          await this.#sleep(Math.min(leaderRetryMs, remainingMs));
          continue;
        case 'unavailable':
          throw problems.unavailable(`Metadata write not confirmed: ${answer.detail}. It may or may not have been applied; retry.`);
      }
    }
  }

  #proposeLocal(data: Uint8Array, deadlineMs: number): Promise<{ result: ApplyResult; index: Index }> {
    const r = this.#raw.propose(data);
    if (!r.ok) {
      if (r.reason === 'notLeader' || r.reason === 'leadershipTransfer') return Promise.reject(new NotLeader());
      return Promise.reject(problems.unavailable(`The metadata leader refused the write (${r.reason}); retry.`));
    }
    const { term, firstIndex: index } = r;
    let atIndex = this.#pending.get(index);
    if (atIndex === undefined) this.#pending.set(index, (atIndex = new Map()));
    assert(!atIndex.has(term), `two metadata proposals at index ${index} in term ${term}`);
    const waiting = atIndex;
    const p = new Promise<{ result: ApplyResult; index: Index }>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Only this proposal: another term's proposal at the same index may still be waiting.
        waiting.delete(term);
        if (waiting.size === 0 && this.#pending.get(index) === waiting) this.#pending.delete(index);
        reject(problems.unavailable('The metadata write did not commit in time (no quorum?). It may or may not be applied later; retry.'));
      }, Math.max(1, deadlineMs - this.#now()));
      waiting.set(term, { term, resolve, reject, timer });
    });
    this.#kick();
    return p;
  }

  /** A follower forwarded a proposal to us (the transport's Propose handler). */
  async #proposeForwarded(p: ForwardedProposal): Promise<ForwardAnswer> {
    if (!this.#raw.isLeader()) return { status: 'notLeader', leaderHint: this.#lead };
    const refused = checkForwardedCommand(p.command);
    if (refused !== undefined) {
      this.#o.logger.warn({ flowId: p.flowId, from: p.from, refused }, 'refused a malformed forwarded proposal');
      return { status: 'unavailable', detail: `refused: ${refused}` };
    }
    try {
      const { result, index } = await this.#proposeLocal(p.command, this.#now() + p.deadlineMs);
      this.#o.logger.info({ flowId: p.flowId, from: p.from, index, ok: result.ok }, 'metadata write forwarded by a follower applied');
      return { status: 'applied', index, result: encodeResult(result) };
    } catch (err) {
      if (err instanceof NotLeader) return { status: 'notLeader', leaderHint: this.#lead };
      return { status: 'unavailable', detail: (err as Error).message };
    }
  }

  #waitApplied(index: Index, deadlineMs: number): Promise<void> {
    if (this.#applied >= index) return Promise.resolve();
    return new Promise((resolve, reject) => this.#applyWaiters.push({ index, deadlineMs, resolve, reject }));
  }

  // -------------------------------------------------------------------------------------------
  // Linearizable reads

  /**
   * Resolves once a read of `state` reflects every write acknowledged before the call; undefined when
   * that is already so (the leader of a group of one).
   */
  readBarrier(): Promise<void> | undefined {
    if (this.#closed) return Promise.reject(problems.unavailable('The node is shutting down; retry on another node.'));
    if (this.#singleton() && this.#raw.isLeader()) return undefined;
    return new Promise((resolve, reject) => {
      this.#readQueue.push({ deadlineMs: this.#now() + this.#o.proposalTimeoutMs, resolve, reject });
      this.#startReadRound();
    });
  }

  #startReadRound(): void {
    if (this.#readRound !== undefined || this.#readQueue.length === 0 || this.#closed) return;
    const ctx = `${this.#o.incarnation}/${++this.#readSeq}`;
    // False when no leader is known (or too many reads wait on it): the next tick tries again.
    if (!this.#raw.readIndex(ctx)) return;
    this.#readRound = { ctx, waiters: this.#readQueue.splice(0), startedMs: this.#now() };
    this.#kick();
  }

  #onReadState(rs: ReadState): void {
    const round = this.#readRound;
    if (round === undefined || rs.context !== round.ctx) return; // an abandoned round's late answer
    this.#readRound = undefined;
    for (const w of round.waiters) this.#applyWaiters.push({ index: rs.index, deadlineMs: w.deadlineMs, resolve: w.resolve, reject: w.reject });
    // Reads that arrived during this round were queued (they need an index confirmed after they
    // arrived, so they cannot share it): start their round now rather than at the next tick, which
    // would add up to a tick period to each of them.
    this.#startReadRound();
  }

  /** A round whose request or answer was lost (or whose leader changed) is asked again. */
  #retryReadRound(): void {
    const round = this.#readRound;
    if (round === undefined) return;
    this.#readRound = undefined;
    this.#readQueue.unshift(...round.waiters);
  }

  // -------------------------------------------------------------------------------------------
  // What arrives from the transport

  /** The transport's view of this group (its `propose` is the forwarded one, not propose() above). */
  transportHandler(): TransportHandler {
    return {
      receive: (m) => this.receive(m),
      propose: (p) => this.#proposeForwarded(p),
      unreachable: (id) => this.unreachable(id),
      snapshotStatus: (id, delivered) => this.snapshotStatus(id, delivered),
    };
  }

  receive(m: Message): void {
    if (this.#closed) return;
    try {
      this.#raw.step(m);
    } catch (err) {
      this.#fatal(err);
      return;
    }
    this.#kick();
  }

  unreachable(id: NodeId): void {
    if (this.#closed) return;
    this.#raw.reportUnreachable(id);
  }

  snapshotStatus(id: NodeId, delivered: boolean): void {
    if (this.#closed) return;
    this.#raw.reportSnapshot(id, delivered);
    this.#kick();
  }

  // -------------------------------------------------------------------------------------------
  // The Ready loop

  #kick(): void {
    if (this.#looping || this.#closed || !this.#raw.hasReady()) return;
    this.#looping = true;
    this.#loopDone = new Promise<void>((done) => {
      setImmediate(() => {
        this.#loop().then(done, (err: unknown) => {
          this.#fatal(err);
          done();
        });
      });
    });
  }

  async #loop(): Promise<void> {
    try {
      while (!this.#closed && this.#raw.hasReady()) {
        const rd = this.#raw.ready();
        await this.#handleReady(rd);
      }
    } finally {
      this.#looping = false;
    }
    await this.#maybeCompact();
    this.#kick();
  }

  async #handleReady(rd: Ready): Promise<void> {
    if (rd.softState !== undefined) this.#onSoftState(rd.softState);
    if (rd.hardState !== undefined && rd.hardState.term !== this.#term) {
      this.#o.logger.info({ raftId: this.#o.self, fromTerm: this.#term, term: rd.hardState.term }, 'metadata term changed');
      this.#term = rd.hardState.term;
    }
    // Committed entries this node already holds durably (written by an earlier Ready) are applied
    // while this Ready's write is in flight rather than after it: they are committed (durable on a
    // majority, the leader counting itself only once its own write was durable) and durable here, and
    // applying sends nothing to peers. Without this, an answer waits for the fsync of the entries
    // proposed after it. Entries that this Ready itself persists, and any Ready with a snapshot, keep
    // the order persist, send, apply.
    const durableLast = rd.snapshot === undefined ? this.#store.storage.lastIndex() : 0;
    // 1. Persist (started here, awaited below).
    const persisted = this.#persist(rd);
    let early = 0;
    while (early < rd.committedEntries.length && rd.committedEntries[early]!.index <= durableLast) this.#applyEntry(rd.committedEntries[early++]!);
    if (early > 0) this.#releaseApplyWaiters();
    await persisted;
    // 2. Send.
    if (rd.damaged !== undefined) this.#o.logger.error({ raftId: this.#o.self, leader: this.#lead, damagedIndex: rd.damaged.index }, 'metadata raft log damaged: the leader counts entries this node does not hold (entries it had acknowledged were lost); it will not vote or lead until repaired');
    if (rd.repaired) this.#o.logger.warn({ raftId: this.#o.self, term: this.#raw.status().term, leader: this.#lead }, 'metadata raft member repaired from the leader: it votes and may lead again');
    if (rd.messages.length > 0) this.#transport?.send(rd.messages);
    // 3. Apply (the rest).
    if (rd.snapshot !== undefined) this.#installSnapshot(rd.snapshot);
    for (let i = early; i < rd.committedEntries.length; i++) this.#applyEntry(rd.committedEntries[i]!);
    for (const rs of rd.readStates) this.#onReadState(rs);
    this.#releaseApplyWaiters();
    // 4. Advance.
    this.#raw.advance(rd);
  }

  /**
   * Writes a Ready, again and again while the KV refuses the write without applying any of it (a full
   * disk): the group then stands still (proposals time out with a retriable 503, what is applied stays
   * readable) and goes on by itself once space is freed, instead of stopping the node. A failed fsync
   * stays fatal: after it the kernel may have dropped what it reported as lost.
   */
  async #persist(rd: Ready): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#store.persist(rd);
        if (attempt > 0) this.#o.logger.warn({ raftId: this.#o.self, attempts: attempt + 1 }, 'metadata log write succeeded again');
        return;
      } catch (err) {
        if (!(err instanceof KvWriteError) || this.#closed) throw err;
        if (attempt === 0) this.#o.logger.error({ raftId: this.#o.self, err: err.message }, 'metadata log write failed; retrying until it succeeds (metadata writes answer 503 meanwhile)');
        await new Promise((r) => setTimeout(r, Math.min(persistRetryMaxMs, 50 * 2 ** Math.min(attempt, 10))));
      }
    }
  }

  #onSoftState(ss: SoftState): void {
    const log = this.#o.logger;
    const term = this.#raw.status().term;
    if (ss.state !== this.#role) {
      if (ss.state === 'preCandidate' || ss.state === 'candidate') {
        log.info({ raftId: this.#o.self, term, role: ss.state }, ss.state === 'preCandidate' ? 'metadata pre-vote started' : 'metadata election started');
      } else if (ss.state === 'leader') {
        log.info({ raftId: this.#o.self, term }, 'became metadata leader');
      } else if (this.#role === 'leader') {
        log.info({ raftId: this.#o.self, term }, 'stepped down as metadata leader');
      }
      this.#role = ss.state;
    }
    if (ss.lead !== this.#lead) {
      log.info({ raftId: this.#o.self, term, leader: ss.lead === noNode ? null : ss.lead, previousLeader: this.#lead === noNode ? null : this.#lead }, 'metadata leader changed');
      this.#lead = ss.lead;
      this.#o.onLeaderChange?.(ss.lead === noNode ? null : ss.lead, term);
      // A read round sent to the old leader may never be answered.
      this.#retryReadRound();
      queueMicrotask(() => this.#startReadRound());
    }
  }

  #installSnapshot(snap: Snapshot): void {
    const index = snap.metadata.index;
    this.#sm = decodeImage(snap.data);
    this.#conf = snap.metadata.confState;
    this.#applied = index;
    this.#o.logger.info({ raftId: this.#o.self, index, term: snap.metadata.term }, 'installed a metadata snapshot from the leader');
    for (const [i, atIndex] of this.#pending) {
      if (i > index) continue;
      this.#pending.delete(i);
      for (const p of atIndex.values()) {
        clearTimeout(p.timer);
        p.reject(problems.unavailable('The metadata write may or may not have committed (this node was replaced by a snapshot); retry.'));
      }
    }
    this.#o.onRestored?.(this.#sm);
  }

  #applyEntry(e: Entry): void {
    assert(e.index === this.#applied + 1, `metadata entry ${e.index} applied after ${this.#applied}`);
    let result: ApplyResult | undefined;
    if (e.type === 'confChange') {
      this.#conf = this.#raw.applyConfChange(e);
      this.#o.logger.info({ raftId: this.#o.self, index: e.index, voters: this.#conf.voters, learners: this.#conf.learners }, 'metadata configuration changed');
    } else if (e.data.byteLength > 0) {
      const cmd = decodeCommand(e.data);
      result = this.#sm.apply(this.#sm.appliedIndex + 1, cmd);
      this.#o.onApplied?.(cmd, result);
    }
    this.#applied = e.index;
    const atIndex = this.#pending.get(e.index);
    if (atIndex === undefined) return;
    this.#pending.delete(e.index);
    // The entry applied here committed the proposal of its own term; those of other terms at this
    // index were overwritten and never will.
    for (const p of atIndex.values()) {
      clearTimeout(p.timer);
      if (p.term === e.term && result !== undefined) p.resolve({ result, index: e.index });
      else p.reject(problems.unavailable('The metadata leader lost its leadership before the write committed; retry.'));
    }
  }

  #releaseApplyWaiters(): void {
    if (this.#applyWaiters.length === 0) return;
    const keep: Waiter[] = [];
    for (const w of this.#applyWaiters) {
      if (w.index <= this.#applied) w.resolve();
      else keep.push(w);
    }
    this.#applyWaiters = keep;
  }

  /**
   * Snapshots the state machine and compacts the log when enough entries were applied since the last
   * snapshot. A compaction write the KV refused without applying it (a full disk) stores nothing:
   * RaftLogStore.compact changes its mirror only after the write, so the log stays whole, only
   * longer. That is no reason to stop the node (unlike a failed fsync, whose error is rethrown and is
   * fatal as elsewhere): it is logged and tried again after a backoff (50 ms doubling to
   * persistRetryMaxMs), at the end of the first Ready loop after it, that is with the next Raft
   * traffic or write.
   */
  async #maybeCompact(): Promise<void> {
    if (this.#compacting || this.#closed) return;
    const snapIndex = this.#store.storage.snapshot().metadata.index;
    const applied = this.#applied;
    if (applied - snapIndex < this.#o.snapshotEntries) return;
    if (this.#now() < this.#compactRetryAtMs) return;
    this.#compacting = true;
    const log = this.#o.logger;
    try {
      const keep = Math.floor(this.#o.snapshotEntries / 4);
      await this.#store.compact(applied, this.#conf, encodeImage(this.#sm), applied - keep);
      if (this.#compactRefusals > 0) log.warn({ raftId: this.#o.self, attempts: this.#compactRefusals + 1 }, 'metadata log compaction succeeded again');
      this.#compactRefusals = 0;
      log.info({ raftId: this.#o.self, index: applied, firstIndex: this.#store.storage.firstIndex() }, 'metadata snapshot taken; log compacted');
    } catch (err) {
      if (!(err instanceof KvWriteError) || this.#closed) throw err;
      const retryInMs = Math.min(persistRetryMaxMs, 50 * 2 ** Math.min(this.#compactRefusals, 10));
      this.#compactRetryAtMs = this.#now() + retryInMs;
      if (this.#compactRefusals === 0) log.warn({ raftId: this.#o.self, err: err.message, index: applied, retryInMs }, 'metadata log compaction failed; the log stays uncompacted and compaction is tried again later');
      this.#compactRefusals++;
    } finally {
      this.#compacting = false;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Time

  #now(): number {
    return this.#o.clock.monotonicMs();
  }

  #onTick(): void {
    if (this.#closed) return;
    const due = Math.floor((this.#now() - this.#tickOriginMs) / this.#o.tickMs) - this.#ticks;
    const n = Math.min(due, catchUpTicksMax);
    this.#ticks += due; // late periods beyond catchUpTicksMax are skipped, not replayed
    try {
      for (let i = 0; i < n; i++) this.#raw.tick();
    } catch (err) {
      this.#fatal(err);
      return;
    }
    const now = this.#now();
    const round = this.#readRound;
    if (round !== undefined && now - round.startedMs > this.#o.electionTicks * this.#o.tickMs) this.#retryReadRound();
    this.#expire(now);
    this.#startReadRound();
    this.#kick();
  }

  #expire(now: number): void {
    const late = (w: { deadlineMs: number }) => w.deadlineMs <= now;
    const fail = (w: { reject: (e: Problem) => void }) =>
      w.reject(problems.unavailable('No metadata leader confirmed the read in time (is a majority of the cluster reachable?); retry.'));
    if (this.#readQueue.some(late)) {
      this.#readQueue.filter(late).forEach(fail);
      this.#readQueue = this.#readQueue.filter((w) => !late(w));
    }
    if (this.#applyWaiters.some(late)) {
      this.#applyWaiters.filter(late).forEach((w) => w.reject(problems.unavailable('This node has not caught up with the metadata leader in time; retry.')));
      this.#applyWaiters = this.#applyWaiters.filter((w) => !late(w));
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  #fatal(err: unknown): void {
    if (this.#closed) return;
    this.#o.logger.fatal({ err, raftId: this.#o.self }, 'metadata raft group failed');
    void this.close();
    if (this.#o.onFatal !== undefined) this.#o.onFatal(err);
    else throw err;
  }

  // -------------------------------------------------------------------------------------------
  // Observation and shutdown

  view(): ClusterView {
    const st = this.#raw.status();
    const ids = new Set<NodeId>([this.#o.self, ...this.#conf.voters, ...this.#conf.learners, ...this.#o.directory.map((m) => m.id)]);
    const members = [...ids].sort((a, b) => a - b).map((id): ClusterMemberView => {
      const dir = this.#o.directory.find((m) => m.id === id);
      const self = id === this.#o.self;
      return {
        id,
        self,
        suffrage: this.#conf.voters.includes(id) ? 'voter' : this.#conf.learners.includes(id) ? 'learner' : 'none',
        raft_address: dir?.raftAddress ?? null,
        http_address: dir?.httpAddress ?? null,
        reachable: self || (this.#transport?.reachable(id) ?? false),
      };
    });
    return {
      id: this.#o.self,
      incarnation: this.#o.incarnation,
      role: st.state,
      members,
      metadata: {
        leader: st.lead === noNode ? null : st.lead,
        term: st.term,
        commit_index: st.commit,
        applied_index: this.#applied,
        last_index: st.lastIndex,
        snapshot_index: this.#store.storage.snapshot().metadata.index,
        raft_damaged: st.damaged !== null,
        raft_damage: st.damaged === null ? null : (this.#store.damage?.reason ?? 'repair under way'),
      },
    };
  }

  /** Stops ticking, fails what waits, and lets the Ready in flight finish its write. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ticker !== undefined) clearInterval(this.#ticker);
    const closing = problems.unavailable('The node is shutting down; retry on another node.');
    for (const atIndex of this.#pending.values()) {
      for (const p of atIndex.values()) {
        clearTimeout(p.timer);
        p.reject(closing);
      }
    }
    this.#pending.clear();
    for (const w of [...this.#applyWaiters, ...this.#readQueue, ...(this.#readRound?.waiters ?? [])]) w.reject(closing);
    this.#applyWaiters = [];
    this.#readQueue = [];
    this.#readRound = undefined;
    await this.#loopDone;
  }
}

/**
 * Logs what was found on a damaged member, and refuses to start one that no other member could repair
 * (the only voter of its group): serving from it would hide the loss of acknowledged writes.
 */
function checkDamage(o: MetadataGroupOptions, store: RaftLogStore): void {
  const d = store.damage;
  if (d === undefined) return;
  const conf = store.storage.snapshot().metadata.confState;
  const others = new Set([...conf.voters, ...conf.learners, ...o.founders, ...o.directory.map((m) => m.id)]);
  others.delete(o.self);
  if (others.size === 0) {
    throw new Error(
      `the metadata raft log of this single-node cluster is damaged: ${d.reason}. No other member holds a copy to repair it from. ` +
        'Restore the data directory from a backup; or, to start afresh, move it aside (every event type and subscription is lost).',
    );
  }
  o.logger.error({ raftId: o.self, damage: d.reason, damagedTerm: d.term, damagedIndex: d.index }, 'metadata raft log damaged: this node will not vote or lead until a healthy leader has repaired it');
}
