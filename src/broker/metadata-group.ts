/**
 * The metadata Raft group on this node: group 0 of the node's Raft host (raft-host/node-host.ts), so
 * that one turn of the host writes and fsyncs the metadata group's Ready together with every partition
 * group's. What is specific to metadata sits around the generic group (raft-host/raft-group.ts):
 *
 *   - the state machine it applies to (MetadataStateMachine; restored at open, metadata-restore.ts);
 *   - writes: propose() on the leader appends the command and resolves with the state machine's answer
 *     once the entry is applied here; the group matches proposals to entries by (term, index), so an
 *     entry of another term at a proposal's index means leadership was lost (503). On a follower,
 *     propose() forwards the command to the leader (gRPC Propose, with the flow id) and then waits until
 *     its own state machine has applied the index the leader names, so that what a client wrote
 *     through this node is visible here at once. A proposal whose outcome is unknown when its deadline
 *     passes fails with 503 (retriable);
 *   - linearizable reads (ReadIndex, metadata-reads.ts);
 *   - snapshots of the metadata image and log compaction (metadata-compaction.ts);
 *   - damaged members (docs/metadata-raft.md): the core keeps them out of elections; this logs what it
 *     found and when it was repaired.
 *
 * It is the node's MetadataProposer: a single node is a one-member group that runs exactly this code
 * with no transport.
 */
import type { Logger } from 'pino';
import type { Clock, Random } from '../core/ports.js';
import { incarnationOfMember, nodeOfMember } from '../core/member-id.js';
import { problems } from '../core/problem.js';
import type { OrderedKv } from '../log/index.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { answersForFormerMember } from '../metadata/disk-registry.js';
import type { MetadataStateMachine, ApplyResult } from '../metadata/state-machine.js';
import { currentFlowId } from '../observability/flow-context.js';
import { noNode } from '../raft/index.js';
import type { Entry, Index, NodeId, Ready, Snapshot, Term } from '../raft/index.js';
import type { ForwardAnswer, ForwardedProposal, TransportHandler } from '../transport/index.js';
import { checkForwardedCommand, decodeImage, decodeResult, encodeCommand, encodeImage, encodeResult, imageProblem } from './metadata-codec.js';
import { MetadataCompaction } from './metadata-compaction.js';
import { MetadataLeases, type LeaseTiming } from './metadata-leases.js';
import { MetadataReads } from './metadata-reads.js';
import { applyCommand, metadataGroupId, restoreMetadata } from './metadata-restore.js';
import type { NodeDisk } from './node-disk.js';
import type { RaftNodeHost } from './raft-host/node-host.js';
import { ProposalFailedError, RaftGroup, type GroupState } from './raft-host/raft-group.js';
import type { RaftLogStore } from './raft-log-store.js';

export { metadataGroupId } from './metadata-restore.js';

export interface MetadataProposer {
  propose(cmd: MetadataCommand): Promise<ApplyResult>;
}

/** What the group needs of the transport beyond the node host's messages (GrpcTransport implements it). */
export interface MetadataTransport {
  forward(to: NodeId, req: { command: Buffer; flowId: string; deadlineMs: number }): Promise<ForwardAnswer>;
  reachable(id: NodeId): boolean;
}

export interface MemberAddresses {
  readonly id: NodeId;
  readonly raftAddress?: string;
  readonly httpAddress?: string;
}

