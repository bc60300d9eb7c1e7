/**
 * The durable log as the core sees it, and an in-memory implementation.
 *
 * The host implements `Storage` over whatever it persists (RocksDB in Brook). The core only reads
 * through it; every write goes the other way, through Ready: the host appends `ready.entries`,
 * installs `ready.snapshot` and records `ready.hardState`, then calls `advance()`. So the interface
 * describes exactly what has been made durable, never what is merely in flight.
 *
 * The interface is synchronous, like etcd's: the core runs to completion on every input. A host whose
 * store is asynchronous keeps the log tail (everything after the latest snapshot) in memory, which
 * it needs anyway to feed followers without a disk read.
 *
 * Contract for implementations:
 * - Indexes in storage are contiguous: (snapshot index, lastIndex]. `term(firstIndex() - 1)` is the
 *   snapshot's term, so the core can check the entry before the first stored one.
 * - Appending entries that start at index i discards every stored entry at i or later first (a new
 *   leader may overwrite an uncommitted suffix).
 * - Errors are thrown as the classes below; any other exception is treated as fatal.
 */
import { assert } from '../core/assert.js';
import { applyConfChangeToState, decodeConfChange } from './confchange.js';
import type { ConfState, Entry, HardState, Index, Snapshot, Term } from './types.js';
import { assertIndex, emptyHardState, entryBytes } from './types.js';

/** The requested index is at or before the latest snapshot: its entry is gone. */
export class CompactedError extends Error {
  override name = 'CompactedError';
}

/** The requested index is after the last stored entry. */
export class UnavailableError extends Error {
  override name = 'UnavailableError';
}

/** The host cannot produce a snapshot right now (it is being built); the core retries later. */
export class SnapshotTemporarilyUnavailableError extends Error {
  override name = 'SnapshotTemporarilyUnavailableError';
}

export interface InitialState {
  readonly hardState: HardState;
  /** The configuration as of the host's applied index (`RaftConfig.applied`). */
  readonly confState: ConfState;
}

export interface Storage {
  initialState(): InitialState;
  /**
   * Entries in [lo, hi), stopping early once their total payload exceeds `maxBytes`, but always at
   * least one entry when lo < hi. Throws CompactedError if lo <= snapshot index, UnavailableError if
   * hi > lastIndex() + 1.
   */
  entries(lo: Index, hi: Index, maxBytes: number): Entry[];
  /** Term of entry i, for i in [firstIndex() - 1, lastIndex()]. Throws as `entries` does. */
  term(i: Index): Term;
  /** Index of the first entry still stored: snapshot index + 1. */
  firstIndex(): Index;
  /** Index of the last stored entry, or the snapshot index if no entry follows it. */
  lastIndex(): Index;
  /** The latest snapshot. May throw SnapshotTemporarilyUnavailableError. */
  snapshot(): Snapshot;
}

/** Returns the prefix of `entries` whose payload fits `maxBytes`, never fewer than one entry. */
export function limitBytes(entries: Entry[], maxBytes: number): Entry[] {
  if (entries.length === 0) return entries;
  let size = entryBytes(entries[0]!);
  let n = 1;
  while (n < entries.length) {
    size += entryBytes(entries[n]!);
    if (size > maxBytes) break;
    n++;
  }
  return n === entries.length ? entries : entries.slice(0, n);
}

/**
 * Storage held in memory: the simulator's durable disk, the tests' fixture, and a model for hosts.
 * `ents[0]` is a dummy entry standing for the snapshot (its index and term), as in etcd, so that
 * `term(firstIndex() - 1)` needs no special case.
 */
/**
 * What an entry held in memory is counted as: its data plus the objects around it (the entry, its
 * Uint8Array and ArrayBuffer, the backing store's allocation, the array slot), about 250 bytes on V8
 * x64. Without them a log of many small entries would hold several times the bytes it is bounded by.
 */
export const entryOverheadBytes = 256;

function heldBytes(e: Entry): number {
  return e.data.byteLength + entryOverheadBytes;
}

export class MemoryStorage implements Storage {
  #hardState: HardState = emptyHardState;
  #snapshot: Snapshot;
  #ents: Entry[];
  /** Bytes held for the entries (heldBytes each; the dummy entry counts none): what a memory bound counts. */
  #bytes = 0;

