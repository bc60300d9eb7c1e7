/**
 * Storage layer: the ordered-KV port with its RocksDB adapter and in-memory twin, and the partition
 * logs built on it. See docs/storage.md for the binding choice and durability design.
 */
export type { KvBatch, KvRange, OrderedKv } from './kv.js';
export { MemoryKv, type MemoryKvStats } from './memory-kv.js';
export { openRocksKv, RocksKv, type RocksKvOptions, type RocksKvStats } from './rocks-kv.js';
export {
  PartitionStore,
  type AppendItem,
  type AppendResult,
  type PartitionBounds,
  type PartitionStoreOptions,
  type StartReport,
  type StoreLogger,
  type StoredEvent,
} from './partition-store.js';
export {
  AppendQueueFullError,
  CorruptBatchError,
  DurabilityLostError,
  KvWriteError,
  LogError,
  OffsetExpiredError,
  OffsetNotYetAvailableError,
  PartitionSealedError,
  PartitionUnavailableError,
  StoreClosedError,
  TopicDroppingError,
  type LogErrorCode,
} from './errors.js';
export { crc32c } from './crc32c.js';
export { cellPayloadBytesMax, FileCell, MemoryCell, type CellRead, type DurableCell } from './durable-cell.js';
