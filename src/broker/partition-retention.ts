/**
 * Retention of the partitions this node holds: removes batches appended before a cutoff, from the
 * former store and from the replica's log, then takes the snapshot again so that a follower sent it
 * learns where the log now starts (the image's `start`).
 */
import type { PartitionMemoryBudget } from './partition-memory-budget.js';
import type { ReplicasContext } from './partition-replicas-context.js';
import { replicaKey } from './partition-replicas-context.js';

export class PartitionRetention {
  readonly #c: ReplicasContext;
  readonly #memory: PartitionMemoryBudget;
  /** Whether a group is fetching its history (retention waits: it would remove what is being fetched). */
  readonly #fetchingHistory: (group: number) => boolean;

  constructor(c: ReplicasContext, memory: PartitionMemoryBudget, fetchingHistory: (group: number) => boolean) {
    this.#c = c;
    this.#memory = memory;
    this.#fetchingHistory = fetchingHistory;
  }

  /** Removes batches appended before `cutoffMs`; resolves with how many events went. */
  async apply(topic: number, partition: number, cutoffMs: number): Promise<number> {
    let removed = (await this.#c.o.legacy?.applyRetention(topic, partition, cutoffMs)) ?? 0;
    const r = this.#c.byKey.get(replicaKey(topic, partition));
    // Retention waits while the replica fetches its history, and while log shipping has put it ahead
    // of its group (its rows name entries the group has not applied: PartitionReplica.aheadOfGroup).
    if (r !== undefined && !this.#fetchingHistory(r.groupId) && !r.aheadOfGroup) {
      const n = await this.#c.writes.track(r.groupId, r.applyRetention(cutoffMs, (raftIndex) => this.#memory.compactMemory(r, raftIndex)));
      if (n > 0) await this.#memory.retakeAfterRemoval(r);
      removed += n;
    }
    return removed;
  }
}
