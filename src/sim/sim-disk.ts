/**
 * A simulated disk under one node's OrderedKv: the production host writes to it exactly as it writes
 * to RocksDB, and the simulator decides how long each write takes and what a crash keeps.
 *
 * Writes complete in call order, one after the other, each at a virtual time the simulator schedules
 * (an fsync takes a while, a write without one does not); until then a crash loses it. Like MemoryKv
 * it keeps what reads see (`live`) apart from what survived the last fsync (`durable`), and more:
 *
 * - the writes made durable by each of the last `syncedKept` fsyncs, so a crash can also lose fsynced
 *   data (a disk that lied about an fsync, a write-ahead log whose tail was lost: `lostTail`);
 * - the unsynced writes in order, so a crash can keep a prefix of them (the OS flushed some pages
 *   before the power went: `keepPrefix`) instead of losing all;
 * - a full disk (`fullUntilMs`): writes fail without applying anything, with a KvWriteError, as
 *   RocksDB reports ENOSPC; the host must treat that as a refusal, not a crash;
 * - a failed fsync (`failNextSync`): the write reaches the page cache but the fsync fails, after which
 *   the disk refuses everything (DurabilityLostError, as RocksKv does); the host must stop.
 */
import { DurabilityLostError, KvWriteError, StoreClosedError } from '../log/errors.js';
import { type KvBatch, type KvOp, type KvRange, type OrderedKv, recordOps } from '../log/kv.js';
import { SortedBufferMap } from '../log/memory-kv.js';

/** Fsyncs whose writes a `lostTail` crash may lose. */
const syncedKept = 6;

/** What the simulator provides: virtual time, its event queue, and the disk's current faults. */
export interface DiskEnv {
  nowMs(): number;
  /** Runs `fn` at virtual time `atMs` (never earlier than now). */
  at(atMs: number, fn: () => void): void;
  /** The virtual time an fsync takes now (drawn from the seeded generator). */
  syncMs(): number;
}

export type CrashKind =
  /** Everything not fsynced is lost (kill -9 plus power loss). */
  | { kind: 'unsynced' }
  /** The first `keep` unsynced writes survive (a prefix: the write-ahead log is sequential). */
  | { kind: 'keepPrefix'; keep: number }
  /** The writes of the last `syncs` fsyncs are lost too: the disk lost data it had confirmed. */
  | { kind: 'lostTail'; syncs: number }
  /** The data directory is wiped: the next process finds nothing (the marker file is gone too). */
  | { kind: 'wiped' }
  /**
   * Every durable record in [gte, lt) is lost, and what was not fsynced: the rest survives (a lost
   * write-ahead log tail that held one raft group's records only, a directory restored without them).
   */
  | { kind: 'lostRange'; gte: Buffer; lt: Buffer };

interface DiskImage {
  readonly base: SortedBufferMap;
  readonly synced: readonly (readonly KvOp[])[][];
  readonly unsynced: readonly (readonly KvOp[])[];
}

export class SimDisk implements OrderedKv {
  readonly #env: DiskEnv;
  #live: SortedBufferMap;
  #durable: SortedBufferMap;
  /** The durable state before the writes in #synced. */
  #base: SortedBufferMap;
  /** For each of the last fsyncs, the writes it made durable (oldest first). */
  #synced: (readonly KvOp[])[][];
  #unsynced: (readonly KvOp[])[];
  #closed = false;
  #poisoned: Error | undefined;
  /** When the last queued write completes. */
  #busyUntilMs = 0;
  /** Writes fail (disk full) while now < fullUntilMs. */
  fullUntilMs = 0;
  /** The next durable write's fsync fails. */
  failNextSync = false;
  /** Called when a durable write is issued (the simulator may crash the node before it completes). */
  onDurableWrite: (() => void) | undefined;
  readonly stats = { writes: 0, syncs: 0, refused: 0, inFlight: 0 };

