/**
 * The durable state of one Raft group member in the shared ordered KV: its hard state, its log
 * entries, its latest snapshot and, while it has one, its damage mark (key layout in raft-keys.ts,
 * record format with CRC32C in raft-records.ts).
 *
 * Every Ready is persisted in ONE atomic KV write (snapshot, then the entries with the discarded
 * suffix removed, then the hard state, and the removal of the damage mark when the Ready says
 * `repaired`), fsynced when the Ready says mustSync; so entries are never durable later than a hard
 * state that refers to them, and a snapshot is never stored without the index it stands for.
 *
 * A hard state is written only when its term or vote differs from the stored one (or none is stored
 * yet): one that only moves the commit index is not written at all. The commit index need not be
 * durable (Raft learns it again from the leader; a group of one recommits its whole log at open; a
 * partition replica starts from max(stored commit, applied) and the metadata group from max(stored
 * commit, snapshot)), and writing it was one KV put per group per write on every publish's path. So
 * the stored commit index lags: it is the one of the last term or vote change (or of the founding).
 * Except in a store opened with `keepsCommit` (the metadata group's): its commit index is written with
 * the node's next write, as a deferred row. A partition replica persists its applied index with its
 * rows, and starts from it; the metadata group has no such row, and a member that restarted from an
 * old commit index takes the configuration of that index: after every member restarted, a committed
 * promotion was forgotten by all of them and the group could not elect (host simulation, seed 7109:
 * voters {2, 3} at the old index, 3 wiped, the promoted member a learner in everyone's view).
 * Compaction writes the new snapshot and deletes the entries it covers in one write as well. Every
 * write carries the node's next raft write sequence number (node-disk.ts), so that a lost tail of
 * RocksDB's write-ahead log is found at the next start.
 *
 * Damage. Opening checks every record: its CRC, that entries sit under their own index and follow
 * each other without a gap, that the commit index is within the log. What fails is cut off (the log
 * at the first bad entry, everything after a bad snapshot; a bad hard state keeps no vote) and the
 * member is marked damaged, in one durable write: it then neither votes nor leads (src/raft, config
 * `damaged`) until a healthy leader has repaired it. A member that starts with nothing and does not
 * found its group is marked damaged too: it may be a former member whose data directory was wiped.
 *
 * A partition group's log is its data (`keepCompacted`): compaction and snapshots drop entries from
 * memory only, retention deletes them from the KV. The metadata group's snapshot holds its state, so
 * its compacted entries are deleted.
 *
 * The core reads its log synchronously (src/raft/storage.ts), so a MemoryStorage mirrors what is
 * durable: it is updated only after the KV write has resolved, and holds the tail after the latest
 * snapshot (bounded by compaction).
 */
import { assert } from '../core/assert.js';
import type { KvBatch, OrderedKv } from '../log/index.js';
import { bootstrapState, MemoryStorage } from '../raft/index.js';
import type { ConfState, Damage, Entry, HardState, Index, NodeId, Snapshot, Term } from '../raft/index.js';
import type { ByteSlabs } from './byte-slabs.js';
import type { NodeDisk } from './node-disk.js';
import { RingStorage } from './ring-storage.js';
import { entryKey, entryKeyIndex, groupKey, kindDamage, kindHardState, kindSnapshot } from './raft-keys.js';
import {
  type DamageRecord,
  decodeDamageRecord,
  decodeEntryRecord,
  decodeHardStateRecord,
  decodeSnapshotRecord,
  encodeDamageRecord,
  encodeEntryRecord,
  encodeHardStateRecord,
  encodeSnapshotRecord,
  RaftRecordCorruptError,
} from './raft-records.js';

export type { DamageRecord } from './raft-records.js';
export { entryKey, prefixRaft } from './raft-keys.js';

/** What one Ready asks to make durable. */
export interface PersistRequest {
  readonly snapshot: Snapshot | undefined;
  readonly entries: readonly Entry[];
  readonly hardState: HardState | undefined;
  readonly mustSync: boolean;
  /** The member's damage was repaired (Ready.repaired): its mark goes in the same write. */
  readonly repaired?: boolean;
  /** The core found the member damaged while running (Ready.damaged): its mark goes in the same write. */
  readonly damaged?: Damage | undefined;
  /**
   * The member learned a term floor (Ready.termFloor): its damage mark, rewritten in the same write as
   * the hard state at that term, no longer says termUnknown (a restart before this write asks again).
   */
  readonly termFloor?: Term | undefined;
}

