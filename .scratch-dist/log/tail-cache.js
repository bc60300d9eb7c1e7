/**
 * The bounded in-memory tail of every partition: the most recent record batches, so consumers that
 * keep up are served without touching RocksDB.
 *
 * Why it looks like this: the cache is invisible to the garbage collector. Batches are copied into one
 * preallocated ring of bytes (the arena) and described by typed-array columns; adding a batch allocates
 * no object at all. Caching one Buffer (its own ArrayBuffer) and a few small objects per batch for tens
 * of seconds made every cached batch survive into V8's old generation and be evicted there, which kept
 * a full mark-compact running about once a second under a steady 5,000 events/s and put those pauses
 * into the publish p99 (docs/benchmarks.md). Readers get copies, never views into the arena, because
 * the arena is overwritten as it wraps; copies die young.
 *
 * Layout: batches are placed at increasing virtual byte positions; a batch never straddles the end of
 * the arena (the rest of the lap is skipped). Entries form one global FIFO in append order (sequence
 * numbers); adding a batch evicts, oldest first, every entry whose bytes it would overwrite. Each
 * partition's run is the list of its live entries, oldest first, contiguous in offsets and ending at its
 * newest cached offset. Because both orders are append order, the globally oldest live entry of a
 * partition is always the first of its run, so eviction keeps every run contiguous. Retention and
 * dropped partitions kill entries at the front of (or all of) a run; the FIFO skips them when it
 * reaches them.
 */
