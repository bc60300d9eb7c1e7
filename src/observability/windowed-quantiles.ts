/**
 * Quantiles over a sliding window, for the JSON timers of GET /metrics (metrics.ts). It replaces
 * prom-client's Summary there: that one pushes every value into a t-digest per age bucket (five), which
 * cost 12-20 µs per value on this machine (docs/benchmarks.md), and a publish observed two of them.
 *
 * Values are counted in logarithmic buckets (each `ratio` wider than the one below), so an observation
 * is one logarithm and one increment, and a quantile is the geometric middle of its bucket: within
 * (ratio - 1) / 2 of the true value (0.5 % at the default 1.01). The window is `ageBuckets` slots of
 * maxAge / ageBuckets each: a value goes into the current slot; a read merges every slot, so it sees
 * the last (ageBuckets - 1) / ageBuckets of maxAge at least and maxAge at most, as the Summary's
 * rotating buckets did. `count` and `sum` are totals since start, as the Summary's are.
 *
 * Pure: the time comes from the caller's clock.
 */
export interface WindowedQuantilesOptions {
  /** Length of the window, ms. */
  readonly maxAgeMs: number;
  /** Slots the window rotates through. */
  readonly ageBuckets: number;
  /** Smallest value told apart from zero; smaller positive values count as it. */
  readonly min: number;
  /** Largest value counted as itself; larger ones count as it. */
  readonly max: number;
  /** Width of a bucket relative to the one below (> 1). */
  readonly ratio?: number;
}

export class WindowedQuantiles {
  readonly #slotMs: number;
  readonly #logRatio: number;
  readonly #logMin: number;
  readonly #min: number;
  readonly #buckets: number;
  /** Per slot: [zero or below, bucket 0, bucket 1, ...]. */
  readonly #slots: Float64Array[];
  #current = 0;
  /** When the current slot began, on the caller's clock. */
  #slotStart: number;
  #count = 0;
  #sum = 0;

  constructor(
    options: WindowedQuantilesOptions,
    private readonly now: () => number,
  ) {
    const ratio = options.ratio ?? 1.01;
    if (!(ratio > 1) || !(options.min > 0) || !(options.max > options.min) || !(options.ageBuckets >= 1) || !(options.maxAgeMs > 0)) {
      throw new RangeError('WindowedQuantiles: needs ratio > 1, 0 < min < max, ageBuckets >= 1, maxAgeMs > 0');
    }
    this.#slotMs = options.maxAgeMs / options.ageBuckets;
    this.#logRatio = Math.log(ratio);
    this.#logMin = Math.log(options.min);
    this.#min = options.min;
    // Bucket b is [min * ratio^b, min * ratio^(b+1)); the last one holds max.
    this.#buckets = Math.max(1, Math.ceil((Math.log(options.max) - this.#logMin) / this.#logRatio));
    this.#slots = Array.from({ length: options.ageBuckets }, () => new Float64Array(this.#buckets + 1));
    this.#slotStart = now();
  }

  observe(value: number): void {
    this.#rotate();
    this.#count++;
    this.#sum += value;
    this.#slots[this.#current]![this.#indexOf(value)]!++;
  }

  get count(): number {
    return this.#count;
  }

  get sum(): number {
    return this.#sum;
  }

  /** The q-quantile (0 < q <= 1) of the values in the window; NaN when it holds none. */
  quantile(q: number): number {
    return this.quantiles([q])[0]!;
  }

  /** The quantiles `qs` (ascending) of the values in the window, each NaN when it holds none. */
  quantiles(qs: readonly number[]): number[] {
    this.#rotate();
    const merged = new Float64Array(this.#buckets + 1);
    for (const slot of this.#slots) for (let i = 0; i < merged.length; i++) merged[i]! += slot[i]!;
    let total = 0;
    for (let i = 0; i < merged.length; i++) total += merged[i]!;
    if (total === 0) return qs.map(() => Number.NaN);
    const out: number[] = [];
    let i = 0;
    let below = merged[0]!;
    for (const q of qs) {
      // The smallest bucket with at least ceil(q * total) values at or below it.
      const rank = Math.max(1, Math.ceil(q * total));
      while (below < rank && i < this.#buckets) below += merged[++i]!;
      out.push(i === 0 ? 0 : this.#middleOf(i - 1));
    }
    return out;
  }

  /** Slot index in a slot array: 0 for zero and below, 1 + bucket otherwise. */
  #indexOf(value: number): number {
    if (!(value > 0)) return 0;
    if (value <= this.#min) return 1;
    const b = Math.floor((Math.log(value) - this.#logMin) / this.#logRatio);
    return 1 + Math.min(b, this.#buckets - 1);
  }

  /** The geometric middle of bucket b: [min * ratio^b, min * ratio^(b+1)). */
  #middleOf(b: number): number {
    return Math.exp(this.#logMin + (b + 0.5) * this.#logRatio);
  }

  /** Moves to the slot of the present time, clearing the slots it passes (their values aged out). */
  #rotate(): void {
    const t = this.now();
    const passed = Math.floor((t - this.#slotStart) / this.#slotMs);
    if (passed <= 0) return;
    const n = this.#slots.length;
    for (let k = 1; k <= Math.min(passed, n); k++) this.#slots[(this.#current + k) % n]!.fill(0);
    this.#current = (this.#current + passed) % n;
    this.#slotStart += passed * this.#slotMs;
  }
}