/** The reason recorded for damage the core finds while running. */
export const damageFoundRunning = 'a leader counts entries this member does not hold: entries it had acknowledged were lost';

const entriesEnd = (g: number) => entryKey(g, Number.MAX_SAFE_INTEGER);
/** Stale entries removed one by one rather than by one range deletion (see fill). */
const removeOneByOneMax = 1024;

/** A group whose log is its data (a partition's) has corrupt records: it is not opened. */
export class RaftGroupCorruptError extends Error {
  override name = 'RaftGroupCorruptError';
  constructor(
    readonly group: number,
    readonly found: readonly string[],
    /**
     * Committed entries that failed their checks, [from, to], when that is all that is wrong: the
     * same entries of a healthy replica can replace them (PartitionReplicas), then the group opens.
     */
    readonly committed?: { readonly from: Index; readonly to: Index },
    why = 'stays closed',
    /**
     * A corrupt snapshot or damage mark: what the member held or acknowledged cannot be told. The
     * damage it starts over with if another replica can bring it up to date (RaftLogStore.startOver):
     * the highest term it may have used and the highest index it stored.
     */
    readonly startOver?: Damage,
  ) {
    super(`raft group ${group} is corrupt and ${why}: ${found.join('; ')}`);
  }
}

/** The core's view of what is durable: entries as objects, or (a partition's, given the node's slabs) as bytes in them. */
export type MirrorStorage = MemoryStorage | RingStorage;

export class RaftLogStore {
  readonly #kv: OrderedKv;
  readonly #group: number;
  readonly #disk: NodeDisk | undefined;
  /** The core's synchronous view of what is durable. */
  readonly storage: MirrorStorage;
  #empty: boolean;
  #damage: DamageRecord | undefined;
  /**
   * Whether entries stay in the KV after compaction and snapshots (a partition group, whose log is
   * its data: compaction only drops them from memory; retention deletes them) or are dropped with
   * the memory copy (the metadata group, whose snapshot holds the state).
   */
  readonly #keepCompacted: boolean;
  /**
   * The highest entry index that may be in the KV beyond the mirror's last index (0: none): entries
   * found at open after a corrupt snapshot, entries stored by log shipping (`fillFetched`). Every
   * other stored entry is in the mirror or below it, so a write that appends after the mirror's last
   * index has nothing to remove.
   */
  #beyondMirror: Index;
  /** What the pending `fill` removed up to (see persisted). */
  #clearedTo: Index = 0;
  /**
   * The term and vote of the hard state in the KV (undefined: none stored). A hard state with the same
   * term and vote is not written again (see the header); the core's view (storage) has the commit.
   */
  #stored: { readonly term: Term; readonly vote: NodeId } | undefined;
  /** Whether a hard state that only moves the commit index is written too (see the header). */
  readonly keepsCommit: boolean;
  /** The hard state the pending `fill` wrote (see persisted). */
  #hardStateFilled: HardState | undefined;

  private constructor(kv: OrderedKv, group: number, disk: NodeDisk | undefined, storage: MirrorStorage, empty: boolean, damage: DamageRecord | undefined, keepCompacted: boolean, beyondMirror: Index, stored: HardState | undefined, keepsCommit: boolean) {
    this.#kv = kv;
    this.#group = group;
    this.#disk = disk;
    this.storage = storage;
    this.#empty = empty;
    this.#damage = damage;
    this.#keepCompacted = keepCompacted;
    this.#beyondMirror = beyondMirror > storage.lastIndex() ? beyondMirror : 0;
    this.#stored = stored === undefined ? undefined : { term: stored.term, vote: stored.vote };
    this.keepsCommit = keepsCommit;
  }

  get group(): number {
    return this.#group;
  }

