/**
 * OrderedKv on RocksDB through rocksdb-native, with group commit.
 *
 * Durability. rocksdb-native has no `sync` write option (its binding passes default WriteOptions), so
 * a write is only in the WAL's page cache when its promise resolves. A durable write is made durable
 * here by fdatasync()ing the WAL file itself through our own descriptor (an fsync through any fd of an
 * inode flushes that inode). All fsyncs are asynchronous node:fs requests (the WAL's with a callback,
 * the rare others through node:fs/promises), so they run on the libuv thread pool and never block the
 * event loop.
 *
 * Group commit. Writes queue in call order. One "commit" is in flight at a time: every write queued so
 * far is merged into ONE native write batch (atomic, in call order), then, if any of them asked for
 * durability, the WAL is fdatasync()ed once. Everything that arrives meanwhile waits and forms the next
 * commit. Under light load a write is committed at once (no timer window adds latency); under heavy
 * load commits grow and the fsync rate stays near the disk's limit.
 *
 * WAL switches. RocksDB starts a new WAL (NNNNNN.log) when a memtable fills. A durable commit whose
 * write made the WAL synced last grow (fstat of our descriptor before and after the native write, on
 * the main thread) knows its record is in that WAL: commits are one at a time, nothing else writes a
 * WAL record, and after a switch RocksDB appends nothing more to the old WAL. It fdatasyncs that WAL
 * and asks nothing else. Otherwise (it did not grow: a switch came before the write) we ask RocksDB
 * for the current WAL number; if it changed since the last sync, the write may have landed in a later
 * WAL, so we fdatasync every *.log file numbered at or after the last synced one that still exists
 * (one that no longer exists was deleted after its memtable was flushed into an SST file that RocksDB
 * synced first), then the new WAL, then fsync the directory so the new WAL's directory entry is durable.
 * Asking on every durable commit cost a third thread-pool request beside the write and the fdatasync
 * (about 45 us of CPU of the 225 us of a durable commit: bench/scratch/kv-op-cpu.mjs).
 *
 * Recovery. RocksDB replays the WAL at open in point-in-time mode, set explicitly in openRocksKv.
 *
 * Failure. A failed native write rejects every write of that commit and applies none of them. A failed
 * fsync rejects the durable writes of that commit and poisons the store: after a failed fsync the
 * kernel may have dropped dirty pages, so no later write may be acknowledged (restart to recover).
 */
import { fdatasync, fstatSync } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import RocksDB from 'rocksdb-native';
import { assert } from '../core/assert.js';
import { DurabilityLostError, KvWriteError, StoreClosedError } from './errors.js';
import { type KvBatch, type KvOp, type KvRange, type OrderedKv, recordOps } from './kv.js';

export interface RocksKvOptions {
  /** fdatasync the WAL for durable writes (default true). false only for measurements. */
  fsync?: boolean;
  /** Memtable size in bytes (default 64 MiB, the binding's default). */
  writeBufferSize?: number;
  /** Called after each WAL sync, for metrics (fsync latency histogram, group sizes). */
  onSync?: (durationMs: number, writesInCommit: number) => void;
}

export interface RocksKvStats {
  /** write() calls accepted. */
  writeCalls: number;
  /** Native write batches (commits). */
  commits: number;
  /** fdatasync calls on WAL files. */
  walSyncs: number;
  /** fsync calls on the database directory. */
  dirSyncs: number;
  /** Times the current WAL number changed between two syncs. */
  walSwitches: number;
  /** Times RocksDB was asked which WAL is current (durable commits that did not find their record in the WAL synced last). */
  walQuestions: number;
}

