/**
 * Where a partition lives: the Raft group that replicates it and the nodes in that group. Stored in
 * replicated metadata (DESIGN.md, "Replication model": placement is decided by the metadata leader and
 * stored in metadata). Every partition of every timeline's log is its own group.
 *
 * Group ids are u32 and never reused, so a re-created event type (or a new timeline) never meets the
 * Raft state of an older one. Two ranges exist:
 * - 0 is the metadata group;
 * - [1, groupIdAllocatedMax] are handed out by the state machine, in log order, from a counter;
 * - [legacyGroupIdBase, 2^32) are derived from (topic, partition) for partitions of event types created
 *   before placement existed (see placementOf). The counter never reaches that range, so the two kinds
 *   cannot collide.
 */
import { assert } from '../core/assert.js';
import { partitionsPerEventTypeMax } from '../core/limits.js';
/** The highest group id the state machine's counter may hand out. */
export const groupIdAllocatedMax = 2 ** 31 - 1;
/** Node ids are Raft member ids: positive and within the config's range. */
export const nodeIdMax = 2 ** 31 - 1;
/** Derived group ids of legacy partitions: base + topic * 2^legacyPartitionBits + partition index. */
export const legacyGroupIdBase = 2 ** 31;
const legacyPartitionBits = 10;
const legacyTopicMax = 2 ** (32 - 1 - legacyPartitionBits) - 1;
assert(partitionsPerEventTypeMax <= 2 ** legacyPartitionBits, 'a legacy group id must have room for every partition index');
export const isNodeId = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && v <= nodeIdMax;
/** The group id of partition `index` of a legacy log (one written before placement existed). */
export function legacyGroupId(topic, index) {
    assert(Number.isSafeInteger(topic) && topic >= 1 && topic <= legacyTopicMax, `legacy topic ${topic} out of range`);
    assert(Number.isSafeInteger(index) && index >= 0 && index < 2 ** legacyPartitionBits, `legacy partition index ${index} out of range`);
    return legacyGroupIdBase + topic * 2 ** legacyPartitionBits + index;
}
/** The (topic, partition index) a legacy group id was derived from; undefined for other ids. */
export function legacyGroupParts(group) {
    if (!Number.isSafeInteger(group) || group < legacyGroupIdBase || group >= 2 ** 32)
        return undefined;
    const rest = group - legacyGroupIdBase;
    const topic = Math.floor(rest / 2 ** legacyPartitionBits);
    if (topic < 1)
        return undefined;
    return { topic, index: rest % 2 ** legacyPartitionBits };
}
//# sourceMappingURL=placement-types.js.map