export interface MetadataGroupOptions {
  /** This node. */
  readonly self: NodeId;
  /**
   * This node's member id in the metadata group (core/member-id.ts): the node id (incarnation 0) on a
   * founder's directory, another incarnation on a directory that joined as a new member. Defaults to
   * the node id.
   */
  readonly member?: NodeId;
  /**
   * Makes a new member id for this directory when it holds no metadata raft state and does not found
   * the group (node-disk.ts, newMetadataMember; metadata-restore.ts). Absent in unit tests and the
   * simulator: such a member then starts empty and damaged under `member`.
   */
  readonly newMember?: () => Promise<NodeId>;
  /**
   * What partition raft state this directory holds (partition-state-held.ts): one that holds some
   * keeps its member id instead of making a new one (metadata-restore.ts).
   */
  readonly partitionState?: () => Promise<string | undefined>;
  /** A fresh id per process start. */
  readonly incarnation: string;
  readonly kv: OrderedKv;
  /** The node's Raft host: it ticks, writes, sends and applies for this group as for every other. */
  readonly host: RaftNodeHost;
  /**
   * The founding voters (this node included), used only when the node's storage is empty; none when
   * the node joins an existing group (it then starts empty and damaged, see raft-log-store.ts).
   */
  readonly founders: readonly NodeId[];
  /** The node's disk (raft write numbering for the lost-tail check, node-disk.ts); absent in unit tests. */
  readonly disk?: NodeDisk;
  /**
   * The operator accepts the loss of what a damaged single node's group lacks (BROOK_ACCEPT_METADATA_LOSS;
   * metadata-restore.ts): it starts and leads with what it holds instead of refusing to start.
   */
  readonly acceptLoss?: boolean;
  /**
   * Called once the group leads again after that acceptance (its damage mark removed durably): what it
   * kept and lost, for the record in the metadata (loss-service.ts). The record's proposal commits in
   * the group that leads again.
   */
  readonly onLossAccepted?: (f: { damage: { index: number; term: number; reason: string }; lastIndex: Index; termBefore: number; term: number }) => void;
  /** Known members and their addresses, for the cluster view. */
  readonly directory: readonly MemberAddresses[];
  /** The host's tick period (a read round unanswered for an election timeout is asked again). */
  readonly tickMs: number;
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  /** Applied entries between snapshots (log compaction). */
  readonly snapshotEntries: number;
  /** How long a proposal or a linearizable read may take before it fails with 503. */
  readonly proposalTimeoutMs: number;
  /**
   * Read leases for publishing (metadata-leases.ts, docs/metadata-raft.md "Read leases"): absent, every
   * read takes a ReadIndex round and writes are acknowledged as soon as applied, as a build without
   * leases does.
   */
  readonly readLeases?: LeaseTiming;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** Waits between retries (defaults to a timer; the simulator passes its virtual one). */
  readonly sleep?: (ms: number) => Promise<void>;
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

/** A member of the metadata group's configuration (core/member-id.ts). */
export interface MetadataMemberView {
  id: NodeId;
  node: NodeId;
  incarnation: number;
  suffrage: 'voter' | 'learner';
}

export interface ClusterView {
  id: NodeId;
  incarnation: string;
  role: string;
  members: ClusterMemberView[];
  metadata: {
    /** The node of the metadata leader. */
    leader: NodeId | null;
    /** This node's member id in the metadata group. */
    member: NodeId;
    /** The configuration as applied here: every member, its node and its suffrage. */
    members: MetadataMemberView[];
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

/** How long a follower waits before asking again when the leader it knew is not leader any more. */
const leaderRetryMs = 50;

type Outcome = ApplyResult | undefined;

class NotLeader extends Error {}

export class RaftMetadataGroup implements MetadataProposer {
  readonly #o: MetadataGroupOptions;
  readonly #host: RaftNodeHost;
  readonly #store: RaftLogStore;
  readonly #group: RaftGroup<Outcome>;
  readonly #reads: MetadataReads;
  readonly #leases: MetadataLeases | undefined;
  readonly #compaction: MetadataCompaction;
  #sm: MetadataStateMachine;
  /** The last applied index whose entry changed the state (what a read shows; metadata-leases.ts). */
  #lastChange: Index;
  #transport: MetadataTransport | undefined;
  #started = false;
  #closed = false;
  /** The leader a peer named when this member knew none (a member id), and the peer asked last. */
  #hint: NodeId | undefined;
  #asked = 0;
  /** Set by open: the operator accepted the loss of a damaged single node's group (start() acts on it). */
  #acceptLoss = false;
  /** What the damaged group held when its loss was accepted (for onLossAccepted). */
  #lossFacts: { damage: { index: number; term: number; reason: string }; lastIndex: Index; termBefore: number } | undefined;

  /** Opens (or founds) the group from the KV and restores the state machine up to the stored commit. */
  static async open(o: MetadataGroupOptions): Promise<RaftMetadataGroup> {
    const r = await restoreMetadata({ self: o.member ?? o.self, newMember: o.newMember, partitionState: o.partitionState, kv: o.kv, disk: o.disk, founders: o.founders, known: o.directory.map((m) => m.id), logger: o.logger, onApplied: o.onApplied, acceptLoss: o.acceptLoss });
    const g = new RaftMetadataGroup({ ...o, member: r.member }, r.store, r.sm, r.conf, r.applied);
    g.#acceptLoss = r.acceptLoss;
    const d = r.store.damage;
    if (r.acceptLoss && d !== undefined) g.#lossFacts = { damage: { index: d.index, term: d.term, reason: d.reason }, lastIndex: r.store.storage.lastIndex(), termBefore: r.store.storage.hardState().term };
    return g;
  }

  private constructor(o: MetadataGroupOptions, store: RaftLogStore, sm: MetadataStateMachine, conf: RaftGroup<Outcome>['conf'], applied: Index) {
    this.#o = o;
    this.#host = o.host;
    this.#store = store;
    this.#sm = sm;
    this.#lastChange = applied;
    const group = new RaftGroup<Outcome>({
      id: metadataGroupId,
      self: o.member ?? o.self,
      store,
      conf,
      applied,
      electionTicks: o.electionTicks,
      heartbeatTicks: o.heartbeatTicks,
      random: o.random,
      // Asked for their terms by a member whose past term is unknown (it joined after a wipe).
      // Not this node's other member ids (its node id, when it runs a new member): the earlier member
      // of its own directory answers nobody, and waiting for it would keep the probe waiting for good.
      termProbePeers: [...new Set([o.member ?? o.self, ...o.directory.map((m) => m.id).filter((id) => nodeOfMember(id) !== o.self), ...conf.voters])],
      // Asked under the id of this node's member that this one replaced (its node id, say), by such a
      // member: the node's registration as applied here says which ids were this node's before.
      answersProbeFor: (member) => answersForFormerMember(this.#sm.disk(o.self), o.self, this.#group.self, member),
    });
    this.#group = group;
    group.setApplier({
      apply: (e) => this.#apply(e),
      applied: (index) => this.#confApplied(index),
      restore: (s) => this.#restore(s),
      // A snapshot from a peer is checked whole when it arrives, before the core takes it (the node
      // host drops a malformed one with a log line): once taken it is stored before it is restored.
      snapshotProblem: (s) => imageProblem(s.data),
    });
    this.#reads = new MetadataReads({
      raw: () => group.raw,
      applied: () => group.applied,
      kick: () => this.#host.kick(metadataGroupId),
      incarnation: o.incarnation,
      nowMs: () => this.#now(),
      roundTimeoutMs: o.electionTicks * o.tickMs,
      timeoutMs: o.proposalTimeoutMs,
    });
    this.#compaction = new MetadataCompaction({
      store,
      snapshotEntries: o.snapshotEntries,
      applied: () => group.applied,
      conf: () => group.conf,
      image: () => encodeImage(this.#sm),
      pause: () => this.#host.pause(metadataGroupId),
      resume: () => this.#host.resume(metadataGroupId),
      nowMs: () => this.#now(),
      logger: o.logger,
      raftId: o.member ?? o.self,
      onFatal: (err) => this.#fatal(err),
    });
    if (o.readLeases !== undefined) {
      const leases = new MetadataLeases({ timing: o.readLeases, group: group as RaftGroup<unknown>, nowMs: () => this.#now(), firstSeq: o.random.int(2 ** 40), lastChange: () => this.#lastChange });
      this.#leases = leases;
      group.outgoing = leases.outgoing;
      group.received = leases.received;
    }
    group.onChange = (now, before) => this.#changed(now, before);
    group.onReadyDone = (rd) => this.#readyDone(rd);
    group.onApplied = () => {
      this.#reads.applied();
      this.#leases?.tick();
      this.#compaction.maybe();
    };
    group.onTick = (now) => {
      this.#reads.tick(now);
      this.#leases?.tick();
    };
    // Reads waiting for a round or for entries need the group awake (its ticks retry and expire them),
    // and so do leases held or wanted and writes waiting for lease holders (metadata-leases.ts).
    group.busy = () => this.#reads.busy() || (this.#leases?.busy() ?? false);
  }

  /** Joins the node host (which ticks it from now on); a group of one campaigns at once. */
  start(transport: MetadataTransport | undefined): void {
    if (this.#started) throw new Error('metadata group started twice');
    this.#started = true;
    this.#transport = transport;
    this.#host.add(this.#group as RaftGroup<unknown>);
    if (this.#acceptLoss) {
      // The operator accepted the loss (metadata-restore.ts checked that it is the only voter): it
      // leads above every term this node may have used (its term ceiling); the write of that Ready
      // removes the damage mark with the new term.
      const refused = this.#group.raw.acceptLoss(this.#o.disk?.termCeiling ?? 0);
      if (refused !== undefined) throw new Error(`accepting the loss of the metadata group was refused: ${refused}`);
    } else if (this.#group.isSingleton()) this.#group.raw.campaign();
    this.#host.kick(metadataGroupId);
  }

  get state(): MetadataStateMachine {
    return this.#sm;
  }

  get self(): NodeId {
    return this.#o.self;
  }

  /** This node's member id in the metadata group. */
  get member(): NodeId {
    return this.#group.self;
  }

  /** The generic group under this one (for observation: the simulator checks its Raft properties). */
  get raftGroup(): RaftGroup<unknown> {
    return this.#group as RaftGroup<unknown>;
  }

  isLeader(): boolean {
    return this.#group.isLeader();
  }

  /** The group may have work (a configuration change proposed on its core): handle it in the next turn. */
  kick(): void {
    if (!this.#closed) this.#host.kick(metadataGroupId);
  }

  /** Whether this node is the only member (publishing and consumption are served only then, for now). */
  isSingleNode(): boolean {
    const conf = this.#group.conf;
    const ids = new Set([...conf.voters, ...conf.learners, ...this.#o.directory.map((m) => m.id)]);
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
    const started = this.#group.raw.transferLeadership(to);
    this.#host.kick(metadataGroupId);
    return started;
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
      // Below a millisecond is no time left: a timer waits at least that long (and a virtual clock
      // would not move for a fraction of a microsecond, looping here forever).
      if (remainingMs < 1) throw problems.unavailable('No metadata leader could take the write in time; retry later.');
      if (this.#group.isLeader()) {
        try {
          return (await this.#proposeLocal(data, deadlineMs)).result;
        } catch (err) {
          if (!(err instanceof NotLeader)) throw err;
          // Refused although this node leads: a leadership transfer is pending. Retrying at once
          // would loop on microtasks only (awaiting a rejected promise never yields to timers or
          // I/O), so neither the ticks that give the transfer up nor the turn that sends it, nor
          // any HTTP request, would run until the deadline. Wait a little, then look again.
          await this.#sleep(Math.min(leaderRetryMs, remainingMs));
          continue;
        }
      }
      const to = this.#forwardTarget();
      if (to === undefined || this.#transport === undefined) {
        await this.#sleep(Math.min(leaderRetryMs, remainingMs));
        continue;
      }
      // A member outside the configuration guesses where the leader is: an attempt that goes
      // unanswered (a lost forward, a peer cut off) is given up after an election timeout (outcome
      // unknown), instead of holding its caller for the whole deadline on one guess.
      const attemptMs = this.#group.leader === noNode ? Math.min(remainingMs, this.#o.electionTicks * this.#o.tickMs) : remainingMs;
      const answer = await this.#transport.forward(to, { command: data, flowId, deadlineMs: attemptMs });
      switch (answer.status) {
        case 'applied': {
          const result = decodeResult(answer.result);
          if (result === undefined) throw problems.unavailable(`The metadata leader (node ${to}) sent a malformed answer.`);
          // The leader acknowledged it, so it is released (metadata-leases.ts acknowledged): the
          // answer here need not wait for the leader's next heartbeat to say so.
          this.#leases?.acknowledged(answer.index);
          await this.#reads.waitApplied(answer.index, deadlineMs);
          return result;
        }
        case 'notLeader':
          this.#hint = answer.leaderHint === noNode || answer.leaderHint === this.#group.self ? undefined : answer.leaderHint;
          await this.#sleep(Math.min(leaderRetryMs, remainingMs));
          continue;
        case 'unavailable':
          // Not retried here, not even a guess that went unanswered: the peer may have proposed it,
          // and a second attempt could apply the command twice (host simulation seed 287 with a
          // retry here: a write applied again after a later one). The caller retries (the
          // registration does, and asks the next peer).
          if (attemptMs < remainingMs) this.#hint = undefined;
          throw problems.unavailable(`Metadata write not confirmed: ${answer.detail}. It may or may not have been applied; retry.`);
      }
    }
  }

  /**
   * The node a proposal is forwarded to: the leader's. A member outside the configuration (a new one,
   * waiting for the leader to add it: its registration is what makes the leader do so) hears from no
   * leader; it asks the peers in turn, and follows the leader a peer names in its answer.
   */
  #forwardTarget(): NodeId | undefined {
    const lead = this.#group.leader;
    if (lead !== noNode) return lead === this.#group.self ? undefined : nodeOfMember(lead);
    const conf = this.#group.conf;
    if (conf.voters.includes(this.#group.self) || conf.learners.includes(this.#group.self)) return undefined;
    if (this.#hint !== undefined) return nodeOfMember(this.#hint);
    const peers = this.#o.directory.map((m) => m.id).filter((id) => id !== this.#o.self);
    if (peers.length === 0) return undefined;
    return peers[this.#asked++ % peers.length];
  }

  /** Proposes on this node (its leader); NotLeader when it does not lead or a transfer is pending. */
  async #proposeLocal(data: Uint8Array, deadlineMs: number): Promise<{ result: ApplyResult; index: Index }> {
    const refusal = this.#host.refusal;
    if (refusal !== undefined) throw problems.unavailable(`The metadata log cannot be written now (${refusal.message}); retry.`);
    try {
      const term = this.#group.term;
      const a = await this.#group.propose(data, deadlineMs);
      if (a.outcome === undefined) throw new Error(`metadata entry ${a.index} applied without a result`);
      // Invariant 6 with read leases: not acknowledged before every node that may hold a lease of
      // this leader has applied it (or its lease ran out), nor before a new leader waited out the
      // leases of the one before it.
      if (this.#leases !== undefined) await this.#leases.gate(a.index, term, deadlineMs);
      return { result: a.outcome, index: a.index };
    } catch (err) {
      if (!(err instanceof ProposalFailedError)) throw err;
      switch (err.reason) {
        case 'notLeader':
          throw new NotLeader();
        case 'overwritten':
          throw problems.unavailable('The metadata leader lost its leadership before the write committed; retry.');
        case 'timeout':
          throw problems.unavailable('The metadata write did not commit in time (no quorum?). It may or may not be applied later; retry.');
        case 'refused':
          throw problems.unavailable(err.storageError === undefined ? `The metadata leader refused the write (${err.message}); retry.` : `The metadata log could not be written (${err.storageError.message}); retry.`);
        case 'closed':
          throw problems.unavailable('The node is shutting down; retry on another node.');
        case 'expired':
          throw problems.unavailable('The metadata write waited past its deadline and was not proposed; retry.');
      }
    }
  }

  /** A follower forwarded a proposal to us (the transport's Propose handler). */
  async #proposeForwarded(p: ForwardedProposal): Promise<ForwardAnswer> {
    if (!this.#group.isLeader()) return { status: 'notLeader', leaderHint: this.#group.leader };
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
      if (err instanceof NotLeader) return { status: 'notLeader', leaderHint: this.#group.leader };
      return { status: 'unavailable', detail: (err as Error).message };
    }
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  /**
   * Resolves once a read of `state` reflects every write acknowledged before the call; undefined when
   * that is already so (the leader of a group of one: every write it acknowledged was applied first).
   */
  readBarrier(): Promise<void> | undefined {
    if (this.#closed) return Promise.reject(problems.unavailable('The node is shutting down; retry on another node.'));
    if (this.#group.isSingleton() && this.#group.isLeader()) return undefined;
    const leases = this.#leases;
    // With read leases, what the round lets this node show must also be released (metadata-lease.ts).
    if (leases !== undefined) return this.#reads.barrier().then(() => leases.waitReleased(this.#now() + this.#o.proposalTimeoutMs));
    return this.#reads.barrier();
  }

  /**
   * readBarrier() for publishing: with read leases, a node that holds one (or the leader, while a
   * quorum vouched for it recently) reads its applied state without a round; without a lease it takes
   * the ReadIndex round, and asks for a lease on its next answers to the leader.
   */
  publishBarrier(): Promise<void> | undefined {
    if (this.#closed) return Promise.reject(problems.unavailable('The node is shutting down; retry on another node.'));
    if (this.#group.isSingleton() && this.#group.isLeader()) return undefined;
    if (this.#leases === undefined) return this.#reads.barrier();
    const leases = this.#leases;
    const r = leases.read();
    if (r.kind === 'now') return undefined;
    const deadlineMs = this.#now() + this.#o.proposalTimeoutMs;
    if (r.kind === 'release') return leases.waitReleased(deadlineMs);
    const first = r.kind === 'apply' ? this.#reads.waitApplied(r.index, deadlineMs) : this.#reads.barrier();
    return first.then(() => leases.waitReleased(deadlineMs));
  }

  /**
   * Resolves once an answer built from `state` may leave: everything this node applied that changed
   * its state is released (docs/metadata-raft.md, "Read leases"); undefined when that is so now (no
   * allocation: the common case, on every publish). The read barriers check the release when they
   * resolve, but a handler reads later (after the hook, after its own awaits), and an entry applied
   * meanwhile may not be released yet: showing it, a read could show a write that a later read on a
   * lease holder that has not applied it does not. Checking as the answer leaves covers every read
   * the answer was built from (what a node applied only grows). Fails with 503 when the release wait
   * gives up (the read deadline; while this node follows a leader, one new leader's wait later).
   */
  answerBarrier(): Promise<void> | undefined {
    const leases = this.#leases;
    if (leases === undefined || (this.#group.isSingleton() && this.#group.isLeader()) || leases.showable()) return undefined;
    if (this.#closed) return Promise.reject(problems.unavailable('The node is shutting down; retry on another node.'));
    return leases.waitReleased(this.#now() + this.#o.proposalTimeoutMs);
  }

  /**
   * The last applied index whose entry changed the state (what a read of `state` shows), and the read
   * lease this node holds as a follower (metadata-leases.ts heldLease): for observers, the simulation's
   * check that what one node shows every lease holder has applied.
   */
  get lastChange(): Index {
    return this.#lastChange;
  }

  heldLease(): Index | undefined {
    return this.#leases?.heldLease();
  }

  /** What the read leases did (undefined without them), for metrics and the benchmarks. */
  get leaseStats(): MetadataLeases['stats'] | undefined {
    return this.#leases?.stats;
  }

  // -------------------------------------------------------------------------------------------
  // The state machine (called by the node host's turn through the group)

  #apply(e: Entry): Outcome {
    if (e.data.byteLength === 0) return undefined; // a new leader's no-op
    this.#lastChange = e.index;
    return applyCommand(this.#sm, e, this.#o);
  }

  #confApplied(index: Index): void {
    this.#lastChange = index;
    const conf = this.#group.conf;
    this.#o.logger.info({ raftId: this.#group.self, index, voters: conf.voters, learners: conf.learners }, 'metadata configuration changed');
  }

  #restore(snap: Snapshot): void {
    this.#sm = decodeImage(snap.data);
    this.#lastChange = snap.metadata.index;
    this.#o.logger.info({ raftId: this.#group.self, index: snap.metadata.index, term: snap.metadata.term }, 'installed a metadata snapshot from the leader');
    this.#o.onRestored?.(this.#sm);
  }

  #changed(now: GroupState, before: GroupState): void {
    const log = this.#o.logger;
    const raftId = this.#group.self;
    if (now.term !== before.term) log.info({ raftId, fromTerm: before.term, term: now.term }, 'metadata term changed');
    if (now.role !== before.role) {
      if (now.role === 'preCandidate' || now.role === 'candidate') {
        log.info({ raftId, term: now.term, role: now.role }, now.role === 'preCandidate' ? 'metadata pre-vote started' : 'metadata election started');
      } else if (now.role === 'leader') {
        log.info({ raftId, term: now.term }, 'became metadata leader');
      } else if (before.role === 'leader') {
        log.info({ raftId, term: now.term }, 'stepped down as metadata leader');
      }
    }
    if (now.lead !== before.lead) {
      log.info({ raftId, term: now.term, leader: now.lead === noNode ? null : now.lead, previousLeader: before.lead === noNode ? null : before.lead }, 'metadata leader changed');
      this.#o.onLeaderChange?.(now.lead === noNode ? null : now.lead, now.term);
      this.#reads.leaderChanged();
    }
    this.#leases?.changed();
  }

  #readyDone(rd: Ready): void {
    if (rd.damaged !== undefined) this.#o.logger.error({ raftId: this.#group.self, leader: this.#group.leader, damagedIndex: rd.damaged.index }, 'metadata raft log damaged: the leader counts entries this node does not hold (entries it had acknowledged were lost); it will not vote or lead until repaired');
    if (rd.termFloor !== undefined) this.#o.logger.warn({ raftId: this.#group.self, term: rd.termFloor }, 'metadata raft member learned its term floor from a majority of the other members: it takes entries from a leader now');
    if (rd.repaired && this.#acceptLoss) {
      this.#acceptLoss = false;
      this.#o.logger.error({ raftId: this.#group.self, term: this.#group.term }, 'metadata raft group leads again with what it held (the loss was accepted): its damage mark is removed');
      if (this.#lossFacts !== undefined) this.#o.onLossAccepted?.({ ...this.#lossFacts, term: this.#group.term });
      this.#lossFacts = undefined;
    } else if (rd.repaired) this.#o.logger.warn({ raftId: this.#group.self, term: this.#group.term, leader: this.#group.leader }, 'metadata raft member repaired from the leader: it votes and may lead again');
    if (rd.readStates.length > 0) this.#reads.answered(rd.readStates);
  }

  // -------------------------------------------------------------------------------------------
  // What arrives from the transport

  /** The transport's view of this group (its `propose` is the forwarded one, not propose() above). */
  transportHandler(): TransportHandler {
    return {
      receive: (m) => {
        if (!this.#closed) this.#host.receive(metadataGroupId, m);
      },
      propose: (p) => this.#proposeForwarded(p),
      unreachable: (id) => {
        if (this.#closed) return;
        for (const m of this.#group.membersOn(id)) this.#group.raw.reportUnreachable(m);
      },
      snapshotStatus: (id, delivered) => {
        if (!this.#closed) this.#host.snapshotStatus(metadataGroupId, id, delivered);
      },
    };
  }

  // -------------------------------------------------------------------------------------------
  // Observation and shutdown

  view(): ClusterView {
    const st = this.#group.raw.status();
    const conf = this.#group.conf;
    const ids = new Set<NodeId>([this.#o.self, ...[...conf.voters, ...conf.learners].map(nodeOfMember), ...this.#o.directory.map((m) => m.id)]);
    const members = [...ids].sort((a, b) => a - b).map((id): ClusterMemberView => {
      const dir = this.#o.directory.find((m) => m.id === id);
      const self = id === this.#o.self;
      const on = this.#group.membersOn(id);
      return {
        id,
        self,
        // The node's best standing: while a new member replaces a former one, the node still votes
        // through the former until it is removed.
        suffrage: on.some((m) => conf.voters.includes(m)) ? 'voter' : on.length > 0 ? 'learner' : 'none',
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
        leader: st.lead === noNode ? null : nodeOfMember(st.lead),
        member: this.#group.self,
        members: [
          ...conf.voters.map((id): MetadataMemberView => ({ id, node: nodeOfMember(id), incarnation: incarnationOfMember(id), suffrage: 'voter' })),
          ...conf.learners.map((id): MetadataMemberView => ({ id, node: nodeOfMember(id), incarnation: incarnationOfMember(id), suffrage: 'learner' })),
        ].sort((a, b) => a.id - b.id),
        term: st.term,
        commit_index: st.commit,
        applied_index: this.#group.applied,
        last_index: st.lastIndex,
        snapshot_index: this.#store.storage.snapshot().metadata.index,
        raft_damaged: st.damaged !== null,
        raft_damage: st.damaged === null ? null : (this.#store.damage?.reason ?? 'repair under way'),
      },
    };
  }

  #now(): number {
    return this.#o.clock.monotonicMs();
  }

  #sleep(ms: number): Promise<void> {
    return this.#o.sleep !== undefined ? this.#o.sleep(ms) : new Promise((resolve) => setTimeout(resolve, ms));
  }

  #fatal(err: unknown): void {
    if (this.#closed) return;
    this.#o.logger.fatal({ err, raftId: this.#group.self }, 'metadata raft group failed');
    void this.close();
    this.#o.onFatal?.(err);
  }

  /** Leaves the node host: what waits fails with 503; a turn handling the group finishes first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#compaction.close();
    this.#reads.close(problems.unavailable('The node is shutting down; retry on another node.'));
    this.#leases?.close(problems.unavailable('The node is shutting down; retry on another node.'));
    await this.#host.remove(metadataGroupId);
  }
}
