/**
 * The in-memory offset index of a partition replica: one row per batch whose entry is still in the
 * group's memory tail (raft index, first and last offset, append time, position in the entry), in
 * apply order, dropped from the front when memory is compacted. PURE.
 *
 * Kept as number columns, not one object per batch: a row lives as long as its entry stays in memory
 * (up to 1,024 entries per partition, seconds under load), so row objects were promoted to V8's old
 * generation and died there by the thousand per second, which is what makes full collections frequent
 * (docs/benchmarks.md). A reader gets a row object made on the spot (it dies young).
 */

export interface RecentRow {
  readonly raftIndex: number;
  readonly first: number;
  readonly last: number;
  readonly appendTimeMs: number;
  /** Where the batch's events start among the entry's. */
  readonly position: number;
  /** Not kept in memory (only the stored row has it); always ''. */
  readonly requestId: string;
}

const fields = 5;
const rowsInitial = 32;

export class RecentRows {
  /** Row i (from #start) is at [i * fields, i * fields + fields): raft index, first, last, time, position. */
  #cols = new Float64Array(0);
  #start = 0;
  #end = 0;

  get length(): number {
    return this.#end - this.#start;
  }

  push(raftIndex: number, first: number, last: number, appendTimeMs: number, position: number): void {
    if (this.#end * fields === this.#cols.length) this.#makeRoom();
    const at = this.#end++ * fields;
    const c = this.#cols;
    c[at] = raftIndex;
    c[at + 1] = first;
    c[at + 2] = last;
    c[at + 3] = appendTimeMs;
    c[at + 4] = position;
  }

  /** Row i (0: the oldest held), as an object. */
  row(i: number): RecentRow {
    const at = (this.#start + i) * fields;
    const c = this.#cols;
    return { raftIndex: c[at]!, first: c[at + 1]!, last: c[at + 2]!, appendTimeMs: c[at + 3]!, position: c[at + 4]!, requestId: '' };
  }

  raftIndexAt(i: number): number {
    return this.#cols[(this.#start + i) * fields]!;
  }

  firstAt(i: number): number {
    return this.#cols[(this.#start + i) * fields + 1]!;
  }

  lastAt(i: number): number {
    return this.#cols[(this.#start + i) * fields + 2]!;
  }

  /** The first row whose last offset is at least `offset` (rows are in offset order), or `length`. */
  lowerBoundLast(offset: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.lastAt(mid) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops the rows of entries before `raftIndex` from the front. */
  dropBefore(raftIndex: number): void {
    while (this.#start < this.#end && this.#cols[this.#start * fields]! < raftIndex) this.#start++;
    if (this.#start === this.#end) this.clear();
  }

  clear(): void {
    this.#start = 0;
    this.#end = 0;
    // A partition that went quiet gives its columns back.
    if (this.#cols.length > rowsInitial * fields * 4) this.#cols = new Float64Array(0);
  }

  /** Room for one more row: the held rows moved to the front, in a larger array when half full or more. */
  #makeRoom(): void {
    const n = this.length;
    const rows = this.#cols.length / fields;
    const cols = n * 2 > rows || rows === 0 ? new Float64Array(Math.max(rowsInitial, rows * 2) * fields) : this.#cols;
    if (cols === this.#cols) this.#cols.copyWithin(0, this.#start * fields, this.#end * fields);
    else cols.set(this.#cols.subarray(this.#start * fields, this.#end * fields));
    this.#cols = cols;
    this.#start = 0;
    this.#end = n;
  }
}
