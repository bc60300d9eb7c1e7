/**
 * The keys a partition group holds in the node's KV beside its Raft records, and their removal: the
 * directory of groups this node holds (found again at start), and what a drop deletes. The layout
 * only; partition-replica.ts owns the rows' contents.
 */
import type { KvBatch } from '../log/index.js';
import { prefixApplied, prefixHistoryPending, prefixOffsetIndex } from './partition-replica.js';
import { RaftLogStore } from './raft-log-store.js';

/** [0x16][group u32] -> [topic u32][partition u32]: the groups this node holds, found again at start. */
const prefixGroupDirectory = 0x16;

function groupKey(prefix: number, group: number): Buffer {
  const k = Buffer.allocUnsafe(5);
  k[0] = prefix;
  k.writeUInt32BE(group, 1);
  return k;
}

/**
 * [0x18][group u32] -> the id of the accepted loss (partition.loss) for which this node emptied its
 * replica of the group (group-loss-apply.ts). Not removed with the group's keys: a replay of the
 * metadata log must find it after the replica was emptied, rejoined and maybe dropped, and not empty
 * it again. Loss ids are drawn at random, so an old one never matches a new loss.
 */
const prefixLossActed = 0x18;

export function lossActedKey(group: number): Buffer {
  return groupKey(prefixLossActed, group);
}

export function putLossActed(b: KvBatch, group: number, lossId: string): void {
  b.put(lossActedKey(group), Buffer.from(lossId, 'utf8'));
}

/** The range of the whole directory, for iterating it. */
export const groupDirectoryRange = (): { gte: Buffer; lt: Buffer } => ({ gte: groupKey(prefixGroupDirectory, 0), lt: Buffer.from([prefixGroupDirectory + 1]) });

/** The directory entry of one group. */
export const groupDirectoryKey = (group: number): Buffer => groupKey(prefixGroupDirectory, group);

/** Records that this node holds `group`, the partition (topic, partition). */
export function putGroupDirectory(b: KvBatch, group: number, topic: number, partition: number): void {
  const v = Buffer.allocUnsafe(8);
  v.writeUInt32BE(topic, 0);
  v.writeUInt32BE(partition, 4);
  b.put(groupKey(prefixGroupDirectory, group), v);
}

/** One entry of the directory. */
export function decodeGroupDirectory(k: Buffer, v: Buffer): { group: number; topic: number; partition: number } {
  return { group: k.readUInt32BE(1), topic: v.readUInt32BE(0), partition: v.readUInt32BE(4) };
}

/** Everything of a group in the KV: its Raft records, its partition's rows, its directory entry. */
export function dropGroupKeys(b: KvBatch, g: number): void {
  RaftLogStore.drop(b, g);
  dropReplicaRows(b, g);
  b.del(groupKey(prefixGroupDirectory, g));
}

/** The partition's own keys of a group beside its Raft records: offset index, applied state, the record of a fetch to do. */
export function dropReplicaRows(b: KvBatch, g: number): void {
  b.delRange(groupKey(prefixOffsetIndex, g), groupKey(prefixOffsetIndex, g + 1));
  b.del(groupKey(prefixApplied, g));
  b.del(groupKey(prefixHistoryPending, g));
}
