/**
 * TEST-ONLY: an in-memory KV that refuses, while `refusal` is set, every write storing a snapshot
 * (the write that puts `snapshotKey`, a group's snapshot record: a compaction, or the install of a
 * snapshot from a leader), as a full disk does (RocksKv reports ENOSPC as KvWriteError). Other writes
 * go through: the tests see what a group does when only its snapshot cannot be stored.
 */
import { MemoryKv, type KvBatch } from '../log/index.js';
import { recordOps } from '../log/kv.js';

export class SnapshotRefusingKv extends MemoryKv {
  /** The error refused writes fail with; undefined: none is refused. */
  refusal: Error | undefined;
  /** How many writes were refused. */
  refused = 0;
  readonly #snapshotKey: Buffer;

  constructor(snapshotKey: Buffer) {
    super();
    this.#snapshotKey = snapshotKey;
  }

  override write(fill: (b: KvBatch) => void, opts: { durable: boolean }): Promise<void> {
    if (this.refusal !== undefined && recordOps(fill).some((op) => op.kind === 'put' && op.key.equals(this.#snapshotKey))) {
      this.refused++;
      return Promise.reject(this.refusal);
    }
    return super.write(fill, opts);
  }
}
