/**
 * Timelines of an event type (interface.md, "Timeline"; docs/decisions.md "Storages and timelines"):
 * which storage and log hold which offsets. PURE.
 *
 * One dense offset sequence per partition runs over all timelines: timeline k+1 of a partition starts
 * at the offset after the last one of timeline k. An offset belongs to the last timeline whose start
 * is at or before it; its wire form carries that timeline's order, so offsets of a newer timeline
 * compare after older ones as strings too.
 */
import { defaultStorageId } from './types.js';
/** The timelines of an event type, oldest first; the implicit first one when none was created. */
export function timelinesOf(rec) {
    if (rec.storage.timelines !== undefined && rec.storage.timelines.length > 0)
        return rec.storage.timelines;
    return [implicitTimeline(rec)];
}
/** The first timeline of an event type before timelines are created: order 1 on the default storage. */
export function implicitTimeline(rec) {
    return {
        id: implicitTimelineId(rec.storage.topic),
        order: 1,
        storage_id: defaultStorageId,
        topic: rec.storage.topic,
        starts: rec.storage.partitions.map(() => 0),
        created_at: rec.eventType.created_at,
        switched_at: rec.eventType.created_at,
    };
}
/** A stable UUID-shaped id for the implicit first timeline of a log (derived from its topic id). */
export function implicitTimelineId(topic) {
    const hex = topic.toString(16).padStart(12, '0');
    return `00000000-0000-4000-8000-${hex}`;
}
/** The timeline holding an offset (>= 0) of partition index `p`; offsets before the first start belong to the first. */
export function timelineAt(timelines, p, offset) {
    let found = timelines[0];
    for (const t of timelines)
        if ((t.starts[p] ?? 0) <= offset)
            found = t;
    return found;
}
//# sourceMappingURL=timelines.js.map