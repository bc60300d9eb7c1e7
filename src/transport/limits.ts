/**
 * Bounds on what crosses the node-to-node port, in one place (units last). Every value decoded from a
 * peer is checked against these before a handler sees it; a message that fails is dropped and logged
 * (a Raft message: Raft treats it as lost) or answered as refused (a request). Relations between them
 * are asserted at load.
 */
import { assert } from '../core/assert.js';
import { eventBytesMax, publishBatchEventsMax, publishBodyBytesMax, streamBatchLimitMax } from '../core/limits.js';

/**
 * Highest term (or leader epoch) accepted from a peer. A real cluster's terms stay tiny (a new term
 * every second for 8.9 million years stays below it); a forged term near 2^53 would leave every node
 * unable to elect a leader ever after (terms only grow), so it is refused at the door.
 */
export const termMax = 2 ** 48;
/**
 * Furthest a peer's message may move a group's term ahead of the receiver's own. A term only grows, so
 * without this one message with a term at `termMax` would leave every node unable to elect a leader
 * (the next election's messages would carry termMax + 1, refused above). A real term gap is a few
 * elections; 2^32 still lets a wiped node at term 0 join any real cluster, and leaves 2^16 such jumps
 * between a term of 0 and termMax. Checked by each group's host before its Raft core sees the message.
 */
export const termJumpMax = 2 ** 32;
/**
 * Highest log index accepted from a peer: 2^48 entries is 8.9 years of a million entries a second in
 * one group, while a partition writes at most a few thousand entries (batches) a second.
 */
export const indexMax = 2 ** 48;
/** Group ids are u32 on the wire; 0 is the metadata group, partition groups are above it. */
export const groupIdMax = 2 ** 32 - 1;
/** Offsets (and offset + count) must stay exact: JavaScript numbers are exact up to 2^53. */
export const offsetMax = Number.MAX_SAFE_INTEGER;

/** Largest gRPC message sent or accepted by default (one forwarded batch or one snapshot travels whole). */
export const messageBytesMaxDefault = publishBodyBytesMax + 1024 * 1024;
/** Batches waiting for one peer's stream to drain before new ones are dropped (Raft resends). */
export const peerQueueBatchesMaxDefault = 1024;
/** Bytes (entry and snapshot data) waiting for one peer's stream to drain before new batches are dropped. */
export const peerQueueBytesMaxDefault = 64 * 1024 * 1024;

/** Longest deadline a forwarded proposal or append may ask for. */
export const forwardDeadlineMsMax = 60_000;
/** Flow ids longer than this are cut (they only label log lines). */
export const flowIdLengthMax = 256;
/** A forwarded append's request id: unique per client batch and partition. */
export const requestIdLengthMax = 128;
/** A timeline id in a seal or a sealed answer (timeline ids are UUIDs; partition-entry.ts bounds them alike). */
export const timelineIdLengthMax = 64;
/** A node's process incarnation in a batch (main.ts makes a UUID, 36 characters). */
export const incarnationLengthMax = 64;
/** Events in one forwarded append: a publish batch's bound. */
export const appendEventsMax = publishBatchEventsMax;
/**
 * One stored event record (JSON after enrichment): the interface's 999,000-byte event plus the
 * metadata Brook adds, with room to spare.
 */
export const eventRecordBytesMax = 4 * 1024 * 1024;
/** All events of one forwarded append together: a publish body's bound. */
export const appendBytesMax = publishBodyBytesMax;

/**
 * Parts (one per partition) in one AppendMany call. Each holds at least one event, so a publish batch
 * never has more; the sender also splits a call whose parts together exceed appendBytesMax.
 */
export const appendPartsMax = publishBatchEventsMax;

/** Events in one read chunk, at most (a stream's batch_limit bound). */
export const readEventsMax = streamBatchLimitMax;
/** Event bytes in one read chunk, at most (a single larger event travels alone). */
export const readChunkBytesMax = 8 * 1024 * 1024;
/** How long a read may wait on the server for new events before answering an empty chunk. */
export const readWaitMsMax = 60_000;
/** Unconfirmed chunks one server-streaming call may have written before it waits for the client. */
export const streamChunksInFlightMax = 2;

/** Entry bytes in one log-shipping chunk, at most; the default a fetch asks for. */
export const logChunkBytesMax = 4 * 1024 * 1024;
export const logChunkBytesDefault = 1024 * 1024;
/** Entries in one log-shipping chunk, at most. */
export const logChunkEntriesMax = 100_000;

assert(eventRecordBytesMax >= eventBytesMax, 'a stored event record holds at least one max-size event');
assert(appendBytesMax < messageBytesMaxDefault, 'a full forwarded append fits in one gRPC message');
assert(readChunkBytesMax + 1024 * 1024 < messageBytesMaxDefault, 'a full read chunk fits in one gRPC message');
assert(logChunkBytesMax + 1024 * 1024 < messageBytesMaxDefault, 'a full log chunk fits in one gRPC message');
assert(readChunkBytesMax >= eventRecordBytesMax, 'a read chunk holds at least one max-size event');
assert(termMax < Number.MAX_SAFE_INTEGER && indexMax < Number.MAX_SAFE_INTEGER, 'terms and indexes stay exact');
