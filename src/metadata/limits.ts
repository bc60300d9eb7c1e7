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
}

export const metadataLimitKeys = [
  'eventTypesMax',
  'subscriptionsMax',
  'schemaVersionsMax',
  'schemaBytesMax',
  'partitionsMax',
  'subscriptionPartitionsMax',
  'metadataBytesMax',
] as const satisfies readonly (keyof MetadataLimits)[];

export const defaultMetadataLimits: Readonly<MetadataLimits> = Object.freeze({
  eventTypesMax: eventTypesMaxDefault,
  subscriptionsMax: subscriptionsMaxDefault,
  schemaVersionsMax: schemaVersionsMaxDefault,
  schemaBytesMax: schemaBytesMaxDefault,
  partitionsMax: partitionsMaxDefault,
  subscriptionPartitionsMax: partitionsMaxDefault,
  metadataBytesMax: metadataBytesMaxDefault,
});

/** Whether a value is a complete set of bounds (each a positive safe integer). */
export function isMetadataLimits(v: unknown): v is MetadataLimits {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return metadataLimitKeys.every((k) => Number.isSafeInteger(o[k]) && (o[k] as number) >= 1);
}

const encoder = new TextEncoder();

export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

/** What an event type holds in metadata: its fields, and the text of every schema version it keeps. */
export function eventTypeRecordBytes(eventType: EventType, schemas: readonly EventTypeRecord['schemas'][number][]): number {
  let bytes = utf8Bytes(JSON.stringify({ ...eventType, schema: { ...eventType.schema, schema: '' } }));
  for (const s of schemas) bytes += utf8Bytes(s.schema) + 64;
  return bytes;
}

export function subscriptionBytes(sub: Subscription): number {
  return utf8Bytes(JSON.stringify(sub));
}