interface Pending {
  ops: KvOp[];
  durable: boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

const walNameRe = /^(\d+)\.log$/;

export async function openRocksKv(dir: string, opts: RocksKvOptions = {}): Promise<RocksKv> {
  const db = new RocksDB(dir, {
    ...(opts.writeBufferSize === undefined ? {} : { writeBufferSize: opts.writeBufferSize }),
    // Chosen, not inherited (docs/storage.md, "WAL recovery"): replay stops at the first corrupt or
    // torn record and the database opens with the intact prefix. Absolute consistency would refuse to
    // open on a torn tail (which a crash during an unacknowledged write can leave), taking every
    // group and partition of the node down with it; skipping corrupt records would replay writes
    // after a hole. The prefix that point-in-time recovery keeps may end before writes that were
    // durable (a corrupt record in the middle): the raft marker (src/broker/node-disk.ts) finds that.
    walRecoveryMode: RocksDB.constants.walRecoveryMode.POINT_IN_TIME,
  });
  await db.ready();
  let dirFd: FileHandle;
  try {
    dirFd = await open(dir, 'r');
  } catch (err) {
    await db.close({ force: true });
    throw err;
  }
  return new RocksKv(db, dir, dirFd, opts);
}

export class RocksKv implements OrderedKv {
  private queue: Pending[] = [];
  private pumping: Promise<void> | null = null;
  private poisoned: DurabilityLostError | null = null;
  private closing = false;
  private wal: { number: number; fd: FileHandle } | null = null;
  private readonly iterators = new Set<{ destroy(): void }>();
  readonly stats: RocksKvStats = { writeCalls: 0, commits: 0, walSyncs: 0, dirSyncs: 0, walSwitches: 0, walQuestions: 0 };

  constructor(
    private readonly db: RocksDB,
    readonly dir: string,
    private readonly dirFd: FileHandle,
    private readonly opts: RocksKvOptions,
  ) {}

