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
import {
  eventTypesMaxDefault,
  metadataBytesMaxDefault,
  partitionsMaxDefault,
  schemaBytesMaxDefault,
  schemaVersionsMaxDefault,
  subscriptionsMaxDefault,
  timelinesMaxDefault,
} from '../core/limits.js';
import type { EventType, EventTypeRecord, Subscription } from './types.js';

export interface MetadataLimits {
  eventTypesMax: number;
  subscriptionsMax: number;
  /** Schema versions one event type may collect. */
  schemaVersionsMax: number;
  /** One schema's text. */
  schemaBytesMax: number;
  /** Partitions of one event type. */
  partitionsMax: number;
  /** Partitions of one subscription's event types together. */
  subscriptionPartitionsMax: number;
  /** Every event type (all schema versions) and subscription together. */
  metadataBytesMax: number;
  /** Timelines of one event type, its first included: a switch beyond them is refused. */
  timelinesMax: number;
}

export const metadataLimitKeys = [
  'eventTypesMax',
  'subscriptionsMax',
  'schemaVersionsMax',
  'schemaBytesMax',
  'partitionsMax',
  'subscriptionPartitionsMax',
  'metadataBytesMax',
  'timelinesMax',
] as const satisfies readonly (keyof MetadataLimits)[];

/**
 * Bounds added after limits.set existed: a limits.set or a snapshot written before them lacks them
 * and still applies (they take their defaults), so a log written by an earlier version replays to the
 * same bounds it had, and the configured ones of the other keys are not lost.
 */
const laterLimitKeys: readonly (keyof MetadataLimits)[] = ['timelinesMax'];

export const defaultMetadataLimits: Readonly<MetadataLimits> = Object.freeze({
  eventTypesMax: eventTypesMaxDefault,
  subscriptionsMax: subscriptionsMaxDefault,
  schemaVersionsMax: schemaVersionsMaxDefault,
  schemaBytesMax: schemaBytesMaxDefault,
  partitionsMax: partitionsMaxDefault,
  subscriptionPartitionsMax: partitionsMaxDefault,
  metadataBytesMax: metadataBytesMaxDefault,
  timelinesMax: timelinesMaxDefault,
});

/**
 * Whether a value is a set of bounds (each a positive safe integer); those added later may be absent
 * (metadataLimitsOf fills them in).
 */
export function isMetadataLimits(v: unknown): v is MetadataLimits {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return metadataLimitKeys.every((k) => (o[k] === undefined && laterLimitKeys.includes(k)) || (Number.isSafeInteger(o[k]) && (o[k] as number) >= 1));
}

/** Every bound of `v` (checked by isMetadataLimits), the later ones it lacks at their defaults, nothing else. */
export function metadataLimitsOf(v: MetadataLimits): MetadataLimits {
  const out = { ...defaultMetadataLimits };
  for (const k of metadataLimitKeys) if (v[k] !== undefined) out[k] = v[k];
  return out;
}

const encoder = new TextEncoder();

export function utf8Bytes(text: string): number {
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
export function eventTypeRecordBytes(eventType: EventType, schemas: readonly EventTypeRecord['schemas'][number][], partitions: number, logs = 1): number {
  let bytes = utf8Bytes(JSON.stringify(eventType)) + 64;
  for (const s of schemas) bytes += utf8Bytes(JSON.stringify(s)) + 1;
  // The first log's facts are the event type's storage (counted as before timelines existed); each
  // further log (a timeline after the first, a pending switch) holds its own per partition (start,
  // placement) and its own id, storage, dates and order.
  return bytes + partitions * storageBytesPerPartition + (logs - 1) * (partitions * storageBytesPerPartition + timelineBytes);
}

/** Room for one further timeline's own facts besides its partitions'. */
const timelineBytes = 256;

/** The logs an event type's record describes: its timelines (one before any switch) and a pending switch. */
export function eventTypeLogs(rec: EventTypeRecord): number {
  const timelines = rec.storage.timelines?.length ?? 0;
  return Math.max(1, timelines) + (rec.storage.pendingTimeline === undefined ? 0 : 1);
}

/** What a subscription holds in the metadata image: itself, and room for its runtime on `partitions`. */
export function subscriptionBytes(sub: Subscription, partitions: readonly { event_type: string; partition: string }[]): number {
  let bytes = utf8Bytes(JSON.stringify(sub));
  for (const p of partitions) bytes += runtimeBytesPerPartition + 4 * (utf8Bytes(p.event_type) + utf8Bytes(p.partition));
  return bytes;
}
