/**
 * One simulated server running the production code: a RaftNodeHost (one Ready loop, one write per
 * turn for every group), the metadata group on it (RaftMetadataGroup, group 0) and PartitionReplicas
 * (partitions as Raft groups) over a SimDisk, with a
 * clock, timers and a scheduler that are all events of the simulator's queue. A crash abandons the
 * whole object graph (as kill -9 abandons a process) and the next start builds a new one over what
 * the disk kept; events scheduled by an older incarnation are void.
 *
 * Each node's clock runs at its own rate (tick-rate skew): a fast node times out elections sooner, a
 * slow one later, as nodes with drifting timers would.
 */
import type { LeaseTiming } from '../broker/metadata-lease.js';
import pino from 'pino';
import type { Clock } from '../core/ports.js';
import { RaftMetadataGroup, type MetadataTransport } from '../broker/metadata-group.js';
import { diskTokenOf, markerIntervalMs, NodeDisk } from '../broker/node-disk.js';
import { registerDisk } from '../broker/disk-registration.js';
import { MetadataMemberReplacer } from '../broker/metadata-members.js';
import { PartitionMemberReplacer } from '../broker/partition-members.js';
import { orphanedByNewMember } from '../broker/partition-state-held.js';
import { isFormerMember } from '../metadata/partition-member-replacement.js';
import { nodeOfMember } from '../core/member-id.js';
import { PartitionReplicas, type AppendForwarder, type PlacementLookup } from '../broker/partition-replicas.js';
import type { PartitionReplica } from '../broker/partition-replica.js';
import { PartitionUnavailableError } from '../log/errors.js';
import { ReplicaMover, type ReplicaMoverOptions } from '../broker/replica-mover.js';
import type { MoveAction } from '../metadata/replica-move-plan.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { PartitionPlacement } from '../metadata/placement-types.js';
import { RaftNodeHost, type GroupTransport, type HostScheduler, type TickSource } from '../broker/raft-host/node-host.js';
import type { RaftGroup } from '../broker/raft-host/raft-group.js';
import type { Entry, NodeId } from '../raft/index.js';
import type { PersistRequest } from '../broker/raft-log-store.js';
import type { GroupHandler } from '../transport/index.js';
import type { SubscriptionHub } from '../consumption/subscription-hub.js';
import type { Prng } from './prng.js';
import { NodeClock } from './node-clock.js';
import { SimCell } from './sim-cell.js';
import { simLogger } from './sim-log.js';
import type { SimDisk } from './sim-disk.js';

const silent = pino({ level: 'silent' });
const epochMs = 1_700_000_000_000;

export interface HostTuning {
  readonly tickMs: number;
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  readonly appendTimeoutMs: number;
  /** Raft entries a partition keeps in memory (small: followers behind it get a snapshot and fetch the log). */
  readonly memoryEntries: number;
  /** The slabs of the memory tails (undefined: as production sizes them; small: they fill, are reused, refuse entries (some larger than a slab) and make the tails compact). */
  readonly tailSlabs: { readonly totalBytes: number; readonly slabBytes: number } | undefined;
  /** Applied metadata entries between snapshots (small: compaction and snapshot installs happen often). */
  readonly metadataSnapshotEntries: number;
  /** How long a metadata write or read may take (node ms). */
  readonly metadataTimeoutMs: number;
  /** How often a node runs retention over its replicas (node ms; undefined: never). */
  readonly retentionEveryMs: number | undefined;
  /**
   * The metadata group's read leases (undefined: none, every read takes a ReadIndex round). With
   * them, every clock's rate stays within their drift bound (setRate clamps it): skew beyond the bound
   * is outside what leases are safe under.
   */
  readonly readLeases: LeaseTiming | undefined;
}

