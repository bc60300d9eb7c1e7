/**
 * The durable state of one Raft group member in the shared ordered KV: its hard state, its log
 * entries and its latest snapshot, under key prefix 0x02 (see src/log/keys.ts):
 *
 *   [0x02][group u32][0x01]              -> HardState (proto/raft.proto)
 *   [0x02][group u32][0x02]              -> Snapshot  (metadata: index, term, configuration; data: the
 *                                           state machine image at that index)
 *   [0x02][group u32][0x03][index u64]   -> Entry
 *
 * Every Ready is persisted in ONE atomic KV write (snapshot, then the entries with the discarded
 * suffix removed, then the hard state), fsynced when the Ready says mustSync; so entries are never
 * durable later than a hard state that refers to them, and a snapshot is never stored without the
 * index it stands for. Compaction writes the new snapshot and deletes the entries it covers in one
 * write as well. Integers are big-endian, so entries sort by index.
 *
 * The core reads its log synchronously (src/raft/storage.ts), so a MemoryStorage mirrors what is
 * durable: it is updated only after the KV write has resolved, and holds the tail after the latest
 * snapshot (bounded by compaction).
 */
import { assert } from '../core/assert.js';
import type { KvBatch, OrderedKv } from '../log/index.js';
import { bootstrapState, MemoryStorage } from '../raft/index.js';
import type { ConfState, Entry, HardState, Index, NodeId, Snapshot } from '../raft/index.js';
import { decodeEntry, decodeHardState, decodeSnapshot, encodeEntry, encodeHardState, encodeSnapshot } from '../transport/index.js';

export const prefixRaft = 0x02;
const kindHardState = 0x01;
const kindSnapshot = 0x02;
const kindEntry = 0x03;

function groupKey(group: number, kind: number): Buffer {
  const k = Buffer.alloc(6);
  k[0] = prefixRaft;
  k.writeUInt32BE(group, 1);
  k[5] = kind;
  return k;
}

/** The stored form of an entry (what `fill` writes), for entries written outside a Ready (log shipping). */
export function encodeStoredEntry(e: Entry): Buffer {
  return encodeEntry(e);
}

export function entryKey(group: number, index: Index): Buffer {
  assert(Number.isSafeInteger(index) && index >= 0, `entry index ${index}`);
  const k = Buffer.alloc(14);
  k[0] = prefixRaft;
  k.writeUInt32BE(group, 1);
  k[5] = kindEntry;
  k.writeBigUInt64BE(BigInt(index), 6);
  return k;
}

/** What one Ready asks to make durable. */
export interface PersistRequest {
  readonly snapshot: Snapshot | undefined;
  readonly entries: readonly Entry[];
  readonly hardState: HardState | undefined;
  readonly mustSync: boolean;
}

export class RaftLogStore {
  readonly #kv: OrderedKv;
  readonly #group: number;
  /** The core's synchronous view of what is durable. */
  readonly storage: MemoryStorage;
  #empty: boolean;
  /**
   * Whether entries stay in the KV after compaction and snapshots (a partition group, whose log is
   * its data: compaction only drops them from memory; retention deletes them) or are dropped with
   * the memory copy (the metadata group, whose snapshot holds the state).
   */
  readonly #keepCompacted: boolean;

  private constructor(kv: OrderedKv, group: number, storage: MemoryStorage, empty: boolean, keepCompacted: boolean) {
    this.#kv = kv;
    this.#group = group;
    this.storage = storage;
    this.#empty = empty;
    this.#keepCompacted = keepCompacted;
  }

  get group(): number {
    return this.#group;
  }

  static async open(kv: OrderedKv, group: number, opts: { keepCompacted?: boolean } = {}): Promise<RaftLogStore> {
    const snapRaw = await kv.get(groupKey(group, kindSnapshot));
    const hsRaw = await kv.get(groupKey(group, kindHardState));
    const snap = snapRaw === null ? undefined : decodeSnapshot(snapRaw);
    const storage = new MemoryStorage(snap);
    const entries: Entry[] = [];
    const from = (snap?.metadata.index ?? 0) + 1;
    for await (const [, value] of kv.iterate({ gte: entryKey(group, from), lt: entryKey(group, Number.MAX_SAFE_INTEGER) })) {
      const e = decodeEntry(value);
      assert(e.index === from + entries.length, `raft log of group ${group} has a gap before ${e.index}`);
      entries.push(e);
    }
    storage.append(entries);
    if (hsRaw !== null) {
      const hs = decodeHardState(hsRaw);
      assert(hs.commit <= storage.lastIndex(), `stored commit ${hs.commit} beyond the stored log ${storage.lastIndex()}`);
      storage.setHardState(hs);
    }
    const empty = snapRaw === null && hsRaw === null && entries.length === 0;
    return new RaftLogStore(kv, group, storage, empty, opts.keepCompacted ?? false);
  }