  constructor(snapshot?: Snapshot) {
    this.#snapshot = snapshot ?? {
      metadata: { index: 0, term: 0, confState: { voters: [], learners: [] } },
      data: new Uint8Array(0),
    };
    this.#ents = [this.#dummy(this.#snapshot.metadata.index, this.#snapshot.metadata.term)];
  }

  #dummy(index: Index, term: Term): Entry {
    return { index, term, type: 'normal', data: new Uint8Array(0) };
  }

  #offset(): Index {
    return this.#ents[0]!.index;
  }

  /**
   * The configuration as of the snapshot. A host that applies beyond its snapshot durably must
   * return the configuration as of its own applied index instead; the simulator restarts its state
   * machine from the snapshot, so this is exact there.
   */
  initialState(): InitialState {
    return { hardState: this.#hardState, confState: this.#snapshot.metadata.confState };
  }

  /** The configuration after replaying conf changes up to `applied` on top of the snapshot. */
  confStateAt(applied: Index): ConfState {
    let conf = this.#snapshot.metadata.confState;
    assert(applied >= this.#offset(), `applied ${applied} is before the snapshot ${this.#offset()}`);
    for (const e of this.#ents.slice(1, applied - this.#offset() + 1)) {
      if (e.type === 'confChange') conf = applyConfChangeToState(conf, decodeConfChange(e.data));
    }
    return conf;
  }

  hardState(): HardState {
    return this.#hardState;
  }

  setHardState(hs: HardState): void {
    assertIndex(hs.term, 'hard state term');
    assertIndex(hs.commit, 'hard state commit');
    this.#hardState = hs;
  }

  entries(lo: Index, hi: Index, maxBytes: number): Entry[] {
    const offset = this.#offset();
    if (lo <= offset) throw new CompactedError(`entries from ${lo}: compacted up to ${offset}`);
    if (hi > this.lastIndex() + 1) throw new UnavailableError(`entries to ${hi}: last is ${this.lastIndex()}`);
    assert(lo <= hi, `entries range [${lo}, ${hi}) is inverted`);
    if (lo === hi) return [];
    return limitBytes(this.#ents.slice(lo - offset, hi - offset), maxBytes);
  }

  term(i: Index): Term {
    const offset = this.#offset();
    if (i < offset) throw new CompactedError(`term of ${i}: compacted up to ${offset}`);
    if (i - offset >= this.#ents.length) throw new UnavailableError(`term of ${i}: last is ${this.lastIndex()}`);
    return this.#ents[i - offset]!.term;
  }

  firstIndex(): Index {
    return this.#offset() + 1;
  }

  lastIndex(): Index {
    return this.#offset() + this.#ents.length - 1;
  }

  snapshot(): Snapshot {
    return this.#snapshot;
  }

  /** Bytes held in memory for the entries after the snapshot, applied or not (heldBytes each). */
  bytes(): number {
    return this.#bytes;
  }

  /**
   * The lowest index to compact to (`compact`) so that at most `keepBytes` of entry data stay in memory,
   * never beyond `upTo`: entries from the first are dropped while the rest is above the bound. Returns
   * firstIndex() - 1 when nothing need go.
   */
  compactIndexKeeping(keepBytes: number, upTo: Index): Index {
    const offset = this.#offset();
    let bytes = this.#bytes;
    let i = offset;
    const last = Math.min(upTo, this.lastIndex());
    while (bytes > keepBytes && i < last) {
      i++;
      bytes -= heldBytes(this.#ents[i - offset]!);
    }
    return i;
  }

  /** Replaces the whole log with a snapshot received from the leader (Ready.snapshot). */
  applySnapshot(snap: Snapshot): void {
    const idx = snap.metadata.index;
    if (idx <= this.#snapshot.metadata.index) {
      // An older snapshot than ours: installing it would move the log backwards.
      throw new CompactedError(`snapshot ${idx} is not newer than ${this.#snapshot.metadata.index}`);
    }
    this.#snapshot = snap;
    this.#ents = [this.#dummy(idx, snap.metadata.term)];
    this.#bytes = 0;
  }

  /**
   * Records a snapshot of the host's state machine at `index` (which the host has applied) so that
   * lagging followers can be sent it. Does not discard entries; call `compact` for that.
   */
  createSnapshot(index: Index, confState: ConfState, data: Uint8Array): Snapshot {
    // The same index again replaces the state machine's data (a host whose image changed without a
    // new entry: a partition's retention), never what the log holds.
    assert(index >= this.#snapshot.metadata.index, `snapshot ${index} is older than the current one`);
    assert(index <= this.lastIndex(), `snapshot ${index} is beyond the last entry ${this.lastIndex()}`);
    const term = this.term(index);
    this.#snapshot = { metadata: { index, term, confState }, data };
    return this.#snapshot;
  }

  /** Discards entries up to and including `compactIndex` (which must be covered by a snapshot). */
  compact(compactIndex: Index): void {
    const offset = this.#offset();
    if (compactIndex <= offset) return;
    assert(compactIndex <= this.lastIndex(), `compact ${compactIndex} beyond last ${this.lastIndex()}`);
    assert(
      compactIndex <= this.#snapshot.metadata.index,
      `compact ${compactIndex} beyond snapshot ${this.#snapshot.metadata.index}`,
    );
    const i = compactIndex - offset;
    for (let k = 1; k <= i; k++) this.#bytes -= heldBytes(this.#ents[k]!);
    this.#ents = [this.#dummy(compactIndex, this.#ents[i]!.term), ...this.#ents.slice(i + 1)];
  }

  /** Appends entries, first discarding any stored entry at or after the first new index. */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = entries[0]!.index;
    for (let k = 1; k < entries.length; k++) {
      assert(entries[k]!.index === first + k, 'appended entries are not contiguous');
    }
    const offset = this.#offset();
    const last = first + entries.length - 1;
    if (last <= offset) return; // entirely covered by the snapshot already
    let ents = entries;
    if (first <= offset) ents = entries.slice(offset + 1 - first);
    const start = ents[0]!.index;
    assert(start <= this.lastIndex() + 1, `append at ${start} leaves a gap after ${this.lastIndex()}`);
    for (let k = start - offset; k < this.#ents.length; k++) this.#bytes -= heldBytes(this.#ents[k]!);
    this.#ents.length = start - offset;
    for (const e of ents) {
      this.#bytes += heldBytes(e);
      this.#ents.push(e);
    }
  }
}
