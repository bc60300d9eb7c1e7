/**
 * The part of the log not yet durable: entries (and possibly one incoming snapshot) that the next
 * Ready hands to the host to persist. `offset` is the index of `entries[0]`; when a snapshot is
 * pending, `offset` is its index + 1. Stored entries at or after `offset` are stale: the next Ready
 * overwrites them (the host's append discards any stored suffix).
 */
import { invariantFailed } from '../core/assert.js';
import type { Entry, Index, Snapshot, Term } from './types.js';

export class Unstable {
  snapshot: Snapshot | undefined = undefined;
  entries: Entry[] = [];
  offset: Index;

  constructor(offset: Index) {
    this.offset = offset;
  }

  /** Index of the first entry if only the pending snapshot precedes it. */
  maybeFirstIndex(): Index | undefined {
    return this.snapshot === undefined ? undefined : this.snapshot.metadata.index + 1;
  }

  maybeLastIndex(): Index | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    if (this.snapshot !== undefined) return this.snapshot.metadata.index;
    return undefined;
  }

  maybeTerm(i: Index): Term | undefined {
    if (i < this.offset) {
      if (this.snapshot !== undefined && this.snapshot.metadata.index === i) return this.snapshot.metadata.term;
      return undefined;
    }
    const last = this.maybeLastIndex();
    if (last === undefined || i > last) return undefined;
    return this.entries[i - this.offset]!.term;
  }

  /**
   * The host has persisted entries up to (i, t). If the entry at i has since been replaced (a new
   * leader overwrote it while the write was in flight), the write concerned stale entries and the
   * replacement is still to be persisted, so nothing is marked stable.
   */
  stableTo(i: Index, t: Term): void {
    const gt = this.maybeTerm(i);
    if (gt === undefined || gt !== t || i < this.offset) return;
    this.entries = this.entries.slice(i + 1 - this.offset);
    this.offset = i + 1;
  }

  stableSnapTo(i: Index): void {
    if (this.snapshot !== undefined && this.snapshot.metadata.index === i) this.snapshot = undefined;
  }

  restore(s: Snapshot): void {
    this.offset = s.metadata.index + 1;
    this.entries = [];
    this.snapshot = s;
  }

  truncateAndAppend(ents: readonly Entry[]): void {
    if (ents.length === 0) return;
    const from = ents[0]!.index;
    if (from === this.offset + this.entries.length) {
      for (const e of ents) this.entries.push(e);
    } else if (from <= this.offset) {
      // Replaces everything unstable (and, once persisted, the stale stored suffix too).
      this.offset = from;
      this.entries = [...ents];
    } else {
      this.entries = this.entries.slice(0, from - this.offset);
      for (const e of ents) this.entries.push(e);
    }
  }

  /** Entries in [lo, hi), all of which must be unstable. */
  slice(lo: Index, hi: Index): Entry[] {
    if (!(lo <= hi)) invariantFailed(`unstable slice [${lo}, ${hi}) is inverted`);
    if (!(lo >= this.offset)) invariantFailed(`unstable slice from ${lo} is before offset ${this.offset}`);
    if (!(hi <= this.offset + this.entries.length)) invariantFailed(`unstable slice to ${hi} is beyond the last entry`);
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}
