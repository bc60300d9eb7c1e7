/**
 * One partition's replica on this node: the applier of its Raft group (offsets assigned at apply, the
 * offset index written with the applied index) and the reads of its log.
 *
 * Keys (src/log/keys.ts lists every prefix):
 *   [0x14][group u32][last offset u64] -> [raft index u64][first offset u64][append time u64][request id]
 *        one row per applied event batch: "the batch holding offset o" is the first key >= o; the
 *        request ids of the newest rows rebuild the de-duplication window at start
 *   [0x15][group u32]                  -> [applied u64][next offset u64][oldest offset u64][sealed]
 *        `sealed`: the id (UTF-8) of the timeline switch that sealed the log, absent while it is open
 * Both are written (without fsync) in the node's next write after the entry is applied, so the
 * applied index is always stored atomically with the rows of the entries up to it. Losing them in a
 * crash loses nothing: the entries are durable in the Raft log and are applied again at start.
 *
 * The applied state is stored as the applied row together with the newest index row: an entry that
 * writes index rows (almost every entry) writes no applied row, since its newest row names its Raft
 * index and its last offset, which is all that applying it changed (the de-duplication window is
 * rebuilt from the rows). At start the applied index and next offset are those of the newer of the
 * two (load). Every other entry (a no-op, a configuration change, a base, a seal, a batch refused or
 * de-duplicated whole) and every change of the oldest offset writes the applied row. Writes land in
 * call order, so what a start reads is the state after some prefix of the applied entries, and the
 * entries after it are applied again from the log: the same entries in the same order, which give
 * the same rows (partition-applied.test.ts).
 *
 * Reads serve applied (hence committed) events only. The batch holding the first wanted offset is
 * found in the in-memory index of recent batches or by one seek in the offset index; from there the
 * rows holding the wanted events are read, then their entries (from memory for the tail, from the KV
 * before it, in one bounded iterator), counting offsets, so a backlog reads at the same speed whatever
 * the size of the batches it was written in.
 */
import type { Logger } from 'pino';
import { assert, invariantFailed } from '../core/assert.js';
import { publishBatchEventsMax } from '../core/limits.js';
import type { Offset } from '../core/offset.js';
import { batchEvents, decodeEntryHead, isChecked, PartitionEntryError, requestIdBytesMax } from '../log/partition-entry.js';
import { CorruptBatchError, OffsetExpiredError, OffsetNotYetAvailableError, PartitionUnavailableError, type KvBatch, type OrderedKv } from '../log/index.js';
import { RaftRecordCorruptError } from './raft-records.js';
import { readU64, writeU64 } from '../log/keys.js';
import type { Entry, Snapshot } from '../raft/index.js';
import { dedupWindow, partitionImageProblem, PartitionState, type BatchOutcome, type PartitionImage, type SealOutcome } from '../replication/partition-state.js';
import type { RaftGroup } from './raft-host/raft-group.js';
import { RecentRows, type RecentRow } from './recent-rows.js';
import { entryKey } from './raft-log-store.js';
import { entryKeyIndex } from './raft-keys.js';

export const prefixOffsetIndex = 0x14;
export const prefixApplied = 0x15;
export const prefixHistoryPending = 0x17;

/**
 * The log before an installed snapshot that this replica still has to fetch (its history): the
 * snapshot's index and next offset, and where the log it fetches starts (the leader's retained start).
 * Stored under [0x17][group] in the write that installs the snapshot without its log, and removed in
 * the write that makes the fetched log readable (or gives it up), so a replica that stops while
 * fetching knows at its next start that the log below its snapshot is not all here.
 */
export interface PendingHistory {
  readonly index: number;
  readonly next: number;
  readonly fromIndex: number;
  readonly fromOffset: number;
}

function encodePending(p: PendingHistory): Buffer {
  const v = Buffer.allocUnsafe(32);
  writeU64(v, 0, p.index);
  writeU64(v, 8, p.next);
  writeU64(v, 16, p.fromIndex);
  writeU64(v, 24, p.fromOffset);
  return v;
}

function decodePending(v: Buffer): PendingHistory | undefined {
  if (v.length !== 32) return undefined;
  const p = { index: readU64(v, 0), next: readU64(v, 8), fromIndex: readU64(v, 16), fromOffset: readU64(v, 24) };
  return p.fromIndex <= p.index && p.fromOffset < p.next ? p : undefined;
}

/**
 * A replica's answer to a fetch of the log before a snapshot does not fit that snapshot (it lacks the
 * start of that log, or its entries give other offsets than the snapshot's): that replica cannot serve
 * it, which is not a passing fault (PartitionReplicas tries the others, then gives up).
 */
export class HistoryMissingError extends Error {}

/** The history to fetch after installing `img` at `index` without the log before it, if any. */
function pendingOf(index: number, img: PartitionImage): PendingHistory | undefined {
  if (img.start === undefined) return undefined;
  const [fromIndex, fromOffset] = img.start;
  return fromIndex <= index && fromOffset < img.next ? { index, next: img.next, fromIndex, fromOffset } : undefined;
}

/**
 * What applying an entry gave: one outcome per batch of a batches entry, the seal's outcome for a
 * seal, nothing for other entries.
 */
export type ReplicaOutcome = readonly BatchOutcome[] | SealOutcome | undefined;

/** Index rows (and entries) fetched by one read from the KV at most. */
const rowsPerReadMax = 1024;
/** Corrupt stored entries one read repairs at most before it gives up (the next read goes on). */
const repairsPerReadMax = 16;

export interface StoredEventView {
  offset: Offset;
  bytes: Buffer;
}

function groupKey(prefix: number, group: number): Buffer {
  const k = Buffer.allocUnsafe(5);
  k[0] = prefix;
  k.writeUInt32BE(group, 1);
  return k;
}

/** The key of a group's record of a pending fetch of the log before its snapshot (the host simulation aims crashes with it). */
export function historyPendingKey(group: number): Buffer {
  return groupKey(prefixHistoryPending, group);
}

function indexKey(group: number, lastOffset: number): Buffer {
  const k = Buffer.allocUnsafe(13);
  k[0] = prefixOffsetIndex;
  k.writeUInt32BE(group, 1);
  writeU64(k, 5, lastOffset);
  return k;
}

interface IndexRow {
  readonly raftIndex: number;
  readonly first: number;
  readonly last: number;
  readonly appendTimeMs: number;
  /** Where the row's first event is among the entry's (an entry may hold several batches). */
  readonly position: number;
}

/** One batch of a row: its request id ('' for none) and how many events it holds. */
interface IndexedBatch {
  readonly requestId: string;
  readonly count: number;
}

/** A row to write, with its batches in order (their request ids rebuild the de-duplication window at start). */
interface NewIndexRow extends IndexRow {
  readonly batches: readonly IndexedBatch[];
}