import { assert } from '../core/assert.js';
import { eventStarts } from './record-batch.js';
export function newTailRun() {
    return { seqs: [], head: 0 };
}
const initialEntries = 1024;
export class TailCache {
    bytesMax;
    #arena;
    /** Virtual position where the next batch goes (its arena position is this modulo the arena size). */
    #vHead = 0;
    #seqTail = 0; // oldest entry still in the FIFO
    #seqHead = 0; // next sequence number
    #liveBytes = 0;
    // Entry columns, indexed by seq & (capacity - 1).
    #first = new Float64Array(initialEntries);
    #count = new Uint32Array(initialEntries);
    #pos = new Float64Array(initialEntries);
    #len = new Uint32Array(initialEntries);
    #run = new Array(initialEntries).fill(null);
    constructor(bytesMax) {
        this.bytesMax = bytesMax;
        assert(Number.isSafeInteger(bytesMax) && bytesMax >= 0, 'tail cache budget must be a non-negative integer');
        // Pages of the arena are touched only as batches are written into it.
        this.#arena = Buffer.allocUnsafeSlow(bytesMax);
    }
    /** Bytes of the batches the cache serves (killed and evicted ones excluded). */
    get bytes() {
        return this.#liveBytes;
    }
    /**
     * Copies an encoded record batch holding `count` events from `first` to the end of `run`, which must
     * end right before it. A batch larger than the whole cache is not cached, and then neither is the
     * rest of its run (a run must stay contiguous up to the partition's newest offset).
     */
    add(run, first, value, count) {
        const last = this.#runLast(run);
        if (last !== undefined)
            assert(last + 1 === first, `tail cache run gap: ${last} then ${first}`);
        const size = this.bytesMax;
        const len = value.length;
        if (len === 0 || len > size) {
            this.dropRun(run);
            return;
        }
        let v = this.#vHead;
        const lapRest = size - (v % size);
        if (len > lapRest)
            v += lapRest;
        const end = v + len;
        while (this.#seqTail < this.#seqHead && this.#pos[this.#slot(this.#seqTail)] < end - size)
            this.#evictOldest();
        if (this.#seqHead - this.#seqTail === this.#first.length)
            this.#grow();
        value.copy(this.#arena, v % size);
        const seq = this.#seqHead++;
        const i = this.#slot(seq);
        this.#first[i] = first;
        this.#count[i] = count;
        this.#pos[i] = v;
        this.#len[i] = len;
        this.#run[i] = run;
        run.seqs.push(seq);
        this.#vHead = end;
        this.#liveBytes += len;
    }
    /**
     * Reads events from offset `from` on: calls `take` for each, in order, until `full()` says stop or the
     * run ends. False (and nothing taken) when the run does not hold `from`. The events are copies.
     */
    read(run, from, take, full) {
        const j0 = this.#find(run, from);
        if (j0 < 0)
            return false;
        for (let j = j0; j < run.seqs.length && !full(); j++) {
            const i = this.#slot(run.seqs[j]);
            const first = this.#first[i];
            const count = this.#count[i];
            const at = this.#pos[i] % this.bytesMax;
            // One copy per batch read; the events are views into the copy and die with it.
            const copy = Buffer.from(this.#arena.subarray(at, at + this.#len[i]));
            const starts = eventStarts(copy, count);
            for (let o = Math.max(from, first); o < first + count && !full(); o++) {
                take(o, copy.subarray(starts[o - first], starts[o - first + 1]));
            }
        }
        return true;
    }
    /** Removes the batches of `run` whose last offset is <= `upTo` (retention). */
    dropUpTo(run, upTo) {
        while (run.head < run.seqs.length) {
            const i = this.#slot(run.seqs[run.head]);
            if (this.#first[i] + this.#count[i] - 1 > upTo)
                break;
            this.#kill(i);
            run.head++;
        }
        compact(run);
    }
    /** Removes a whole run (topic dropped, partition quarantined, an uncacheable batch). */
    dropRun(run) {
        for (let j = run.head; j < run.seqs.length; j++)
            this.#kill(this.#slot(run.seqs[j]));
        run.seqs.length = 0;
        run.head = 0;
    }
    #slot(seq) {
        return seq % this.#first.length;
    }
    #runLast(run) {
        if (run.head === run.seqs.length)
            return undefined;
        const i = this.#slot(run.seqs[run.seqs.length - 1]);
        return this.#first[i] + this.#count[i] - 1;
    }
    /** Index in `run.seqs` of the batch holding `offset`, or -1 when the run does not hold it. */
    #find(run, offset) {
        const last = this.#runLast(run);
        if (last === undefined || offset > last || this.#first[this.#slot(run.seqs[run.head])] > offset)
            return -1;
        let lo = run.head;
        let hi = run.seqs.length - 1;
        while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            const i = this.#slot(run.seqs[mid]);
            if (this.#first[i] + this.#count[i] - 1 < offset)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }
    #evictOldest() {
        const i = this.#slot(this.#seqTail);
        const run = this.#run[i];
        if (run !== null && run !== undefined) {
            assert(run.seqs[run.head] === this.#seqTail, 'evicted batch is not the first of its run');
            run.head++;
            compact(run);
            this.#liveBytes -= this.#len[i];
            this.#run[i] = null;
        }
        this.#seqTail++;
    }
    #kill(i) {
        assert(this.#run[i] !== null, 'batch killed twice');
        this.#run[i] = null;
        this.#liveBytes -= this.#len[i];
    }
    /** Doubles the entry columns (many small batches); entries keep their sequence numbers. */
    #grow() {
        const n = this.#first.length * 2;
        const first = new Float64Array(n);
        const count = new Uint32Array(n);
        const pos = new Float64Array(n);
        const len = new Uint32Array(n);
        const run = new Array(n).fill(null);
        for (let seq = this.#seqTail; seq < this.#seqHead; seq++) {
            const from = this.#slot(seq);
            const to = seq % n;
            first[to] = this.#first[from];
            count[to] = this.#count[from];
            pos[to] = this.#pos[from];
            len[to] = this.#len[from];
            run[to] = this.#run[from];
        }
        this.#first = first;
        this.#count = count;
        this.#pos = pos;
        this.#len = len;
        this.#run = run;
    }
}
/** Drops the consumed head of a run's list once it dominates it. */
function compact(run) {
    if (run.head === run.seqs.length) {
        run.seqs.length = 0;
        run.head = 0;
    }
    else if (run.head > 1024 && run.head * 2 > run.seqs.length) {
        run.seqs = run.seqs.slice(run.head);
        run.head = 0;
    }
}
//# sourceMappingURL=tail-cache.js.map