  constructor(env: DiskEnv, image?: DiskImage) {
    this.#env = env;
    this.#base = image?.base.clone() ?? new SortedBufferMap();
    this.#synced = image === undefined ? [] : image.synced.map((s) => [...s]);
    this.#unsynced = image === undefined ? [] : [...image.unsynced];
    this.#durable = this.#base.clone();
    for (const s of this.#synced) for (const ops of s) this.#durable.apply(ops);
    this.#live = this.#durable.clone();
    for (const ops of this.#unsynced) this.#live.apply(ops);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Whether a write issued now would wait behind others (a sync in flight). */
  get busy(): boolean {
    return this.stats.inFlight > 0;
  }

  write(fill: (b: KvBatch) => void, opts: { durable: boolean }): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreClosedError('simulated disk'));
    let ops: KvOp[];
    try {
      ops = recordOps(fill);
    } catch (err) {
      return Promise.reject(err);
    }
    const now = this.#env.nowMs();
    const doneAt = Math.max(now, this.#busyUntilMs) + (opts.durable ? this.#env.syncMs() : 0);
    this.#busyUntilMs = doneAt;
    this.stats.inFlight++;
    if (opts.durable) this.onDurableWrite?.();
    return new Promise<void>((resolve, reject) => {
      // A crash before `doneAt` closes the disk: the write never completes and never answers, as the
      // process that issued it is gone.
      this.#env.at(doneAt, () => {
        if (this.#closed) return;
        this.stats.inFlight--;
        const err = this.#complete(ops, opts.durable);
        if (err === undefined) resolve();
        else reject(err);
      });
    });
  }

  #complete(ops: readonly KvOp[], durable: boolean): Error | undefined {
    if (this.#poisoned !== undefined) return this.#poisoned;
    if (this.#env.nowMs() < this.fullUntilMs) {
      this.stats.refused++;
      return new KvWriteError(new Error('IO error: No space left on device'));
    }
    this.stats.writes++;
    this.#live.apply(ops);
    this.#unsynced.push(ops);
    if (!durable) return undefined;
    if (this.failNextSync) {
      // The pages may or may not reach the disk: what is unsynced stays unsynced, and a crash decides.
      this.failNextSync = false;
      this.#poisoned = new DurabilityLostError(new Error('EIO: fsync failed'));
      return this.#poisoned;
    }
    this.stats.syncs++;
    const group = this.#unsynced;
    this.#unsynced = [];
    for (const o of group) this.#durable.apply(o);
    this.#synced.push(group);
    if (this.#synced.length > syncedKept) for (const o of this.#synced.shift()!) this.#base.apply(o);
    return undefined;
  }

  async get(key: Buffer): Promise<Buffer | null> {
    if (this.#closed) throw new StoreClosedError('simulated disk');
    return this.#live.get(key) ?? null;
  }

  async *iterate(range: KvRange): AsyncIterable<[Buffer, Buffer]> {
    if (this.#closed) throw new StoreClosedError('simulated disk');
    for (const e of this.#live.range(range)) yield e;
  }

  async sizeBytes(): Promise<number> {
    return this.#live.bytes();
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** Fsyncs whose writes a lostTail crash can lose now. */
  get syncsKept(): number {
    return this.#synced.length;
  }

  /**
   * The process died: this disk answers nothing more, and the returned one is what the next process
   * finds (the durable state, adjusted by `how`).
   */
  crash(how: CrashKind): SimDisk {
    this.#closed = true;
    switch (how.kind) {
      case 'unsynced':
        return new SimDisk(this.#env, { base: this.#base, synced: this.#synced, unsynced: [] });
      case 'keepPrefix':
        return new SimDisk(this.#env, { base: this.#base, synced: this.#synced, unsynced: this.#unsynced.slice(0, how.keep) });
      case 'lostTail': {
        const keep = Math.max(0, this.#synced.length - how.syncs);
        return new SimDisk(this.#env, { base: this.#base, synced: this.#synced.slice(0, keep), unsynced: [] });
      }
      case 'wiped':
        return new SimDisk(this.#env);
      case 'lostRange': {
        const base = this.#durable.clone();
        for (const [k] of base.range({ gte: how.gte, lt: how.lt })) base.del(k);
        return new SimDisk(this.#env, { base, synced: [], unsynced: [] });
      }
    }
  }

  /** Whether the live state holds a record in [gte, lt). */
  holds(gte: Buffer, lt: Buffer): boolean {
    return this.#live.range({ gte, lt, limit: 1 }).length > 0;
  }

  /** The durable value of `key` if the writes of the last `syncs` fsyncs were lost. */
  durableAfterLosing(key: Buffer, syncs: number): Buffer | undefined {
    for (let i = this.#synced.length - 1 - syncs; i >= 0; i--) {
      const group = this.#synced[i]!;
      for (let w = group.length - 1; w >= 0; w--) {
        for (let k = group[w]!.length - 1; k >= 0; k--) {
          const op = group[w]![k]!;
          if (op.kind === 'put' && op.key.equals(key)) return op.value;
          if (op.kind === 'del' && op.key.equals(key)) return undefined;
        }
      }
    }
    return this.#base.get(key);
  }

  get unsyncedWrites(): number {
    return this.#unsynced.length;
  }
}