/**
 * Row values, keyed by the row's last offset:
 * - format 2, a run of consecutive batches of one entry, all appended: [0x02][raft index u64][first
 *   offset u64][append time u64][position u32][batches u16], then per batch [events u32][request id
 *   bytes u8][request id]. One row per run instead of one per batch: with many small publishes a
 *   turn's entry holds dozens of batches, and a put per batch was most of the node's KV operations
 *   (docs/benchmarks.md, "one index row per entry");
 * - format 1, one batch: [0x01][raft index u64][first offset u64][append time u64][position u32][request id];
 * - rows written before entries held several batches have no format byte and no position:
 *   [raft index u64][first offset u64][append time u64][request id] (a raft index is below 2^53, so
 *   their first byte is always 0).
 */
const indexRowFormat = 1;
const indexRunFormat = 2;

function encodeIndexRow(r: NewIndexRow): Buffer {
  if (r.batches.length === 1) {
    const id = r.batches[0]!.requestId;
    const idBytes = Buffer.byteLength(id, 'utf8');
    const v = Buffer.allocUnsafe(29 + idBytes);
    v[0] = indexRowFormat;
    writeU64(v, 1, r.raftIndex);
    writeU64(v, 9, r.first);
    writeU64(v, 17, r.appendTimeMs);
    v.writeUInt32BE(r.position, 25);
    v.write(id, 29, 'utf8');
    return v;
  }
  if (!(r.batches.length <= 0xffff)) invariantFailed(`an index row of ${r.batches.length} batches`);
  let size = 31;
  for (const b of r.batches) size += 5 + Buffer.byteLength(b.requestId, 'utf8');
  const v = Buffer.allocUnsafe(size);
  v[0] = indexRunFormat;
  writeU64(v, 1, r.raftIndex);
  writeU64(v, 9, r.first);
  writeU64(v, 17, r.appendTimeMs);
  v.writeUInt32BE(r.position, 25);
  v.writeUInt16BE(r.batches.length, 29);
  let at = 31;
  for (const b of r.batches) {
    v.writeUInt32BE(b.count, at);
    const n = v.write(b.requestId, at + 5, 'utf8');
    if (!(n <= requestIdBytesMax)) invariantFailed(`request id of ${n} bytes`);
    v[at + 4] = n;
    at += 5 + n;
  }
  return v;
}

function decodeIndexRow(k: Buffer, v: Buffer): IndexRow {
  if (v[0] === indexRowFormat || v[0] === indexRunFormat) {
    return { last: readU64(k, 5), raftIndex: readU64(v, 1), first: readU64(v, 9), appendTimeMs: readU64(v, 17), position: v.readUInt32BE(25) };
  }
  return { last: readU64(k, 5), raftIndex: readU64(v, 0), first: readU64(v, 8), appendTimeMs: readU64(v, 16), position: 0 };
}

/** The (request id, first, last) of each batch of a stored row that has a request id, in order. */
function indexRowRequests(k: Buffer, v: Buffer): [string, number, number][] {
  if (v[0] === indexRunFormat) {
    const out: [string, number, number][] = [];
    let first = readU64(v, 9);
    const n = v.readUInt16BE(29);
    let at = 31;
    for (let i = 0; i < n; i++) {
      const count = v.readUInt32BE(at);
      const idBytes = v[at + 4]!;
      const id = v.toString('utf8', at + 5, at + 5 + idBytes);
      if (id !== '') out.push([id, first, first + count - 1]);
      first += count;
      at += 5 + idBytes;
    }
    return out;
  }
  const id = v.toString('utf8', v[0] === indexRowFormat ? 29 : 24);
  if (id === '') return [];
  const r = decodeIndexRow(k, v);
  return [[id, r.first, r.last]];
}

/**
 * The index rows of a batches entry: one per run of consecutive batches that were appended (a
 * duplicate or a batch refused by a seal gets no offsets, so it ends a run; its events still take
 * their place in the entry).
 */
function indexRowsOf(raftIndex: number, appendTimeMs: number, batches: readonly IndexedBatch[], outcomes: readonly BatchOutcome[]): NewIndexRow[] {
  const rows: NewIndexRow[] = [];
  let run: { raftIndex: number; first: number; last: number; appendTimeMs: number; position: number; batches: IndexedBatch[] } | undefined;
  let position = 0;
  for (let i = 0; i < outcomes.length; i++) {
    const o = outcomes[i]!;
    const b = batches[i]!;
    if (o.kind === 'appended') {
      if (run === undefined) run = { raftIndex, first: o.first, last: o.last, appendTimeMs, position, batches: [b] };
      else {
        if (!(o.first === run.last + 1)) invariantFailed(`batch ${i} of entry ${raftIndex} starts at ${o.first}, not at ${run.last + 1}`);
        run.last = o.last;
        run.batches.push(b);
      }
    } else if (run !== undefined) {
      rows.push(run);
      run = undefined;
    }
    position += b.count;
  }
  if (run !== undefined) rows.push(run);
  return rows;
}

function encodeApplied(s: PartitionState): Buffer {
  const sealed = s.sealed === undefined ? undefined : Buffer.from(s.sealed, 'utf8');
  const v = Buffer.allocUnsafe(24 + (sealed?.length ?? 0));
  writeU64(v, 0, s.applied);
  writeU64(v, 8, s.newest + 1);
  writeU64(v, 16, s.oldest);
  sealed?.copy(v, 24);
  return v;
}

export function encodeImage(img: PartitionImage): Uint8Array {
  return Buffer.from(JSON.stringify(img), 'utf8');
}

export function decodeImage(data: Uint8Array): PartitionImage {
  const img = JSON.parse(Buffer.from(data).toString('utf8')) as PartitionImage;
  assert(Number.isSafeInteger(img.applied) && Number.isSafeInteger(img.next) && Number.isSafeInteger(img.oldest) && Array.isArray(img.recent), 'malformed partition image');
  assert(img.sealed === undefined || (typeof img.sealed === 'string' && img.sealed !== ''), 'malformed partition image: sealed');
  return img;
}

/** Why a snapshot from a peer cannot be installed (checked before anything of it is stored), or undefined. */
export function snapshotProblem(s: Snapshot): string | undefined {
  let img: unknown;
  try {
    img = JSON.parse(Buffer.from(s.data.buffer, s.data.byteOffset, s.data.byteLength).toString('utf8'));
  } catch (err) {
    return `not JSON (${(err as Error).message})`;
  }
  return partitionImageProblem(img, s.metadata.index);
}

/** What the replica needs from the node: where to write its rows, and its Raft group. */
export interface ReplicaHost {
  writeRows(fill: (b: KvBatch) => void): void;
  /** Resolves once every row asked for before the call is written (not fsynced). */
  flushRows(): Promise<void>;
}