/** What a node needs from the simulation. */
export interface HostNodeEnv {
  nowMs(): number;
  /** Schedules `fn` after `delayMs` of virtual time; void unless `node` is still incarnation `inc`. */
  at(delayMs: number, node: SimHostNode, inc: number, fn: () => void): void;
  /** The virtual time an fsync of the node's marker file takes. */
  syncMs(node: NodeId): number;
  readonly tuning: HostTuning;
  /** Where each partition lives, as this node's metadata has applied it. */
  placement(node: NodeId): PlacementLookup;
  /** How this node's ReplicaMover records a step of a move in metadata. */
  proposeMove(node: SimHostNode): ReplicaMoverOptions['propose'];
  /** Every placement as this node's metadata has applied it (what its PartitionMemberReplacer reads). */
  placements(node: NodeId): Iterable<{ readonly placement: PartitionPlacement }>;
  /** Every node: the metadata group's founding voters. */
  readonly founders: readonly NodeId[];
  /** How the metadata group forwards a follower's proposal to its leader. */
  metadataTransport(node: SimHostNode): MetadataTransport;
  /** The metadata group opened (before it starts), for the invariant checks. */
  metadataOpened(node: SimHostNode, md: RaftMetadataGroup): void;
  /** The partitions (topic, partition) this node holds a replica of (voter or learner), as its metadata says. */
  partitionsOf(node: NodeId): readonly { topic: number; partition: number }[];
  transport(node: SimHostNode): GroupTransport;
  forwarder(node: SimHostNode): AppendForwarder;
  /** The host stopped itself (a failed fsync, a broken invariant). */
  fatal(node: SimHostNode, incarnation: number, err: unknown): void;
  /** Hooks on every group this node opens, for the invariant checks. */
  opened(node: SimHostNode, replica: PartitionReplica): void;
  persisted(node: SimHostNode, group: RaftGroup<unknown>, rd: PersistRequest): void;
  applied(node: SimHostNode, group: RaftGroup<unknown>, e: Entry): void;
  woke(node: SimHostNode, replica: PartitionReplica): void;
  /** What a round of this node's ReplicaMover did (statistics, trace). */
  moved(node: SimHostNode, actions: readonly MoveAction[]): void;
  /** A retention pass over this node's replicas (src/broker/retention.ts, on the node's own clock). */
  retention(node: SimHostNode): Promise<void>;
  /** Opens again the replicas placed on the node that are not open (as after a partition.move). */
  reopen(node: SimHostNode): void;
  /**
   * The production subscription hub of this node process (host-subscriptions.ts), or none when the
   * run has no subscription consumers.
   */
  hub(node: SimHostNode, inc: number, md: RaftMetadataGroup, replicas: PartitionReplicas): SubscriptionHub | undefined;
  /** The node applied a metadata command (for the subscription checks: every cursor the state machine held). */
  metadataApplied(node: SimHostNode, md: RaftMetadataGroup, cmd: MetadataCommand): void;
  /**
   * A replica placed here could not open (its raft log is damaged and no other replica could repair it
   * yet): main.ts logs it and goes on; it is opened again later.
   */
  openRefused(node: SimHostNode, topic: number, partition: number, err: Error): void;
}

/**
 * The reason the simulator's signals abort with: what AbortController.abort() gives by default (an
 * AbortError), made once. A DOMException made at each abort captures a stack, and the simulator
 * aborts a signal at the end of every served call and every node timeout (a few per cent of a seed's
 * CPU); nothing reads a reason's stack.
 */
export const simAbortReason = new DOMException('This operation was aborted', 'AbortError');

export class SimHostNode {
  readonly id: NodeId;
  readonly #env: HostNodeEnv;
  readonly #rng: Prng;
  disk: SimDisk;
  /** The marker file of NodeDisk: outside the KV, it survives a lost write-ahead-log tail. */
  #cell: SimCell | undefined;
  nodeDisk: NodeDisk | undefined;
  /** What the transport delivers to each group this incarnation hosts (the GroupDispatcher's map). */
  readonly handlers = new Map<number, GroupHandler>();
  incarnation = 0;
  running = false;
  host: RaftNodeHost | undefined;
  metadata: RaftMetadataGroup | undefined;
  replicas: PartitionReplicas | undefined;
  /** Carries out replica moves on this node (production: a timer every 250 ms, and after each applied move). */
  mover: ReplicaMover | undefined;
  /** Its subscription streams and cursor operations (main.ts's SubscriptionHub). */
  hub: SubscriptionHub | undefined;
  /** The node's own time (its rate against simulated time) and its timers (node-clock.ts). */
  readonly #time: NodeClock;
  /**
   * The timeout signals given to the product (`timeout`) that have not fired: those of a process that
   * crashed, or still armed when the run ends, never fire (their virtual timers are dropped), and
   * Node keeps a signal combined from one (AbortSignal.any, remote reads) with an abort listener
   * for as long as it can still abort, with everything the listener reaches: the whole simulation.
   * The run aborts them when it ends (abortTimeouts).
   */
  readonly #timeouts = new Set<AbortController>();
  readonly clock: Clock;

