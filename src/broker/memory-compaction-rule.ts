/**
 * When a partition drops applied entries from its in-memory log, and down to which index: the pure
 * rule of the memory budget (partition-memory-budget.ts does the compaction). The KV keeps every
 * entry; memory keeps a tail that serves live consumers and followers that lag a little, bounded by
 * entries and by bytes, per partition and for the node.
 */

/**
 * Entries kept in memory (the default of `memoryEntries`): past it the oldest applied ones are dropped
 * from memory (the KV keeps them), all but a quarter; a leader keeps what a follower still lacks up to
 * sixteen times as many, beyond which that follower is sent a snapshot and fetches the log.
 */
export const memoryEntriesDefault = 1024;
/** Bytes of a partition's log kept in memory before the oldest applied entries are dropped from it. */
export const memoryBytesMax = 16 * 1024 * 1024;
/** Bytes of all partitions' logs kept in memory on a node (the default of `memoryBytesTotal`). */
export const memoryBytesTotalDefault = 64 * 1024 * 1024;

/** A partition's share of the node's budget for memory tails. */
export function shareOfBudget(budgetBytes: number, partitions: number): number {
  return budgetBytes / Math.max(1, partitions);
}

/**
 * The bytes of its memory tail a partition keeps when it is over a bound in bytes: half of its share
 * of the node's budget when the node is over it (`nodeShareBytes` given), else half of the partition's
 * own bound once its tail reaches it; undefined when no bound in bytes applies.
 */
export function tailBytesToKeep(tailBytes: number, nodeShareBytes: number | undefined): number | undefined {
  if (nodeShareBytes !== undefined) return nodeShareBytes / 2;
  return tailBytes >= memoryBytesMax ? memoryBytesMax / 2 : undefined;
}

export interface CompactionInput {
  /** The memory log's first and last index. */
  readonly firstIndex: number;
  readonly lastIndex: number;
  /** The group's applied index (nothing past it is dropped). */
  readonly applied: number;
  /** Entries kept in memory (memoryEntries). */
  readonly maxEntries: number;
  /** tailBytesToKeep's answer. */
  readonly keepBytes: number | undefined;
  readonly tailBytes: number;
  /** The index up to which entries go so that at most `bytes` of applied ones stay (the memory log's). */
  readonly indexKeeping: (bytes: number) => number;
  /** Where this node leads: how far each follower has acknowledged; undefined on a follower. */
  readonly followerMatches: readonly number[] | undefined;
}

/**
 * The index up to which applied entries leave memory, or undefined when none is to go. Over the
 * entry bound, all but a quarter of it stay; over a bound in bytes, the oldest go until what stays is
 * within `keepBytes`, counted in bytes: a count of entries kept would hold any number of bytes
 * (entries of batches of 1000 events are hundreds of KB). A leader keeps what a follower still lacks
 * (it is cheaper to send than to ship), up to sixteen times the entry bound and eight times the
 * partition's byte bound.
 */
export function compactionTarget(t: CompactionInput): number | undefined {
  const entries = t.lastIndex - t.firstIndex;
  if (entries < t.maxEntries && t.keepBytes === undefined) return undefined;
  let compactTo = entries < t.maxEntries ? t.firstIndex - 1 : t.applied - Math.floor(t.maxEntries / 4);
  if (t.keepBytes !== undefined) compactTo = Math.max(compactTo, t.indexKeeping(t.keepBytes));
  if (t.followerMatches !== undefined && entries < 16 * t.maxEntries && t.tailBytes < 8 * memoryBytesMax) {
    for (const match of t.followerMatches) compactTo = Math.min(compactTo, match);
  }
  return compactTo < t.firstIndex ? undefined : compactTo;
}
