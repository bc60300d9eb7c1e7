/**
 * Every bound Brook enforces, in one place, named with the unit last (TigerBeetle's habit).
 * Relations between limits are asserted at load so an edit cannot silently break one.
 */
import { assert } from './assert.js';

/** Interface: each event may be at most 999,000 bytes measured on the submitted text. */
export const eventBytesMax = 999_000;
/**
 * Smallest setting of the publish body limit (config publishBodyBytesMax): a batch of one event of the
 * largest size the interface allows, with its brackets and some whitespace, must fit.
 */
export const publishBodyBytesMin = 1024 * 1024;
/**
 * Highest setting of the publish body limit (config publishBodyBytesMax, 4 MiB by default): the
 * node-to-node transport sizes its messages by it, so a forwarded batch always fits.
 */
export const publishBodyBytesMax = 64 * 1024 * 1024;
/** Largest body for non-publishing endpoints, at least (an event type carries a schema of up to schemaBytesMax, escaped in a string). */
export const otherBodyBytesMax = 4 * 1024 * 1024;
/** Most events in one publish batch; bounds one RocksDB write batch. */
export const publishBatchEventsMax = 100_000;
/** Interface default partition limit for subscriptions (config subscriptionPartitionsMax); also bounds partitions of one event type. */
export const partitionsPerEventTypeMax = 100;
/** Event type name length bound (not in the interface; keeps keys and logs bounded). */
export const eventTypeNameLengthMax = 255;
/**
 * Metadata bounds (docs/decisions.md, "Metadata bounds"): their defaults, which also hold in the
 * replicated state until a node proposes its configured values (config: eventTypesMax ...).
 */
export const eventTypesMaxDefault = 1000;
export const subscriptionsMaxDefault = 1000;
/** Schema versions one event type may collect; a change beyond them is refused (every version stays retrievable). */
export const schemaVersionsMaxDefault = 100;
export const schemaBytesMaxDefault = 1_000_000;
/**
 * Timelines one event type may have, its first included (config timelinesMax). A switch adds one for
 * good (a timeline holds offsets consumers may still read, so none is removed), and each is a new set
 * of partition Raft groups on the nodes: switches are rare administrative steps, not a routine.
 */
export const timelinesMaxDefault = 10;
/** Partitions of one event type (and of one subscription's event types together, by default). */
export const partitionsMaxDefault = 100;
/**
 * Bytes of every event type (with all its schema versions) and subscription together. The metadata
 * snapshot travels to a lagging or new node in one gRPC message of at most 64 MiB; this leaves room
 * for the rest of the state (sessions, cursors, toggles).
 */
export const metadataBytesMaxDefault = 32 * 1024 * 1024;
export const metadataBytesMaxMax = 48 * 1024 * 1024;
/** Low-level stream: batch_limit upper bound so one batch line stays bounded in memory. */
export const streamBatchLimitMax = 100_000;
/** Bytes read ahead from the log per partition of a stream before waiting for the socket. */
export const streamReadAheadBytesMax = 4 * 1024 * 1024;
/** compatibility.md: more than 5 simultaneous low-level connections to one partition gets 429. */
export const lowLevelConnectionsPerPartitionDefault = 5;
/** Pending appends (events) queued for the log writer before publishes are refused with 503. */
export const appendQueueEventsMax = 1_000_000;
/** Default retention (interface). */
export const retentionTimeMsDefault = 345_600_000;
/**
 * Longest delay a Node timer takes (a signed 32-bit count of ms, about 24.8 days). A longer one fires
 * after 1 ms instead, with a TimeoutOverflowWarning, so a stream with batch_flush_timeout above it
 * spun and warned 33 times a second: waits are cut to this and the loop, waking early, waits again.
 */
export const timerDelayMsMax = 2 ** 31 - 1;
/** Seconds: stream timers are bounded so integer math on ms stays safe. */
export const streamSecondsMax = 10 * 365 * 24 * 3600;
export const pageLimitMax = 1000;
/**
 * Deepest nesting of objects and arrays in one event. Deeper events are refused (422 at validating):
 * consumers' JSON parsers are often recursive and could not read them.
 */
export const eventNestingDepthMax = 1000;
/** Interface: the subscription commit timeout, 60 s; a stream's commit_timeout may only shorten it. */
export const commitTimeoutSecondsMax = 60;

assert(eventBytesMax + 1024 < publishBodyBytesMin, 'a single max-size event must fit in the smallest publish body limit');
assert(streamReadAheadBytesMax >= eventBytesMax, 'read-ahead must hold at least one max-size event');
