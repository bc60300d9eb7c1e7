/**
 * TEST-ONLY: an in-memory KV whose writes wait while held, as every write of a node waits behind a
 * slow fsync: a test holds them, makes something happen meanwhile, and releases them.
 */
import { MemoryKv, type KvBatch } from '../log/index.js';

export class HeldWritesKv extends MemoryKv {
  #release: (() => void) | undefined;
  #gate: Promise<void> | undefined;

  hold(): void {
    this.#gate ??= new Promise((r) => (this.#release = r));
  }

  release(): void {
    this.#release?.();
    this.#gate = undefined;
  }

  override async write(fill: (b: KvBatch) => void, opts: { durable: boolean }): Promise<void> {
    while (this.#gate !== undefined) await this.#gate;
    return super.write(fill, opts);
  }
}