export class PartitionReplica {
  readonly topic: number;
  readonly partition: number;
  readonly groupId: number;
  readonly #kv: OrderedKv;
  readonly #host: ReplicaHost;
  readonly #logger: Logger;
  #group!: RaftGroup<ReplicaOutcome>;
  #state: PartitionState;
  /** Batches applied whose entries are still in the group's memory tail (columns: recent-rows.ts). */
  readonly #recent = new RecentRows();
  #waiters = new Set<() => void>();
  #corrupt: Error | undefined;
  /** About how many events an index row of this partition held in recent reads (sizes the next read's iterator). */
  #eventsPerRow = 64;
  /** Committed entries that did not decode (dropped: they assign no offsets). */
  #malformedEntries = 0;

  private constructor(topic: number, partition: number, groupId: number, kv: OrderedKv, host: ReplicaHost, logger: Logger, state: PartitionState) {
    this.topic = topic;
    this.partition = partition;
    this.groupId = groupId;
    this.#kv = kv;
    this.#host = host;
    this.#logger = logger;
    this.#state = state;
  }

  /**
   * Reads the stored applied state and the de-duplication window. A group that never applied anything
   * starts at `start`, its timeline's first offset (every replica reads the same from metadata).
   */
  static async load(topic: number, partition: number, groupId: number, kv: OrderedKv, host: ReplicaHost, logger: Logger, start = 0): Promise<PartitionReplica> {
    const pendingRaw = await kv.get(groupKey(prefixHistoryPending, groupId));
    const pending = pendingRaw === null ? undefined : decodePending(pendingRaw);
    if (pending !== undefined) {
      // Stopped while fetching the log before its snapshot: what that fetch stored is an unknown
      // part of it (chunks, possibly not the last ones; unsynced ones lost). It is removed, nothing of
      // it is read or shipped, and the fetch starts again (PartitionReplicas) from the retained start.
      await kv.write((b) => {
        b.delRange(indexKey(groupId, 0), indexKey(groupId, pending.next));
        b.delRange(entryKey(groupId, 0), entryKey(groupId, pending.index + 1));
      }, { durable: false });
    }
    const raw = await kv.get(groupKey(prefixApplied, groupId));
    let image: PartitionImage = { applied: 0, next: start, oldest: start, recent: [] };
    if (raw !== null) {
      // The newest `dedupWindow` request ids, as the state machine's window holds them (a row holds
      // one batch or more, each with its id).
      const recent: [string, number, number][] = [];
      let newest: IndexRow | undefined;
      for await (const [k, v] of kv.iterate({ gte: indexKey(groupId, 0), lt: groupKey(prefixOffsetIndex, groupId + 1), reverse: true, limit: dedupWindow })) {
        newest ??= decodeIndexRow(k, v);
        recent.unshift(...indexRowRequests(k, v));
        if (recent.length >= dedupWindow) break;
      }
      if (recent.length > dedupWindow) recent.splice(0, recent.length - dedupWindow);
      image = { applied: readU64(raw, 0), next: readU64(raw, 8), oldest: readU64(raw, 16), recent };
      // Entries that wrote index rows wrote no applied row (see the header): the newest row, when it
      // names a later entry than the applied row, is where the applied state stands.
      if (newest !== undefined && newest.raftIndex > image.applied) image = { ...image, applied: newest.raftIndex, next: Math.max(image.next, newest.last + 1) };
      if (raw.length > 24) image = { ...image, sealed: raw.toString('utf8', 24) };
      // Retention removes the oldest rows and entries in a write of its own; the oldest offset that
      // goes with it is written with the applied state in the node's next write. A crash between the
      // two (the removal made durable by a later fsync, the new oldest offset lost) leaves an oldest
      // offset whose rows are gone: every offset from oldest to next has a row (they are written with
      // the applied state), so the first row left is where the log starts.
      let held = image.next;
      for await (const [k, v] of kv.iterate({ gte: indexKey(groupId, 0), lt: groupKey(prefixOffsetIndex, groupId + 1), limit: 1 })) held = decodeIndexRow(k, v).first;
      if (held > image.oldest) {
        logger.warn({ topic, partition, group: groupId, stored: image.oldest, oldest: Math.min(held, image.next) }, 'partition replica opens after a crash during retention: its log starts at the first batch left');
        image = { ...image, oldest: Math.min(held, image.next) };
      }
    }
    const replica = new PartitionReplica(topic, partition, groupId, kv, host, logger, new PartitionState(image));
    if (pending !== undefined) {
      replica.#pending = pending;
      replica.#logFloor = pending.index + 1;
    }
    return replica;
  }

  /** The de-duplication window of the snapshot last installed without its log (while this process runs). */
  #restoredWindow: PartitionImage['recent'] | undefined;

