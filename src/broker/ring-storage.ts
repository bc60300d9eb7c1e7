/**
 * A partition group's memory tail (the core's synchronous view of its durable log, raft-log-store.ts)
 * with the entries' bytes in the node's slabs (byte-slabs.ts) and their index, term, kind and place
 * in number columns: no object and no buffer per entry is kept. Same contract and the same byte count
 * as MemoryStorage (src/raft/storage.ts), which the metadata group and the simulations keep using.
 *
 * Readers get copies: `entries` hands out entries whose data has its own memory. A view into a slab
 * would be overwritten under its reader once the entry is compacted or truncated and the slab reused
 * (silent corruption), and readers keep entries across awaits (reads, log shipping, apply).
 * An entry the slabs have no room for keeps its own buffer, as MemoryStorage keeps every one.
 */
import { assert, invariantFailed } from '../core/assert.js';
import { isChecked, markChecked } from '../log/partition-entry.js';
import { applyConfChangeToState, CompactedError, decodeConfChange, emptyHardState, UnavailableError } from '../raft/index.js';
import type { ConfState, Entry, HardState, Index, InitialState, Snapshot, Term } from '../raft/index.js';
import { entryOverheadBytes } from '../raft/storage.js';
import { assertIndex } from '../raft/types.js';
import type { ByteSlabs } from './byte-slabs.js';

/** handle column: the entry has no data. */
const noData = -2;
/** handle column: the entry's data is its own buffer (`#owned`), the slabs had no room. */
const ownBuffer = -1;
const flagConfChange = 1;
/** Its checksum was checked (or it was encoded here): its copies are marked so, and apply does not check again. */
const flagChecked = 2;

/** Releases the slab space of stores dropped without `release` (a store nothing refers to any more). */
const unreachable = new FinalizationRegistry<{ slabs: ByteSlabs; cols: Columns }>((held) => freeAll(held.slabs, held.cols));

interface Columns {
  /** Ring positions: entry k (0-based after the snapshot) sits at (head + k) & (cap - 1). */
  head: number;
  count: number;
  term: Float64Array;
  handle: Float64Array;
  len: Float64Array;
  flags: Uint8Array;
  owned: Array<Uint8Array | undefined>;
}

function columns(cap: number): Columns {
  return { head: 0, count: 0, term: new Float64Array(cap), handle: new Float64Array(cap), len: new Float64Array(cap), flags: new Uint8Array(cap), owned: new Array<Uint8Array | undefined>(cap).fill(undefined) };
}

function freeAt(slabs: ByteSlabs, c: Columns, p: number): void {
  const h = c.handle[p]!;
  if (h >= 0) slabs.free(h, c.len[p]!);
  c.handle[p] = noData;
  c.owned[p] = undefined;
}

function freeAll(slabs: ByteSlabs, c: Columns): void {
  const mask = c.term.length - 1;
  for (let k = 0; k < c.count; k++) freeAt(slabs, c, (c.head + k) & mask);
  c.count = 0;
}

export class RingStorage {
  readonly #slabs: ByteSlabs;
  #hardState: HardState = emptyHardState;
  #snapshot: Snapshot;
  /** Index and term of the entry before the first held (the snapshot's, or the last compacted one). */
  #offset: Index;
  #offsetTerm: Term;
  #c: Columns;
  /** Bytes held for the entries, counted as MemoryStorage counts them (data + entryOverheadBytes each). */
  #bytes = 0;
  /**
   * The entries of the last append as they came (entries are immutable): apply reads them right after
   * (in the same or the next turn), and gets them without a copy, its own buffer still marked as encoded
   * or checked. Kept only until the next append, compaction or snapshot.
   */
  #last: readonly Entry[] = [];
  /** The FinalizationRegistry's token (unregistered by `release`). */
  readonly #token = {};