  /**
   * Stored entries from `from` on, read from the KV (entries before the memory tail: a partition
   * group's older log). The caller stops iterating when it has enough.
   */
  async *readStored(from: Index, to: Index = Number.MAX_SAFE_INTEGER): AsyncIterable<Entry> {
    for await (const [, value] of this.#kv.iterate({ gte: entryKey(this.#group, from), lt: entryKey(this.#group, to) })) yield decodeEntry(value);
  }

  /** Deletes every key of a group (its log, hard state and snapshot): the group left this node. */
  static drop(b: KvBatch, group: number): void {
    b.delRange(groupKey(group, 0), groupKey(group, 0xff));
  }

  /** Whether nothing was ever stored for this group (a fresh node). */
  get isEmpty(): boolean {
    return this.#empty;
  }

  /** Writes the founding configuration (every founder writes the same). */
  async bootstrap(voters: readonly NodeId[]): Promise<void> {
    assert(this.#empty, 'bootstrapping a group member that already has state');
    const { entries, hardState } = bootstrapState(voters);
    await this.persist({ snapshot: undefined, entries, hardState, mustSync: true });
  }

  /** Step 1 of the Ready contract, in one atomic write; the mirror is updated once it is durable. */
  async persist(rd: PersistRequest): Promise<void> {
    if (rd.snapshot === undefined && rd.entries.length === 0 && rd.hardState === undefined) return;
    if (!rd.mustSync && rd.snapshot === undefined && rd.entries.length === 0) {
      // Only the commit index moved. It need not be durable (Raft learns it again from the leader, and
      // a group of one recommits its own log at open), so the Ready does not wait for this write: it
      // would otherwise queue behind the fsync of the next batch of entries. The KV applies writes in
      // call order, so the next durable write makes it durable too; a failed write poisons the KV and
      // fails that next write.
      this.#kv.write((b) => this.fill(b, rd), { durable: false }).catch(() => undefined);
      this.persisted(rd);
      return;
    }
    await this.#kv.write((b) => this.fill(b, rd), { durable: rd.mustSync });
    this.persisted(rd);
  }

  /**
   * Adds a Ready's step 1 to a KV batch that the caller writes (the node's Ready loop writes the
   * Readies of every group in one batch with one fsync). Call `persisted` once that write resolved.
   */
  fill(b: KvBatch, rd: PersistRequest): void {
    const g = this.#group;
    const snapIndex = rd.snapshot?.metadata.index ?? this.storage.snapshot().metadata.index;
    if (rd.snapshot !== undefined) {
      b.put(groupKey(g, kindSnapshot), encodeSnapshot(rd.snapshot));
      // A snapshot from the leader replaces the whole log: everything at or before its index is
      // covered by it; a group whose log is its data keeps the entries before it (they are the same as
      // the leader's: they were fetched from it before the snapshot was stepped in).
      if (this.#keepCompacted) b.delRange(entryKey(g, snapIndex + 1), entryKey(g, Number.MAX_SAFE_INTEGER));
      else b.delRange(entryKey(g, 0), entryKey(g, Number.MAX_SAFE_INTEGER));
    }
    const ents = rd.entries.filter((e) => e.index > snapIndex);
    const first = ents[0];
    if (first !== undefined) {
      // Appending at i discards every stored entry at i or later (a new leader's overwrite).
      b.delRange(entryKey(g, first.index), entryKey(g, Number.MAX_SAFE_INTEGER));
      for (const e of ents) b.put(entryKey(g, e.index), encodeEntry(e));
    }
    if (rd.hardState !== undefined) b.put(groupKey(g, kindHardState), encodeHardState(rd.hardState));
  }

  /** Updates the core's view once the write holding `fill(rd)` is durable (or, commit-only, issued). */
  persisted(rd: PersistRequest): void {
    if (rd.snapshot !== undefined) this.storage.applySnapshot(rd.snapshot);
    this.storage.append(rd.entries);
    if (rd.hardState !== undefined) this.storage.setHardState(rd.hardState);
    if (rd.snapshot !== undefined || rd.entries.length > 0 || rd.hardState !== undefined) this.#empty = false;
  }

  /**
   * Records a snapshot of the state machine at `index` (applied, hence durable in the log) and drops
   * the entries up to `compactTo` (<= index), kept a little behind so that a slightly lagging
   * follower still gets entries rather than a whole snapshot.
   */
  async compact(index: Index, conf: ConfState, data: Uint8Array, compactTo: Index): Promise<Snapshot> {
    assert(compactTo <= index, `compacting to ${compactTo} beyond the snapshot ${index}`);
    const term = this.storage.term(index);
    const snapshot: Snapshot = { metadata: { index, term, confState: conf }, data };
    const g = this.#group;
    const firstKept = Math.max(compactTo + 1, this.storage.firstIndex());
    await this.#kv.write((b) => {
      b.put(groupKey(g, kindSnapshot), encodeSnapshot(snapshot));
      if (!this.#keepCompacted) b.delRange(entryKey(g, 0), entryKey(g, firstKept));
    }, { durable: false });
    // The snapshot is the newest durable-enough image: entries it covers stay in the log until the
    // write lands, and losing this write (no fsync) only loses the compaction, never data.
    this.storage.createSnapshot(index, conf, data);
    this.storage.compact(firstKept - 1);
    return snapshot;
  }
}