  /**
   * The request ids whose first offsets this replica knows from de-duplication windows at or after
   * the index of the snapshot it installed without its log: that snapshot's, the stored snapshot's,
   * its state's now. Where they differ, the lowest offsets (the first application nearest that
   * snapshot). A fetch of the log before it that starts later than the log did gives them to its
   * scratch state (PartitionState's `earlier`).
   */
  requestsKnown(): Map<string, readonly [number, number]> {
    const out = new Map<string, readonly [number, number]>();
    const add = (recent: PartitionImage['recent'] | undefined) => {
      for (const [id, first, last] of recent ?? []) {
        const had = out.get(id);
        if (had === undefined || first < had[0]) out.set(id, [first, last]);
      }
    };
    add(this.#restoredWindow);
    const stored = this.#group.store.storage.snapshot().data;
    if (stored.byteLength > 0) {
      try {
        add(decodeImage(stored).recent);
      } catch {
        // a malformed stored image: the other windows still count
      }
    }
    add(this.#state.image().recent);
    return out;
  }

  /** The log before the installed snapshot still to be fetched (undefined: none is missing). */
  get pendingHistory(): PendingHistory | undefined {
    return this.#pending;
  }

  #pending: PendingHistory | undefined;

  /**
   * Counts snapshots installed without their log: a fetch of history started for one stops when a
   * later one replaced it (the later one's fetch takes over).
   */
  historyGeneration = 0;

  /** The applied index the group restarts from. */
  get applied(): number {
    return this.#state.applied;
  }

  attach(group: RaftGroup<ReplicaOutcome>): void {
    this.#group = group;
    group.setApplier({
      // Entries log shipping applied here already (storeFetched) are not applied twice.
      apply: (e) => (this.#shippedAhead(e.index) ? undefined : this.#apply(e)),
      applied: (index) => {
        if (this.#shippedAhead(index)) return;
        this.#state.applyOther(index);
        this.#writeApplied();
      },
      restore: (s) => this.#restore(s),
      snapshotProblem,
    });
    group.onApplied = () => this.#wake();
  }

  get group(): RaftGroup<ReplicaOutcome> {
    return this.#group;
  }

  /**
   * The last entry log shipping applied here beside the group (storeFetched): the group reaches it by
   * installing the leader's snapshot, normally in the next turn. A write that refuses the install (a
   * full disk) restarts the group from its disk without it, and the replica stays ahead of its group
   * until a leader sends the snapshot again, or sends those entries as appends (host simulation seed
   * 2187; partition-catchup-refused.test.ts).
   */
  #shippedTo = 0;

  /** Whether the group is applying an entry that log shipping applied here already (the same committed entry). */
  #shippedAhead(index: number): boolean {
    return index <= this.#shippedTo && index <= this.#state.applied;
  }

  /**
   * The replica applied entries its group has not (log shipping, before the snapshot that brings the
   * group there is installed): its state and index rows are ahead of the group's applied index, so
   * nothing may take a snapshot (the state would not be the one at the group's index) or cut the log
   * meanwhile (retention waits, as during a fetch of history).
   */
  get aheadOfGroup(): boolean {
    return this.#state.applied > this.#group.applied;
  }

  bounds(): { oldest: Offset; newest: Offset } {
    return { oldest: Math.min(this.#state.oldest, this.historyFrom ?? Number.MAX_SAFE_INTEGER) as Offset, newest: this.#state.newest as Offset };
  }

  image(): PartitionImage {
    return this.#state.image();
  }

  /** The timeline switch this log was sealed for (undefined: it takes events). */
  get sealed(): string | undefined {
    return this.#state.sealed;
  }

  // ------------------------------------------------------------------ apply

  #apply(e: Entry): ReplicaOutcome {
    this.syncTailBytes();
    // An entry from another node or from the disk is checked here; one this node encoded (its own
    // proposal, still the same buffer) was never stored or sent before this point.
    const head = this.#checkedHead(e, this.#state.newest + 1, !isChecked(e.data));
    if (head === undefined) {
      this.#state.applyOther(e.index);
      this.#writeApplied();
      return undefined;
    }
    let outcome: ReplicaOutcome;
    switch (head.kind) {
      case 'noop':
        this.#state.applyOther(e.index);
        break;
      case 'base':
        this.#state.applyBase(e.index, head.base);
        break;
      case 'seal':
        outcome = this.#state.applySeal(e.index, head.timeline, head.floor);
        break;
      case 'batches': {
        // Each batch of the entry is de-duplicated on its own; the batches appended get index rows
        // (one per run of them) that say where their events start in the entry.
        const outcomes = this.#state.applyBatches(e.index, head.batches);
        const rows = indexRowsOf(e.index, head.appendTimeMs, head.batches, outcomes);
        if (rows.length > 0) {
          for (const row of rows) this.#recent.push(row.raftIndex, row.first, row.last, row.appendTimeMs, row.position);
          const g = this.groupId;
          this.#host.writeRows((b) => {
            for (const row of rows) b.put(indexKey(g, row.last), encodeIndexRow(row));
          });
          // The newest row says what applying this entry changed in the stored state (see the header):
          // no applied row for it.
          return outcomes;
        }
        outcome = outcomes;
        break;
      }
    }
    this.#writeApplied();
    return outcome;
  }

  /**
   * The head of a committed entry, or undefined for one that does not decode or would take offsets
   * past exact integers. Such an entry came from a buggy member: this node's own entries always
   * decode, and Raft gives every replica the same bytes (with mutual TLS nothing can alter them on the
   * way; the stored copy is checksummed). It is dropped with a log line and assigns no offsets, alike
   * on every replica and at every replay. Stopping instead would stop the node again at every start,
   * the entry staying in the log.
   */
  #checkedHead(e: Entry, next: number, check: boolean): ReturnType<typeof decodeEntryHead> | undefined {
    const data = Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength);
    try {
      const head = decodeEntryHead(data, !check);
      if (head.kind === 'batches' && (largestBatch(head.batches) > publishBatchEventsMax || next + head.count > Number.MAX_SAFE_INTEGER)) {
        throw new PartitionEntryError(`a batch of ${largestBatch(head.batches)} events (${head.count} in the entry) after offset ${next - 1}`);
      }
      if (head.kind === 'base' && !Number.isSafeInteger(head.base)) throw new PartitionEntryError(`base offset ${head.base} is not exact`);
      if (head.kind === 'seal' && !Number.isSafeInteger(head.floor)) throw new PartitionEntryError(`seal floor ${head.floor} is not exact`);
      return head;
    } catch (err) {
      if (!(err instanceof PartitionEntryError)) throw err;
      this.#malformedEntries++;
      if (this.#malformedEntries <= 10 || this.#malformedEntries % 100 === 0) {
        this.#logger.error({ topic: this.topic, partition: this.partition, group: this.groupId, index: e.index, err: err.message, dropped: this.#malformedEntries }, 'dropped a malformed committed partition entry (it assigns no offsets)');
      }
      return undefined;
    }
  }

  /**
   * The applied index and offsets, written with the index rows of the entries up to it: once per
   * write whatever the number of entries applied since the last one, encoded when the write is
   * filled. The rows of every entry applied by then were asked for before (apply asks first), so
   * they are in the same write or an earlier one.
   */
  #writeApplied(): void {
    if (this.#appliedAsked) return;
    this.#appliedAsked = true;
    this.#host.writeRows((b) => {
      this.#appliedAsked = false;
      b.put(groupKey(prefixApplied, this.groupId), encodeApplied(this.#state));
    });
  }

  #appliedAsked = false;

  /**
   * Applies a committed entry while the group is being opened (before its Raft node exists): the
   * same rules as apply, so a restart reaches the same state as a replica that never stopped.
   */
  replay(e: Entry): void {
    if (e.type === 'confChange') {
      this.#state.applyOther(e.index);
      this.#writeApplied();
    } else this.#apply(e);
  }

  /**
   * Starts from a stored snapshot newer than the stored applied rows: the snapshot was installed from
   * the leader without the log before it (see #restore), and the crash came before the rows saying
   * so were written.
   */
  restoreImage(img: PartitionImage): void {
    this.#state = new PartitionState(img);
    this.#withoutLogBefore(img.applied, pendingOf(img.applied, img));
  }

  /**
   * The de-duplication window at start is rebuilt from the index rows (load). A replica that installed
   * a snapshot without the log before it (and has not fetched that log, or gave it up) has no rows of
   * the batches before the snapshot, so that window would lack them. The window is part of the state
   * every replica must share (a retried batch is stored by none or by all): it is the snapshot's
   * window followed by the batches applied after it, as on a replica that never stopped.
   */
  withSnapshotWindow(img: PartitionImage): void {
    const mine = this.#state.image();
    const after = mine.recent.filter(([, first]) => first >= img.next);
    const later = new Set(after.map(([id]) => id));
    const recent = [...img.recent.filter(([id]) => !later.has(id)), ...after].slice(-dedupWindow);
    this.#state = new PartitionState({ ...mine, recent });
  }