  /**
   * Reads the member's state. `disk` (the node's, in production) numbers the writes for the lost-tail
   * check; without it (unit tests) only the records' own checks apply.
   */
  static async open(kv: OrderedKv, group: number, opts: { keepCompacted?: boolean; keepsCommit?: boolean; disk?: NodeDisk | undefined; applied?: Index; slabs?: ByteSlabs | undefined } = {}): Promise<RaftLogStore> {
    const disk = opts.disk;
    const keepCompacted = opts.keepCompacted ?? false;
    const found: string[] = [];
    const repairs: Array<(b: KvBatch) => void> = [];
    let damage: DamageRecord | undefined;
    const dk = groupKey(group, kindDamage);
    const damageRaw = await kv.get(dk);
    if (damageRaw !== null) {
      try {
        damage = decodeDamageRecord(dk, damageRaw);
      } catch (err) {
        found.push(`its damage mark is corrupt (${(err as Error).message})`);
      }
    }

    const sk = groupKey(group, kindSnapshot);
    const snapRaw = await kv.get(sk);
    let snap: Snapshot | undefined;
    let snapBad = false;
    if (snapRaw !== null) {
      try {
        snap = decodeSnapshotRecord(sk, snapRaw);
      } catch (err) {
        // The entries after a snapshot cannot be applied without it: drop both, re-fetch everything.
        // A log that is data (a partition's) stays in the KV; the leader's appends overwrite it.
        found.push(`its snapshot is corrupt (${(err as Error).message}); the snapshot and the log are dropped`);
        snapBad = true;
        repairs.push((b) => {
          b.del(sk);
          if (!keepCompacted) b.delRange(entryKey(group, 0), entriesEnd(group));
        });
      }
    }
    // A partition's tail holds its entries' bytes in the node's slabs (ring-storage.ts).
    const storage: MirrorStorage = opts.slabs === undefined ? new MemoryStorage(snap) : new RingStorage(opts.slabs, snap);
    const entries: Entry[] = [];
    const from = (snap?.metadata.index ?? 0) + 1;
    /** The highest index stored, good or bad: entries up to it may have been acknowledged. */
    let highest = from - 1;
    let cut: Index | undefined;
    for await (const [key, value] of kv.iterate({ gte: entryKey(group, snapBad ? 0 : from), lt: entriesEnd(group) })) {
      const at = entryKeyIndex(key);
      highest = Math.max(highest, at);
      if (snapBad || cut !== undefined) continue;
      const expected = from + entries.length;
      try {
        if (at !== expected) throw new RaftRecordCorruptError(key, `the log has a gap: entry ${at} follows ${expected - 1}`);
        const e = decodeEntryRecord(key, value);
        if (e.index !== at) throw new RaftRecordCorruptError(key, `entry ${e.index} is stored under index ${at}`);
        if (e.term < (entries[entries.length - 1]?.term ?? snap?.metadata.term ?? 0)) throw new RaftRecordCorruptError(key, `entry ${at} has term ${e.term}, below its predecessor's`);
        entries.push(e);
      } catch (err) {
        if (!(err instanceof RaftRecordCorruptError)) throw err;
        cut = expected;
        found.push(`${err.message}; the log is cut before index ${expected}`);
      }
    }
    if (cut !== undefined) {
      const c = cut;
      repairs.push((b) => b.delRange(entryKey(group, c), entriesEnd(group)));
    }
    storage.append(entries);

    const hk = groupKey(group, kindHardState);
    const hsRaw = await kv.get(hk);
    let hs: HardState | undefined;
    if (hsRaw !== null) {
      try {
        hs = decodeHardStateRecord(hk, hsRaw);
      } catch (err) {
        // Term and vote unknown: keep no vote (a damaged member casts none anyway) and the highest
        // term the log shows; the commit index falls back to what the snapshot holds.
        found.push(`its hard state is corrupt (${(err as Error).message}); its vote is forgotten`);
        hs = { term: Math.max(storage.term(storage.lastIndex()), storage.snapshot().metadata.term), vote: 0, commit: storage.snapshot().metadata.index };
      }
    }
    if (hs !== undefined && hs.commit > storage.lastIndex()) {
      found.push(`its commit index ${hs.commit} is beyond its last stored entry ${storage.lastIndex()} (entries durable before were lost)`);
      hs = { ...hs, commit: storage.lastIndex() };
    }
    if (hs !== undefined) storage.setHardState(hs);
    if (found.length > 0 && hs !== undefined) {
      const fixed = hs;
      repairs.push((b) => b.put(hk, encodeHardStateRecord(hk, fixed)));
    }

    const empty = snapRaw === null && hsRaw === null && highest === 0;
    if (found.length > 0 && keepCompacted) {
      // A partition's log is its data and its applied state (offset index) points into it: cutting it
      // at or before the applied index would leave the state machine ahead of its log. Such entries
      // are committed, and a healthy replica holds the same ones: the caller replaces them from there
      // (`committed`) and opens again. Past the applied index, the log is cut and the member marked
      // damaged as the metadata group's are: its leader sends the entries again. A corrupt snapshot
      // or damage mark names the damage to start over with (`startOver`: the caller removes the
      // group's records and opens it empty and damaged when another replica can bring it up to date);
      // an applied index unknown to the caller keeps the group closed.
      const applied = opts.applied;
      const onlyEntries = found.every((f) => !f.startsWith('its snapshot') && !f.startsWith('its damage mark'));
      if (!onlyEntries) {
        let term = Math.max(damage?.term ?? 0, hs?.term ?? 0, storage.snapshot().metadata.term, disk?.termCeiling ?? 0);
        if (storage.lastIndex() > storage.snapshot().metadata.index) term = Math.max(term, storage.term(storage.lastIndex()));
        throw new RaftGroupCorruptError(group, found, undefined, 'stays closed', { term, index: Math.max(highest, damage?.index ?? 0, hs?.commit ?? 0) });
      }
      if (applied === undefined) throw new RaftGroupCorruptError(group, found);
      if (cut !== undefined && cut <= applied) throw new RaftGroupCorruptError(group, found, { from: cut, to: Math.min(applied, highest) });
    }
    if (found.length > 0) {
      // A new damage adds to one already recorded: the terms and indexes it may have reached only grow.
      damage = {
        term: Math.max(damage?.term ?? 0, hs?.term ?? 0),
        index: Math.max(damage?.index ?? 0, highest),
        reason: [damage?.reason, ...found].filter((r) => r !== undefined).join('; '),
      };
      const d = damage;
      await RaftLogStore.#write(kv, disk, (b) => {
        for (const r of repairs) r(b);
        b.put(dk, encodeDamageRecord(dk, d));
      }, true);
    }
    // What the KV holds now: the hard state read (rewritten by the repairs when it was not sound), before
    // the damage term raises the core's view of it.
    const stored = hs;
    if (damage !== undefined) RaftLogStore.#atDamageTerm(storage, damage);
    return new RaftLogStore(kv, group, disk, storage, empty, damage, keepCompacted, highest, stored, opts.keepsCommit ?? false);
  }

  /**
   * A damaged member starts at the highest term it may have used before the damage (its stored term
   * may be older: a lost tail takes hard states with it), with no vote. Otherwise it would take a
   * deposed leader of a term it had already left for a current one, and acknowledge its entries: the
   * deposed leader could then commit with it what a newer leader had overwritten (host simulation,
   * seed 1014). Not written here: the damage mark holds the term, so every start raises it again,
   * and the hard state that ends the damage (the repair) is written with it.
   */
  static #atDamageTerm(storage: MirrorStorage, damage: DamageRecord): void {
    const hs = storage.hardState();
    if (hs.term < damage.term) storage.setHardState({ term: damage.term, vote: 0, commit: hs.commit });
  }

  /**
   * Stored entries from `from` on, read from the KV (entries before the memory tail: a partition
   * group's older log), each checked against its CRC. The caller stops iterating when it has enough.
   */
  async *readStored(from: Index, to: Index = Number.MAX_SAFE_INTEGER, capacity = 16): AsyncIterable<Entry> {
    // A few entries per native round trip unless the caller knows how many it wants: a partition
    // entry may hold a whole batch (up to megabytes), and the iterator's default prefetch of hundreds
    // of them made reads of a backlog written in large batches copy hundreds of megabytes per read
    // call (12 times slower, RSS +600 MB).
    for await (const [key, value] of this.#kv.iterate({ gte: entryKey(this.#group, from), lt: entryKey(this.#group, to), capacity })) yield decodeEntryRecord(key, value);
  }

  /**
   * Writes committed entries over stored ones that failed their checks (the same entries, from a
   * healthy replica), in one durable write. Only for a group not open yet, or for entries below its
   * snapshot (the mirror does not hold them).
   */
  static async replaceEntries(kv: OrderedKv, group: number, entries: readonly Entry[], disk: NodeDisk | undefined): Promise<void> {
    await RaftLogStore.#write(kv, disk, (b) => {
      for (const e of entries) {
        const k = entryKey(group, e.index);
        b.put(k, encodeEntryRecord(k, e));
      }
    }, true);
  }

  /**
   * A member whose snapshot or damage mark is corrupt (RaftGroupCorruptError.startOver) starts over:
   * every record of the group is removed (with what `fill` removes beside them, the partition's rows)
   * and the member is marked damaged at `damage`, in one durable write. It opens empty and damaged,
   * neither voting nor leading until a leader has brought it past everything it may have held.
   */
  static async startOver(kv: OrderedKv, group: number, disk: NodeDisk | undefined, damage: DamageRecord, fill: (b: KvBatch) => void): Promise<void> {
    const dk = groupKey(group, kindDamage);
    await RaftLogStore.#write(kv, disk, (b) => {
      RaftLogStore.drop(b, group);
      fill(b);
      b.put(dk, encodeDamageRecord(dk, damage));
    }, true);
  }

  /** Deletes every key of a group (its log, hard state, snapshot and damage mark): the group left this node. */
  static drop(b: KvBatch, group: number): void {
    b.delRange(groupKey(group, 0), groupKey(group, 0xff));
  }

  /** One KV write, numbered by the node's write sequence when there is a disk. */
  static async #write(kv: OrderedKv, disk: NodeDisk | undefined, fill: (b: KvBatch) => void, durable: boolean): Promise<void> {
    let seq = 0;
    await kv.write((b) => {
      fill(b);
      if (disk !== undefined) seq = disk.stamp(b);
    }, { durable });
    if (durable && disk !== undefined) disk.durable(seq);
  }

  /** Whether nothing was ever stored for this group (a fresh node, or a wiped one). */
  get isEmpty(): boolean {
    return this.#empty;
  }

  /** Why this member must not vote or lead, until a healthy leader has repaired it. */
  get damage(): DamageRecord | undefined {
    return this.#damage;
  }

  /** The damage as the Raft core takes it (RaftConfig.damaged). */
  coreDamage(): Damage | null {
    const d = this.#damage;
    return d === undefined ? null : { term: d.term, index: d.index, ...(d.termUnknown === true ? { termUnknown: true } : {}) };
  }

  /**
   * A member with no state: a founder writes the founding configuration (every founder writes the
   * same); any other starts empty and damaged, since it may be a former member whose data directory
   * was wiped (what it voted for and acknowledged is gone), until a leader has brought it up to date.
   * `termUnknown`: nothing on this node bounds the terms its former state used in the group (the
   * directory was wiped or lost its records); the member learns a term floor from the other voters
   * before it acknowledges anything (src/raft Damage.termUnknown).
   */
  async startEmpty(founders: readonly NodeId[], why: string, termUnknown = false): Promise<void> {
    assert(this.#empty, 'starting a group member that already has state');
    if (founders.length > 0) {
      await this.bootstrap(founders);
      return;
    }
    if (this.#damage !== undefined) return;
    const dk = groupKey(this.#group, kindDamage);
    // The highest term this node may have used in the group (node-disk.ts, termCeiling; 0 for a
    // directory that kept nothing of its past, such as a wiped one).
    const d: DamageRecord = { term: this.#disk?.termCeiling ?? 0, index: 0, reason: why, ...(termUnknown ? { termUnknown: true } : {}) };
    await RaftLogStore.#write(this.#kv, this.#disk, (b) => b.put(dk, encodeDamageRecord(dk, d)), true);
    this.#damage = d;
    RaftLogStore.#atDamageTerm(this.storage, d);
  }

  /** Writes the founding configuration (every founder writes the same). */
  async bootstrap(voters: readonly NodeId[]): Promise<void> {
    assert(this.#empty, 'bootstrapping a group member that already has state');
    assert(this.#damage === undefined, 'founding a group on a member marked damaged');
    const { entries, hardState } = bootstrapState(voters);
    await this.persist({ snapshot: undefined, entries, hardState, mustSync: true });
  }

  /** Step 1 of the Ready contract, in one atomic write; the mirror is updated once it is durable. */
  async persist(rd: PersistRequest): Promise<void> {
    if (rd.snapshot === undefined && rd.entries.length === 0 && rd.hardState === undefined && rd.repaired !== true && rd.damaged === undefined && rd.termFloor === undefined) return;
    if (!rd.mustSync && rd.snapshot === undefined && rd.entries.length === 0 && rd.repaired !== true && rd.damaged === undefined && rd.termFloor === undefined) {
      // Only the commit index moved: nothing to write (see the header), unless the term or vote differ
      // from the stored ones (a damaged member's term, raised at open without a write). That write need
      // not be waited for either: the KV applies writes in call order, so the next durable write makes
      // it durable too, and a failed write poisons the KV and fails that next write.
      if (this.writesHardState(rd.hardState) || this.keepsCommit) RaftLogStore.#write(this.#kv, this.#disk, (b) => this.fill(b, rd), false).catch(() => undefined);
      this.persisted(rd);
      return;
    }
    await RaftLogStore.#write(this.#kv, this.#disk, (b) => this.fill(b, rd), rd.mustSync);
    this.persisted(rd);
  }

  /**
   * Adds a Ready's step 1 to a KV batch that the caller writes (the node's Ready loop writes the
   * Readies of every group in one batch with one fsync, numbered once by the node's disk). Call
   * `persisted` once that write resolved.
   */
  fill(b: KvBatch, rd: PersistRequest): void {
    const g = this.#group;
    const snapIndex = rd.snapshot?.metadata.index ?? this.storage.snapshot().metadata.index;
    /** The last entry index stored before this write (the mirror is what is durable: turns are sequential). */
    const storedTo = Math.max(this.storage.lastIndex(), this.#beyondMirror);
    this.#clearedTo = 0;
    if (rd.snapshot !== undefined) {
      const sk = groupKey(g, kindSnapshot);
      b.put(sk, encodeSnapshotRecord(sk, rd.snapshot));
      // A snapshot from the leader replaces the whole log: everything at or before its index is
      // covered by it; a group whose log is its data keeps the entries before it (they are the same as
      // the leader's: they were fetched from it before the snapshot was stepped in).
      if (this.#keepCompacted) this.#removeEntries(b, snapIndex + 1, storedTo);
      else b.delRange(entryKey(g, 0), entriesEnd(g));
      this.#clearedTo = storedTo;
    }
    const ents = rd.entries.filter((e) => e.index > snapIndex);
    const first = ents[0];
    if (first !== undefined) {
      // Appending at i discards every stored entry at i or later (a new leader's overwrite): the puts
      // replace those up to the last new one, and the ones after it are removed. An append after the
      // last stored entry (every leader's append, almost every follower's) removes nothing: no range
      // deletion per write, whose tombstones RocksDB would keep in the memtable until it is flushed
      // (tens of thousands made every read and the flush itself take seconds and gigabytes).
      const lastNew = ents[ents.length - 1]!.index;
      this.#removeEntries(b, lastNew + 1, storedTo);
      this.#clearedTo = storedTo;
      for (const e of ents) {
        const k = entryKey(g, e.index);
        b.put(k, encodeEntryRecord(k, e));
      }
    }
    this.#hardStateFilled = undefined;
    if (rd.hardState !== undefined && (this.keepsCommit || this.writesHardState(rd.hardState))) {
      const hk = groupKey(g, kindHardState);
      b.put(hk, encodeHardStateRecord(hk, rd.hardState));
      this.#hardStateFilled = rd.hardState;
    }
    const dk = groupKey(g, kindDamage);
    if (rd.damaged !== undefined) b.put(dk, encodeDamageRecord(dk, { ...rd.damaged, reason: damageFoundRunning }));
    const floored = this.#floored(rd.termFloor);
    if (floored !== undefined) b.put(dk, encodeDamageRecord(dk, floored));
    if (rd.repaired === true) b.del(dk);
  }

  /**
   * Whether `fill` writes this hard state: none is stored yet, or its term or vote differ from the
   * stored ones. One that only moves the commit index is not written (see the header).
   */
  writesHardState(hs: HardState | undefined): boolean {
    if (hs === undefined) return false;
    const s = this.#stored;
    return s === undefined || s.term !== hs.term || s.vote !== hs.vote;
  }

  /** The damage mark once a term floor is learned: at least that term, no longer termUnknown. */
  #floored(floor: Term | undefined): DamageRecord | undefined {
    const d = this.#damage;
    if (floor === undefined || d === undefined) return undefined;
    return { term: Math.max(d.term, floor), index: d.index, reason: d.reason };
  }

  /** Removes stored entries [from, to]: one delete each when few (the usual overwrite), else one bounded range. */
  #removeEntries(b: KvBatch, from: Index, to: Index): void {
    if (to < from) return;
    const g = this.#group;
    if (to - from < removeOneByOneMax) for (let i = from; i <= to; i++) b.del(entryKey(g, i));
    else b.delRange(entryKey(g, from), entryKey(g, to + 1));
  }

  /**
   * Adds entries fetched from the leader (log shipping, outside any Ready: they are committed and
   * applied at once, the mirror learns of them with the snapshot that follows) to a KV batch.
   */
  fillFetched(b: KvBatch, entries: readonly Entry[]): void {
    for (const e of entries) {
      const k = entryKey(this.#group, e.index);
      b.put(k, encodeEntryRecord(k, e));
    }
    const last = entries[entries.length - 1];
    if (last !== undefined && last.index > this.storage.lastIndex()) this.#beyondMirror = Math.max(this.#beyondMirror, last.index);
  }

  /** Stores entries fetched by log shipping (`fillFetched`) in a write of their own. */
  async storeFetched(entries: readonly Entry[]): Promise<void> {
    await RaftLogStore.#write(this.#kv, this.#disk, (b) => this.fillFetched(b, entries), false);
  }

  /**
   * Stores entries before the snapshot the member started from (a partition's history, fetched from
   * another replica after its snapshot was installed without the log before it), with the caller's
   * rows, in one write. They are below the snapshot: the core never reads them; reads and log
   * shipping do.
   */
  async storeHistory(entries: readonly Entry[], fill: (b: KvBatch) => void): Promise<void> {
    const first = entries[0];
    assert(first === undefined || entries[entries.length - 1]!.index <= this.storage.snapshot().metadata.index, 'history must lie before the snapshot');
    await RaftLogStore.#write(this.#kv, this.#disk, (b) => {
      for (const e of entries) {
        const k = entryKey(this.#group, e.index);
        b.put(k, encodeEntryRecord(k, e));
      }
      fill(b);
    }, false);
  }

  /** Updates the core's view once the write holding `fill(rd)` is durable (or, commit-only, issued). */
  persisted(rd: PersistRequest): void {
    if (rd.snapshot !== undefined) this.storage.applySnapshot(rd.snapshot);
    this.storage.append(rd.entries);
    // The write removed every stored entry after its own up to what `fill` knew of; entries fetched
    // since (beyond that) are still there.
    if (this.#clearedTo > 0 && this.#beyondMirror <= this.#clearedTo) this.#beyondMirror = 0;
    this.#clearedTo = 0;
    if (rd.hardState !== undefined) this.storage.setHardState(rd.hardState);
    const filled = this.#hardStateFilled;
    if (filled !== undefined && filled === rd.hardState) this.#stored = { term: filled.term, vote: filled.vote };
    this.#hardStateFilled = undefined;
    if (rd.damaged !== undefined) this.#damage = { ...rd.damaged, reason: damageFoundRunning };
    this.#damage = this.#floored(rd.termFloor) ?? this.#damage;
    if (rd.repaired === true) this.#damage = undefined;
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
    const sk = groupKey(g, kindSnapshot);
    await RaftLogStore.#write(this.#kv, this.#disk, (b) => {
      b.put(sk, encodeSnapshotRecord(sk, snapshot));
      if (!this.#keepCompacted) b.delRange(entryKey(g, 0), entryKey(g, firstKept));
    }, false);
    // The snapshot is the newest durable-enough image: entries it covers stay in the log until the
    // write lands, and losing this write (no fsync) only loses the compaction, never data. One at the
    // same index replaces the image (retention moved where the log starts; followers are told so).
    this.storage.createSnapshot(index, conf, data);
    this.storage.compact(firstKept - 1);
    return snapshot;
  }
}
