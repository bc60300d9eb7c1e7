export { MemoryKv } from './memory-kv.js';
export { openRocksKv, RocksKv } from './rocks-kv.js';
export { PartitionStore, } from './partition-store.js';
export { AppendQueueFullError, CorruptBatchError, DurabilityLostError, KvWriteError, LogError, OffsetExpiredError, OffsetNotYetAvailableError, PartitionUnavailableError, StoreClosedError, TopicDroppingError, } from './errors.js';
export { crc32c } from './crc32c.js';
export { cellPayloadBytesMax, FileCell, MemoryCell } from './durable-cell.js';
//# sourceMappingURL=index.js.map