  /**
   * A snapshot from the leader. A replica that fetched the log up to it (log shipping, see
   * PartitionReplicas) holds every event before it: it keeps its own oldest offset (retention is a
   * local decision; the leader's image may name an older one than this replica still holds). One that
   * did not (the leader no longer held those entries) holds no event before the snapshot: it forgets
   * its own older rows and entries, and reads nothing before the snapshot's next offset until that log
   * is fetched back (`onRestoredWithoutLog`), never a hole.
   */
  #restore(s: Snapshot): void {
    const before = this.#state;
    const img = decodeImage(s.data);
    if (before.applied >= s.metadata.index) {
      this.#state = new PartitionState({ ...img, oldest: Math.min(before.oldest, img.next) });
      this.#recent.clear();
      this.#writeApplied();
      return;
    }
    this.#state = new PartitionState(img);
    this.#restoredWindow = img.recent;
    this.#withoutLogBefore(s.metadata.index, pendingOf(s.metadata.index, img));
    this.onRestoredWithoutLog?.();
  }

  /**
   * The state stands at `index` and this replica holds none of the log up to it: no event is readable
   * before the next offset, and the rows and entries it held before (some possibly never committed)
   * are removed, so that nothing of them is read or shipped to another replica.
   */
  #withoutLogBefore(index: number, pending: PendingHistory | undefined): void {
    this.#state.forgetAll();
    this.#recent.clear();
    this.historyFrom = undefined;
    this.#logFloor = index + 1;
    this.#pending = pending;
    this.historyGeneration++;
    const g = this.groupId;
    this.#host.writeRows((b) => {
      b.delRange(indexKey(g, 0), groupKey(prefixOffsetIndex, g + 1));
      b.delRange(entryKey(g, 0), entryKey(g, index + 1));
      if (pending === undefined) b.del(groupKey(prefixHistoryPending, g));
      else b.put(groupKey(prefixHistoryPending, g), encodePending(pending));
    });
    this.#writeApplied();
  }

  /**
   * The first entry of the log this replica holds while the log before its snapshot is not all here
   * (history being fetched, or given up): entries below it in the KV are not yet (or no longer) part
   * of its log.
   */
  #logFloor: number | undefined;

  /** Told when a snapshot was installed without the log before it (the caller fetches `pendingHistory`). */
  onRestoredWithoutLog: (() => void) | undefined;

  /**
   * The first raft entry this replica serves to another one (FetchLog): undefined when it holds its
   * log from its retained start on; the entry after its snapshot while the log before it is not all
   * here (entries below it in the KV are a part of it at most).
   */
  get logFloor(): number | undefined {
    return this.#logFloor;
  }

  /**
   * While the log before an installed snapshot is being fetched back: the offset it starts at. Those
   * events count as held (bounds say so) but are read from another replica until they are here.
   */
  historyFrom: number | undefined;

  /** The oldest offset this replica reads itself (bounds() also counts the history being fetched). */
  get localOldest(): number {
    return this.#state.oldest;
  }

  /**
   * Where this replica holds its log from, as an image's `start` (partition-state.ts): the first raft
   * entry it stores (retention removed those before) and the offset the first event after it takes.
   * Entries between it and the batch holding the oldest offset took no offsets (no-ops, configuration
   * changes; retention cuts at a batch).
   */
  async logStart(): Promise<readonly [number, number]> {
    const s = this.#state;
    const oldest = s.oldest;
    const next = s.newest + 1;
    const g = this.groupId;
    // Still fetching the log before its snapshot: the log this replica's group holds starts where that
    // fetch starts (other replicas hold it, and this one will). A follower sent this replica's
    // snapshot then fetches that log too, from a replica that holds it; named as starting after the
    // snapshot, that follower would drop its own older events and never fetch them back.
    if (this.#pending !== undefined) return [this.#pending.fromIndex, this.#pending.fromOffset];
    if (this.#logFloor !== undefined) return [this.#logFloor, oldest];
    let first: number | undefined;
    for await (const [k] of this.#kv.iterate({ gte: entryKey(g, 0), lt: entryKey(g, Number.MAX_SAFE_INTEGER), limit: 1 })) first = entryKeyIndex(k);
    first ??= this.#group.store.storage.lastIndex() + 1;
    let row: IndexRow | undefined;
    for await (const [k, v] of this.#kv.iterate({ gte: indexKey(g, oldest), lt: groupKey(prefixOffsetIndex, g + 1), limit: 1 })) row = decodeIndexRow(k, v);
    if (row === undefined) {
      const i = this.#recent.lowerBoundLast(oldest);
      if (i < this.#recent.length) row = this.#recent.row(i);
    }
    return [first, row === undefined ? next : row.first];
  }

  /**
   * Stores entries of the log before the snapshot this replica started from, fetched from another
   * replica (history, oldest first, contiguous), with the index rows that applying them from
   * `scratch` gives (the same rules as apply, so the same offsets as on the replica they came from).
   * The live state does not change; `extendBack` makes them readable once all are here.
   */
  async storeHistory(entries: readonly Entry[], scratch: PartitionState, below: number): Promise<void> {
    const rows: NewIndexRow[] = [];
    for (const e of entries) {
      if (e.type === 'confChange') {
        scratch.applyOther(e.index);
        continue;
      }
      const head = this.#checkedHead(e, scratch.newest + 1, true);
      if (head === undefined || head.kind === 'noop') scratch.applyOther(e.index);
      else if (head.kind === 'base') scratch.applyBase(e.index, head.base);
      else if (head.kind === 'seal') scratch.applySeal(e.index, head.timeline, head.floor);
      else rows.push(...indexRowsOf(e.index, head.appendTimeMs, head.batches, scratch.applyBatches(e.index, head.batches)));
    }
    // The history ends before the snapshot's next offset. A row at or past it (offsets that do not add
    // up: the answer starts elsewhere than it was taken to) is not written: it could replace the row
    // of a batch applied after the snapshot, and the removal of a failed try (`dropHistory`, offsets
    // below the snapshot's) would leave it behind, naming an entry that is not there.
    if (scratch.newest >= below) throw new HistoryMissingError(`the fetched log reaches offset ${scratch.newest} by index ${scratch.applied}, past the snapshot's last offset ${below - 1}`);
    const g = this.groupId;
    await this.#group.store.storeHistory(entries, (b) => {
      for (const row of rows) b.put(indexKey(g, row.last), encodeIndexRow(row));
    });
  }

  /**
   * The fetched history (`pending`) is all here: it is readable. The record of the pending fetch goes
   * in the same write as the applied state saying so; anything stored below the history's start (left
   * by a fetch a later snapshot replaced) is removed with it, so the log starts where it says.
   */
  extendBack(pending: PendingHistory): void {
    this.#state.extendBack(pending.fromOffset);
    this.historyFrom = undefined;
    this.#logFloor = undefined;
    this.#pending = undefined;
    const g = this.groupId;
    this.#host.writeRows((b) => {
      b.del(groupKey(prefixHistoryPending, g));
      b.delRange(indexKey(g, 0), indexKey(g, pending.fromOffset));
      b.delRange(entryKey(g, 0), entryKey(g, pending.fromIndex));
    });
    this.#writeApplied();
  }

  /**
   * The history could not be fetched from any replica (their retention went past it): this replica
   * reads from its snapshot on, as if its own retention had gone that far, and stops looking for it.
   */
  async abandonHistory(pending: PendingHistory): Promise<void> {
    await this.dropHistory(pending.fromOffset, pending.next, pending.fromIndex, pending.index);
    this.#pending = undefined;
    await this.#kv.write((b) => b.del(groupKey(prefixHistoryPending, this.groupId)), { durable: false });
  }

  /**
   * Removes what a failed fetch of history stored (rows for offsets [from, to), entries [fromIndex,
   * toIndex]), in a write of its own that is done before the fetch is tried again (a removal queued
   * for the node's next write could land after the next try's entries).
   */
  async dropHistory(from: number, to: number, fromIndex: number, toIndex: number): Promise<void> {
    this.historyFrom = undefined;
    const g = this.groupId;
    await this.#kv.write((b) => {
      if (to > from) b.delRange(indexKey(g, from), indexKey(g, to));
      if (toIndex >= fromIndex) b.delRange(entryKey(g, fromIndex), entryKey(g, toIndex + 1));
    }, { durable: false });
  }

  /**
   * Bytes the group's log holds in memory (the memory tail, applied entries and those not applied yet:
   * MemoryStorage.bytes(), each entry's data and the objects around it), as of the last syncTailBytes().
   * Counted from the log itself, so entries that stay in memory after a compaction count too (the
   * node's budget is a bound in bytes).
   */
  tailBytes = 0;
  /** Told every change of tailBytes (the node's budget for all memory tails). */
  onTailBytes: ((delta: number) => void) | undefined;

  /** Brings tailBytes to what the group's memory log holds now (after entries came or left). */
  syncTailBytes(): void {
    // Replayed at open, before its group is attached: counted once attached.
    if (this.#group === undefined) return;
    const now = this.#group.store.storage.bytes();
    const delta = now - this.tailBytes;
    if (delta === 0) return;
    this.tailBytes = now;
    this.onTailBytes?.(delta);
  }

  /** Drops the in-memory index of batches whose entries left the memory tail (after compaction). */
  forgetBefore(raftIndex: number): void {
    this.syncTailBytes();
    this.#recent.dropBefore(raftIndex);
  }

  // ------------------------------------------------------------------ reads

  /**
   * How a stored entry that fails its checks is replaced by the same committed entry of another
   * replica (PartitionReplicas): 'alone' when this node holds the only replica. Absent: no repair.
   */
  repairEntries: ((from: number, to: number) => Promise<'repaired' | 'alone'>) | undefined;
  /** Repairs under way, by entry index (reads that meet the same corrupt entry wait for one repair). */
  readonly #repairs = new Map<number, Promise<void>>();

  async read(after: Offset, maxEvents: number, maxBytes: number): Promise<StoredEventView[]> {
    for (let repairs = 0; ; repairs++) {
      try {
        return await this.#read(after, maxEvents, maxBytes);
      } catch (err) {
        if (!(err instanceof RaftRecordCorruptError) || repairs >= repairsPerReadMax) throw err;
        await this.#repairStored(err, after + 1);
      }
    }
  }

  /**
   * A stored entry failed its record's checks (its CRC32C) when read from the KV. It is committed
   * (reads and log shipping only take applied entries), so every replica that holds it holds the same
   * bytes: it is fetched from another one, checked, and written over the corrupt record; the read
   * then goes on. A node holding the only replica has nothing to repair it from: the partition
   * refuses reads with a message saying so. A repair that fails for now (no replica answered) fails
   * this read as unavailable (retriable); the next read tries again. Never a corrupt or skipped event.
   */
  async #repairStored(err: RaftRecordCorruptError, offset: number): Promise<void> {
    const index = entryKeyIndex(err.key);
    let p = this.#repairs.get(index);
    if (p === undefined) {
      p = (async () => {
        const where = { topic: this.topic, partition: this.partition, group: this.groupId, index };
        const outcome = this.repairEntries === undefined ? 'alone' : await this.repairEntries(index, index).catch((e: unknown) => e as Error);
        if (outcome === 'repaired') {
          this.#logger.warn({ ...where, err: err.reason }, 'repaired a corrupt partition raft entry from another replica');
          return;
        }
        if (outcome === 'alone') throw this.#damaged(offset, `raft entry ${index}: ${err.reason}; this node holds the only replica of the partition, there is none to repair it from`);
        this.#logger.error({ ...where, err: err.reason, repair: outcome.message }, 'a corrupt partition raft entry could not be repaired from another replica yet; reads of it fail until it is');
        throw new PartitionUnavailableError(this.topic, this.partition, new Error(`raft entry ${index} is corrupt on this node and no other replica could replace it yet (${outcome.message})`));
      })().finally(() => this.#repairs.delete(index));
      this.#repairs.set(index, p);
    }
    await p;
  }

  async #read(after: Offset, maxEvents: number, maxBytes: number): Promise<StoredEventView[]> {
    if (this.#corrupt !== undefined) throw this.#corrupt;
    const s = this.#state;
    if (after < s.oldest - 1) throw new OffsetExpiredError(this.topic, this.partition, after, s.oldest);
    if (after > s.newest) throw new OffsetNotYetAvailableError(this.topic, this.partition, after, s.newest);
    const newest = s.newest;
    const out: StoredEventView[] = [];
    let next = after + 1;
    let bytes = 0;
    /** The events of the entry decoded last (consecutive rows often share an entry). */
    let decoded: { index: number; events: Buffer[] } | undefined;
    /** Takes the events of one indexed batch; false once the read is full. */
    const take = (row: IndexRow, e: Entry | undefined): boolean => {
      if (e === undefined || e.index !== row.raftIndex) {
        // Retention removed it while this read ran: the reader starts again at the oldest offset.
        const oldest = Math.max(this.#state.oldest, this.#removingBelow ?? 0);
        if (next < oldest) throw new OffsetExpiredError(this.topic, this.partition, after, oldest);
        throw this.#damaged(next, `raft entry ${row.raftIndex} of the batch ${row.first}..${row.last} is missing`);
      }
      if (row.first > next) {
        if (next < this.#state.oldest) throw new OffsetExpiredError(this.topic, this.partition, after, this.#state.oldest);
        throw this.#damaged(next, `offsets ${next}..${row.first - 1} are missing`);
      }
      if (decoded?.index !== e.index) {
        const data = Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength);
        try {
          // Checked once already: at apply (an entry in memory) or by its record's CRC (read from the KV).
          if (decodeEntryHead(data, true).kind !== 'batches') throw new PartitionEntryError('entry holds no events');
          decoded = { index: e.index, events: batchEvents(data) };
        } catch (err) {
          throw this.#damaged(next, `raft entry ${e.index}: ${(err as Error).message}`);
        }
      }
      const events = decoded.events;
      if (row.position + row.last - row.first + 1 > events.length) throw this.#damaged(next, `raft entry ${e.index} does not hold the batch ${row.first}..${row.last}`);
      const at = row.position - row.first;
      for (let o = next; o <= row.last; o++) {
        if (o > newest || out.length >= maxEvents || bytes >= maxBytes) return false;
        const ev = events[at + o]!;
        out.push({ offset: o as Offset, bytes: ev });
        bytes += ev.length;
        next = o + 1;
      }
      return out.length < maxEvents && bytes < maxBytes && next <= newest;
    };
    const mem = this.#group.store.storage;
    // Entries log shipping stored and applied here beside the group (storeFetched) are read from the
    // KV: until the group installs the leader's snapshot, its memory tail may hold other, uncommitted
    // entries at those indices (a follower's tail of an older term; host simulation, seed 60:
    // 'raft entry 6: entry holds no events', and the replica refused reads for good). Below the
    // snapshot once it is installed, they are not in the memory tail then anyway.
    const memFirstIndex = (): number => Math.max(mem.firstIndex(), this.#shippedTo + 1);
    const memEntry = (i: number): Entry | undefined => (i >= memFirstIndex() && i <= mem.lastIndex() ? mem.entries(i, i + 1, Number.MAX_SAFE_INTEGER)[0] : undefined);
    if (next > newest) return out;
    // 1. Batches older than the in-memory index: the offset index rows holding the wanted events (one
    //    iterator, sized by how many events a row held so far), then their entries: those still in
    //    the memory tail from there, the others in one bounded iterator over the Raft log (entries
    //    between indexed batches are skipped: no-ops, configuration changes, refused duplicates).
    // The bound between the two parts is taken again after each pass over the KV: a memory compaction
    // that ends while this read awaits the KV moves rows from the in-memory index there, and the read
    // goes on from where it stopped, in the KV again (host simulation, seed 174: 'offsets 13..21 are
    // missing' when part 2 started after where part 1 stopped).
    const recentFirstNow = (): number => (this.#recent.length > 0 ? this.#recent.firstAt(0) : Number.MAX_SAFE_INTEGER);
    for (let recentFirst = recentFirstNow(); next < recentFirst && next <= newest; recentFirst = recentFirstNow()) {
      const recentEmpty = this.#recent.length === 0;
      const rows: IndexRow[] = [];
      let events = 0;
      const capacity = Math.min(rowsPerReadMax, Math.max(4, Math.ceil(maxEvents / this.#eventsPerRow) + 1));
      for await (const [k, v] of this.#kv.iterate({ gte: indexKey(this.groupId, next), lt: groupKey(prefixOffsetIndex, this.groupId + 1), capacity })) {
        const row = decodeIndexRow(k, v);
        if (row.first >= recentFirst) break;
        rows.push(row);
        events += row.last - Math.max(row.first, next) + 1;
        if (events >= maxEvents || rows.length >= rowsPerReadMax) break;
      }
      if (rows.length > 1) this.#eventsPerRow = Math.max(1, (this.#eventsPerRow + (rows[rows.length - 1]!.last - rows[0]!.first + 1) / rows.length) / 2);
      const memFirst = memFirstIndex();
      const stored = rows.filter((row) => row.raftIndex < memFirst);
      let entries: AsyncIterator<Entry> | undefined;
      if (stored.length > 0) {
        const from = stored[0]!.raftIndex;
        const to = stored[stored.length - 1]!.raftIndex;
        entries = this.#group.store.readStored(from, to + 1, Math.min(rowsPerReadMax, to - from + 1))[Symbol.asyncIterator]();
      }
      let last: Entry | undefined;
      try {
        for (const row of rows) {
          let e = last?.index === row.raftIndex ? last : row.raftIndex >= memFirst ? memEntry(row.raftIndex) : undefined;
          if (e === undefined && entries !== undefined) {
            for (;;) {
              const r = await entries.next();
              if (r.done === true) break;
              if (r.value.index >= row.raftIndex) {
                e = r.value;
                break;
              }
            }
          }
          last = e;
          if (!take(row, e)) return out;
        }
      } finally {
        await entries?.return?.();
      }
      // As many rows as one read takes, and room left: the caller reads on from here.
      if (rows.length >= rowsPerReadMax) return out;
      if (next < recentFirst && next <= newest) {
        if (next < this.#state.oldest) throw new OffsetExpiredError(this.topic, this.partition, after, this.#state.oldest);
        if (recentEmpty) throw this.#damaged(next, 'no index row holds this offset');
        break; // the KV holds no row up to the bound: part 2 names what is missing
      }
    }
    // 2. Recent batches: the in-memory index and the Raft log's memory tail. The rows this read can
    //    take are copied out first: the index changes in place while the read awaits a stored entry.
    const r = this.#recent;
    const lo = r.lowerBoundLast(next);
    const hi = Math.min(r.length, r.lowerBoundLast(Math.min(newest, next + maxEvents - 1)) + 1);
    const rows: RecentRow[] = [];
    for (let i = lo; i < hi; i++) rows.push(r.row(i));
    let prev: Entry | undefined;
    for (const row of rows) {
      if (next > newest) break;
      let e = prev?.index === row.raftIndex ? prev : memEntry(row.raftIndex);
      if (e === undefined) for await (const x of this.#group.store.readStored(row.raftIndex, row.raftIndex + 1)) e = x;
      prev = e;
      if (!take(row, e)) return out;
    }
    return out;
  }

  #damaged(offset: number, why: string): CorruptBatchError {
    const err = new CorruptBatchError(this.topic, this.partition, offset, why);
    if (this.#corrupt === undefined) {
      this.#corrupt = err;
      this.#logger.error({ topic: this.topic, partition: this.partition, group: this.groupId, offset, err: why }, 'partition replica refuses reads: corrupt raft entry');
    }
    return err;
  }

  /**
   * Removes the batches appended before `cutoffMs`, oldest first, from the offset index and the Raft
   * log (log truncation below a watermark). Entries still in the group's memory tail are first
   * dropped from memory (`compactTo`): a follower that still needs them is then sent a snapshot and
   * fetches what the leader still holds. Retention is decided by each replica on its own clock:
   * replicas may differ in their oldest offset for a while, never in the events at an offset.
   */
  /** While retention's removal is being written: the oldest offset it leaves. */
  #removingBelow: number | undefined;

  async applyRetention(cutoffMs: number, compactTo: (raftIndex: number) => Promise<void>): Promise<number> {
    let cut: IndexRow | undefined;
    /** Whether the removal takes every stored row, the newest too. */
    let all = true;
    for await (const [k, v] of this.#kv.iterate({ gte: indexKey(this.groupId, 0), lt: groupKey(prefixOffsetIndex, this.groupId + 1), capacity: 256 })) {
      const row = decodeIndexRow(k, v);
      // Only what the group applied: rows of entries log shipping applied here before the snapshot
      // that brings the group there is installed (its install refused by a full disk, or still to
      // come) name entries past the group's `applied`, and memory cannot be compacted beyond it (host
      // simulation seed 2187: the node stopped on that invariant). PartitionReplicas does not call
      // retention meanwhile (`aheadOfGroup`); this keeps the method safe on its own.
      if (row.appendTimeMs >= cutoffMs || row.last > this.#state.newest || row.raftIndex > this.#group.applied) {
        all = false;
        break;
      }
      cut = row;
    }
    if (cut === undefined) return 0;
    const before = this.#state.oldest;
    const last = cut;
    if (last.raftIndex >= this.#group.store.storage.firstIndex()) await compactTo(last.raftIndex);
    // The newest index row may be what says where the applied state stands (see the header): when the
    // removal takes it, the applied row goes first, in a write before the removal's. (Without it, a
    // start after a crash between the two would find an older applied index and no row, and start
    // from the snapshot the removal's compaction took, as a replica that installed it without its log.)
    if (all) {
      this.#writeApplied();
      await this.#host.flushRows();
    }
    // Reads that meet the removal (rows found, their entries gone by the time they are read) answer
    // expired, not corrupt (see `take`).
    this.#removingBelow = last.last + 1;
    try {
      await this.#kv.write((b) => {
        b.delRange(indexKey(this.groupId, 0), indexKey(this.groupId, last.last + 1));
        b.delRange(entryKey(this.groupId, 0), entryKey(this.groupId, last.raftIndex + 1));
      }, { durable: false });
      this.#state.truncateBefore(last.last + 1);
    } finally {
      this.#removingBelow = undefined;
    }
    if (this.#logFloor !== undefined && this.#logFloor <= last.raftIndex) this.#logFloor = undefined;
    this.forgetBefore(last.raftIndex + 1);
    this.#writeApplied();
    return Math.max(0, last.last + 1 - before);
  }

  waitForEvents(after: Offset, signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.#state.newest > after) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.#waiters.delete(check);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const check = (): void => {
        if (this.#state.newest > after) done();
      };
      this.#waiters.add(check);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }

  /**
   * Raft entries [from, to] of this replica's log in chunks of about `maxBytes` (log shipping to a
   * follower behind the leader's memory tail): from the KV, then from memory. The first chunk starts
   * later than `from` when retention removed the entries before it.
   */
  async *readLog(from: number, to: number, maxBytes: number, signal: AbortSignal): AsyncIterable<Entry[]> {
    const mem = this.#group.store.storage;
    let chunk: Entry[] = [];
    let bytes = 0;
    let next = from;
    const full = () => chunk.length > 0 && bytes >= maxBytes;
    for (let repairs = 0; next < mem.firstIndex(); repairs++) {
      try {
        for await (const e of this.#group.store.readStored(next, Math.min(to + 1, mem.firstIndex()))) {
          if (signal.aborted) return;
          chunk.push(e);
          bytes += e.data.byteLength;
          next = e.index + 1;
          if (full()) {
            yield chunk;
            chunk = [];
            bytes = 0;
          }
        }
      } catch (err) {
        // A corrupt stored entry is replaced from another replica before it is shipped (never skipped).
        if (!(err instanceof RaftRecordCorruptError) || repairs >= repairsPerReadMax) throw err;
        await this.#repairStored(err, -1);
        continue;
      }
      next = Math.max(next, mem.firstIndex());
    }
    while (next <= Math.min(to, mem.lastIndex()) && !signal.aborted) {
      for (const e of mem.entries(next, Math.min(to, mem.lastIndex()) + 1, Math.max(1, maxBytes - bytes))) {
        chunk.push(e);
        bytes += e.data.byteLength;
        next = e.index + 1;
      }
      if (full() || next > Math.min(to, mem.lastIndex())) {
        if (chunk.length > 0) yield chunk;
        chunk = [];
        bytes = 0;
      }
    }
    if (chunk.length > 0) yield chunk;
  }

  /**
   * Stores entries fetched from the leader (log shipping) and applies them: they are committed (at or
   * before the leader's snapshot index) and follow this replica's applied index without a gap.
   * Returns false when they do not (the leader's log starts after what this replica applied: the
   * events in between are gone everywhere and this replica cannot continue by itself).
   * The entries are written (a write of their own) before they are applied: applying makes their
   * offsets readable, and they are in no memory tail, so a read must find them in the KV. Queued for
   * the node's next write instead, a read while that write waited (behind a slow fsync) found the
   * index row but not its entry, and the replica refused reads for good (host simulation, seed 20).
   * A crash between the two writes leaves entries past the applied index: the leader's snapshot is
   * sent again and they are fetched and written over. `current` says whether the replica is still
   * hosted once the write is done (it applies nothing otherwise).
   */
  async storeFetched(entries: readonly Entry[], current: () => boolean = () => true): Promise<boolean> {
    const first = entries[0];
    if (first === undefined) return true;
    if (first.index !== this.#state.applied + 1) return false;
    await this.#group.store.storeFetched(entries);
    if (!current()) return true;
    if (first.index !== this.#state.applied + 1) return false;
    for (const e of entries) this.replay(e);
    this.#shippedTo = Math.max(this.#shippedTo, this.#state.applied);
    return true;
  }

  /** Wakes every waiter for good (the replica is closing). */
  release(): void {
    for (const w of [...this.#waiters]) w();
    this.#waiters.clear();
  }
}

/**
 * The most events in one of an entry's batches. A loop, not `batches.some((b) => ...)`: that arrow is
 * a new closure at every applied entry, and V8 keeps a closure's optimized code only while some
 * closure of it lives, so after each full GC the arrow ran unoptimized and was compiled again (about
 * once per node every few seconds on a warm cluster; docs/benchmarks.md, "V8 on a warm cluster").
 */
function largestBatch(batches: readonly { readonly count: number }[]): number {
  let max = 0;
  for (const b of batches) if (b.count > max) max = b.count;
  return max;
}
