/**
 * The partitions this node replicates: one Raft group per partition on the node's Raft host, and the
 * partition-log surface the storage router uses (append, read, bounds, wait, base, retention, drop).
 * A single node runs exactly this, with one-member groups (DESIGN.md, "One code path").
 *
 * Appends. A batch for a partition this node leads is proposed to its group and answered once it is
 * applied here, i.e. committed (durable on a majority; on one node, fsynced) — with the offsets apply
 * gave it. A batch for a partition led elsewhere is forwarded to its leader with the group's term (the
 * epoch) and a request id (the parts of one request for the same node in one call, forward-grouper.ts); a "not leader" answer is retried on the new leader until the deadline, and
 * a retry reuses the request id, so a batch that did commit before the answer was lost is not
 * appended twice (the state machine de-duplicates, src/replication/partition-state.ts).
 *
 * Reads are local: every node holding a replica reads it up to what it applied (committed events
 * only). Data written before partition replication existed (the former partition store) stays
 * readable below the group's first offset (`legacy`).
 */
import type { Logger } from 'pino';
import { assert } from '../core/assert.js';
import type { Offset } from '../core/offset.js';
import type { Clock, Random } from '../core/ports.js';
import { OffsetExpiredError, PartitionSealedError, PartitionUnavailableError, type KvBatch, type OrderedKv, type PartitionStore } from '../log/index.js';
import { checkArrived, decodeEntryHead, encodeBaseEntry, PartitionEntryError } from '../log/partition-entry.js';
import { BatchCoalescer, type Coalesced } from './batch-coalescer.js';
import { ForwardGrouper } from './forward-grouper.js';
import type { Entry, Message, NodeId, Term } from '../raft/index.js';
import { applyConfChangeToState, decodeConfChange, noNode } from '../raft/index.js';
import { nodeOfMember } from '../core/member-id.js';
import { memberOnNode } from '../metadata/placement-types.js';
import { PartitionState, type PartitionImage } from '../replication/partition-state.js';
import { HistoryMissingError, PartitionReplica, decodeImage, encodeImage, prefixApplied, prefixHistoryPending, prefixOffsetIndex, type ReplicaOutcome, type StoredEventView } from './partition-replica.js';
import type { NodeDisk } from './node-disk.js';
import { RaftGroupCorruptError, RaftLogStore } from './raft-log-store.js';
import { ProposalFailedError, RaftGroup } from './raft-host/raft-group.js';
import type { RaftNodeHost } from './raft-host/node-host.js';
import type { AppendAnswer, AppendRequest, GroupHandler } from '../transport/index.js';
import type { GroupFacts, ReplicaFacts } from '../metadata/cluster-partitions.js';
import { proposeControl, serveControl, type ControlCommand, type ControlSender } from './partition-control.js';

/** Where a partition's group lives: its id and its replicas (the first is the preferred leader). */
export interface GroupPlacement {
  readonly group: number;
  /** Voters. */
  readonly replicas: readonly NodeId[];
  /** Replicas being added (a move in flight): opened here, but neither read nor asked for bounds until promoted. */
  readonly learners?: readonly NodeId[];
  /** The move in flight (metadata/placement-types.ts). */
  readonly moving?: { readonly from: NodeId; readonly to: NodeId };
  /** The group's founding voters when it has been moved (absent: `replicas`). */
  readonly founders?: readonly NodeId[];
  /**
   * The first offset of the partition in this log's timeline (0 for the first timeline): a group that
   * never applied anything starts there, so a new timeline continues the offsets without a base entry.
   */
  readonly start?: number;
}

/** Whether `node` holds a replica (voter or learner) of the group by its placement. */
export const placedOn = (p: GroupPlacement, node: NodeId): boolean => p.replicas.includes(node) || (p.learners?.includes(node) ?? false);

export type PlacementLookup = (topic: number, partition: number) => GroupPlacement | undefined;

/**
 * A publish forwarded to a partition's leader on another node, and its answer: the transport's wire
 * types are the port (one definition of what each field and status means, in transport/types.ts).
 */
export type ForwardedAppend = AppendRequest;
export type { AppendAnswer };

/** How a node reaches a partition leader elsewhere (the gRPC transport). */
export interface AppendForwarder {
  forwardAppend(to: NodeId, req: ForwardedAppend): Promise<AppendAnswer>;
  /**
   * Several parts (each for another partition) to one node in one call, each answered as
   * forwardAppend would answer it, in order (forward-grouper.ts); absent: one forwardAppend per part.
   */
  forwardAppendMany?(to: NodeId, reqs: readonly ForwardedAppend[]): Promise<readonly AppendAnswer[]>;
  /** Log shipping: the leader's Raft entries [fromIndex, toIndex] in bounded chunks. */
  fetchLog?(to: NodeId, req: { group: number; fromIndex: number; toIndex: number; maxBytes: number }, signal?: AbortSignal): AsyncIterable<{ entries: readonly Entry[] }>;
  /** Remote read from a replica on another node (a node holding no replica of the partition). */
  read?(to: NodeId, req: RemoteReadRequest, signal?: AbortSignal): AsyncIterable<RemoteReadChunk>;
  bounds?(to: NodeId, req: { group: number; topic: number; partition: number }): Promise<{ oldest: number; newest: number; epoch: Term; leader: NodeId }>;
  /** A command of a partition's group (seal, base) to the node believed to lead it (partition-control.ts). */
  forwardControl?: ControlSender;
}

export interface RemoteReadRequest {
  readonly group: number;
  readonly topic: number;
  readonly partition: number;
  readonly afterOffset: number;
  readonly maxEvents: number;
  readonly maxBytes: number;
  readonly waitMs: number;
  readonly follow: boolean;
  readonly flowId: string;
}

export interface RemoteReadChunk {
  readonly events: readonly { readonly offset: number; readonly bytes: Buffer }[];
  readonly oldest: number;
  readonly newest: number;
  readonly epoch: Term;
}

/** Bounds of a partition this node holds no replica of, as a replica last told them. */
interface RemoteBounds {
  oldest: number;
  newest: number;
  atMs: number;
  refreshing: boolean;
  /** The replica that answered last (tried first next time). */
  from: NodeId;
  /** The leader that replica named. */
  leader: { id: NodeId; term: Term } | undefined;
}

/** How old remote bounds may get before a read of them asks a replica again. */
const remoteBoundsMaxAgeMs = 500;
/** How long a remote wait for new events lasts before it is asked again. */
const remoteWaitMs = 1000;

export interface ReplicaAppend {
  topic: number;
  partition: number;
  events: Buffer[];
}

export type ReplicaAppendResult = { ok: true; first: Offset; last: Offset } | { ok: false; error: Error };

/** [0x16][group u32] -> [topic u32][partition u32]: the groups this node holds, found again at start. */
const prefixGroupDirectory = 0x16;
/**
 * Entries kept in memory (the default of `memoryEntries`): past it the oldest applied ones are dropped
 * from memory (the KV keeps them), all but a quarter; a leader keeps what a follower still lacks up to
 * sixteen times as many, beyond which that follower is sent a snapshot and fetches the log.
 */
const memoryEntriesDefault = 1024;
/** Bytes of a partition's log kept in memory before the oldest applied entries are dropped from it. */
const memoryBytesMax = 16 * 1024 * 1024;
/** Bytes of all partitions' logs kept in memory on a node (the default of `memoryBytesTotal`). */
const memoryBytesTotalDefault = 64 * 1024 * 1024;
/** Uncommitted bytes a partition's leader accepts before it refuses new batches (back-pressure). */
const uncommittedBytesMax = 16 * 1024 * 1024;
/** Bytes per chunk of log shipping. */
const logChunkBytes = 1 << 20;
const retryMs = 25;
/** How long after a failed repair a partition whose log is corrupt is opened again. */
const retryOpenMs = 5000;
/** How long one replica may take to send the entries that repair a corrupt log. */
const repairFetchMs = 30_000;

