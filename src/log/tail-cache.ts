/**
 * The bounded in-memory tail of every partition: the most recent record batches, so consumers that
 * keep up are served without touching RocksDB.
 *
 * Each partition holds a contiguous run of batches ending at its newest offset. All batches of all
 * partitions are also kept in one global FIFO in append order; when the total exceeds the byte budget
 * the globally oldest batch is evicted. Because both orders are append order, the globally oldest live
 * batch of a partition is always the first of its run, so eviction keeps every run contiguous.
 * Retention and dropTopic remove batches from the front of a run; they are marked dead and skipped
 * when the global FIFO reaches them.
 */
import { assert } from '../core/assert.js';

/**
 * A cached record batch: the encoded value as written (never mutated) and where each event starts in
 * it. Event views are made on demand by readers and die young.
 */
export interface CachedBatch {
  readonly first: number;
  readonly last: number;
  readonly value: Buffer;
  readonly starts: Uint32Array;
  readonly bytes: number;
  readonly run: CachedBatch[];
  dead: boolean;
}

/** The bytes of the event at `offset` (which the batch must hold), as a view into the batch value. */
export function cachedEvent(b: CachedBatch, offset: number): Buffer {
  const i = offset - b.first;
  return b.value.subarray(b.starts[i]!, b.starts[i + 1]!);
}

export class TailCache {
  private fifo: CachedBatch[] = [];
  private fifoHead = 0;
  private totalBytes = 0;

  constructor(readonly bytesMax: number) {
    assert(Number.isSafeInteger(bytesMax) && bytesMax >= 0, 'tail cache budget must be a non-negative integer');
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** Adds a batch at the end of `run` (which must end right before it) and evicts to the budget. */
  add(run: CachedBatch[], first: number, value: Buffer, starts: Uint32Array, bytes: number): void {
    const prev = run[run.length - 1];
    if (prev !== undefined) assert(prev.last + 1 === first, `tail cache run gap: ${prev.last} then ${first}`);
    const b: CachedBatch = { first, last: first + starts.length - 2, value, starts, bytes, run, dead: false };
    run.push(b);
    this.fifo.push(b);
    this.totalBytes += bytes;
    this.evict();
  }

  private evict(): void {
    while (this.totalBytes > this.bytesMax && this.fifoHead < this.fifo.length) {
      const b = this.fifo[this.fifoHead]!;
      this.fifoHead++;
      if (b.dead) continue;
      assert(b.run[0] === b, 'evicted batch is not the first of its run');
      b.run.shift();
      b.dead = true;
      this.totalBytes -= b.bytes;
    }
    // Compact the FIFO once its consumed head dominates it.
    if (this.fifoHead > 1024 && this.fifoHead * 2 > this.fifo.length) {
      this.fifo = this.fifo.slice(this.fifoHead);
      this.fifoHead = 0;
    }
  }

  /** Removes the batches of `run` whose last offset is <= `upTo` (retention). */
  dropUpTo(run: CachedBatch[], upTo: number): void {
    while (run.length > 0 && run[0]!.last <= upTo) this.kill(run.shift()!);
  }

  /** Removes a whole run (topic dropped, partition quarantined). */
  dropRun(run: CachedBatch[]): void {
    for (const b of run) this.kill(b);
    run.length = 0;
  }

  private kill(b: CachedBatch): void {
    assert(!b.dead, 'batch killed twice');
    b.dead = true;
    this.totalBytes -= b.bytes;
  }
}

/** Index in `run` of the batch holding `offset`, or -1 when the run does not reach back that far. */
export function findInRun(run: readonly CachedBatch[], offset: number): number {
  if (run.length === 0 || run[0]!.first > offset || run[run.length - 1]!.last < offset) return -1;
  let lo = 0;
  let hi = run.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (run[mid]!.last < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
