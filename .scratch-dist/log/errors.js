/**
 * Typed errors of the storage layer. Each has a stable `code` so callers (the HTTP layer, replication)
 * can map them without string matching: expired / not-yet-existing offsets become 422, a full append
 * queue becomes 503, corruption makes the partition unavailable until it is repaired.
 */
export class LogError extends Error {
}
/** `after` is older than oldest - 1: the events after it were removed by retention. */
export class OffsetExpiredError extends LogError {
    topic;
    partition;
    after;
    oldest;
    name = 'OffsetExpiredError';
    code = 'LOG_OFFSET_EXPIRED';
    constructor(topic, partition, after, oldest) {
        super(`offset ${after} of topic ${topic} partition ${partition} has expired; oldest available is ${oldest}`);
        this.topic = topic;
        this.partition = partition;
        this.after = after;
        this.oldest = oldest;
    }
}
/** `after` is newer than the newest acknowledged offset. */
export class OffsetNotYetAvailableError extends LogError {
    topic;
    partition;
    after;
    newest;
    name = 'OffsetNotYetAvailableError';
    code = 'LOG_OFFSET_NOT_YET_AVAILABLE';
    constructor(topic, partition, after, newest) {
        super(`offset ${after} of topic ${topic} partition ${partition} does not exist yet; newest is ${newest}`);
        this.topic = topic;
        this.partition = partition;
        this.after = after;
        this.newest = newest;
    }
}
/** Too many events or bytes are already waiting to be written; nothing of this call was queued. */
export class AppendQueueFullError extends LogError {
    queuedEvents;
    queuedBytes;
    name = 'AppendQueueFullError';
    code = 'LOG_APPEND_QUEUE_FULL';
    constructor(queuedEvents, queuedBytes) {
        super(`append queue full (${queuedEvents} events, ${queuedBytes} bytes pending)`);
        this.queuedEvents = queuedEvents;
        this.queuedBytes = queuedBytes;
    }
}
/** A stored record batch failed its checksum or structural checks. Corrupt bytes are never served. */
export class CorruptBatchError extends LogError {
    topic;
    partition;
    offset;
    reason;
    name = 'CorruptBatchError';
    code = 'LOG_CORRUPT_BATCH';
    constructor(topic, partition, offset, reason) {
        super(`corrupt record batch in topic ${topic} partition ${partition} at offset ${offset}: ${reason}`);
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.reason = reason;
    }
}
/** The partition was quarantined after corruption was found; it serves nothing until repaired. */
export class PartitionUnavailableError extends LogError {
    topic;
    partition;
    cause;
    name = 'PartitionUnavailableError';
    code = 'LOG_PARTITION_UNAVAILABLE';
    constructor(topic, partition, cause) {
        super(`topic ${topic} partition ${partition} is unavailable: ${cause.message}`);
        this.topic = topic;
        this.partition = partition;
        this.cause = cause;
    }
}
export class StoreClosedError extends LogError {
    name = 'StoreClosedError';
    code = 'LOG_CLOSED';
    constructor(what = 'partition store') {
        super(`${what} is closed`);
    }
}
/** Appends to a topic while dropTopic() is deleting it. */
export class TopicDroppingError extends LogError {
    topic;
    name = 'TopicDroppingError';
    code = 'LOG_TOPIC_DROPPING';
    constructor(topic) {
        super(`topic ${topic} is being dropped`);
        this.topic = topic;
    }
}
/**
 * An fsync failed. After a failed fsync the kernel may have dropped the dirty pages, so whether any
 * earlier unsynced write survives is unknown; the KV refuses every later write (restart to recover).
 */
export class DurabilityLostError extends LogError {
    cause;
    name = 'DurabilityLostError';
    code = 'KV_DURABILITY_LOST';
    constructor(cause) {
        super(`fsync failed; the store refuses further writes until restarted: ${String(cause?.message ?? cause)}`);
        this.cause = cause;
    }
}
/**
 * A write the KV did not apply (nothing of it is stored), with the storage engine's own reason (e.g.
 * RocksDB's "IO error: No space left on device"), which its binding keeps only as the cause of a
 * generic "Batch was not applied".
 */
export class KvWriteError extends LogError {
    cause;
    name = 'KvWriteError';
    code = 'KV_WRITE_FAILED';
    constructor(cause) {
        const inner = cause?.cause;
        const reason = inner instanceof Error ? inner.message : cause?.message ?? String(cause);
        // Directories are left out: the reason reaches clients (a publish's item detail); file names stay.
        super(`write not applied: ${reason.replace(/\/(?:[^\s:/]+\/)+/g, '')}`);
        this.cause = cause;
    }
}
//# sourceMappingURL=errors.js.map