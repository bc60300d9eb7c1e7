/**
 * The stream batcher: PURE decision of what to send and when, for one stream over several partitions.
 * The driver offers events it has read and calls poll(nowMs); the batcher answers with the batches to
 * write, whether the stream is finished, and when it next needs to be polled. No clock, no I/O.
 *
 * Rules (interface.md, low-level stream):
 * - each batch holds one partition; a partition flushes at once when batch_limit events are buffered,
 *   otherwise when batch_flush_timeout has passed since its last flush (its timer restarts on flush);
 * - a flush with nothing buffered is a keep-alive batch (cursor only, unchanged offset);
 * - stream_limit bounds the events of the whole stream (the last batch is cut to fit);
 * - at stream_timeout pending events are flushed and the stream ends;
 * - stream_keep_alive_limit: the stream ends once every partition has sent that many keep-alive batches
 *   in a row (the original service's per-partition counting).
 *
 * A subscription stream's partitions change as streams join and leave: addPartition/removePartition
 * (a removed partition's buffered events are dropped: they were never sent, the next owner reads them),
 * and poll(now, true) flushes every non-empty buffer at once (the uncommitted window is full, so the
 * buffers cannot grow to batch_limit until the client commits what it holds).
 */
import { assert } from '../core/assert.js';
export class StreamBatcher {
    #params;
    #parts;
    #byId = new Map();
    #startMs;
    /** Events sent plus events buffered: what stream_limit is counted against. */
    #committedToSend = 0;
    #done = false;
    constructor(params, partitions, nowMs) {
        this.#params = params;
        this.#startMs = nowMs;
        this.#parts = [];
        for (const p of partitions)
            this.addPartition(p.partition, p.after, nowMs);
    }
    addPartition(partition, after, nowMs) {
        assert(!this.#byId.has(partition), `partition ${partition} added twice`);
        const state = { partition, cursor: after, buffer: [], lastFlushMs: nowMs, keepAlivesInRow: 0 };
        this.#parts.push(state);
        this.#byId.set(partition, state);
    }
    /** Stops batching a partition; its buffered (unsent) events are dropped and no longer count toward stream_limit. */
    removePartition(partition) {
        const p = this.#byId.get(partition);
        assert(p !== undefined, `unknown partition ${partition}`);
        this.#committedToSend -= p.buffer.length;
        this.#byId.delete(partition);
        this.#parts.splice(this.#parts.indexOf(p), 1);
    }
    /** Events buffered and not yet sent, over all partitions. */
    get buffered() {
        let n = 0;
        for (const p of this.#parts)
            n += p.buffer.length;
        return n;
    }
    get done() {
        return this.#done;
    }
    /** How many more events the partition may take now (0 = do not read for it). */
    capacity(partition) {
        if (this.#done)
            return 0;
        const p = this.#byId.get(partition);
        assert(p !== undefined, `unknown partition ${partition}`);
        let room = this.#params.batchLimit - p.buffer.length;
        if (this.#params.streamLimit > 0)
            room = Math.min(room, this.#params.streamLimit - this.#committedToSend);
        return Math.max(0, room);
    }
    offer(partition, events) {
        const p = this.#byId.get(partition);
        assert(p !== undefined, `unknown partition ${partition}`);
        assert(events.length <= this.capacity(partition), 'offered more events than capacity');
        const last = p.buffer.length > 0 ? p.buffer[p.buffer.length - 1].offset : p.cursor;
        for (const ev of events) {
            assert(ev.offset > (p.buffer.length > 0 ? p.buffer[p.buffer.length - 1].offset : last), 'offsets must increase');
            p.buffer.push(ev);
        }
        this.#committedToSend += events.length;
    }
    poll(nowMs, flushAll = false) {
        const batches = [];
        if (this.#done)
            return { batches, done: true, wakeAtMs: Infinity };
        const p = this.#params;
        const timedOut = p.streamTimeoutMs > 0 && nowMs - this.#startMs >= p.streamTimeoutMs;
        // Once stream_limit events are buffered or sent, no buffer can grow: flush what is pending.
        const capped = p.streamLimit > 0 && this.#committedToSend >= p.streamLimit;
        for (const part of this.#parts) {
            const full = part.buffer.length >= p.batchLimit;
            const due = nowMs - part.lastFlushMs >= p.batchFlushTimeoutMs;
            if (full || ((timedOut || capped || flushAll) && part.buffer.length > 0)) {
                batches.push(this.#flush(part, nowMs));
            }
            else if (due && !timedOut) {
                if (part.buffer.length > 0)
                    batches.push(this.#flush(part, nowMs));
                else {
                    batches.push({ partition: part.partition, cursor: part.cursor, events: [] });
                    part.lastFlushMs = nowMs;
                    part.keepAlivesInRow++;
                }
            }
        }
        const limitReached = capped && this.#parts.every((x) => x.buffer.length === 0);
        const keepAliveLimitReached = p.streamKeepAliveLimit > 0 && this.#parts.length > 0 && this.#parts.every((x) => x.keepAlivesInRow >= p.streamKeepAliveLimit);
        if (timedOut || limitReached || keepAliveLimitReached) {
            this.#done = true;
            return { batches, done: true, wakeAtMs: Infinity };
        }
        let wakeAtMs = p.streamTimeoutMs > 0 ? this.#startMs + p.streamTimeoutMs : Infinity;
        for (const part of this.#parts)
            wakeAtMs = Math.min(wakeAtMs, part.lastFlushMs + p.batchFlushTimeoutMs);
        return { batches, done: false, wakeAtMs };
    }
    #flush(part, nowMs) {
        const events = part.buffer;
        assert(events.length > 0, 'flush of an empty buffer');
        part.buffer = [];
        part.cursor = events[events.length - 1].offset;
        part.lastFlushMs = nowMs;
        part.keepAlivesInRow = 0;
        return { partition: part.partition, cursor: part.cursor, events };
    }
}
//# sourceMappingURL=batcher.js.map