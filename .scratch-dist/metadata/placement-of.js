/**
 * Reading placement: the one way every reader learns where a partition lives. PURE.
 *
 * Event types (and timelines) created before placement existed have no stored placement. They are the
 * legacy layout: one node held every partition log. Their placement is answered, not stored: each
 * partition is its own group with an id derived from (topic, partition index) in a range the state
 * machine's counter never reaches (placement-types.ts), and its only replica is `legacyReplica`, which
 * the caller names: the node that served partitions before placement existed. A single node keeps
 * serving its existing data as a one-member group. A multi-node cluster of that version served no
 * partitions (publishing answered 503), so its legacy logs are empty on every node and any fixed choice
 * works; main.ts passes the lowest founding node id, which every node computes alike (and which is the
 * node itself in a cluster of one).
 *
 * Deriving instead of allocating at upgrade keeps the answer a function of the record alone: nodes that
 * restored snapshots of different ages agree without a migration step in the log.
 */
import { assert } from '../core/assert.js';
import { legacyGroupId } from './placement-types.js';
import { timelinesOf } from './timelines.js';
/** The stored placement of a topic of the record, or undefined when the topic is legacy (none stored). */
function storedPlacements(rec, topic) {
    if (topic === rec.storage.topic)
        return rec.storage.placement;
    const tl = rec.storage.timelines?.find((t) => t.topic === topic);
    assert(tl !== undefined, `topic ${topic} is not a log of event type ${rec.eventType.name}`);
    return tl.placement;
}
/** Where partition `index` of the record's log `topic` lives. */
export function placementOf(rec, topic, index, legacyReplica) {
    assert(Number.isSafeInteger(index) && index >= 0 && index < rec.storage.partitions.length, `partition index ${index} of ${rec.eventType.name} out of range`);
    const stored = storedPlacements(rec, topic);
    if (stored === undefined)
        return { group: legacyGroupId(topic, index), replicas: [legacyReplica] };
    const p = stored[index];
    assert(p !== undefined, `event type ${rec.eventType.name} stores no placement for partition ${index} of topic ${topic}`);
    return p;
}
/** Whether the record's log `topic` has no stored placement (it predates placement). */
export function isLegacyTopic(rec, topic) {
    return storedPlacements(rec, topic) === undefined;
}
/** Every partition of every timeline of the records, in record, timeline and partition order. */
export function* placedPartitions(records, legacyReplica) {
    for (const rec of records) {
        for (const tl of timelinesOf(rec)) {
            const legacy = isLegacyTopic(rec, tl.topic);
            for (let index = 0; index < rec.storage.partitions.length; index++) {
                yield { event_type: rec.eventType.name, partition: rec.storage.partitions[index], index, topic: tl.topic, legacy, placement: placementOf(rec, tl.topic, index, legacyReplica) };
            }
        }
    }
}
/** The record's log `topic` with its placement replaced (an updated copy; the input is not changed). */
export function withTopicPlacement(rec, topic, placement) {
    assert(placement.length === rec.storage.partitions.length, 'a placement per partition');
    if (topic === rec.storage.topic)
        return { ...rec, storage: { ...rec.storage, placement } };
    const timelines = rec.storage.timelines ?? [];
    assert(timelines.some((t) => t.topic === topic), `topic ${topic} is not a log of event type ${rec.eventType.name}`);
    return { ...rec, storage: { ...rec.storage, timelines: timelines.map((t) => (t.topic === topic ? { ...t, placement } : t)) } };
}
//# sourceMappingURL=placement-of.js.map