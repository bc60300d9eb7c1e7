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
  /**
   * Resolves once read(after) has events to answer (or on abort). It must not resolve at once while
   * read(after) answers nothing: the streams read and wait in a loop, and such a loop never yields.
   */
  waitForEvents(topic: number, partition: number, after: Offset, signal: AbortSignal): Promise<void>;
  /**
   * What the partition's other replicas say is its newest offset (absent on a single node). `asked`:
   * how many replicas there are to ask; `newest`: the highest answer, undefined when none answered.
   */
  newestElsewhere?(topic: number, partition: number): Promise<{ asked: number; newest: number | undefined }>;
  /**
   * Brings bounds() of a partition held on other nodes up to what a replica holds now (it answers from
   * what a replica told last otherwise), within a bounded wait; resolves either way, never rejects
   * (absent: bounds() is this node's own copy).
   */
  freshenBounds?(topic: number, partition: number): Promise<void>;
}
