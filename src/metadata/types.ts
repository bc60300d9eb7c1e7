/**
 * The registry's resources as stored in replicated metadata. Field names are the interface's wire
 * names, so a stored event type is served as-is (no mapping layer to get wrong).
 */
import type { PartitionPlacement } from './placement-types.js';

export type Category = 'undefined' | 'data' | 'business';
export const categories: readonly Category[] = ['undefined', 'data', 'business'];

export type PartitionStrategy = 'random' | 'hash' | 'user_defined';
export const partitionStrategies: readonly PartitionStrategy[] = ['random', 'user_defined', 'hash'];

export type EnrichmentStrategy = 'metadata_enrichment';
export const enrichmentStrategies: readonly EnrichmentStrategy[] = ['metadata_enrichment'];

export type CompatibilityMode = 'compatible' | 'forward' | 'none';
export const compatibilityModes: readonly CompatibilityMode[] = ['compatible', 'forward', 'none'];

export interface EventTypeSchema {
  type: 'json_schema';
  /** The submitted schema, serialized as a string exactly as the client sent it. */
  schema: string;
  /** Semantic version, generated: 1.0.0 on creation. */
  version: string;
  created_at: string;
}

export interface EventTypeStatistics {
  messages_per_minute: number;
  message_size: number;
  read_parallelism: number;
  write_parallelism: number;
}

export interface EventTypeOptions {
  retention_time: number;
}

export interface AuthorizationAttribute {
  data_type: string;
  value: string;
}

export interface EventTypeAuthorization {
  admins: AuthorizationAttribute[];
  readers: AuthorizationAttribute[];
  writers: AuthorizationAttribute[];
}

export interface EventType {
  name: string;
  owning_application: string;
  category: Category;
  enrichment_strategies: EnrichmentStrategy[];
  partition_strategy: PartitionStrategy;
  partition_key_fields?: string[];
  compatibility_mode: CompatibilityMode;
  schema: EventTypeSchema;
  default_statistic?: EventTypeStatistics;
  options: EventTypeOptions;
  authorization?: EventTypeAuthorization;
  read_scopes?: string[];
  write_scopes?: string[];
  created_at: string;
  updated_at: string;
}

/** Storage-side facts about an event type that clients never see. */
export interface EventTypeStorage {
  /** Numeric id of the event type's log in the storage; never reused, so a re-created name gets fresh logs. */
  topic: number;
  /** Partition ids as strings "0".."n-1"; fixed at creation (default_statistic is immutable). */
  partitions: string[];
  /** Current timeline order (1 until timelines are switched). */
  timeline: number;
  /**
   * Timelines, oldest first, once the first one was created (absent: one implicit timeline, order 1,
   * on the default storage at `topic`, starting at offset 0). Offsets are one dense sequence per
   * partition over all timelines: timeline k+1 of a partition starts right after the last offset of k.
   */
  timelines?: TimelineRecord[];
  /**
   * Where each partition of the first timeline (topic `topic`) lives, indexed like `partitions`.
   * Absent for event types created before placement existed: read it through placementOf().
   */
  placement?: PartitionPlacement[];
  /**
   * A timeline switch prepared and not yet committed (timeline.prepare): the partitions of the current
   * timeline are being sealed for it. At most one per event type.
   */
  pendingTimeline?: PendingTimeline;
}

/** A timeline switch between timeline.prepare and timeline.commit. */
export interface PendingTimeline {
  /** The new timeline's id (also what the current timeline's partitions are sealed for). */
  id: string;
  storage_id: string;
  /** When the switch was asked for (the proposer's clock): the new timeline's created_at. */
  at: string;
  /** The new log's partition groups, allocated at prepare (absent without placement, in unit tests). */
  placement?: PartitionPlacement[];
}

/** A storage: a named place where partition logs live (interface.md, "Storage"). */
export interface Storage {
  id: string;
  storage_type: 'broker';
  broker_configuration: Record<string, string>;
}

/** The built-in storage: this node's own RocksDB. */
export const defaultStorageId = 'default';

export interface TimelineRecord {
  id: string;
  order: number;
  storage_id: string;
  /** The log's id inside its storage. */
  topic: number;
  /** Per partition (by index), the first offset of this timeline. */
  starts: number[];
  created_at: string;
  switched_at: string;
  /**
   * Where each partition of this timeline's log lives, indexed like the event type's partitions. Set on
   * timelines after the first (the first one's is EventTypeStorage.placement); absent on timelines
   * created before placement existed: read it through placementOf().
   */
  placement?: PartitionPlacement[];
}

export interface EventTypeRecord {
  eventType: EventType;
  /** Every schema version, oldest first. The last equals eventType.schema. */
  schemas: EventTypeSchema[];
  storage: EventTypeStorage;
}

export type ReadFrom = 'begin' | 'end' | 'cursors';
export const readFromValues: readonly ReadFrom[] = ['begin', 'end', 'cursors'];

export interface SubscriptionCursorWithoutToken {
  event_type: string;
  partition: string;
  offset: string;
}

/**
 * Who may do what with a subscription (the original service's later versions): `admins` may change it
 * (its authorization), reset its cursors and delete it; `readers` may stream and commit; either may read
 * it, its cursors and its stats. Absent: every caller with read access to its event types may.
 */
export interface SubscriptionAuthorization {
  admins: AuthorizationAttribute[];
  readers: AuthorizationAttribute[];
}

/** A subscription as stored and served (interface.md, "Subscription"). */
export interface Subscription {
  id: string;
  owning_application: string;
  /** As the client listed them (duplicates removed); the key uses them sorted. */
  event_types: string[];
  consumer_group: string;
  read_from: ReadFrom;
  /** Present only when read_from is cursors: one cursor per partition of every event type. */
  initial_cursors?: SubscriptionCursorWithoutToken[];
  created_at: string;
  authorization?: SubscriptionAuthorization;
}

/** The key triple (owning_application, event_types in any order, consumer_group) as one string. */
export function subscriptionKey(s: Pick<Subscription, 'owning_application' | 'event_types' | 'consumer_group'>): string {
  return JSON.stringify([s.owning_application, [...new Set(s.event_types)].sort(), s.consumer_group]);
}

/** Blacklist entry kinds (interface.md, "Administration"). */
export type BlacklistType = 'CONSUMER_APP' | 'CONSUMER_ET' | 'PRODUCER_APP' | 'PRODUCER_ET';
export const blacklistTypes: readonly BlacklistType[] = ['CONSUMER_APP', 'CONSUMER_ET', 'PRODUCER_APP', 'PRODUCER_ET'];
