/**
 * Bounds on replicated metadata, enforced where commands are applied (defence in depth: a command
 * proposed by a buggy or outdated member passes through here like every other, so no member can take
 * the metadata past them, whatever its HTTP layer checked). The services check the same bounds first to
 * answer early; the state machine has the last word.
 *
 * The bounds are part of the replicated state (`limits.set`), so every node applies every command
 * against the same bounds and the state stays the same everywhere. Until a node sets them from its
 * configuration, the defaults of core/limits.ts hold.
 *
 * Sizes are measured as UTF-8 bytes of the stored JSON, a pure function of the state.
 */
import { eventTypesMaxDefault, metadataBytesMaxDefault, partitionsMaxDefault, schemaBytesMaxDefault, schemaVersionsMaxDefault, subscriptionsMaxDefault, } from '../core/limits.js';
export const metadataLimitKeys = [
    'eventTypesMax',
    'subscriptionsMax',
    'schemaVersionsMax',
    'schemaBytesMax',
    'partitionsMax',
    'subscriptionPartitionsMax',
    'metadataBytesMax',
];
export const defaultMetadataLimits = Object.freeze({
    eventTypesMax: eventTypesMaxDefault,
    subscriptionsMax: subscriptionsMaxDefault,
    schemaVersionsMax: schemaVersionsMaxDefault,
    schemaBytesMax: schemaBytesMaxDefault,
    partitionsMax: partitionsMaxDefault,
    subscriptionPartitionsMax: partitionsMaxDefault,
    metadataBytesMax: metadataBytesMaxDefault,
});
/** Whether a value is a complete set of bounds (each a positive safe integer). */
export function isMetadataLimits(v) {
    if (typeof v !== 'object' || v === null)
        return false;
    const o = v;
    return metadataLimitKeys.every((k) => Number.isSafeInteger(o[k]) && o[k] >= 1);
}
const encoder = new TextEncoder();
export function utf8Bytes(text) {
    return encoder.encode(text).length;
}
/**
 * Bytes of storage facts (partition id, placement with its learners and a move) allowed per
 * partition of an event type, and of subscription runtime per partition of a subscription: its slot,
 * committed cursor, its share of live sessions and closed ones (at most as many closed sessions as
 * partitions, listing at most twice the partitions: subscription-runtime.ts), with session ids and
 * incarnations of at most 128 characters (metadata/shapes.ts). The event type's and the partition's
 * names come on top, four times (slot, cursor, closed lists).
 */
const storageBytesPerPartition = 160;
const runtimeBytesPerPartition = 1600;
/**
 * What an event type holds in the metadata image: its record as the image writes it (the schema
 * texts escaped as JSON strings, where quotes and line breaks double; the current schema twice, in the
 * event type and among the versions), with room for its storage per partition. Counting the image's
 * bytes, not the texts', is what keeps the snapshot within one message between nodes.
 */
export function eventTypeRecordBytes(eventType, schemas, partitions) {
    let bytes = utf8Bytes(JSON.stringify(eventType)) + 64;
    for (const s of schemas)
        bytes += utf8Bytes(JSON.stringify(s)) + 1;
    return bytes + partitions * storageBytesPerPartition;
}
/** What a subscription holds in the metadata image: itself, and room for its runtime on `partitions`. */
export function subscriptionBytes(sub, partitions) {
    let bytes = utf8Bytes(JSON.stringify(sub));
    for (const p of partitions)
        bytes += runtimeBytesPerPartition + 4 * (utf8Bytes(p.event_type) + utf8Bytes(p.partition));
    return bytes;
}
//# sourceMappingURL=limits.js.map