/**
 * The state the parts of PartitionReplicas share (partition-replicas.ts is the facade that owns it
 * and hands it to each part): the replicas open on this node, the opens in flight, each group's
 * coalescer, the way to other nodes, and whether the node is closing. One object instead of each
 * part keeping its own view, so that "is this replica still hosted here" has one answer.
 */
import type { BatchCoalescer } from './batch-coalescer.js';
import { ByteSlabs } from './byte-slabs.js';
import { GroupSideWrites } from './group-side-writes.js';
import { memoryBytesTotalDefault } from './memory-compaction-rule.js';
import type { PartitionReplica } from './partition-replica.js';
import type { AppendForwarder, PartitionReplicasOptions } from './partition-replicas-types.js';
import { otherNodes } from './replica-peers.js';
import type { NodeId } from '../raft/index.js';

/** The key of a partition in the maps of the replicas. */
export const replicaKey = (topic: number, partition: number): string => `${topic}:${partition}`;

/** The pause between the tries of an append or a proposal whose leader moved. */
export const retryMs = 25;
/** Bytes per chunk of log shipping (a fetch of entries from another replica, or served to one). */
export const logChunkBytes = 1 << 20;

export class ReplicasContext {
  readonly o: PartitionReplicasOptions;
  /** The replicas open on this node, by replicaKey. */
  readonly byKey = new Map<string, PartitionReplica>();
  /** Opens in flight, by replicaKey (ensure). */
  readonly opening = new Map<string, Promise<PartitionReplica>>();
  /** Per group: the publish batches that wait for the next turn, to be proposed as one entry. */
  readonly coalescers = new Map<number, BatchCoalescer>();
  /** Writes of each group's keys beside its Raft turns (a drop waits for them). */
  readonly writes = new GroupSideWrites();
  forwarder: AppendForwarder | undefined;
  closed = false;
  /**
   * The bytes of every partition's memory tail (ring-storage.ts), as many as the node's budget for
   * them: an entry beyond (the budget's compaction lags a little, a slab is partly live) keeps its own buffer.
   */
  readonly slabs: ByteSlabs;

  constructor(o: PartitionReplicasOptions) {
    this.o = o;
    this.slabs = o.tailSlabs === undefined ? new ByteSlabs(o.memoryBytesTotal ?? memoryBytesTotalDefault) : new ByteSlabs(o.tailSlabs.totalBytes, o.tailSlabs.slabBytes);
    // Before any load: slabs allocated under load would count as external memory grown (byte-slabs.ts).
    this.slabs.reserve();
  }

  /** The member this node's directory runs as in partition groups (the node id unless it was wiped). */
  me(): number {
    return this.o.member?.() ?? this.o.self;
  }

  /** The nodes of `members` (member ids; noNode is skipped) other than this one, each once, in order. */
  otherNodes(members: readonly number[]): NodeId[] {
    return otherNodes(members, this.o.self);
  }

  /**
   * Whether the partition's voters are all on other nodes (reads go to a replica over the transport):
   * also while this node holds a learner of it, which may lack what is committed until promoted.
   */
  isRemote(topic: number, partition: number): boolean {
    const p = this.o.placement(topic, partition);
    return p !== undefined && !p.replicas.includes(this.me());
  }

  /** Whether `r` is the replica open here for its partition (not dropped, not replaced since). */
  holds(r: PartitionReplica): boolean {
    return this.byKey.get(replicaKey(r.topic, r.partition)) === r;
  }

  /** Whether `r` is still hosted: the node is not closing and `r` is not dropped. */
  hosts(r: PartitionReplica): boolean {
    return !this.closed && this.holds(r);
  }

  /** Waits between retries: the injected sleep (the simulator's virtual timers), else a timer. */
  sleep(ms: number): Promise<void> {
    return (this.o.sleep ?? sleep)(ms);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