  write(fill: (b: KvBatch) => void, opts: { durable: boolean }): Promise<void> {
    if (this.closing) return Promise.reject(new StoreClosedError('rocksdb kv'));
    if (this.poisoned) return Promise.reject(this.poisoned);
    let ops: KvOp[];
    try {
      ops = recordOps(fill);
    } catch (err) {
      return Promise.reject(err);
    }
    this.stats.writeCalls++;
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ ops, durable: opts.durable, resolve, reject });
      if (this.pumping === null) this.pumping = this.pump();
    });
  }

  /** Commits queued writes one group at a time until the queue is empty. */
  private async pump(): Promise<void> {
    // Let writes issued in the same tick join the first commit.
    await Promise.resolve();
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      await this.commit(group);
    }
    this.pumping = null;
  }

  private async commit(group: Pending[]): Promise<void> {
    if (this.poisoned) {
      for (const p of group) p.reject(this.poisoned);
      return;
    }
    const durable = group.some((p) => p.durable) && this.opts.fsync !== false;
    // The size of the WAL synced last before this commit's write (see the header, "WAL switches").
    const sizeBefore = durable ? this.walSize() : -1;
    try {
      await this.writeNative(group);
    } catch (err) {
      const error = new KvWriteError(err);
      for (const p of group) p.reject(error);
      return;
    }
    if (durable) {
      const started = performance.now();
      try {
        await this.syncWal(sizeBefore >= 0 && this.walSize() > sizeBefore);
      } catch (err) {
        this.poisoned = new DurabilityLostError(err);
        for (const p of group) {
          if (p.durable) p.reject(this.poisoned);
          else p.resolve();
        }
        return;
      }
      this.opts.onSync?.(performance.now() - started, group.length);
    }
    for (const p of group) p.resolve();
  }

  private async writeNative(group: Pending[]): Promise<void> {
    let n = 0;
    for (const p of group) n += p.ops.length;
    if (n === 0) return;
    const batch = this.db.write({ capacity: n });
    try {
      for (const p of group) {
        for (const op of p.ops) {
          if (op.kind === 'put') batch.tryPut(op.key, op.value);
          else if (op.kind === 'del') batch.tryDelete(op.key);
          else batch.tryDeleteRange(op.start, op.end);
        }
      }
      await batch.flush();
      this.stats.commits++;
    } finally {
      // An undestroyed batch keeps db.close() pending forever (measurements.md 1.7).
      batch.destroy();
    }
  }

  /**
   * fdatasync of a WAL we hold open: one libuv request with a callback, not FileHandle.datasync(), whose
   * promise machinery cost 5-7 us more of main-thread CPU per call (34-40 against 27-32 us of the
   * process's CPU per fdatasync of a file with nothing dirty, 20,000 calls each way, three times
   * alternated); every durable commit makes one. The handle stays ours until after the request completes (commits are one at a
   * time, and close() waits for the pump).
   */
  private datasync(h: FileHandle): Promise<void> {
    return new Promise((resolve, reject) => fdatasync(h.fd, (err) => (err ? reject(err) : resolve())));
  }

  /**
   * The size of the WAL synced last (-1 before the first sync): an fstat on the main thread, a few
   * microseconds, where asking RocksDB is a thread-pool request.
   */
  private walSize(): number {
    if (this.wal === null) return -1;
    try {
      return fstatSync(this.wal.fd.fd).size;
    } catch {
      // Unknown: the commit asks RocksDB instead.
      return -1;
    }
  }

  /**
   * Makes everything written so far durable (see the header comment for the WAL-switch rule).
   * `grew`: this commit's write made the WAL synced last grow, so its record is in that WAL (and so is
   * every earlier one: WALs are filled in order).
   */
  private async syncWal(grew: boolean): Promise<void> {
    const synced = this.wal;
    if (grew && synced !== null) {
      await this.datasync(synced.fd);
      this.stats.walSyncs++;
      return;
    }
    // It did not grow (a switch came before the write, or the commit wrote nothing): the fdatasync of
    // the WAL synced last and the question which WAL is current go to their threads together. Both
    // start after the write completed: the write is in a WAL numbered from the one synced last up to
    // the current one, so if the two are the same, this fdatasync covered it.
    let cur: Awaited<ReturnType<RocksDB['currentWalFile']>> | undefined;
    if (synced !== null) {
      this.stats.walQuestions++;
      [cur] = await Promise.all([this.db.currentWalFile(), this.datasync(synced.fd)]);
      this.stats.walSyncs++;
      if (cur.number === synced.number) return;
    }
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0 || cur === undefined) {
        this.stats.walQuestions++;
        cur = await this.db.currentWalFile();
      }
      if (this.wal !== null && cur.number === this.wal.number) {
        await this.datasync(this.wal.fd);
        this.stats.walSyncs++;
        return;
      }
      let fd: FileHandle;
      try {
        fd = await open(join(this.dir, cur.path), 'r');
      } catch (err) {
        // The WAL we were told about was already flushed and deleted: ask again.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 5) continue;
        throw err;
      }
      try {
        await this.syncWalsBetween(this.wal?.number ?? 0, cur.number);
        if (this.wal !== null) {
          await this.datasync(this.wal.fd);
          this.stats.walSyncs++;
          this.stats.walSwitches++;
        }
        await this.datasync(fd);
        this.stats.walSyncs++;
        await this.dirFd.sync();
        this.stats.dirSyncs++;
      } catch (err) {
        await fd.close();
        throw err;
      }
      const prev = this.wal;
      this.wal = { number: cur.number, fd };
      if (prev !== null) await prev.fd.close();
      return;
    }
  }

  /** fdatasyncs every existing WAL numbered in (from, to); missing ones were flushed and deleted. */
  private async syncWalsBetween(from: number, to: number): Promise<void> {
    for (const name of await readdir(this.dir)) {
      const m = walNameRe.exec(name);
      if (m === null) continue;
      const n = Number(m[1]);
      if (n <= from || n >= to) continue;
      let fd: FileHandle;
      try {
        fd = await open(join(this.dir, name), 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      try {
        await fd.datasync();
        this.stats.walSyncs++;
      } finally {
        await fd.close();
      }
    }
  }

  async get(key: Buffer): Promise<Buffer | null> {
    if (this.closing) throw new StoreClosedError('rocksdb kv');
    return this.db.get(key);
  }

  async *iterate(range: KvRange): AsyncIterable<[Buffer, Buffer]> {
    if (this.closing) throw new StoreClosedError('rocksdb kv');
    const { capacity, ...bounds } = range;
    const it = this.db.iterator(stripUndefined(bounds), { capacity: capacity ?? 1000 });
    this.iterators.add(it);
    try {
      for await (const { key, value } of it) yield [key, value];
    } finally {
      // An open iterator keeps db.close() pending forever.
      if (!it.destroyed) it.destroy();
      this.iterators.delete(it);
    }
  }

  async sizeBytes(): Promise<number> {
    if (this.closing) return 0;
    const sst = Number(await this.db.getProperty('rocksdb.total-sst-files-size'));
    const wal = (await this.db.currentWalFile()).size;
    return (Number.isFinite(sst) ? sst : 0) + wal;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.pumping !== null) await this.pumping;
    assert(this.queue.length === 0, 'writes queued after close');
    for (const it of this.iterators) it.destroy();
    this.iterators.clear();
    if (this.wal !== null) await this.wal.fd.close();
    this.wal = null;
    await this.dirFd.close();
    await this.db.close({ force: true });
  }
}

function stripUndefined<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}