/** Why an entry sent to repair a corrupt one cannot be stored, or undefined. */
function committedEntryProblem(e: Entry): string | undefined {
  try {
    if (e.type === 'confChange') decodeConfChange(e.data);
    else if (e.data.byteLength > 0) decodeEntryHead(Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength), false);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function directoryKey(group: number): Buffer {
  const k = Buffer.allocUnsafe(5);
  k[0] = prefixGroupDirectory;
  k.writeUInt32BE(group, 1);
  return k;
}

export interface PartitionReplicasOptions {
  readonly self: NodeId;
  readonly kv: OrderedKv;
  readonly host: RaftNodeHost;
  readonly placement: PlacementLookup;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  /** How long an append may wait for its partition's group (then it fails, retriable). */
  readonly appendTimeoutMs: number;
  /** The store of the version before partition replication, read below each group's first offset. */
  readonly legacy?: PartitionStore;
  /** Raft entries of a partition kept in memory (see memoryEntriesDefault). */
  readonly memoryEntries?: number;
  /**
   * Bytes of applied entries all partitions of the node keep in memory together (the memory tails
   * that serve live consumers without reading the KV): past it, partitions holding more than their
   * share drop their oldest applied entries from memory. Defaults to 64 MiB.
   */
  readonly memoryBytesTotal?: number;
  /** Waits between retries (defaults to a timer; the simulator passes its virtual one). */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * A signal that aborts after `ms` (defaults to AbortSignal.timeout; the simulator passes one on its
   * virtual clock): how long a remote read served here waits for new events.
   */
  readonly timeout?: (ms: number) => AbortSignal;
  /** Where the transport finds each group's handler (absent on a single node: no transport). */
  readonly groups?: { register(group: number, handler: GroupHandler): void; unregister(group: number): void };
  /** The node's disk, for the lost-tail check of the raft log (node-disk.ts); absent in unit tests. */
  readonly disk?: NodeDisk;
  /**
   * Whether this node's data directory may found `group` when it holds no state for it (metadata/
   * disk-registry.ts: its directory founded the cluster, or registered before the group was created).
   * Absent: decided from the disk alone (a directory that lost raft state founds no group of several).
   */
  readonly mayFound?: (group: number) => boolean;
  /**
   * The member id this node's data directory runs as in partition groups (core/member-id.ts), read
   * each time; absent: the node id. A wiped directory runs a new one, and the node holds a replica
   * of a group only once the placement lists that member (docs/partition-replication.md, "A wiped
   * directory rejoins partition groups as a new member"): a placement that still lists the node's
   * former member waits for the metadata leader's replacement.
   */
  readonly member?: () => number;
  /**
   * Whether a member a placement lists is a former member of its node (metadata/partition-member-
   * replacement.ts, isFormerMember: the node's directory was wiped since and runs another member).
   * Nothing of the group is left under it, so a fetch of the retained log before a snapshot asks the
   * other replicas only: its node answers that it does not host the group (until the replacement has
   * added its new member), an answer a fetch otherwise takes for a replica restarting and waits out.
   * Waiting, a learner of a move in flight stayed incomplete for good, the move was never promoted,
   * and the replacement waited for the move (host simulation seeds 7 and 9 of 20, once the simulation
   * ran the replacement). Absent: no member is taken for a former one.
   */
  readonly formerMember?: (member: number) => boolean;
}

export class PartitionReplicas {
  readonly #o: PartitionReplicasOptions;
  readonly #byKey = new Map<string, PartitionReplica>();
  readonly #opening = new Map<string, Promise<PartitionReplica>>();
  /** Per group: the publish batches that wait for the next turn, to be proposed as one entry. */
  readonly #coalescers = new Map<number, BatchCoalescer>();
  #forwarder: AppendForwarder | undefined;
  #closed = false;

  constructor(o: PartitionReplicasOptions) {
    this.#o = o;
  }

  /** The member this node's directory runs as in partition groups (the node id unless it was wiped). */
  #me(): number {
    return this.#o.member?.() ?? this.#o.self;
  }

  /** The nodes of `members` (member ids; noNode is skipped) other than this one, each once, in order. */
  #otherNodes(members: readonly number[]): NodeId[] {
    const out: NodeId[] = [];
    for (const m of members) {
      if (m === noNode) continue;
      const n = nodeOfMember(m);
      if (n !== this.#o.self && !out.includes(n)) out.push(n);
    }
    return out;
  }

  setForwarder(f: AppendForwarder): void {
    this.#forwarder = f;
  }

  static key(topic: number, partition: number): string {
    return `${topic}:${partition}`;
  }

  /** The replica of a partition on this node, opened (or created from its placement) on first use. */
  replica(topic: number, partition: number): PartitionReplica | undefined {
    return this.#byKey.get(PartitionReplicas.key(topic, partition));
  }

  /** Whether the placement puts a replica of the partition on this node that is not open (yet, or its open failed). */
  missingHere(topic: number, partition: number): boolean {
    const placement = this.#o.placement(topic, partition);
    return placement !== undefined && placedOn(placement, this.#me()) && !this.#byKey.has(PartitionReplicas.key(topic, partition)) && !this.#opening.has(PartitionReplicas.key(topic, partition));
  }

  async ensure(topic: number, partition: number): Promise<PartitionReplica | undefined> {
    const key = PartitionReplicas.key(topic, partition);
    const have = this.#byKey.get(key);
    if (have !== undefined) return have;
    // A drop of this partition's replica still in flight (a move took it away, and a later move
    // brings it back before the drop has deleted its data): opened now, the replica would read the
    // data the drop is about to delete and go on from it in memory, while its disk kept only what it
    // wrote after the deletion (host simulation seed 418: a log from entry 16 on, refused at the next
    // start). It opens once the drop is done, empty, as a moved-back replica must.
    const dropping = this.#dropping.get(key);
    if (dropping !== undefined) return dropping.then(() => this.ensure(topic, partition));
    const placement = this.#o.placement(topic, partition);
    if (placement === undefined) return undefined;
    if (!placedOn(placement, this.#me())) {
      // Held elsewhere (or it lists this node's former member: the replacement adds this one): learn its bounds now, so the first answers about it are not empty.
      if (!this.#remote.has(key)) this.#refreshRemote(topic, partition);
      return undefined;
    }
    let p = this.#opening.get(key);
    if (p === undefined) {
      p = this.#open(topic, partition, placement).finally(() => this.#opening.delete(key));
      this.#opening.set(key, p);
    }
    return p;
  }

  async #open(topic: number, partition: number, placement: GroupPlacement): Promise<PartitionReplica> {
    const o = this.#o;
    const me = this.#me();
    const log = o.logger.child({ topic, partition, group: placement.group });
    const load = () => PartitionReplica.load(topic, partition, placement.group, o.kv, o.host, log, placement.start ?? 0);
    const opened = await this.#openStore(await load(), placement, log, load);
    const { store, replica } = opened;
    if (store.damage !== undefined) log.error({ damage: store.damage.reason }, 'partition raft log damaged: this replica will not vote or lead until its leader has repaired it');
    const fresh = store.isEmpty;
    if (fresh) {
      // A node that lost raft state cannot tell a group whose every record it lost from a new one
      // (node-disk.ts): founding afresh could vote twice in a term. It starts the member empty and
      // damaged instead; the leader of the other members repairs it. A group of one has nobody to
      // repair it and founds (a single node that lost its data has lost it).
      // The same holds for a wiped directory that joined its cluster as a new disk: a former
      // directory of this node may have been a member. Only a directory that founded the cluster, or
      // registered in the metadata before the group was created, founds it (metadata/disk-registry.ts).
      const lost = o.disk?.identity.lostRaftState;
      const mayFound = o.mayFound?.(placement.group) ?? lost === undefined;
      // Only a founder writes the founding configuration, and only the founders' one: a node that
      // joins a moved group (a learner, or a voter whose state is gone) starts empty and damaged, so it
      // neither votes nor counts as holding what a former self acknowledged (the leader's progress for
      // it may be stale: a damaged member's rejection voids it) until the leader has brought it up to date.
      // A founder placed as a learner is such a node too: it was moved away (its replica dropped) and
      // is being moved back; founding again would give it the founding log under the leader's state.
      const founders = placement.founders ?? placement.replicas;
      const startedOver = store.damage;
      if (startedOver !== undefined) {
        // Started over empty and damaged (its records were corrupt): its leader brings it up to date.
      } else if (!mayFound && placement.replicas.length > 1 && (me === o.self || lost !== undefined)) {
        // (A directory running a new member id, one no former state of this node ever used, never
        // held the group under it: it joins as a new replica below, undamaged.)
        const why = lost !== undefined ? `this node lost raft state (${lost})` : 'this data directory joined the cluster after the group was created (it was wiped or is new)';
        // Nothing here bounds the terms that former state used in the group (a wiped directory has no
        // term ceiling for it): a voter learns a term floor from the other replicas before it
        // acknowledges anything (src/raft Damage.termUnknown). Not a move's new replica (a learner):
        // its acknowledgements count in no commit until the leader that promotes it has given it that
        // leader's term, and it must answer the probes of a voter wiped meanwhile (two members asking
        // each other would wait for good).
        await store.startEmpty([], `${why}; it holds no state for this group, which a former state of this node may have been a member of`, placement.replicas.includes(me));
        log.error({ damage: store.damage?.reason }, 'partition raft log damaged: this replica will not vote or lead until its leader has repaired it');
      } else if (!founders.includes(me) || (placement.learners?.includes(me) ?? false)) {
        await store.startEmpty([], 'a new replica of a moved group: it holds nothing until its leader has brought it up to date');
        log.info({ founders }, 'partition replica joins its group empty; its leader brings it up to date');
      } else await store.bootstrap([...founders].sort((a, b) => a - b));
      await o.kv.write((b) => {
        const v = Buffer.allocUnsafe(8);
        v.writeUInt32BE(topic, 0);
        v.writeUInt32BE(partition, 4);
        b.put(directoryKey(placement.group), v);
      }, { durable: false });
    }
    const storage = store.storage;
    const snap = storage.snapshot();
    if (snap.metadata.index > replica.applied) {
      // The applied rows were lost with an unsynced write but a snapshot is newer: start from it.
      replica.restoreImage(decodeImage(snap.data));
    } else if (snap.metadata.index > 0) replica.withSnapshotWindow(decodeImage(snap.data));
    // Entries known committed (the founding configuration; what was committed before a restart) are
    // applied now, so the group starts as a member of its configuration and a group of one can elect
    // itself at once instead of after an election timeout.
    const hs = storage.hardState();
    // Applied entries were committed even if the stored commit index (written without fsync) lags.
    if (hs.commit < replica.applied) storage.setHardState({ ...hs, commit: replica.applied });
    // The only voter: every entry of its durable log was written by itself as leader and is committed
    // (a majority of one), even if the stored commit index lags (it is written without fsync). Taking
    // the whole log now makes everything durable visible at start, as the store before replication
    // did: a client that resends what it could not see would otherwise store it twice.
    const last = storage.lastIndex();
    const alone = (c: { voters: readonly NodeId[]; learners: readonly NodeId[] }) => c.voters.length === 1 && c.voters[0] === me && c.learners.length === 0;
    if (storage.hardState().commit < last && alone(storage.confStateAt(storage.hardState().commit)) && alone(storage.confStateAt(last))) {
      storage.setHardState({ ...storage.hardState(), commit: last });
    }
    const commit = Math.min(storage.hardState().commit, last);
    let conf = storage.confStateAt(replica.applied);
    for (const e of commit > replica.applied ? storage.entries(replica.applied + 1, commit + 1, Number.MAX_SAFE_INTEGER) : []) {
      if (e.type === 'confChange') conf = applyConfChangeToState(conf, decodeConfChange(e.data));
      replica.replay(e);
    }
    const applied = replica.applied;
    const group = new RaftGroup<ReplicaOutcome>({
      id: placement.group,
      self: me,
      store,
      conf,
      applied,
      electionTicks: o.electionTicks,
      heartbeatTicks: o.heartbeatTicks,
      random: o.random,
      // A group whose followers lag refuses new batches past this many uncommitted bytes: publishers
      // get a failed item at once (retriable) instead of the leader buffering without bound.
      uncommittedBytesMax: uncommittedBytesMax,
      // The voters a member whose past term is unknown asks for theirs: the placement's, and a move's
      // new replica, so that the raft configuration is this set or one member fewer at every step of
      // a move (the core's count of answers covers one member more or less than it is told). Read
      // from the placement now, not at open: a move that ends or is cancelled while the member
      // probes leaves a node that dropped its replica and never answers (the count would wait for it).
      termProbePeers: () => {
        const now = o.placement(topic, partition);
        const p = now !== undefined && now.group === placement.group ? now : placement;
        return [...new Set([me, ...p.replicas, ...(p.learners ?? [])])];
      },
    });
    replica.attach(group);
    // Stopped while fetching the log before its snapshot: it says so to its leaders from its first answer on.
    if (replica.pendingHistory !== undefined) group.raw.setIncomplete(true);
    replica.onTailBytes = (delta) => (this.#tailBytes += delta);
    // What the log holds in memory already (entries restored from the KV at open) counts from now on.
    this.#tailBytes += replica.tailBytes;
    replica.syncTailBytes();
    replica.onRestoredWithoutLog = () => this.#fetchHistory(replica);
    // A repair a read asked for writes nothing once the replica is dropped (see #repairEntries).
    const hosted = () => !this.#closed && this.#byKey.get(PartitionReplicas.key(topic, partition)) === replica;
    replica.repairEntries = (from, to) => this.#repairEntries(topic, partition, placement.group, from, to, hosted);
    const coalescer = new BatchCoalescer(group, o.clock, () => o.host.kick(group.id));
    group.beforeReady = () => coalescer.flush();
    this.#coalescers.set(placement.group, coalescer);
    const previousOnApplied = group.onApplied;
    group.onApplied = () => {
      previousOnApplied?.();
      this.#maybeCompact(replica);
      this.#overBudget();
    };
    group.onLeaderChange = (lead, term) => log.info({ leader: lead === noNode ? null : lead, term }, 'partition leader changed');
    this.#byKey.set(PartitionReplicas.key(topic, partition), replica);
    o.host.add(group as RaftGroup<unknown>);
    o.groups?.register(placement.group, this.#handler(replica));
    // A crash after retention removed entries but before the snapshot saying where the log now starts
    // was written leaves a stored image whose `start` names removed entries: a follower sent it would
    // ask this replica for them again and again (host simulation, seed 292). It is taken again.
    if (replica.pendingHistory === undefined) void this.#refreshStaleStart(replica, log);
    if (replica.pendingHistory !== undefined) {
      // It stopped while fetching the log before its snapshot (or before it began): fetch it again.
      log.info({ ...replica.pendingHistory }, 'partition replica opens without the retained log before its snapshot: fetching it again');
      this.#fetchHistory(replica);
    }
    // A one-member group elects itself at once; a new group's preferred leader campaigns at once, so
    // a fresh partition does not wait an election timeout for its first leader.
    if (group.isSingleton() || (fresh && placement.replicas[0] === me)) {
      group.raw.campaign();
      o.host.kick(placement.group);
    }
    if (o.legacy !== undefined && fresh) await this.#continueLegacy(replica);
    log.debug({ applied, fresh }, 'partition replica opened');
    return replica;
  }

  /**
   * Opens the group's log. Committed entries that fail their checks (entries the replica applied:
   * its offset index points into them) are replaced by the same entries of a healthy replica, then
   * the log is opened again; corrupt entries past the applied index are cut and the member is marked
   * damaged (raft-log-store.ts): it neither votes nor leads until its leader has sent them again.
   * With no other replica (a single node), or none that answers, the partition stays closed with a
   * message saying why; a replica that is not repaired yet is tried again every few seconds.
   */
  async #openStore(replica: PartitionReplica, placement: GroupPlacement, log: Logger, reload: () => Promise<PartitionReplica>): Promise<{ store: RaftLogStore; replica: PartitionReplica }> {
    const o = this.#o;
    let startedOver = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return { store: await RaftLogStore.open(o.kv, placement.group, { keepCompacted: true, disk: o.disk, applied: replica.applied }), replica };
      } catch (err) {
        if (!(err instanceof RaftGroupCorruptError)) throw err;
        if (err.startOver !== undefined && !startedOver) {
          // A corrupt snapshot or damage mark: what this replica held and acknowledged cannot be
          // told. With other replicas to bring it up to date, it starts over as a wiped member does:
          // its records and rows removed, empty and marked damaged (no vote, no campaign) until its
          // leader has brought it past everything it may have held. Alone, nothing can.
          const others = this.#otherNodes([...placement.replicas, ...(placement.learners ?? [])]);
          if (others.length === 0) throw new PartitionUnavailableError(replica.topic, replica.partition, new RaftGroupCorruptError(placement.group, err.found, undefined, 'stays closed: this node holds the only replica of the partition, there is none to repair it from'));
          log.error({ found: err.found, damage: err.startOver }, 'partition raft state corrupt (its snapshot or damage mark): starting over empty and damaged; its leader brings it up to date');
          const group = placement.group;
          await RaftLogStore.startOver(o.kv, group, o.disk, { ...err.startOver, reason: `started over: ${err.found.join('; ')}` }, (b) => dropReplicaRows(b, group));
          startedOver = true;
          replica = await reload();
          attempt = -1;
          continue;
        }
        // Answered to clients as the partition being unavailable here (503, with what was found).
        if (err.committed === undefined || attempt > 0) throw new PartitionUnavailableError(replica.topic, replica.partition, err);
        const { from, to } = err.committed;
        log.error({ found: err.found, from, to }, 'partition raft log corrupt: replacing its committed entries from another replica before it opens');
        let outcome: 'repaired' | 'alone' | Error;
        try {
          outcome = await this.#repairEntries(replica.topic, replica.partition, placement.group, from, to);
        } catch (e) {
          outcome = e as Error;
        }
        if (outcome === 'alone') throw new PartitionUnavailableError(replica.topic, replica.partition, new RaftGroupCorruptError(placement.group, err.found, undefined, 'stays closed: this node holds the only replica of the partition, there is none to repair it from'));
        if (outcome !== 'repaired') {
          this.#retryOpen(replica.topic, replica.partition);
          throw new PartitionUnavailableError(replica.topic, replica.partition, new Error(`its raft log is corrupt (${err.found.join('; ')}) and no other replica could replace the entries ${from}..${to} yet (${outcome.message}); tried again in ${retryOpenMs / 1000} s`));
        }
        log.warn({ from, to }, 'partition raft log repaired from another replica');
      }
    }
  }

  /**
   * Opens the replica again once its repair could work. Through the injected sleep when there is one
   * (the host simulation's virtual timers: a real timer there fired outside the simulated time and
   * made a seed's run depend on the machine); the process's own timer is unref'd so a pending retry
   * does not hold a closing process open.
   */
  #retryOpen(topic: number, partition: number): void {
    if (this.#closed) return;
    const wait = this.#o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
    void wait(retryOpenMs).then(() => {
      if (!this.#closed) this.ensure(topic, partition).catch(() => undefined);
    });
  }

  /**
   * Replaces the stored entries [from, to] of a group with the same committed entries of another
   * replica (fetched with FetchLog, which serves applied entries only, in bounded chunks), each checked
   * before it is written (the partition entry's own CRC32C, a configuration change's encoding), in
   * one durable write per chunk. 'alone' when no other replica exists to ask.
   *
   * `live` is asked right before each chunk's write is issued: a replica dropped meanwhile (moved
   * away, event type deleted) writes nothing more, since a write issued after the drop's delete would
   * leave the entries behind (a fetch from another node takes long enough for a drop to come). A write
   * issued before it lands before it (the KV applies writes in call order). A repair before the
   * replica opens needs no check: a drop waits for the open.
   */
  async #repairEntries(topic: number, partition: number, group: number, from: number, to: number, live: () => boolean = () => !this.#closed): Promise<'repaired' | 'alone'> {
    const fetchLog = this.#forwarder?.fetchLog?.bind(this.#forwarder);
    const p = this.#o.placement(topic, partition);
    const leader = this.replica(topic, partition)?.group.leader;
    const peers = this.#otherNodes([leader ?? noNode, ...(p?.replicas ?? [])]);
    if (peers.length === 0 || fetchLog === undefined) return 'alone';
    let next = from;
    const failures: string[] = [];
    for (const peer of peers) {
      try {
        const signal = AbortSignal.timeout(repairFetchMs);
        for await (const chunk of fetchLog(peer, { group, fromIndex: next, toIndex: to, maxBytes: logChunkBytes }, signal)) {
          for (const e of chunk.entries) {
            const problem = committedEntryProblem(e);
            if (problem !== undefined) throw new Error(`its entry ${e.index} fails its check too: ${problem}`);
          }
          if (chunk.entries[0]?.index !== next) throw new Error(`it sent entry ${chunk.entries[0]?.index}, not ${next}`);
          if (!live()) throw new ReplicaDroppedError();
          await RaftLogStore.replaceEntries(this.#o.kv, group, chunk.entries, this.#o.disk);
          next = chunk.entries[chunk.entries.length - 1]!.index + 1;
        }
        if (next > to) return 'repaired';
        failures.push(`node ${peer} holds the entries up to ${next - 1} only`);
      } catch (err) {
        if (err instanceof ReplicaDroppedError) throw err;
        failures.push(`node ${peer}: ${(err as Error).message}`);
      }
    }
    throw new Error(failures.join('; '));
  }

  /** A partition with data in the former store continues its offsets after it. */
  async #continueLegacy(replica: PartitionReplica): Promise<void> {
    const b = this.#o.legacy!.bounds(replica.topic, replica.partition);
    if (b.newest < 0 && b.oldest === 0) return;
    const base = b.newest + 1;
    await this.#proposeUntil(replica, encodeBaseEntry(base), this.#o.clock.monotonicMs() + this.#o.appendTimeoutMs);
    this.#o.logger.info({ topic: replica.topic, partition: replica.partition, base }, 'partition continues the offsets of the former store');
  }

  async #proposeUntil(replica: PartitionReplica, data: Buffer, deadlineMs: number): Promise<ReplicaOutcome> {
    for (;;) {
      try {
        return (await replica.group.propose(data, deadlineMs)).outcome;
      } catch (err) {
        if (!(err instanceof ProposalFailedError) || err.reason !== 'notLeader' || this.#o.clock.monotonicMs() >= deadlineMs) throw err;
        await (this.#o.sleep ?? sleep)(retryMs);
      }
    }
  }

  /** What the transport delivers to a partition group hosted here. */
  #handler(r: PartitionReplica): GroupHandler {
    const id = r.groupId;
    return {
      receive: (m) => {
        if (m.type === 'snap') void this.#catchUp(r, m);
        // An entry whose checksum fails arrived damaged: the whole append is dropped (Raft takes it as
        // lost and the leader sends it again). Taken, it would commit with the intact copies of the
        // others and then get no offsets here (apply drops what does not decode): this replica's
        // offsets would differ from theirs from there on.
        else if (m.type === 'app' && !this.#arrivedIntact(r, m)) return;
        // While the replica applies fetched entries by itself, nothing may move the group's log or
        // commit index: an append that let the group commit those entries too would apply them twice
        // (a damaged member's leader probes it while its snapshot is pending). Raft resends.
        else if (!this.#catchingUp.has(id)) this.#o.host.receive(id, m);
      },
      unreachable: (peer) => r.group.raw.reportUnreachable(peer),
      snapshotStatus: (peer, delivered) => this.#o.host.snapshotStatus(id, peer, delivered),
      append: (_from, req) => this.appendForwarded(req),
      control: (_from, req) => serveControl(r, req, this.#o.clock),
      read: (_from, req, signal) => this.#serveRead(r, req, signal),
      bounds: async () => {
        const b = r.bounds();
        return { oldest: b.oldest, newest: b.newest, epoch: r.group.term, leader: nodeOfMember(r.group.leader) };
      },
      fetchLog: (_from, req, signal) => {
        // Committed entries only (applied ones): those are the same on every replica that holds them,
        // so a replica may fetch them from any other, not only from its leader.
        // A replica still fetching the log before its snapshot holds a part of it at most: it serves
        // nothing below its snapshot, never a log with a hole, and says so with an answer that ends
        // without entries (the asker takes it for a replica without that log and asks another). A
        // refusal the asker took for a passing one kept two replicas fetching the same log, which the
        // third had removed meanwhile, asking each other for good (host simulation seed 277). One that
        // gave that fetch up holds its log from its snapshot on, as if its retention had gone that far:
        // it serves from there (the asker sees where its log starts).
        const floor = r.logFloor;
        const fetching = r.pendingHistory !== undefined;
        const chunks = r.readLog(Math.max(req.fromIndex, floor ?? 0), Math.min(req.toIndex, r.group.applied), Math.min(req.maxBytes, logChunkBytes), signal);
        return (async function* () {
          if (fetching && floor !== undefined && req.fromIndex < floor) return;
          for await (const entries of chunks) yield { entries };
        })();
      },
    };
  }

  #arrivedIntact(r: PartitionReplica, m: Message): boolean {
    for (const e of m.entries) {
      if (e.type !== 'normal') continue;
      try {
        checkArrived(e.data);
      } catch (err) {
        this.#damagedArrivals++;
        if (this.#damagedArrivals <= 10 || this.#damagedArrivals % 100 === 0) {
          this.#o.logger.warn({ topic: r.topic, partition: r.partition, group: r.groupId, from: m.from, index: e.index, err: (err as Error).message, dropped: this.#damagedArrivals }, 'dropped an append whose entry arrived damaged; its leader sends it again');
        }
        return false;
      }
    }
    return true;
  }

  #damagedArrivals = 0;

  /**
   * A read for a node that holds no replica: waits up to `waitMs` for events after the cursor, then
   * answers what this replica applied (committed events only), once or, with `follow`, until the
   * caller cancels. Chunks are produced only as the transport takes them.
   */
  async *#serveRead(r: PartitionReplica, req: RemoteReadRequest, signal: AbortSignal): AsyncIterable<RemoteReadChunk> {
    let after = req.afterOffset as Offset;
    do {
      if (req.waitMs > 0 && r.bounds().newest <= after) {
        const wait = AbortSignal.any([signal, this.#o.timeout?.(req.waitMs) ?? AbortSignal.timeout(req.waitMs)]);
        await r.waitForEvents(after, wait);
      }
      if (signal.aborted) return;
      const b = r.bounds();
      const events = b.newest > after ? await r.read(after, req.maxEvents, req.maxBytes) : [];
      const last = events[events.length - 1];
      if (last !== undefined) after = last.offset;
      yield { events, oldest: b.oldest, newest: Math.max(b.newest, last?.offset ?? -1), epoch: r.group.term };
    } while (req.follow && !signal.aborted);
  }

  // ------------------------------------------------------------------ partitions held elsewhere

  readonly #remote = new Map<string, RemoteBounds>();

  /** The replicas to ask for a partition this node does not hold, the one that answered last first. */
  #remoteTargets(topic: number, partition: number): { group: number; targets: NodeId[] } | undefined {
    const p = this.#o.placement(topic, partition);
    if (p === undefined) return undefined;
    const last = this.#remote.get(PartitionReplicas.key(topic, partition))?.from;
    const targets = this.#otherNodes(p.replicas);
    if (last !== undefined && targets.includes(last)) targets.sort((a, b) => (a === last ? -1 : b === last ? 1 : 0));
    return { group: p.group, targets };
  }

  #noteRemote(topic: number, partition: number, from: NodeId, oldest: number, newest: number, leader?: { id: NodeId; term: Term }): void {
    const key = PartitionReplicas.key(topic, partition);
    const cur = this.#remote.get(key);
    this.#remote.set(key, { oldest, newest: Math.max(newest, cur?.newest ?? -1), atMs: this.#o.clock.monotonicMs(), refreshing: false, from, leader: leader ?? cur?.leader });
  }

  /** Refreshes the bounds of every partition held elsewhere that this node has looked at (periodic). */
  refreshRemoteBounds(): void {
    for (const key of new Set([...this.#remote.keys(), ...this.#remoteUnanswered])) {
      const [topic, partition] = key.split(':').map(Number) as [number, number];
      // Gone, or held here as a voter now (a move promoted this node): nothing to refresh.
      if (this.#o.placement(topic, partition) === undefined || !this.#isRemote(topic, partition)) {
        this.#remote.delete(key);
        this.#remoteUnanswered.delete(key);
      } else this.#refreshRemote(topic, partition);
    }
  }

  /**
   * What the partition's other replicas say is its newest applied offset, each asked at once and
   * given at most `timeoutMs`: the highest answer, and how many there were to ask.
   */
  async newestElsewhere(topic: number, partition: number, timeoutMs = 1000): Promise<{ asked: number; newest: number | undefined }> {
    const where = this.#remoteTargets(topic, partition);
    const ask = this.#forwarder?.bounds?.bind(this.#forwarder);
    if (where === undefined || ask === undefined || where.targets.length === 0) return { asked: 0, newest: undefined };
    const answers = await Promise.all(
      where.targets.map(async (to) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, timeoutMs, undefined)));
        try {
          return await Promise.race([ask(to, { group: where.group, topic, partition }).then((b) => b.newest, () => undefined), late]);
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const got = answers.filter((n): n is number => n !== undefined);
    return { asked: where.targets.length, newest: got.length === 0 ? undefined : Math.max(...got) };
  }

  /** Asks a replica for the bounds (in the background; bounds() answers from the cache meanwhile). */
  #refreshRemote(topic: number, partition: number): void {
    const key = PartitionReplicas.key(topic, partition);
    const cur = this.#remote.get(key);
    if (cur?.refreshing === true || this.#forwarder?.bounds === undefined) return;
    const where = this.#remoteTargets(topic, partition);
    if (where === undefined) return;
    if (cur !== undefined) cur.refreshing = true;
    const bounds = this.#forwarder.bounds.bind(this.#forwarder);
    void (async () => {
      for (const to of where.targets) {
        try {
          const b = await bounds(to, { group: where.group, topic, partition });
          this.#noteRemote(topic, partition, to, b.oldest, b.newest, b.leader === noNode ? undefined : { id: b.leader, term: b.epoch });
          this.#remoteUnanswered.delete(key);
          return;
        } catch {
          // the next replica
        }
      }
      const c = this.#remote.get(key);
      if (c !== undefined) c.refreshing = false;
      // No replica answered the first ask (they may not have opened the new partition yet): the periodic
      // refresh asks again, or this node would name no leader for it until a request touched it.
      else this.#remoteUnanswered.add(key);
    })();
  }

  /** Partitions held elsewhere whose replicas have not answered yet (refreshRemoteBounds asks again). */
  readonly #remoteUnanswered = new Set<string>();

  async #remoteRead(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number, waitMs: number): Promise<StoredEventView[]> {
    const where = this.#remoteTargets(topic, partition);
    if (where === undefined || this.#forwarder?.read === undefined) this.#missing(topic, partition);
    let lastErr: unknown;
    for (const to of where.targets) {
      const ac = new AbortController();
      try {
        for await (const chunk of this.#forwarder.read(to, { group: where.group, topic, partition, afterOffset: after, maxEvents, maxBytes, waitMs, follow: false, flowId: '' }, ac.signal)) {
          this.#noteRemote(topic, partition, to, chunk.oldest, chunk.newest);
          return chunk.events.map((e) => ({ offset: e.offset as Offset, bytes: e.bytes }));
        }
        return [];
      } catch (err) {
        lastErr = err;
      } finally {
        ac.abort();
      }
    }
    throw new PartitionUnavailableError(topic, partition, new Error(`no replica could be read: ${(lastErr as Error | undefined)?.message ?? 'none reachable'}`));
  }

  /**
   * A follower told to install a snapshot lacks entries its leader no longer holds in memory. The
   * snapshot of a partition group is only its small state (offsets, de-duplication window): the
   * events are the log. So before the snapshot is stepped in, the follower fetches the entries after
   * what it applied up to the snapshot's index from the leader (log shipping, in bounded chunks),
   * stores and applies them; then the snapshot finds its state already there. Meanwhile the group's
   * Readies wait (nothing else applies to it), and a second snapshot message while fetching is
   * ignored (the leader sends it again).
   */
  async #catchUp(r: PartitionReplica, m: Message): Promise<void> {
    const id = r.groupId;
    const snap = m.snapshot;
    if (snap === undefined || this.#catchingUp.has(id)) return;
    const target = snap.metadata.index;
    // A log that already holds the snapshot's last entry holds everything before it (Log Matching):
    // the group fast-forwards its commit index and applies those entries itself; fetching and
    // applying them here too would apply them twice. A snapshot from a leader of an older term than
    // the group has seen is dropped by the group: applying what it covers here would put the replica
    // ahead of its group, which would then apply those entries again.
    if (r.applied >= target || r.group.raw.termAt(target) === snap.metadata.term || m.term < r.group.raw.status().term || this.#forwarder?.fetchLog === undefined) {
      this.#o.host.receive(id, m);
      return;
    }
    let start: readonly [number, number] | undefined;
    try {
      start = decodeImage(snap.data).start;
    } catch {
      // a malformed image: the core refuses the snapshot (snapshotProblem)
    }
    if (start !== undefined && r.applied + 1 < start[0]) {
      // Retention removed the entries this replica lacks from the leader's log: it takes the snapshot
      // without them (it then reads nothing before the snapshot) and fetches the log the leader still
      // holds, up to the snapshot, afterwards (#fetchHistory).
      this.#o.logger.info({ topic: r.topic, partition: r.partition, group: id, leader: m.from, applied: r.applied, leaderLogStart: start[0], snapshot: target }, 'partition replica behind its leader\'s retained log: installing the snapshot, then fetching the retained log before it');
      // Incomplete from the answer to this snapshot on (the leader sees it in its progress): until the
      // retained log is here, this replica is not promoted from learner (replica-move-plan.ts).
      r.group.raw.setIncomplete(true);
      this.#o.host.receive(id, m);
      // The group did not take the snapshot (it holds it only if the snapshot's last entry is now
      // its own): nothing will be fetched for it.
      if (r.group.raw.termAt(target) !== snap.metadata.term && r.pendingHistory === undefined) this.#historyDone(r);
      return;
    }
    this.#catchingUp.add(id);
    const log = this.#o.logger.child({ topic: r.topic, partition: r.partition, group: id });
    const started = this.#o.clock.monotonicMs();
    let fetched = 0;
    try {
      await this.#o.host.pause(id);
      const from = r.applied + 1;
      log.info({ leader: m.from, from, to: target }, 'partition replica behind its leader\'s log: fetching the entries it lacks');
      // The leader first; any other replica serves the same committed entries (a leader still
      // fetching the retained log before its own snapshot does not serve the entries before it).
      const peers = this.#otherNodes([m.from, ...(this.#o.placement(r.topic, r.partition)?.replicas ?? [])]);
      const failures: string[] = [];
      const hosted = () => !this.#closed && this.#byKey.get(PartitionReplicas.key(r.topic, r.partition)) === r;
      for (const peer of peers) {
        if (r.applied >= target) break;
        try {
          const signal = AbortSignal.timeout(60_000);
          for await (const chunk of this.#forwarder!.fetchLog!(peer, { group: id, fromIndex: r.applied + 1, toIndex: target, maxBytes: logChunkBytes }, signal)) {
            // Dropped meanwhile (moved away, event type deleted): it stores nothing more.
            if (!hosted()) return;
            const entries = chunk.entries.filter((e) => e.index > r.applied && e.index <= target);
            if (!(await r.storeFetched(entries, hosted))) throw new Error(`it no longer holds the entries after ${r.applied} (its log starts at ${entries[0]?.index})`);
            fetched += entries.length;
          }
          if (r.applied < target) failures.push(`node ${peer} holds the entries up to ${r.applied} only`);
        } catch (err) {
          failures.push(`node ${peer}: ${(err as Error).message}`);
        }
      }
      if (r.applied < target) {
        log.warn({ applied: r.applied, target, failures }, 'log shipping ended before the snapshot index; the leader will send the snapshot again');
        return;
      }
      log.info({ entries: fetched, ms: Math.round(this.#o.clock.monotonicMs() - started) }, 'partition replica fetched the log it lacked; installing the snapshot');
      this.#o.host.receive(id, m);
    } catch (err) {
      log.warn({ err: (err as Error).message, fetched }, 'log shipping failed; the leader will send the snapshot again');
    } finally {
      this.#catchingUp.delete(id);
      this.#o.host.resume(id);
    }
  }

  readonly #catchingUp = new Set<number>();

  /**
   * After a snapshot was installed without the log before it (the leader's retention had removed the
   * entries this replica lacked), fetches the log the leader still holds up to the snapshot, from
   * where the image says it starts (`pendingHistory`, recorded with the snapshot): in bounded chunks,
   * each stored with the index rows that applying it gives (the same offsets as the leader's: the same
   * entries applied by the same rules from the same offset), checked to be contiguous and at the end
   * to arrive exactly at the snapshot's next offset. Then those events are readable here; until then
   * reads of them go to another replica. A try that fails is removed before the next one, which may
   * ask another replica (the leader first, then the others: any replica serves committed entries).
   * A replica whose retention removed the start of that log since (or that gave up its own fetch, and
   * holds its log from its snapshot on) answers from where its log starts now: the fetch takes the log
   * from there, starting at the oldest offset that replica names, and this replica's retained start
   * moves there too, as its own retention would have moved it (the events before it were removed by
   * a retention cutoff; the rest is still served, so giving it up would lose retained events here).
   * Tries go on while no replica can be reached (a leader change, a cut); when the replicas that
   * answered hold none of that log (their retention went past the snapshot), or answer one whose
   * offsets do not add up to the snapshot's, the replica reads from its snapshot on (as after more
   * retention). A node that stops meanwhile starts the fetch again at its next start
   * (PartitionReplica.load). A later snapshot installed without its log replaces the fetch.
   */
  #fetchHistory(r: PartitionReplica): void {
    const pending = r.pendingHistory;
    const log = this.#o.logger.child({ topic: r.topic, partition: r.partition, group: r.groupId });
    if (pending === undefined) {
      log.info({ oldest: r.bounds().oldest }, 'partition replica installed a snapshot without the log before it, and there is no retained log before it to fetch: it reads from the snapshot on');
      this.#historyDone(r);
      return;
    }
    const fetchLog = this.#forwarder?.fetchLog?.bind(this.#forwarder);
    const boundsOf = this.#forwarder?.bounds?.bind(this.#forwarder);
    const { index, next, fromIndex, fromOffset } = pending;
    const generation = r.historyGeneration;
    const current = () => !this.#closed && r.historyGeneration === generation && this.#byKey.get(PartitionReplicas.key(r.topic, r.partition)) === r;
    r.historyFrom = fromOffset;
    this.#historyFetching.add(r.groupId);
    const started = this.#o.clock.monotonicMs();
    void (async () => {
      // The removal of what the replica held before the snapshot is queued for the node's next write:
      // it must be done before fetched entries are stored, or it would remove them.
      await this.#o.host.flushRows();
      let lastErr = fetchLog === undefined ? 'this node cannot fetch from others' : 'no replica to fetch from';
      // Replicas that answered without that log (retention removed it there), by node.
      const without = new Set<NodeId>();
      for (let attempt = 0; fetchLog !== undefined && current(); attempt++) {
        const former = this.#o.formerMember;
        const listed = this.#o.placement(r.topic, r.partition)?.replicas ?? [];
        const peers = this.#otherNodes([r.group.leader, ...(former === undefined ? listed : listed.filter((m) => !former(m)))]);
        if (peers.length === 0 || peers.every((n) => without.has(n))) break;
        const from = peers[attempt % peers.length]!;
        // Where the fetched log starts: the retained start, or later when `from` holds it from later.
        let start = { fromIndex, fromOffset };
        let scratch: PartitionState | undefined;
        let chunks = 0;
        try {
          const signal = AbortSignal.timeout(120_000);
          for await (const chunk of fetchLog(from, { group: r.groupId, fromIndex, toIndex: index, maxBytes: logChunkBytes }, signal)) {
            if (!current()) return;
            const first = chunk.entries[0];
            if (first === undefined) continue;
            if (scratch === undefined) {
              if (first.index > fromIndex) {
                // `from` no longer holds the start of that log (its retention removed it, or it holds
                // its log from a snapshot on): the log is taken from where `from` holds it, at the
                // oldest offset it names (a retention cut falls between batches: the entries from its
                // first on take the offsets from its oldest on). A start that does not fit shows at
                // the end: the offsets do not arrive at the snapshot's.
                const oldest = boundsOf === undefined ? undefined : (await boundsOf(from, { group: r.groupId, topic: r.topic, partition: r.partition })).oldest;
                if (!current()) return;
                if (oldest === undefined || oldest <= fromOffset || oldest >= next) throw new HistoryMissingError(`its log starts at entry ${first.index}, after ${fromIndex}, at offset ${oldest ?? 'unknown'}`);
                start = { fromIndex: first.index, fromOffset: oldest };
              }
              // The de-duplication window the log had where the fetch starts is not here; the ids
              // later windows remember tell which batches were retries of earlier ones.
              scratch = new PartitionState({ applied: start.fromIndex - 1, next: start.fromOffset, oldest: start.fromOffset, recent: [] }, r.requestsKnown());
            }
            const s = scratch;
            chunk.entries.forEach((e, i) => {
              if (e.index !== s.applied + 1 + i) throw new HistoryMissingError(`entry ${e.index} where ${s.applied + 1 + i} was expected`);
            });
            await r.storeHistory(chunk.entries, s, next);
            chunks++;
          }
          if (!current()) return;
          if (scratch === undefined || scratch.applied !== index || scratch.newest + 1 !== next) {
            throw new HistoryMissingError(`the fetched log ends at index ${scratch?.applied ?? fromIndex - 1} and offset ${scratch?.newest ?? fromOffset - 1}, the snapshot at index ${index} and offset ${next - 1}`);
          }
          r.extendBack({ ...pending, ...start });
          log.info({ from, fromIndex: start.fromIndex, toIndex: index, oldest: start.fromOffset, retainedStart: fromOffset, chunks, ms: Math.round(this.#o.clock.monotonicMs() - started) }, 'partition replica fetched the retained log before its snapshot: it reads from the retained start');
          this.#historyFetching.delete(r.groupId);
          this.#historyDone(r);
          return;
        } catch (err) {
          if (!current()) return;
          if (err instanceof HistoryMissingError) without.add(from);
          lastErr = `node ${from}: ${(err as Error).message}`;
          if (attempt < 10 || attempt % 100 === 0) log.warn({ from, err: (err as Error).message, chunks, attempt }, 'fetching the retained log before the snapshot failed; trying again');
          await r.dropHistory(fromOffset, next, fromIndex, index).catch(() => undefined);
          r.historyFrom = fromOffset;
          await (this.#o.sleep ?? sleep)(Math.min(5000, 200 * 2 ** Math.min(5, Math.floor(attempt / Math.max(1, peers.length)))));
        }
      }
      if (!current()) return;
      r.historyFrom = undefined;
      this.#historyFetching.delete(r.groupId);
      await r.abandonHistory(pending).catch(() => undefined);
      if (current()) this.#historyDone(r);
      log.error({ err: lastErr, oldest: next }, 'partition replica could not fetch the retained log before its snapshot: it reads from the snapshot on');
    })();
  }

  /**
   * The replica holds its whole retained log again (fetched, or nothing left anywhere to fetch): it
   * is complete, and tells its leader at once (raft RawNode.setIncomplete).
   */
  #historyDone(r: PartitionReplica): void {
    if (!r.group.raw.incomplete) return;
    r.group.raw.setIncomplete(false);
    this.#o.host.kick(r.groupId);
  }

  /** Groups fetching their history (retention waits: it would remove what is being fetched). */
  readonly #historyFetching = new Set<number>();

  /**
   * Leadership goes back to each partition's preferred leader (the first replica of its placement,
   * which the metadata leader spread evenly over the nodes) once that node is caught up: after a
   * failover or a restart the leaders would otherwise pile up on the nodes that stayed. Called
   * periodically; a transfer is asked only by the current leader, only to a voter whose log matches
   * its own, so it never costs availability beyond the moment of the hand-over. Returns the number
   * of transfers started.
   */
  balanceLeaders(): number {
    let started = 0;
    for (const r of this.#byKey.values()) {
      const g = r.group;
      if (!g.isLeader()) continue;
      if (g.raw.incomplete) {
        if (this.#handOffIncomplete(r)) started++;
        continue;
      }
      const placed = this.#o.placement(r.topic, r.partition);
      const preferred = placed?.replicas[0];
      if (preferred === undefined || preferred === g.self || !g.conf.voters.includes(preferred)) continue;
      // A node a move takes the replica from is leaving: leadership moves away from it, not back.
      if (placed?.moving?.from === preferred) continue;
      const st = g.raw.status();
      const pr = st.progress?.get(preferred);
      // A preferred leader still fetching the retained log before its snapshot waits until it is complete.
      if (pr === undefined || !pr.recentActive || pr.match !== st.lastIndex || pr.incomplete || st.leadTransferee !== noNode) continue;
      if (g.raw.transferLeadership(preferred)) {
        this.#o.host.kick(g.id);
        started++;
        this.#o.logger.info({ topic: r.topic, partition: r.partition, group: g.id, to: preferred, term: st.term }, 'handing partition leadership back to its preferred leader');
      }
    }
    return started;
  }

  /** Per group, the heir the last hand-off of an incomplete leader was asked of (#handOffIncomplete). */
  readonly #handOffTried = new Map<number, NodeId>();

  /**
   * This node leads a group while it is still fetching the retained log before its snapshot (an
   * incomplete member campaigns late, but may be the only candidate, or be handed the leadership):
   * it hands the leadership to a complete voter that holds its whole log (the preferred leader
   * first), so that the leader is a full copy of the retained log. None: it goes on leading.
   */
  #handOffIncomplete(r: PartitionReplica): boolean {
    const g = r.group;
    const st = g.raw.status();
    if (st.progress === undefined || st.leadTransferee !== noNode) return false;
    const preferred = this.#o.placement(r.topic, r.partition)?.replicas ?? [];
    const heirs = [...g.conf.voters].filter((n) => n !== g.self).sort((a, b) => (preferred.indexOf(a) >>> 0) - (preferred.indexOf(b) >>> 0));
    const able = heirs.filter((n) => {
      const pr = st.progress!.get(n);
      return pr !== undefined && pr.recentActive && !pr.incomplete && pr.state === 'replicate' && pr.match === st.lastIndex;
    });
    // A transfer that did not happen (the heir cannot campaign: a damaged member) is not asked of the
    // same heir again next time while another is able.
    const last = this.#handOffTried.get(g.id);
    const heir = able[(last === undefined ? -1 : able.indexOf(last)) + 1] ?? able[0];
    if (heir === undefined || !g.raw.transferLeadership(heir)) return false;
    this.#handOffTried.set(g.id, heir);
    this.#o.host.kick(g.id);
    this.#o.logger.info({ topic: r.topic, partition: r.partition, group: g.id, to: heir, term: st.term }, 'this partition leader is still fetching the retained log before its snapshot: handing the leadership to a replica that holds it');
    return true;
  }

  /**
   * What this node knows of each group it hosts, for GET /cluster: its own commit and applied index,
   * the leader and term, and, where it leads, how far each follower has acknowledged (match; the
   * leader does not learn a follower's applied index, so match stands for both), and whether each is
   * incomplete (its own flag; a follower's from its latest append answer in the leader's progress).
   *
   * `reachable` is the transport's word on a peer. A follower it cannot reach reports nothing (and
   * so counts as not in sync): the leader's progress of a dead follower keeps the match it had, and a
   * new leader starts every follower at match 0; either way an idle group would call a follower
   * that was killed "in sync" for as long as it stays down.
   */
  facts(reachable: (node: NodeId) => boolean = () => true): Map<number, GroupFacts> {
    const out = new Map<number, GroupFacts>();
    for (const r of this.#byKey.values()) {
      const st = r.group.raw.status();
      // Keyed by member id, as the placement lists them; the transport is asked about their nodes.
      const replicas = new Map<number, ReplicaFacts>([[r.group.self, { commit: st.commit, applied: r.group.applied, incomplete: r.group.raw.incomplete }]]);
      if (st.progress !== undefined) for (const [peer, pr] of st.progress) if (peer !== r.group.self && reachable(nodeOfMember(peer))) replicas.set(peer, { commit: pr.match, applied: pr.match, incomplete: pr.incomplete });
      out.set(r.groupId, { leader: st.lead === noNode ? null : st.lead, term: st.term, replicas, partial: st.progress === undefined });
    }
    // Partitions held elsewhere: only the leader a replica named; their replicas are unknown here.
    for (const [key, b] of this.#remote) {
      const [topic, partition] = key.split(':').map(Number) as [number, number];
      const p = this.#o.placement(topic, partition);
      // A replica held here (a learner, or one promoted since it was remote) tells more than the cache.
      // The replica named the leader's node; the placement names its member.
      if (p !== undefined && !out.has(p.group)) out.set(p.group, { leader: b.leader === undefined ? null : (memberOnNode(p, b.leader.id) ?? b.leader.id), term: b.leader?.term ?? 0, replicas: new Map(), partial: true });
    }
    return out;
  }

  /** This node's open replica of a group, or undefined (operator actions name groups: loss-service.ts). */
  hostedGroup(group: number): PartitionReplica | undefined {
    for (const r of this.#byKey.values()) if (r.groupId === group) return r;
    return undefined;
  }

  /** This node's open replicas. */
  hosted(): IterableIterator<PartitionReplica> {
    return this.#byKey.values();
  }

  /**
   * The operator accepts the loss of this node's damaged sole replica of `group` (the rule is
   * loss-acceptance.ts, checked by the caller): it leads at a term above this storage's term ceiling
   * (node-disk.ts) and its damage term, keeping what it holds (src/raft Raft.acceptLoss). Returns why
   * the Raft core refused, or undefined.
   */
  acceptLoss(group: number): string | undefined {
    const r = this.hostedGroup(group);
    if (r === undefined) return 'this node holds no open replica of the group';
    const refused = r.group.raw.acceptLoss(this.#o.disk?.termCeiling ?? 0);
    if (refused === undefined) this.#o.host.kick(group);
    return refused;
  }

  // ------------------------------------------------------------------ appends

  append(items: ReplicaAppend[]): Promise<ReplicaAppendResult[]> {
    const deadlineMs = this.#o.clock.monotonicMs() + this.#o.appendTimeoutMs;
    // One random id per publish request, told apart per item: an id only has to be unique among the
    // batches of one partition (that is where de-duplication looks), and a batch of 10 events touches
    // most partitions, so a fresh UUID per item was most of this path's random draws.
    const base = this.#o.random.uuid();
    // The parts this request forwards to one node at the same moment go in one call (forward-grouper.ts).
    const forward = this.#forwarder === undefined ? undefined : new ForwardGrouper(this.#forwarder);
    // One promise for the request, settled when the last item has its result (a countdown instead of
    // a promise per item and Promise.all over them).
    return new Promise((resolve) => {
      const results: ReplicaAppendResult[] = new Array(items.length);
      let left = items.length;
      if (left === 0) resolve(results);
      items.forEach((it, i) => {
        this.#appendLed(it, deadlineMs, '', i === 0 ? base : `${base}.${i}`, forward, (r) => {
          results[i] = r;
          if (--left === 0) resolve(results);
        });
      });
    });
  }

  /**
   * One item's append; `done` is called once with its result (a failure is a result). The common case
   * on a single node, and on the leader of a partition, takes no async frame and no promise: the batch
   * goes straight into the group's coalescer, whose callback maps its outcome; every other case, and a
   * proposal refused because leadership moved, goes through #appendOne exactly as before (the refused
   * one after the same pause as that loop's retry).
   */
  #appendLed(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined, done: (r: ReplicaAppendResult) => void): void {
    let coalescer: BatchCoalescer | undefined;
    try {
      const replica = this.#closed || this.#o.host.refusal !== undefined || this.#isRemote(item.topic, item.partition) ? undefined : this.#byKey.get(PartitionReplicas.key(item.topic, item.partition));
      if (replica !== undefined && replica.group.isLeader()) coalescer = this.#coalescer(replica);
    } catch (err) {
      done({ ok: false, error: err as Error });
      return;
    }
    if (coalescer === undefined) {
      this.#appendSlow(item, deadlineMs, flowId, requestId, forward, done);
      return;
    }
    // The one closure of the common case (the failure paths create theirs when they happen).
    const settled = (c: Coalesced | undefined, err?: unknown): void => {
      if (c !== undefined) return done(appliedResult(item, c));
      const failure = proposalFailure(item, err);
      if (failure !== undefined) return done({ ok: false, error: failure });
      this.#appendMoved(item, deadlineMs, flowId, requestId, forward, done);
    };
    const refused = coalescer.enqueue(requestId, item.events, deadlineMs, 0, settled);
    if (refused !== undefined) settled(undefined, refused);
  }

  /** A batch the leader's coalescer gave back because leadership moved: #appendOne after the retry pause. */
  #appendMoved(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined, done: (r: ReplicaAppendResult) => void): void {
    const failed = (error: unknown): void => done({ ok: false, error: error as Error });
    if (this.#o.clock.monotonicMs() >= deadlineMs) return failed(unavailable(item, 'no leader could take the batch in time'));
    void (this.#o.sleep ?? sleep)(retryMs).then(() => this.#appendSlow(item, deadlineMs, flowId, requestId, forward, done), failed);
  }

  #appendSlow(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined, done: (r: ReplicaAppendResult) => void): void {
    void this.#appendOne(item, deadlineMs, flowId, requestId, forward).then(done, (error: unknown) => done({ ok: false, error: error as Error }));
  }

  async #appendOne(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined): Promise<ReplicaAppendResult> {
    if (this.#closed) throw new PartitionUnavailableError(item.topic, item.partition, new Error('the node is shutting down'));
    if (this.#isRemote(item.topic, item.partition)) return this.#appendRemote(item, deadlineMs, flowId, requestId, forward);
    // An open replica without a round through ensure()'s promise (the case of every append but the first).
    const replica = this.#byKey.get(PartitionReplicas.key(item.topic, item.partition)) ?? (await this.ensure(item.topic, item.partition));
    if (replica === undefined) throw new PartitionUnavailableError(item.topic, item.partition, new Error('no placement for this partition'));
    // While the disk refuses writes, a new batch cannot be stored: say why at once, without waiting.
    if (this.#o.host.refusal !== undefined) throw this.#o.host.refusal;
    let inDoubt: string | undefined;
    for (;;) {
      const g = replica.group;
      if (g.isLeader()) {
        try {
          return appliedResult(item, await this.#coalescer(replica).add(requestId, item.events, deadlineMs));
        } catch (err) {
          const failure = proposalFailure(item, err);
          if (failure !== undefined) throw failure;
        }
      } else if (g.leader !== noNode && forward !== undefined) {
        const answer = await forward.send(nodeOfMember(g.leader), {
          group: g.id,
          topic: item.topic,
          partition: item.partition,
          epoch: g.term,
          requestId,
          flowId,
          deadlineMs: Math.max(1, deadlineMs - this.#o.clock.monotonicMs()),
          events: item.events,
        });
        if (answer.status === 'committed') return { ok: true, first: answer.firstOffset as Offset, last: answer.lastOffset as Offset };
        if (answer.status === 'sealed') throw new PartitionSealedError(item.topic, item.partition, answer.timeline);
        if (answer.status === 'refused') throw unavailable(item, `leader ${g.leader}: ${answer.detail}`);
        // Unavailable: the leader did not answer (a lost connection, its deadline); the batch may be
        // stored. Asking again with the same request id is safe (the state machine stores it once)
        // and turns an unknown outcome into a known one when the leader (or its successor) answers.
        if (answer.status === 'unavailable') inDoubt = `leader ${g.leader}: ${answer.detail}`;
      }
      if (this.#o.clock.monotonicMs() >= deadlineMs) {
        throw unavailable(item, inDoubt === undefined ? 'no leader could take the batch in time' : `the outcome is unknown, the batch may have been stored (${inDoubt}); resubmitting it may store it twice`);
      }
      await (this.#o.sleep ?? sleep)(retryMs);
    }
  }

  /**
   * A batch for a partition this node holds no replica of: forwarded to its leader, found by asking
   * the replicas (each answers "not leader" with the leader it knows), with one request id for every
   * attempt so that a retry after a lost answer is stored once.
   */
  async #appendRemote(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined): Promise<ReplicaAppendResult> {
    const where = this.#remoteTargets(item.topic, item.partition);
    if (where === undefined || forward === undefined) throw unavailable(item, 'no placement for this partition');
    const key = PartitionReplicas.key(item.topic, item.partition);
    let hint = this.#remoteLeaders.get(key) ?? noNode;
    let lastDetail = 'no replica answered';
    for (let round = 0; ; round++) {
      const order = hint !== noNode ? [hint, ...where.targets.filter((t) => t !== hint)] : where.targets;
      for (const to of order) {
        const answer = await forward.send(to, { group: where.group, topic: item.topic, partition: item.partition, epoch: 0, requestId, flowId, deadlineMs: Math.max(1, deadlineMs - this.#o.clock.monotonicMs()), events: item.events });
        if (answer.status === 'committed') {
          this.#remoteLeaders.set(key, to);
          return { ok: true, first: answer.firstOffset as Offset, last: answer.lastOffset as Offset };
        }
        if (answer.status === 'sealed') throw new PartitionSealedError(item.topic, item.partition, answer.timeline);
        if (answer.status === 'refused') throw unavailable(item, `node ${to}: ${answer.detail}`);
        if (answer.status === 'notLeader' && answer.leaderHint !== noNode && answer.leaderHint !== to) {
          hint = answer.leaderHint;
          break;
        }
        lastDetail = answer.status === 'unavailable' ? `node ${to}: ${answer.detail}` : `node ${to} does not lead it`;
      }
      if (this.#o.clock.monotonicMs() >= deadlineMs) throw unavailable(item, `no leader could take the batch in time (${lastDetail})`);
      if (round > 0) await (this.#o.sleep ?? sleep)(retryMs);
    }
  }

  #coalescer(r: PartitionReplica): BatchCoalescer {
    const c = this.#coalescers.get(r.groupId);
    assert(c !== undefined, `group ${r.groupId} has no coalescer`);
    return c;
  }

  /** The leader that last took a batch of a partition held elsewhere. */
  readonly #remoteLeaders = new Map<string, NodeId>();

  /** A batch forwarded by another node to this one as the partition's leader. */
  async appendForwarded(req: ForwardedAppend): Promise<AppendAnswer> {
    const replica = await this.ensure(req.topic, req.partition).catch(() => undefined);
    if (replica === undefined || replica.groupId !== req.group) return { status: 'notLeader', leaderHint: noNode, epoch: 0 };
    const g = replica.group;
    // Hints name nodes on the wire: the group's leader is a member id (core/member-id.ts).
    if (!g.isLeader()) return { status: 'notLeader', leaderHint: nodeOfMember(g.leader), epoch: g.term };
    try {
      const applied = await this.#coalescer(replica).add(req.requestId, req.events, this.#o.clock.monotonicMs() + req.deadlineMs, req.epoch);
      const out = applied.outcome;
      if (out.kind === 'sealed') return { status: 'sealed', timeline: out.timeline };
      return { status: 'committed', epoch: applied.term, firstOffset: out.first, lastOffset: out.last };
    } catch (err) {
      if (err instanceof PartitionEntryError) return { status: 'refused', detail: err.message };
      if (err instanceof ProposalFailedError && (err.reason === 'notLeader' || err.reason === 'overwritten')) return { status: 'notLeader', leaderHint: nodeOfMember(err.leader), epoch: err.term };
      return { status: 'unavailable', detail: (err as Error).message };
    }
  }

  // ------------------------------------------------------------------ reads

  bounds(topic: number, partition: number): { oldest: Offset; newest: Offset } {
    const r = this.replica(topic, partition);
    const legacy = this.#o.legacy?.bounds(topic, partition);
    // A learner's replica here is still catching up: the bounds come from a voter, like reads.
    if (this.#isRemote(topic, partition)) {
      // Held elsewhere: the bounds a replica told last (refreshed in the background when older than
      // remoteBoundsMaxAgeMs), so they may trail the replicas' by about that much.
      const c = this.#remote.get(PartitionReplicas.key(topic, partition));
      if (c === undefined || this.#o.clock.monotonicMs() - c.atMs > remoteBoundsMaxAgeMs) this.#refreshRemote(topic, partition);
      return c === undefined ? { oldest: 0 as Offset, newest: -1 as Offset } : { oldest: c.oldest as Offset, newest: c.newest as Offset };
    }
    if (r === undefined) return legacy ?? { oldest: 0 as Offset, newest: -1 as Offset };
    const b = r.bounds();
    if (legacy !== undefined && legacy.newest >= legacy.oldest && legacy.newest + 1 >= b.oldest) return { oldest: legacy.oldest, newest: b.newest };
    return b;
  }

  /**
   * Whether the partition's voters are all on other nodes (reads go to a replica over the transport):
   * also while this node holds a learner of it, which may lack what is committed until promoted.
   */
  #isRemote(topic: number, partition: number): boolean {
    const p = this.#o.placement(topic, partition);
    return p !== undefined && !p.replicas.includes(this.#me());
  }

  async read(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number): Promise<StoredEventView[]> {
    if (this.#isRemote(topic, partition)) return this.#remoteRead(topic, partition, after, maxEvents, maxBytes, 0);
    const r = (await this.ensure(topic, partition)) ?? this.#missing(topic, partition);
    const b = r.bounds();
    // The log before an installed snapshot is still being fetched: those events are read from another replica.
    if (r.historyFrom !== undefined && after >= r.historyFrom - 1 && after < r.localOldest - 1) return this.#remoteRead(topic, partition, after, Math.min(maxEvents, r.localOldest - 1 - after), maxBytes, 0);
    if (after < b.oldest - 1 && this.#o.legacy !== undefined) {
      const lb = this.#o.legacy.bounds(topic, partition);
      if (lb.newest >= lb.oldest && after >= lb.oldest - 1) return this.#o.legacy.read(topic, partition, after, maxEvents, maxBytes);
      throw new OffsetExpiredError(topic, partition, after, lb.newest >= lb.oldest ? lb.oldest : b.oldest);
    }
    return r.read(after, maxEvents, maxBytes);
  }

  async waitForEvents(topic: number, partition: number, after: Offset, signal: AbortSignal): Promise<void> {
    if (this.#isRemote(topic, partition)) {
      // Long-polls a replica (one event is enough to know there is news), at most remoteWaitMs per ask.
      const known = this.#remote.get(PartitionReplicas.key(topic, partition));
      if (known !== undefined && known.newest > after) return;
      try {
        await this.#remoteRead(topic, partition, after, 1, 1, remoteWaitMs);
      } catch {
        await (this.#o.sleep ?? sleep)(Math.min(remoteWaitMs, 200));
      }
      return;
    }
    const r = await this.ensure(topic, partition);
    if (r === undefined) return;
    return r.waitForEvents(after, signal);
  }

  #missing(topic: number, partition: number): never {
    throw new PartitionUnavailableError(topic, partition, new Error('this node holds no replica of the partition'));
  }

  // ------------------------------------------------------------------ maintenance

  /** Sets the first offset of a never-written partition (a new timeline continues the offsets), through its leader. */
  async setBase(topic: number, partition: number, base: number): Promise<void> {
    if (this.replica(topic, partition)?.bounds().oldest === base) return;
    await this.control(topic, partition, { kind: 'base', base });
  }

  /**
   * Applies a command of the partition's group (a seal, a base) through its leader, from any node
   * (partition-control.ts); resolves with the log's next offset after it.
   */
  async control(topic: number, partition: number, cmd: ControlCommand, deadlineMs = this.#o.clock.monotonicMs() + this.#o.appendTimeoutMs): Promise<number> {
    const p = this.#o.placement(topic, partition);
    if (p === undefined) throw new PartitionUnavailableError(topic, partition, new Error('no placement for this partition'));
    const self = this.#o.self;
    const local = p.replicas.includes(this.#me()) ? await this.ensure(topic, partition) : undefined;
    const send = this.#forwarder?.forwardControl;
    // The route names nodes (partition-control.ts maps a leader's member id to its node).
    const route = { self, group: p.group, topic, partition, local, others: this.#otherNodes(p.replicas) };
    return proposeControl(route, cmd, deadlineMs, '', { clock: this.#o.clock, send: send?.bind(this.#forwarder), sleep: this.#o.sleep ?? sleep });
  }

  /**
   * Drops the in-memory copy of entries applied long enough ago (they stay in the KV, which is the
   * partition log), keeping enough behind for followers that lag a little. A follower behind what the
   * leader keeps in memory is sent a snapshot and fetches the entries it lacks (log shipping).
   */
  #maybeCompact(r: PartitionReplica, overNodeBudget = false): void {
    const g = r.group;
    const mem = g.store.storage;
    const max = this.#o.memoryEntries ?? memoryEntriesDefault;
    const entries = mem.lastIndex() - mem.firstIndex();
    // Bounded by entries and by bytes, per partition and for the node: an entry holds whole batches,
    // so 1024 entries of 1000 events would be half a gigabyte per partition. Over a bound in bytes the
    // oldest applied entries go until what stays is within half of it (the partition's bound, or its
    // share of the node's budget), counted in bytes: a count of entries kept would hold any number of
    // bytes (entries of batches of 1000 events are hundreds of KB), above the bound.
    r.syncTailBytes();
    const keepBytes = overNodeBudget ? this.#shareBytes() / 2 : r.tailBytes >= memoryBytesMax ? memoryBytesMax / 2 : undefined;
    if (entries < max && keepBytes === undefined) return;
    let compactTo = entries < max ? mem.firstIndex() - 1 : g.applied - Math.floor(max / 4);
    if (keepBytes !== undefined) compactTo = Math.max(compactTo, mem.compactIndexKeeping(keepBytes, g.applied));
    // A leader keeps what a follower still lacks (it is cheaper to send than to ship), within bounds.
    const progress = g.raw.status().progress;
    if (progress !== undefined && entries < 16 * max && r.tailBytes < 8 * memoryBytesMax) {
      for (const [peer, pr] of progress) if (peer !== g.self) compactTo = Math.min(compactTo, pr.match);
    }
    if (compactTo < mem.firstIndex() || this.#compacting.has(g.id)) return;
    this.#compacting.add(g.id);
    this.#writing(g.id, this.#compactMemory(r, compactTo)).then(
      () => {
        this.#compacting.delete(g.id);
        // Applies that came while this compaction ran skipped theirs; without a look now, a group that
        // then went idle would keep them in memory until its next apply.
        if (!this.#closed && this.#byKey.get(PartitionReplicas.key(r.topic, r.partition)) === r) this.#maybeCompact(r);
      },
      (err: unknown) => {
        this.#compacting.delete(g.id);
        this.#o.logger.warn({ err, group: g.id }, 'partition log memory compaction failed; retried later');
      },
    );
  }

  readonly #compacting = new Set<number>();

  /**
   * Writes of a group's own keys that run beside its Raft turns (memory compaction, retention): a drop
   * of the group waits for them, or one landing after the drop's delete would leave keys behind.
   */
  readonly #writes = new Map<number, Set<Promise<unknown>>>();

  #writing<T>(group: number, p: Promise<T>): Promise<T> {
    let set = this.#writes.get(group);
    if (set === undefined) this.#writes.set(group, (set = new Set()));
    set.add(p);
    const done = (): void => {
      set.delete(p);
      if (set.size === 0 && this.#writes.get(group) === set) this.#writes.delete(group);
    };
    p.then(done, done);
    return p;
  }

  async #writesSettled(group: number): Promise<void> {
    for (let set = this.#writes.get(group); set !== undefined && set.size > 0; set = this.#writes.get(group)) await Promise.allSettled([...set]);
  }
  /** Bytes of applied entries in the memory tails of all partitions (PartitionReplica.tailBytes summed). */
  #tailBytes = 0;

  /** Over the node's budget: partitions holding more than their share drop their tail (idle ones too). */
  #overBudget(): void {
    const budget = this.#o.memoryBytesTotal ?? memoryBytesTotalDefault;
    if (this.#tailBytes <= budget) return;
    const share = this.#shareBytes();
    for (const r of this.#byKey.values()) if (r.tailBytes > share) this.#maybeCompact(r, true);
  }

  /** A partition's share of the node's budget for memory tails. */
  #shareBytes(): number {
    return (this.#o.memoryBytesTotal ?? memoryBytesTotalDefault) / Math.max(1, this.#byKey.size);
  }

  /** Drops entries up to `compactTo` (applied) from the group's memory; the KV keeps them. */
  async #compactMemory(r: PartitionReplica, compactTo: number, refresh = false): Promise<void> {
    const g = r.group;
    if (compactTo < g.store.storage.firstIndex() && !refresh) return;
    const start = await r.logStart();
    const state = r.image();
    const image = encodeImage({ ...state, start });
    const applied = g.applied;
    const conf = g.conf;
    // Log shipping applied entries here that the group has not (their snapshot's install is still to
    // come, or a full disk refused it): the image is the state at the replica's index, not at the
    // group's, and stored at the group's it would give those entries their offsets again wherever
    // it is installed or restarted from. Nothing is taken until the group is there.
    if (state.applied !== applied) return;
    assert(compactTo <= applied, `compacting to ${compactTo} beyond applied ${applied}`);
    // The index rows of everything applied must be in the KV before memory forgets those batches.
    await this.#o.host.flushRows();
    // Dropped meanwhile (moved away, event type deleted): its keys are being deleted; write none.
    if (this.#byKey.get(PartitionReplicas.key(r.topic, r.partition)) !== r) return;
    // A snapshot from the leader installed meanwhile covers more than this one would: nothing to do
    // (its index is past what was applied when this one was taken, whose term memory no longer has).
    if (applied < g.store.storage.firstIndex() - 1) return;
    const firstBefore = g.store.storage.firstIndex();
    await g.store.compact(applied, conf, image, compactTo);
    // A refresh that dropped nothing from memory leaves the tail (and its byte count) as it was.
    if (compactTo >= firstBefore) r.forgetBefore(compactTo + 1);
  }

  /** Takes the snapshot again when its image says the log starts at an entry retention removed. */
  async #refreshStaleStart(r: PartitionReplica, log: Logger): Promise<void> {
    const id = r.groupId;
    const data = r.group.store.storage.snapshot().data;
    let start: readonly [number, number] | undefined;
    try {
      start = data.byteLength === 0 ? undefined : decodeImage(data).start;
    } catch {
      return;
    }
    if (start === undefined) return;
    const actual = await r.logStart();
    if (actual[0] <= start[0] || this.#compacting.has(id) || this.#byKey.get(PartitionReplicas.key(r.topic, r.partition)) !== r) return;
    log.info({ stored: start, actual }, 'partition snapshot names a log start retention removed: taking it again');
    this.#compacting.add(id);
    try {
      await this.#writing(id, this.#compactMemory(r, r.group.store.storage.firstIndex() - 1, true));
    } catch (err) {
      log.warn({ err }, 'taking the partition snapshot again failed; the next retention pass takes it');
    } finally {
      this.#compacting.delete(id);
    }
  }

  /**
   * Retention: removes batches appended before `cutoffMs`. The snapshot is taken again after it, so
   * that a follower sent it learns where the log now starts (the image's `start`).
   */
  async applyRetention(topic: number, partition: number, cutoffMs: number): Promise<number> {
    let removed = (await this.#o.legacy?.applyRetention(topic, partition, cutoffMs)) ?? 0;
    const r = this.replica(topic, partition);
    // Retention waits while the replica fetches its history, and while log shipping has put it ahead
    // of its group (its rows name entries the group has not applied: PartitionReplica.aheadOfGroup).
    if (r !== undefined && !this.#historyFetching.has(r.groupId) && !r.aheadOfGroup) {
      const n = await this.#writing(r.groupId, r.applyRetention(cutoffMs, (raftIndex) => this.#compactMemory(r, raftIndex)));
      // A compaction running now may have taken its image before this removal (its `start` naming
      // removed entries): the snapshot is taken again after it, not skipped (host simulation, seed 292).
      for (let i = 0; n > 0 && i < 100 && this.#compacting.has(r.groupId) && this.#writes.has(r.groupId); i++) await this.#writesSettled(r.groupId);
      if (n > 0 && !this.#compacting.has(r.groupId)) {
        // One compaction of a group at a time (a later one taken first would make this one's older).
        this.#compacting.add(r.groupId);
        try {
          await this.#writing(r.groupId, this.#compactMemory(r, r.group.store.storage.firstIndex() - 1, true));
        } finally {
          this.#compacting.delete(r.groupId);
        }
      }
      removed += n;
    }
    return removed;
  }

  /** Groups this node holds according to its own disk (to drop those of deleted event types). */
  async storedTopics(): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    for await (const [k, v] of this.#o.kv.iterate({ gte: directoryKey(0), lt: Buffer.from([prefixGroupDirectory + 1]) })) {
      const topic = v.readUInt32BE(0);
      const list = out.get(topic) ?? [];
      list.push(k.readUInt32BE(1));
      out.set(topic, list);
    }
    return out;
  }

  topics(): number[] {
    const legacy = this.#o.legacy?.topics() ?? [];
    return [...new Set([...legacy, ...[...this.#byKey.values()].map((r) => r.topic)])];
  }

  async dropTopic(topic: number): Promise<void> {
    // A replica of the topic being opened is dropped once open (as dropReplica waits for its open):
    // an open that ended after the deletion would host the replica again and write its keys.
    await Promise.allSettled([...this.#opening].filter(([key]) => key.startsWith(`${topic}:`)).map(([, p]) => p));
    await this.#o.legacy?.dropTopic(topic);
    const groups = (await this.storedTopics()).get(topic) ?? [];
    for (const r of [...this.#byKey.values()].filter((x) => x.topic === topic)) {
      this.#byKey.delete(PartitionReplicas.key(r.topic, r.partition));
      this.#o.groups?.unregister(r.groupId);
      this.#coalescers.get(r.groupId)?.fail(new PartitionUnavailableError(r.topic, r.partition, new Error('the event type is being deleted')));
      this.#coalescers.delete(r.groupId);
      await this.#o.host.remove(r.groupId);
      r.release();
      if (!groups.includes(r.groupId)) groups.push(r.groupId);
    }
    if (groups.length === 0) return;
    for (const g of groups) await this.#writesSettled(g);
    // Rows the groups queued before they left the host go first, so the deletion below removes them.
    await this.#o.host.flushRows();
    await this.#o.kv.write((b) => {
      for (const g of groups) dropGroupKeys(b, g);
    }, { durable: false });
  }

  /** Tells the node host that a group has work (a configuration change or a transfer was just asked). */
  kick(group: number): void {
    this.#o.host.kick(group);
  }

  /** The replicas open on this node. */
  held(): IterableIterator<PartitionReplica> {
    return this.#byKey.values();
  }

  /**
   * Drops this node's replica of a partition and its data (a move took it elsewhere). The caller
   * checked that the group no longer counts this node (replica-mover.ts): what it held is on the others.
   */
  async dropReplica(topic: number, partition: number, group: number): Promise<void> {
    const key = PartitionReplicas.key(topic, partition);
    const earlier = this.#dropping.get(key);
    const drop = (async () => {
      await earlier;
      await this.#drop(key, topic, partition, group);
    })();
    // Opens of this partition wait for it (ensure); it settles either way, and a failed drop is
    // answered to its caller, who retries it.
    const settled = drop.catch(() => undefined);
    this.#dropping.set(key, settled);
    try {
      await drop;
    } finally {
      if (this.#dropping.get(key) === settled) this.#dropping.delete(key);
    }
  }

  /** Drops in flight, per partition: an open of the same partition waits for them (ensure). */
  readonly #dropping = new Map<string, Promise<void>>();

  async #drop(key: string, topic: number, partition: number, group: number): Promise<void> {
    await this.#opening.get(key)?.catch(() => undefined);
    const r = this.#byKey.get(key);
    if (r !== undefined && r.groupId === group) {
      this.#byKey.delete(key);
      this.#o.groups?.unregister(group);
      this.#coalescers.get(group)?.fail(new PartitionUnavailableError(topic, partition, new Error('the replica moved to another node')));
      this.#coalescers.delete(group);
      await this.#o.host.remove(group);
      r.release();
      this.#tailBytes -= r.tailBytes;
    }
    await this.#writesSettled(group);
    // Rows the group queued before it left the host (its last applied state and index rows, a deferred
    // hard state, the record of a fetch of the retained log) are written by a later turn: they go
    // first, so the deletion below removes them. Written after it, they outlived the replica (a
    // replica placed here again would start from the dropped one's applied index, without its log).
    await this.#o.host.flushRows();
    await this.#o.kv.write((b) => dropGroupKeys(b, group), { durable: false });
  }

  /** The groups this node has data of on disk, with their partition (to drop those moved away at start). */
  async *storedGroups(): AsyncIterable<{ group: number; topic: number; partition: number }> {
    for await (const [k, v] of this.#o.kv.iterate({ gte: directoryKey(0), lt: Buffer.from([prefixGroupDirectory + 1]) })) {
      yield { group: k.readUInt32BE(1), topic: v.readUInt32BE(0), partition: v.readUInt32BE(4) };
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const c of this.#coalescers.values()) c.fail(new ProposalFailedError('closed', 'the node is shutting down'));
    for (const r of this.#byKey.values()) r.release();
    await Promise.allSettled([...this.#opening.values()]);
  }
}

/** A repair of a replica dropped while it ran: it writes nothing more. */
class ReplicaDroppedError extends Error {
  constructor() {
    super('the replica was dropped (moved away, or its event type deleted) during the repair');
  }
}

function dropGroupKeys(b: KvBatch, g: number): void {
  RaftLogStore.drop(b, g);
  dropReplicaRows(b, g);
  b.del(directoryKey(g));
}

/** The partition's own keys of a group beside its Raft records: offset index, applied state, the record of a fetch to do. */
function dropReplicaRows(b: KvBatch, g: number): void {
  const k = (prefix: number, n: number) => {
    const key = Buffer.allocUnsafe(5);
    key[0] = prefix;
    key.writeUInt32BE(n, 1);
    return key;
  };
  b.delRange(k(prefixOffsetIndex, g), k(prefixOffsetIndex, g + 1));
  b.del(k(prefixApplied, g));
  b.del(k(prefixHistoryPending, g));
}

/** The result of a batch its partition's leader applied (a log sealed meanwhile took none of it). */
function appliedResult(item: ReplicaAppend, c: Coalesced): ReplicaAppendResult {
  const out = c.outcome;
  if (out.kind === 'sealed') return { ok: false, error: new PartitionSealedError(item.topic, item.partition, out.timeline) };
  return { ok: true, first: out.first as Offset, last: out.last as Offset };
}

/**
 * Why a batch the leader's coalescer failed fails for good; undefined when leadership moved (not
 * leader any more, or its entry overwritten) and it is to be offered again.
 */
function proposalFailure(item: ReplicaAppend, err: unknown): Error | undefined {
  if (!(err instanceof ProposalFailedError)) return err as Error;
  if (err.storageError !== undefined) return err.storageError;
  if (err.reason !== 'notLeader' && err.reason !== 'overwritten') return unavailable(item, err.message);
  return undefined;
}

function unavailable(item: ReplicaAppend, why: string): PartitionUnavailableError {
  return new PartitionUnavailableError(item.topic, item.partition, new Error(why));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
