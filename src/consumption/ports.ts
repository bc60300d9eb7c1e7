/** The ports consumption needs; the node runtime implements them over the partition store. */
import type { Offset } from '../core/offset.js';

export interface PartitionBounds {
  /** First available offset. */
  oldest: Offset;
  /** Last written offset, -1 when never written. Empty when oldest > newest. */
  newest: Offset;
}

export interface StoredEvent {
  offset: Offset;
  bytes: Buffer;
}

export interface PartitionReader {
  bounds(topic: number, partition: number): PartitionBounds;
  read(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number): Promise<StoredEvent[]>;
  waitForEvents(topic: number, partition: number, after: Offset, signal: AbortSignal): Promise<void>;
}
