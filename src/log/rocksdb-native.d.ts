/**
 * Minimal type declarations for the parts of rocksdb-native@3.18.1 (CommonJS, no bundled types) that
 * src/log uses. Checked against node_modules/rocksdb-native/index.js and lib/*.js of that version.
 */
declare module 'rocksdb-native' {
  interface RocksDBOpenOptions {
    /** Column-family (default CF) options are passed flat on the open options. */
    writeBufferSize?: number;
    maxWriteBufferNumber?: number;
    maxBackgroundJobs?: number;
    bytesPerSync?: number;
    createIfMissing?: boolean;
    avoidFlushDuringShutdown?: boolean;
    /** RocksDB's WALRecoveryMode (constants.walRecoveryMode); the binding's default is POINT_IN_TIME. */
    walRecoveryMode?: number;
  }

  interface RocksDBWriteBatch {
    tryPut(key: Buffer, value: Buffer): void;
    tryDelete(key: Buffer): void;
    tryDeleteRange(start: Buffer, end: Buffer): void;
    flush(): Promise<void>;
    destroy(): void;
  }

  interface RocksDBIteratorOptions {
    gt?: Buffer;
    gte?: Buffer;
    lt?: Buffer;
    lte?: Buffer;
    reverse?: boolean;
    limit?: number;
    capacity?: number;
    values?: boolean;
  }

  interface RocksDBIterator extends AsyncIterable<{ key: Buffer; value: Buffer }> {
    readonly destroyed: boolean;
    destroy(err?: Error): void;
  }

  interface WalFile {
    /** Relative to the database directory, with a leading slash, e.g. "/000004.log". */
    path: string;
    number: number;
    type: number;
    startSequence: number;
    size: number;
  }

  class RocksDB {
    constructor(path: string, opts?: RocksDBOpenOptions);
    readonly path: string;
    ready(): Promise<void>;
    close(opts?: { force?: boolean }): Promise<void>;
    write(opts?: { capacity?: number; autoDestroy?: boolean }): RocksDBWriteBatch;
    get(key: Buffer): Promise<Buffer | null>;
    iterator(range: RocksDBIteratorOptions, opts?: RocksDBIteratorOptions): RocksDBIterator;
    flush(): Promise<void>;
    currentWalFile(): Promise<WalFile>;
    getProperty(name: string): Promise<string>;
    /** lib/constants.js; the values are RocksDB's WALRecoveryMode enum (checked in rocks-kv-recovery.test.ts). */
    static constants: {
      walRecoveryMode: { TOLERATE_CORRUPTED_TAIL_RECORDS: 0; ABSOLUTE_CONSISTENCY: 1; POINT_IN_TIME: 2; SKIP_ANY_CORRUPTED_RECORDS: 3 };
    };
  }

  export default RocksDB;
}
