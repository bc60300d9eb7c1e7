/**
 * The ordered key-value port under the partition logs (and, later, metadata). RocksDB implements it
 * in production (rocks-kv.ts); MemoryKv is the in-memory twin for unit tests and the simulator. Keys
 * are compared bytewise, like RocksDB's default comparator.
 */

export interface KvRange {
  gt?: Buffer;
  gte?: Buffer;
  lt?: Buffer;
  lte?: Buffer;
  reverse?: boolean;
  limit?: number;
  /** Entries fetched per round trip to the native side (RocksDB only; ignored by MemoryKv). */
  capacity?: number;
}

export interface KvBatch {
  put(key: Buffer, value: Buffer): void;
  del(key: Buffer): void;
  /** Deletes every key in [start, end). */
  delRange(start: Buffer, end: Buffer): void;
}

export interface OrderedKv {
  /**
   * One atomic write. With durable: true it resolves only after the data is fsynced; concurrent
   * durable writes share fsyncs (group commit). Writes are applied in call order. If `fill` throws,
   * only this write is rejected and nothing of it is applied.
   */
  write(fill: (b: KvBatch) => void, opts: { durable: boolean }): Promise<void>;
  get(key: Buffer): Promise<Buffer | null>;
  /** Iterates a consistent view taken when iteration starts. Breaking out of the loop releases it. */
  iterate(range: KvRange): AsyncIterable<[Buffer, Buffer]>;
  /** Approximate bytes on disk, for metrics. */
  sizeBytes(): Promise<number>;
  close(): Promise<void>;
}

/** A write batch op, recorded before it reaches the store (so a throwing fill applies nothing). */
export type KvOp =
  | { kind: 'put'; key: Buffer; value: Buffer }
  | { kind: 'del'; key: Buffer }
  | { kind: 'delRange'; start: Buffer; end: Buffer };

/**
 * Runs `fill` against a recorder; throws whatever `fill` throws. An inverted range is refused here:
 * RocksDB only notices it while inserting into the memtable, after the WAL write, and then switches the
 * whole database to read-only (every later write fails with "end key comes before start key").
 */
export function recordOps(fill: (b: KvBatch) => void): KvOp[] {
  const ops: KvOp[] = [];
  fill({
    put: (key, value) => void ops.push({ kind: 'put', key, value }),
    del: (key) => void ops.push({ kind: 'del', key }),
    delRange: (start, end) => {
      const c = Buffer.compare(start, end);
      if (c > 0) throw new RangeError(`delRange end ${end.toString('hex')} is before start ${start.toString('hex')}`);
      if (c < 0) ops.push({ kind: 'delRange', start, end });
    },
  });
  return ops;
}
