/**
 * Typed errors of the storage layer. Each has a stable `code` so callers (the HTTP layer, replication)
 * can map them without string matching: expired / not-yet-existing offsets become 422, a full append
 * queue becomes 503, corruption makes the partition unavailable until it is repaired.
 */

export type LogErrorCode =
  | 'LOG_OFFSET_EXPIRED'
  | 'LOG_OFFSET_NOT_YET_AVAILABLE'
  | 'LOG_APPEND_QUEUE_FULL'
  | 'LOG_CORRUPT_BATCH'
  | 'LOG_PARTITION_UNAVAILABLE'
  | 'LOG_CLOSED'
  | 'LOG_TOPIC_DROPPING'
  | 'LOG_PARTITION_SEALED'
  | 'KV_DURABILITY_LOST'
  | 'KV_WRITE_FAILED';

export abstract class LogError extends Error {
  abstract readonly code: LogErrorCode;
}

/** `after` is older than oldest - 1: the events after it were removed by retention. */
export class OffsetExpiredError extends LogError {
  override name = 'OffsetExpiredError';
  readonly code = 'LOG_OFFSET_EXPIRED';
  constructor(readonly topic: number, readonly partition: number, readonly after: number, readonly oldest: number) {
    super(`offset ${after} of topic ${topic} partition ${partition} has expired; oldest available is ${oldest}`);
  }
}

/** `after` is newer than the newest acknowledged offset. */
export class OffsetNotYetAvailableError extends LogError {
  override name = 'OffsetNotYetAvailableError';
  readonly code = 'LOG_OFFSET_NOT_YET_AVAILABLE';
  constructor(readonly topic: number, readonly partition: number, readonly after: number, readonly newest: number) {
    super(`offset ${after} of topic ${topic} partition ${partition} does not exist yet; newest is ${newest}`);
  }
}

/** Too many events or bytes are already waiting to be written; nothing of this call was queued. */
export class AppendQueueFullError extends LogError {
  override name = 'AppendQueueFullError';
  readonly code = 'LOG_APPEND_QUEUE_FULL';
  constructor(readonly queuedEvents: number, readonly queuedBytes: number) {
    super(`append queue full (${queuedEvents} events, ${queuedBytes} bytes pending)`);
  }
}

/** A stored record batch failed its checksum or structural checks. Corrupt bytes are never served. */
export class CorruptBatchError extends LogError {
  override name = 'CorruptBatchError';
  readonly code = 'LOG_CORRUPT_BATCH';
  constructor(readonly topic: number, readonly partition: number, readonly offset: number, readonly reason: string) {
    super(`corrupt record batch in topic ${topic} partition ${partition} at offset ${offset}: ${reason}`);
  }
}

/** The partition was quarantined after corruption was found; it serves nothing until repaired. */
export class PartitionUnavailableError extends LogError {
  override name = 'PartitionUnavailableError';
  readonly code = 'LOG_PARTITION_UNAVAILABLE';
  constructor(readonly topic: number, readonly partition: number, override readonly cause: Error) {
    super(`topic ${topic} partition ${partition} is unavailable: ${cause.message}`);
  }
}

export class StoreClosedError extends LogError {
  override name = 'StoreClosedError';
  readonly code = 'LOG_CLOSED';
  constructor(what = 'partition store') {
    super(`${what} is closed`);
  }
}

/** Appends to a topic while dropTopic() is deleting it. */
export class TopicDroppingError extends LogError {
  override name = 'TopicDroppingError';
  readonly code = 'LOG_TOPIC_DROPPING';
  constructor(readonly topic: number) {
    super(`topic ${topic} is being dropped`);
  }
}

/**
 * The batch was not stored: the partition's log was sealed by a timeline switch (to `timeline`) before
 * the batch was applied. Nothing of it is stored, so it can go to the new timeline's log.
 */
export class PartitionSealedError extends LogError {
  override name = 'PartitionSealedError';
  readonly code = 'LOG_PARTITION_SEALED';
  constructor(readonly topic: number, readonly partition: number, readonly timeline: string) {
    super(`topic ${topic} partition ${partition} was sealed for the switch to timeline ${timeline}; the batch was not stored`);
  }
}

/**
 * An fsync failed. After a failed fsync the kernel may have dropped the dirty pages, so whether any
 * earlier unsynced write survives is unknown; the KV refuses every later write (restart to recover).
 */
export class DurabilityLostError extends LogError {
  override name = 'DurabilityLostError';
  readonly code = 'KV_DURABILITY_LOST';
  constructor(override readonly cause: unknown) {
    super(`fsync failed; the store refuses further writes until restarted: ${String((cause as Error)?.message ?? cause)}`);
  }
}

/**
 * A write the KV did not apply (nothing of it is stored), with the storage engine's own reason (e.g.
 * RocksDB's "IO error: No space left on device"), which its binding keeps only as the cause of a
 * generic "Batch was not applied".
 */
export class KvWriteError extends LogError {
  override name = 'KvWriteError';
  readonly code = 'KV_WRITE_FAILED';
  constructor(override readonly cause: unknown) {
    const inner = (cause as { cause?: unknown })?.cause;
    const reason = inner instanceof Error ? inner.message : (cause as Error)?.message ?? String(cause);
    // Directories are left out: the reason reaches clients (a publish's item detail); file names stay.
    super(`write not applied: ${reason.replace(/\/(?:[^\s:/]+\/)+/g, '')}`);
  }
}