  constructor(slabs: ByteSlabs, snapshot?: Snapshot) {
    this.#slabs = slabs;
    this.#snapshot = snapshot ?? { metadata: { index: 0, term: 0, confState: { voters: [], learners: [] } }, data: new Uint8Array(0) };
    this.#offset = this.#snapshot.metadata.index;
    this.#offsetTerm = this.#snapshot.metadata.term;
    this.#c = columns(16);
    unreachable.register(this, { slabs, cols: this.#c }, this.#token);
  }

  #pos(i: Index): number {
    return (this.#c.head + (i - this.#offset - 1)) & (this.#c.term.length - 1);
  }

  initialState(): InitialState {
    return { hardState: this.#hardState, confState: this.#snapshot.metadata.confState };
  }

  confStateAt(applied: Index): ConfState {
    let conf = this.#snapshot.metadata.confState;
    if (!(applied >= this.#offset)) invariantFailed(`applied ${applied} is before the snapshot ${this.#offset}`);
    for (let i = this.#offset + 1; i <= applied; i++) {
      const p = this.#pos(i);
      if ((this.#c.flags[p]! & flagConfChange) !== 0) conf = applyConfChangeToState(conf, decodeConfChange(this.#data(p)));
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

  /** The data of the entry at ring position p, in memory of its own. */
  #data(p: number): Uint8Array {
    const c = this.#c;
    const h = c.handle[p]!;
    if (h === noData) return new Uint8Array(0);
    if (h === ownBuffer) return c.owned[p]!;
    const d = this.#slabs.copy(h, c.len[p]!);
    if ((c.flags[p]! & flagChecked) !== 0) markChecked(d);
    return d;
  }

  #entry(i: Index): Entry {
    const p = this.#pos(i);
    const c = this.#c;
    return { index: i, term: c.term[p]!, type: (c.flags[p]! & flagConfChange) !== 0 ? 'confChange' : 'normal', data: this.#data(p) };
  }

  entries(lo: Index, hi: Index, maxBytes: number): Entry[] {
    if (lo <= this.#offset) throw new CompactedError(`entries from ${lo}: compacted up to ${this.#offset}`);
    if (hi > this.lastIndex() + 1) throw new UnavailableError(`entries to ${hi}: last is ${this.lastIndex()}`);
    if (!(lo <= hi)) invariantFailed(`entries range [${lo}, ${hi}) is inverted`);
    const out: Entry[] = [];
    let size = 0;
    // As limitBytes (src/raft/storage.ts): always the first, then while the total fits.
    const last = this.#last;
    const lastFirst = last.length > 0 ? last[0]!.index : Number.MAX_SAFE_INTEGER;
    for (let i = lo; i < hi; i++) {
      size += this.#c.len[this.#pos(i)]!;
      if (out.length > 0 && size > maxBytes) break;
      out.push(i >= lastFirst ? last[i - lastFirst]! : this.#entry(i));
    }
    return out;
  }

  term(i: Index): Term {
    if (i < this.#offset) throw new CompactedError(`term of ${i}: compacted up to ${this.#offset}`);
    if (i > this.lastIndex()) throw new UnavailableError(`term of ${i}: last is ${this.lastIndex()}`);
    return i === this.#offset ? this.#offsetTerm : this.#c.term[this.#pos(i)]!;
  }

  firstIndex(): Index {
    return this.#offset + 1;
  }

  lastIndex(): Index {
    return this.#offset + this.#c.count;
  }

  snapshot(): Snapshot {
    return this.#snapshot;
  }

  bytes(): number {
    return this.#bytes;
  }

  compactIndexKeeping(keepBytes: number, upTo: Index): Index {
    let bytes = this.#bytes;
    let i = this.#offset;
    const last = Math.min(upTo, this.lastIndex());
    while (bytes > keepBytes && i < last) {
      i++;
      bytes -= this.#c.len[this.#pos(i)]! + entryOverheadBytes;
    }
    return i;
  }

  applySnapshot(snap: Snapshot): void {
    const idx = snap.metadata.index;
    if (idx <= this.#snapshot.metadata.index) throw new CompactedError(`snapshot ${idx} is not newer than ${this.#snapshot.metadata.index}`);
    this.#snapshot = snap;
    this.#last = [];
    freeAll(this.#slabs, this.#c);
    this.#c.head = 0;
    this.#offset = idx;
    this.#offsetTerm = snap.metadata.term;
    this.#bytes = 0;
  }

  createSnapshot(index: Index, confState: ConfState, data: Uint8Array): Snapshot {
    assert(index >= this.#snapshot.metadata.index, `snapshot ${index} is older than the current one`);
    assert(index <= this.lastIndex(), `snapshot ${index} is beyond the last entry ${this.lastIndex()}`);
    const term = this.term(index);
    this.#snapshot = { metadata: { index, term, confState }, data };
    return this.#snapshot;
  }

  compact(compactIndex: Index): void {
    if (compactIndex <= this.#offset) return;
    assert(compactIndex <= this.lastIndex(), `compact ${compactIndex} beyond last ${this.lastIndex()}`);
    assert(compactIndex <= this.#snapshot.metadata.index, `compact ${compactIndex} beyond snapshot ${this.#snapshot.metadata.index}`);
    const c = this.#c;
    const mask = c.term.length - 1;
    const n = compactIndex - this.#offset;
    const term = this.term(compactIndex);
    this.#last = [];
    for (let k = 0; k < n; k++) {
      const p = (c.head + k) & mask;
      this.#bytes -= c.len[p]! + entryOverheadBytes;
      freeAt(this.#slabs, c, p);
    }
    c.head = (c.head + n) & mask;
    c.count -= n;
    this.#offset = compactIndex;
    this.#offsetTerm = term;
    // A tail that was long once (a lagging follower) does not keep its columns' size for good.
    if (c.term.length > 256 && c.count * 8 < c.term.length) this.#resize(c.term.length / 4);
  }

  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = entries[0]!.index;
    for (let k = 1; k < entries.length; k++) assert(entries[k]!.index === first + k, 'appended entries are not contiguous');
    const last = first + entries.length - 1;
    if (last <= this.#offset) return; // entirely covered by the snapshot already
    const from = first <= this.#offset ? this.#offset + 1 - first : 0;
    const start = first + from;
    if (!(start <= this.lastIndex() + 1)) invariantFailed(`append at ${start} leaves a gap after ${this.lastIndex()}`);
    // A conflicting suffix goes first (a new leader's overwrite).
    const c0 = this.#c;
    for (let i = this.lastIndex(); i >= start; i--) {
      const p = this.#pos(i);
      this.#bytes -= c0.len[p]! + entryOverheadBytes;
      freeAt(this.#slabs, c0, p);
      c0.count--;
    }
    this.#reserve(c0.count + entries.length - from);
    const c = this.#c;
    const mask = c.term.length - 1;
    for (let k = from; k < entries.length; k++) {
      const e = entries[k]!;
      const p = (c.head + c.count) & mask;
      const len = e.data.byteLength;
      c.term[p] = e.term;
      c.len[p] = len;
      c.flags[p] = (e.type === 'confChange' ? flagConfChange : 0) | (len > 0 && isChecked(e.data) ? flagChecked : 0);
      c.owned[p] = undefined;
      if (len === 0) c.handle[p] = noData;
      else {
        const h = this.#slabs.alloc(len);
        if (h < 0) {
          c.handle[p] = ownBuffer;
          c.owned[p] = e.data;
        } else {
          this.#slabs.write(h, e.data);
          c.handle[p] = h;
        }
      }
      c.count++;
      this.#bytes += len + entryOverheadBytes;
    }
    this.#last = from === 0 ? entries : entries.slice(from);
  }

  /** Room for n entries: the columns doubled when short. */
  #reserve(n: number): void {
    let cap = this.#c.term.length;
    if (n <= cap) return;
    while (cap < n) cap *= 2;
    this.#resize(cap);
  }

  /** New columns of `cap` positions, the entries copied in order from position 0. */
  #resize(cap: number): void {
    const old = this.#c;
    const c = columns(cap);
    const mask = old.term.length - 1;
    for (let k = 0; k < old.count; k++) {
      const p = (old.head + k) & mask;
      c.term[k] = old.term[p]!;
      c.handle[k] = old.handle[p]!;
      c.len[k] = old.len[p]!;
      c.flags[k] = old.flags[p]!;
      c.owned[k] = old.owned[p];
    }
    c.count = old.count;
    this.#c = c;
    // The registry holds the columns to free: the new ones from now on.
    unreachable.unregister(this.#token);
    unreachable.register(this, { slabs: this.#slabs, cols: c }, this.#token);
  }

  /** Entries held in buffers of their own (the slabs had no room for them when they came). */
  outsideSlabs(): number {
    const c = this.#c;
    const mask = c.term.length - 1;
    let n = 0;
    for (let k = 0; k < c.count; k++) if (c.handle[(c.head + k) & mask] === ownBuffer) n++;
    return n;
  }

  /**
   * The store is no longer the group's (the replica was dropped): its entries leave the slabs. What
   * may still read it (a read in flight) gets copies made here, so nothing refers to reused slab space.
   */
  release(): void {
    this.#last = [];
    const c = this.#c;
    const mask = c.term.length - 1;
    for (let k = 0; k < c.count; k++) {
      const p = (c.head + k) & mask;
      const h = c.handle[p]!;
      if (h < 0) continue;
      const d = this.#slabs.copy(h, c.len[p]!);
      this.#slabs.free(h, c.len[p]!);
      c.handle[p] = ownBuffer;
      c.owned[p] = d;
      if ((c.flags[p]! & flagChecked) !== 0) markChecked(d);
    }
    unreachable.unregister(this.#token);
  }
}
