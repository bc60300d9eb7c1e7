/**
 * TEST-ONLY: an in-memory KV that records the operations of every write, in call order (the order it
 * applies them in), so that a test can open a node on what a crash that kept exactly the first n
 * writes leaves (`prefix`), or hold the write whose operations match (`holdWhen`) until `release`.
 */
import { MemoryKv, type KvBatch } from '../log/index.js';
import { recordOps, type KvOp } from '../log/kv.js';
import { SortedBufferMap } from '../log/memory-kv.js';

export class RecordingKv extends MemoryKv {
  readonly writes: KvOp[][] = [];
  #holdWhen: ((ops: readonly KvOp[]) => boolean) | undefined;
  #release: (() => void) | undefined;
  #released = false;
  /** A write was held (and waits until `release`). */
  held = false;

  /** The first write whose operations match `when` (from now on) waits until `release`. */
  holdWhen(when: (ops: readonly KvOp[]) => boolean): void {
    this.#holdWhen = when;
  }

  release(): void {
    this.#released = true;
    this.#release?.();
  }

  override async write(fill: (b: KvBatch) => void, opts: { durable: boolean }): Promise<void> {
    // fill runs once (it may have effects), recorded; the recorded operations are then written.
    const ops = recordOps(fill);
    this.writes.push(ops);
    if (!this.held && !this.#released && this.#holdWhen?.(ops) === true) {
      this.held = true;
      await new Promise<void>((r) => (this.#release = r));
    }
    return super.write((b) => {
      for (const op of ops) {
        if (op.kind === 'put') b.put(op.key, op.value);
        else if (op.kind === 'del') b.del(op.key);
        else b.delRange(op.start, op.end);
      }
    }, opts);
  }

  /** The store as a crash that kept exactly the first `n` writes leaves it. */
  prefix(n: number): MemoryKv {
    const m = new SortedBufferMap();
    for (const w of this.writes.slice(0, n)) m.apply(w);
    return new MemoryKv(m);
  }
}
