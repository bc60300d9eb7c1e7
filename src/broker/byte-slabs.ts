/**
 * The bytes of the partitions' memory tails, node-wide: a fixed number of large slabs, each filled
 * front to back and reused once everything in it was freed. An entry's data kept here is no buffer
 * of its own: with one buffer per entry, kept seconds to minutes, V8 counted every entry's bytes as
 * external memory grown since the last mark-compact (into the old generation's limit), and the tail
 * alone started most mark-compacts of a steady publish load (docs/benchmarks.md, "what starts the
 * mark-compacts of (b)"). Slabs are kept once allocated: after warm-up nothing grows. A node allocates
 * them all when it starts (`reserve`): allocated on first use, they came while the first 64 MiB of
 * entries arrived, each 4 MiB counted as external memory grown since the last mark-compact, and started
 * mark-compacts of their own under a fresh node's load (docs/benchmarks.md, "Single node, 2026-11-28
 * morning: the ArrayBuffer bytes per request against 4e45473"). Untouched, their pages cost no RSS.
 *
 * Bookkeeping only (no I/O, no clock): a handle is slab * slabBytes + offset; the caller keeps the
 * length and frees exactly what it allocated. Frees may come in any order (groups compact and
 * truncate independently): a slab is reused when its live bytes reach 0. When no slab has room,
 * `alloc` says so (-1) and the caller keeps the entry's own buffer, as before: the slabs bound memory,
 * they never overwrite what is live.
 */
import { assert, invariantFailed } from '../core/assert.js';

export class ByteSlabs {
  readonly slabBytes: number;
  readonly slabCount: number;
  readonly #slabs: Array<Buffer | undefined>;
  /** Bytes allocated and not freed, per slab. */
  readonly #live: Float64Array;
  /** Slabs with nothing live that are not the current one (never used ones included), reused last-in first. */
  readonly #free: number[] = [];
  /** The slab allocations go to (-1: none yet), and where its free space starts. */
  #current = -1;
  #top = 0;
  /** Allocations refused for want of room: every slab partly live (their entries kept their own buffer). */
  refused = 0;
  /** Allocations refused as larger than a slab (kept their own buffer; no compaction makes room for them). */
  oversize = 0;

  constructor(totalBytes: number, slabBytes = ByteSlabs.slabBytesFor(totalBytes)) {
    assert(Number.isSafeInteger(slabBytes) && slabBytes > 0, `slab size ${slabBytes}`);
    this.slabBytes = slabBytes;
    this.slabCount = Math.max(1, Math.floor(totalBytes / slabBytes));
    this.#slabs = new Array<Buffer | undefined>(this.slabCount).fill(undefined);
    this.#live = new Float64Array(this.slabCount);
    for (let s = this.slabCount - 1; s >= 0; s--) this.#free.push(s);
  }

  /**
   * A slab size for a budget: 4 MiB (a batch of 1,000 events of 500 bytes is one entry of about half a
   * megabyte: several fit), smaller for a small budget so that it still has a few slabs (at least 4 KiB).
   */
  static slabBytesFor(totalBytes: number): number {
    let s = 4 * 1024 * 1024;
    while (s > 4096 && totalBytes / s < 8) s /= 2;
    return s;
  }

  /** Allocates every slab now rather than on first use (contents uninitialised; pages untouched). */
  reserve(): void {
    for (let s = 0; s < this.slabCount; s++) this.#slabs[s] ??= Buffer.allocUnsafeSlow(this.slabBytes);
  }

  /** A handle for `len` (> 0) bytes, or -1 when no slab has room for them. */
  alloc(len: number): number {
    if (!(len > 0)) invariantFailed(`allocating ${len} bytes`);
    if (len > this.slabBytes) {
      this.oversize++;
      return -1;
    }
    if (this.#current < 0 || this.#top + len > this.slabBytes) {
      if (this.#current >= 0 && this.#live[this.#current] === 0) this.#top = 0;
      else {
        const s = this.#free.pop();
        if (s === undefined) {
          this.refused++;
          return -1;
        }
        // The slab left is not free (something in it is live): its last free makes it free.
        this.#current = s;
        this.#top = 0;
        this.#slabs[s] ??= Buffer.allocUnsafeSlow(this.slabBytes);
      }
    }
    const h = this.#current * this.slabBytes + this.#top;
    this.#top += len;
    this.#live[this.#current]! += len;
    return h;
  }

  /** Frees what `alloc(len)` returned as `handle`. */
  free(handle: number, len: number): void {
    const s = Math.floor(handle / this.slabBytes);
    const live = (this.#live[s]! -= len);
    if (!(live >= 0)) invariantFailed(`slab ${s} freed below empty`);
    if (live !== 0) return;
    if (s === this.#current) this.#top = 0;
    else this.#free.push(s);
  }

  write(handle: number, data: Uint8Array): void {
    const s = Math.floor(handle / this.slabBytes);
    this.#slabs[s]!.set(data, handle - s * this.slabBytes);
  }

  /** A copy of the bytes at `handle` (its own memory: the slab is reused under any view of it). */
  copy(handle: number, len: number): Buffer {
    const s = Math.floor(handle / this.slabBytes);
    const at = handle - s * this.slabBytes;
    const out = Buffer.allocUnsafe(len);
    this.#slabs[s]!.copy(out, 0, at, at + len);
    return out;
  }

  /** Bytes of all slabs together (allocated or not yet). */
  get totalBytes(): number {
    return this.slabCount * this.slabBytes;
  }

  /** Bytes allocated and not freed, all slabs. */
  liveBytes(): number {
    let n = 0;
    for (const l of this.#live) n += l;
    return n;
  }

  /** Slabs allocated so far (each slabBytes). */
  slabsAllocated(): number {
    return this.#slabs.filter((s) => s !== undefined).length;
  }
}
