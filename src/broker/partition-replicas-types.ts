/**
 * The ports and types of the partitions a node replicates (partition-replicas.ts): where a group
 * lives, how a node reaches the replicas of others, what an append and its answer are, and what a
 * PartitionReplicas is built from. Types only (and one rule over a placement), so that each part of
 * the replicas imports them without importing the whole.
 */
import type { Logger } from 'pino';
import type { Offset } from '../core/offset.js';
import type { Clock, Random } from '../core/ports.js';
import type { OrderedKv, PartitionStore } from '../log/index.js';
import type { Entry, NodeId, Term } from '../raft/index.js';
import type { NodeDisk } from './node-disk.js';
import type { RaftNodeHost } from './raft-host/node-host.js';
import type { AppendAnswer, AppendRequest, GroupHandler } from '../transport/index.js';
import type { ControlSender } from './partition-control.js';

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


export interface ReplicaAppend {
  topic: number;
  partition: number;
  events: Buffer[];
}

export type ReplicaAppendResult = { ok: true; first: Offset; last: Offset } | { ok: false; error: Error };

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
  /** Raft entries of a partition kept in memory (partition-memory-budget.ts, memoryEntriesDefault). */
  readonly memoryEntries?: number;
  /**
   * Bytes of applied entries all partitions of the node keep in memory together (the memory tails
   * that serve live consumers without reading the KV): past it, partitions holding more than their
   * share drop their oldest applied entries from memory. Defaults to 64 MiB.
   */
  readonly memoryBytesTotal?: number;
  /**
   * The slabs the memory tails keep their entries' bytes in (byte-slabs.ts): their total and the size
   * of each. Defaults to memoryBytesTotal in slabs of ByteSlabs.slabBytesFor it; the simulation makes
   * them small, so that they fill, are reused and refuse.
   */
  readonly tailSlabs?: { readonly totalBytes: number; readonly slabBytes: number };
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