  constructor(id: NodeId, env: HostNodeEnv, rng: Prng, disk: SimDisk) {
    this.id = id;
    this.#env = env;
    this.#rng = rng;
    this.disk = disk;
    this.#time = new NodeClock(() => this.#env.nowMs());
    this.clock = {
      monotonicMs: () => this.#time.monotonicMs(),
      // Wall-clock time is whole milliseconds (Date.now()); monotonic time may be fractional.
      nowMs: () => Math.floor(epochMs + this.clock.monotonicMs()),
    };
  }

  get rate(): number {
    return this.#time.rate;
  }

  /** Changes how fast this node's clock (and so its timers, armed ones too) runs from now on. */
  setRate(rate: number): void {
    const leases = this.#env.tuning.readLeases;
    this.#time.setRate(leases === undefined ? rate : Math.min(1 + leases.drift, Math.max(1 - leases.drift, rate)));
  }

  /** The run ended: every timeout signal that has not fired aborts now (see #timeouts). */
  abortTimeouts(): void {
    for (const ac of this.#timeouts) ac.abort(simAbortReason);
    this.#timeouts.clear();
  }

  /**
   * Runs `fn` after `ms` of this node's time, unless the process `inc` (the running one by default)
   * has crashed by then. A change of the clock's rate moves the timer (node-clock.ts).
   */
  after(ms: number, fn: () => void, inc = this.incarnation): void {
    this.#time.after(ms, fn, (simDelayMs, fire) => this.#env.at(simDelayMs, this, inc, fire));
  }

  /** Starts a process over the disk: its identity and marker, the host, the replicas, then every partition placed here. */
  async start(): Promise<void> {
    this.incarnation++;
    this.running = true;
    // The timers of the previous process are void (env.at drops them): not kept to be moved.
    this.#time.forget();
    this.handlers.clear();
    const env = this.#env;
    const inc = this.incarnation;
    // Everything this process schedules is void once it has crashed, also what its leftover code
    // schedules after the crash.
    const at = (delayMs: number, fn: () => void): void => env.at(delayMs, this, inc, fn);
    const later = (fn: () => void): void => at(env.syncMs(this.id), fn);
    this.#cell = this.#cell === undefined ? new SimCell(later) : this.#cell.reopen(later);
    const scheduler: HostScheduler = {
      soon: (fn) => at(0, fn),
      sleep: (ms) => new Promise<void>((resolve) => this.after(ms, resolve, inc)),
    };
    const ticks: TickSource = {
      every: (ms, fn) => {
        let stopped = false;
        const fire = (): void => {
          if (stopped) return;
          fn();
          this.after(ms, fire, inc);
        };
        // Nodes do not tick in phase: the first tick comes at a random point of the interval.
        this.after(1 + this.#rng.int(ms), fire, inc);
        return () => {
          stopped = true;
        };
      },
    };
    // The marker is paced as in production, on virtual time (a lost tail within its lag goes unnoticed).
    const pacing = { intervalMs: markerIntervalMs, monotonicMs: () => this.clock.monotonicMs(), after: (ms: number, fn: () => void) => this.after(ms, fn, inc) };
    const nodeDisk = await NodeDisk.open({ kv: this.disk, cell: this.#cell, self: this.id, newId: () => this.#rng.uuid(), logger: silent, pacing });
    if (this.incarnation !== inc) return;
    this.nodeDisk = nodeDisk;
    const t = env.tuning;
    const host = new RaftNodeHost({
      self: this.id,
      kv: this.disk,
      tickMs: t.tickMs,
      clock: this.clock,
      ticks,
      scheduler,
      disk: nodeDisk,
      logger: silent,
      onFatal: (err) => env.fatal(this, inc, err),
    });
    const replicas = new PartitionReplicas({
      self: this.id,
      kv: this.disk,
      host,
      placement: env.placement(this.id),
      clock: this.clock,
      random: this.#rng,
      logger: simLogger(this.id, () => env.nowMs()),
      electionTicks: t.electionTicks,
      heartbeatTicks: t.heartbeatTicks,
      appendTimeoutMs: t.appendTimeoutMs,
      memoryEntries: t.memoryEntries,
      ...(t.tailSlabs === undefined ? {} : { tailSlabs: t.tailSlabs }),
      disk: nodeDisk,
      sleep: scheduler.sleep,
      timeout: (ms) => {
        const ac = new AbortController();
        this.#timeouts.add(ac);
        this.after(ms, () => {
          this.#timeouts.delete(ac);
          ac.abort(simAbortReason);
        }, inc);
        return ac.signal;
      },
      ...(this.wiped ? { mayFound: () => false } : {}),
      // As main.ts: the directory's member id, the same in partition groups as in the metadata group (a
      // wiped directory runs a new one, and holds a replica of a group once the placement lists it).
      member: () => nodeDisk.metadataMember,
      formerMember: (m) => isFormerMember(m, this.metadata?.state.disk(nodeOfMember(m))),
      groups: {
        register: (group, handler) => this.handlers.set(group, handler),
        unregister: (group) => this.handlers.delete(group),
      },
    });
    replicas.setForwarder(env.forwarder(this));
    this.host = host;
    host.start(env.transport(this));
    const metadata = await RaftMetadataGroup.open({
      self: this.id,
      // As main.ts: a wiped directory (or one that lost the group's state) joins as a new member.
      member: nodeDisk.metadataMember,
      newMember: () => nodeDisk.newMetadataMember(),
      // As main.ts: one whose partition groups hold records keeps its member id (they were written
      // under it). No storage directories here: the node's KV holds every partition group.
      partitionState: () => orphanedByNewMember(nodeDisk, this.disk, undefined),
      incarnation: `n${this.id}.${inc}`,
      kv: this.disk,
      host,
      founders: this.wiped ? [] : env.founders,
      disk: nodeDisk,
      directory: env.founders.map((id) => ({ id })),
      tickMs: t.tickMs,
      electionTicks: t.electionTicks,
      heartbeatTicks: t.heartbeatTicks,
      snapshotEntries: t.metadataSnapshotEntries,
      proposalTimeoutMs: t.metadataTimeoutMs,
      readLeases: t.readLeases,
      clock: this.clock,
      random: this.#rng,
      logger: silent,
      sleep: scheduler.sleep,
      onFatal: (err) => env.fatal(this, inc, err),
      // As main.ts: applied commands wake the streams they concern; a snapshot wakes them all.
      onApplied: (cmd) => {
        if (this.incarnation !== inc) return;
        this.hub?.applied(cmd);
        if (this.metadata !== undefined) env.metadataApplied(this, this.metadata, cmd);
      },
      onRestored: () => {
        if (this.incarnation === inc) this.hub?.kickAll();
      },
    });
    if (this.incarnation !== inc) return;
    this.metadata = metadata;
    // Clients, consumers and the checks reach the replicas from now on: in main.ts nothing opens a
    // replica before the metadata group has opened (HTTP listens later still, and the transport
    // serves only groups whose replica is open), and a wiped directory's new member id is made as it
    // opens. Reached sooner, a client's publish opened the replica under the node id, the member the
    // directory ran as before (seed 61 of 100: a wiped node joined a group as its former member).
    this.replicas = replicas;
    this.handlers.set(metadata.raftGroup.id, metadata.transportHandler());
    this.#observe(metadata.raftGroup);
    env.metadataOpened(this, metadata);
    metadata.start(env.metadataTransport(this));
    const hub = env.hub(this, inc, metadata, replicas);
    this.hub = hub;
    if (hub !== undefined) {
      // As main.ts: the sessions of the previous process's streams are closed, retried every 500 ms
      // until the metadata group takes it.
      const closeStale = (): void => {
        hub.closeStaleSessions().catch(() => this.after(500, closeStale, inc));
      };
      closeStale();
    }
    // As main.ts: a new member registers (the metadata leader then replaces the node's former member).
    const replacer = new MetadataMemberReplacer(metadata, silent);
    if (metadata.member !== this.id) {
      void registerDisk({
        node: this.id,
        token: () => diskTokenOf(nodeDisk.identity),
        member: () => nodeDisk.identity.metadataMember,
        foundingDisk: () => false,
        registered: () => metadata.state.disk(this.id),
        propose: (cmd) => metadata.propose(cmd),
        sleep: scheduler.sleep,
        stopped: () => this.incarnation !== inc,
        retryMs: 500,
        logger: silent,
      });
    }
    for (const { topic, partition } of env.partitionsOf(this.id)) {
      const r = await this.#ensure(replicas, topic, partition);
      if (this.incarnation !== inc) return;
      if (r !== undefined && !this.#hooked.has(r)) this.#hook(r);
    }
    // As main.ts: the mover starts once the placed replicas are open, drops what was moved away while
    // the node was down, and takes a round every 250 ms.
    const mover = new ReplicaMover({ self: this.id, member: () => nodeDisk.metadataMember, stores: () => [replicas], placement: env.placement(this.id), formerMember: (m) => isFormerMember(m, this.metadata?.state.disk(nodeOfMember(m))), propose: env.proposeMove(this), logger: silent });
    // As main.ts: on the metadata leader, a partition member of a wiped directory is replaced by the
    // member it runs now (a move on the same node, which the partition's leader then carries out).
    const proposeMove = env.proposeMove(this);
    const partitionReplacer = new PartitionMemberReplacer({
      isLeader: () => metadata.isLeader(),
      placements: () => env.placements(this.id),
      registrations: () => metadata.state.disks(),
      // Only partition.move commands come from it (the placements are modelled: host-moves.ts).
      propose: (cmd) => (cmd.op === 'partition.move' ? proposeMove(cmd) : Promise.resolve({ ok: false, detail: `not modelled: ${cmd.op}` })),
      logger: silent,
    });
    await mover.dropStored();
    if (this.incarnation !== inc) return;
    this.mover = mover;
    // A placement applied while the node was starting opens its replica now.
    void this.placementApplied();
    // As main.ts's 5 s timer: a replica placed here whose open failed (a full disk) is opened again.
    let rounds = 0;
    const round = (): void => {
      env.moved(this, mover.round());
      replacer.round();
      partitionReplacer.round();
      if (++rounds % 20 === 0 && env.partitionsOf(this.id).some(({ topic, partition }) => replicas.missingHere(topic, partition) || this.#unhooked(replicas.replica(topic, partition)))) env.reopen(this);
      this.after(250, round, inc);
    };
    this.after(250, round, inc);
    // As startRetention (main.ts): a pass every so often, each after the one before has ended.
    const every = t.retentionEveryMs;
    if (every !== undefined) {
      let passes: Promise<void> = Promise.resolve();
      const retention = (): void => {
        passes = passes.then(() => env.retention(this));
        this.after(every, retention, inc);
      };
      this.after(1 + this.#rng.int(every), retention, inc);
    }
  }

  /**
   * This node applied a new placement of a partition (main.ts, after a partition.move): it opens a
   * replica now placed on it (a new learner starts empty), then takes the next step at once.
   */
  async placementApplied(): Promise<void> {
    const replicas = this.replicas;
    const mover = this.mover;
    if (!this.running || replicas === undefined || mover === undefined) return;
    const inc = this.incarnation;
    for (const { topic, partition } of this.#env.partitionsOf(this.id)) {
      const have = replicas.replica(topic, partition);
      if (have !== undefined && this.#hooked.has(have)) continue;
      const r = await this.#ensure(replicas, topic, partition);
      if (this.incarnation !== inc) return;
      if (r === undefined || replicas.replica(topic, partition) !== r || this.#hooked.has(r)) continue;
      this.#hook(r);
    }
    if (this.incarnation === inc) this.#env.moved(this, mover.round());
  }

  /**
   * Opens a replica placed here. A replica whose open is refused for now (PartitionUnavailableError:
   * a damaged raft log no reachable replica could repair yet) is left closed, as main.ts does: it
   * opens again by itself (PartitionReplicas' retry) or at the next reopen round.
   */
  async #ensure(replicas: PartitionReplicas, topic: number, partition: number): Promise<PartitionReplica | undefined> {
    const inc = this.incarnation;
    try {
      return await replicas.ensure(topic, partition);
    } catch (err) {
      if (this.incarnation !== inc || !(err instanceof PartitionUnavailableError)) throw err;
      this.#env.openRefused(this, topic, partition, err);
      return undefined;
    }
  }

  /** Replicas opened and hooked for the checks, by this incarnation (one opened by a retry is hooked at the next round). */
  #hooked = new WeakSet<PartitionReplica>();

  #unhooked(r: PartitionReplica | undefined): boolean {
    return r !== undefined && !this.#hooked.has(r);
  }

  /** Observes a partition group, and wakes the reader when its replica applied something; tells the checks it opened. */
  #hook(r: PartitionReplica): void {
    this.#hooked.add(r);
    const env = this.#env;
    this.#observe(r.group as RaftGroup<unknown>);
    const onApplied = r.group.onApplied;
    r.group.onApplied = () => {
      onApplied?.();
      env.woke(this, r);
    };    env.opened(this, r);
  }

  /** Observes what a group persists and applies. */
  #observe(g: RaftGroup<unknown>): void {
    const env = this.#env;
    const store = g.store;
    const persisted = store.persisted.bind(store);
    store.persisted = (rd) => {
      env.persisted(this, g, rd);
      persisted(rd);
    };
    const applyEntry = g.applyEntry.bind(g);
    g.applyEntry = (e) => {
      applyEntry(e);
      env.applied(this, g, e);
    };
  }

  /** The raft write sequence number the marker file holds (-1: none yet). */
  get markedSeq(): number {
    return this.#cell?.seq ?? -1;
  }

  /**
   * The data directory was wiped: the marker file goes with the KV (crash() takes the empty disk). The
   * node comes back as a directory that joined its cluster after every group was created: it founds
   * neither the metadata group nor a partition group (as main.ts decides through the founders it
   * recorded and its disk's registration in the metadata, metadata/disk-registry.ts), and joins them
   * empty and damaged.
   */
  wipeDirectory(): void {
    this.#cell = undefined;
    this.wiped = true;
  }

  /**
   * The marker file is lost while the KV keeps (some of) its records: the next start finds the raft
   * state lost (node-disk.ts), as after a lost write-ahead log tail that the marker told.
   */
  loseMarker(): void {
    this.#cell = undefined;
  }

  /** Whether the data directory was wiped since the cluster was founded (see wipeDirectory). */
  wiped = false;

  /** The member id the directory ran as when last seen running (kept while the node is down). */
  #member: number | undefined;

  /**
   * The member id this node's directory runs as, in the metadata group and in partition groups alike
   * (core/member-id.ts): the node id unless the directory joined as a new member after a wipe. While
   * the node is down, the one it last ran as.
   */
  get member(): number {
    const m = this.nodeDisk?.metadataMember;
    if (m !== undefined) this.#member = m;
    return this.#member ?? this.id;
  }

  /** The process dies at once: nothing is closed or flushed, and the disk keeps what `disk` says. */
  crash(next: SimDisk): void {
    void this.member; // remembered while down
    this.running = false;
    this.incarnation++;
    this.host = undefined;
    this.metadata = undefined;
    this.replicas = undefined;
    this.mover = undefined;
    this.hub = undefined;
    this.nodeDisk = undefined;
    this.handlers.clear();
    this.disk = next;
  }
}
