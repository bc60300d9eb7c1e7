/**
 * The log as Raft reasons about it: durable entries (through Storage) followed by unstable ones,
 * with the commit and applied indexes. Invariant: applied <= committed <= lastIndex, and
 * firstIndex - 1 <= committed (the snapshot is always committed).
 */
import { assert, invariantFailed } from '../core/assert.js';
import { CompactedError, limitBytes, SnapshotTemporarilyUnavailableError, UnavailableError } from './storage.js';
import type { Storage } from './storage.js';
import { Unstable } from './unstable.js';
import type { Entry, Index, Snapshot, Term } from './types.js';
import { assertIndex } from './types.js';

export class RaftLog {
  readonly storage: Storage;
  readonly unstable: Unstable;
  committed: Index;
  applied: Index;

  constructor(storage: Storage) {
    this.storage = storage;
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    assert(first >= 1, `storage first index ${first} must be at least 1`);
    assert(last >= first - 1, `storage last index ${last} is before first ${first}`);
    this.unstable = new Unstable(last + 1);
    // A restarted node knows at least that its snapshot is committed and applied.
    this.committed = first - 1;
    this.applied = first - 1;
  }

  firstIndex(): Index {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  lastIndex(): Index {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  /** The term of entry i, or undefined if i is compacted away or beyond the last entry. */
  term(i: Index): Term | undefined {
    const dummy = this.firstIndex() - 1;
    if (i < dummy || i > this.lastIndex()) return undefined;
    const t = this.unstable.maybeTerm(i);
    if (t !== undefined) return t;
    try {
      return this.storage.term(i);
    } catch (e) {
      if (e instanceof CompactedError || e instanceof UnavailableError) return undefined;
      throw e;
    }
  }

  /** Term of the last entry; it always exists (possibly as the snapshot's term). */
  lastTerm(): Term {
    const t = this.term(this.lastIndex());
    assert(t !== undefined, `term of the last index ${this.lastIndex()} is unknown`);
    return t;
  }

  matchTerm(i: Index, t: Term): boolean {
    const got = this.term(i);
    return got !== undefined && got === t;
  }

  /**
   * A candidate's log (ending at lastIndex with lastTerm) is at least as up to date as ours
   * (Raft §5.4.1): a later last term wins; with equal last terms the longer log wins.
   */
  isUpToDate(lastIndex: Index, lastTerm: Term): boolean {
    const ourTerm = this.lastTerm();
    return lastTerm > ourTerm || (lastTerm === ourTerm && lastIndex >= this.lastIndex());
  }

  /**
   * Follower side of AppendEntries: if our log holds (index, logTerm), append `ents` after it,
   * truncating at the first conflict, advance the commit index and return the index of the last new
   * entry; otherwise return undefined (the leader must back up).
   */
  maybeAppend(index: Index, logTerm: Term, committed: Index, ents: readonly Entry[]): Index | undefined {
    if (!this.matchTerm(index, logTerm)) return undefined;
    const lastNew = index + ents.length;
    const ci = this.findConflict(ents);
    if (ci !== 0) {
      assert(ci > this.committed, `entry ${ci} conflicts with the committed prefix up to ${this.committed}`);
      const first = ents[0]!.index;
      this.append(ents.slice(ci - first));
    }
    this.commitTo(Math.min(committed, lastNew));
    return lastNew;
  }

  append(ents: readonly Entry[]): Index {
    if (ents.length === 0) return this.lastIndex();
    const after = ents[0]!.index - 1;
    assert(after >= this.committed, `appending after ${after} would overwrite committed ${this.committed}`);
    this.unstable.truncateAndAppend(ents);
    return this.lastIndex();
  }

  /**
   * The index of the first entry of `ents` whose term differs from ours at that index, or of the
   * first one beyond our log; 0 if every entry is already present.
   */
  findConflict(ents: readonly Entry[]): Index {
    for (const e of ents) {
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return 0;
  }

  /**
   * The largest index <= `index` whose term is <= `term` (or the first index whose term is no longer
   * known). Used for fast backtracking: every entry after the returned index has a term greater than
   * `term`, so it cannot match an entry of the other log ending with `term` at `index`.
   */
  findConflictByTerm(index: Index, term: Term): Index {
    let i = index;
    for (;;) {
      const t = this.term(i);
      if (t === undefined || t <= term || i === 0) return i;
      i--;
    }
  }

  /** Entries in [lo, min(hi, lastIndex + 1)), capped by `maxBytes` (at least one entry). */
  slice(lo: Index, hi: Index, maxBytes: number): Entry[] {
    const first = this.firstIndex();
    if (lo < first) throw new CompactedError(`slice from ${lo}: first index is ${first}`);
    const end = Math.min(hi, this.lastIndex() + 1);
    if (lo >= end) return [];
    let ents: Entry[] = [];
    const off = this.unstable.offset;
    if (lo < off) {
      const stored = this.storage.entries(lo, Math.min(end, off), maxBytes);
      if (stored.length < Math.min(end, off) - lo) return stored; // the byte cap stopped early
      ents = stored;
    }
    if (end > off) {
      const fresh = this.unstable.slice(Math.max(lo, off), end);
      ents = ents.length === 0 ? fresh : ents.concat(fresh);
    }
    return limitBytes(ents, maxBytes);
  }

  /** Entries from i, at most `maxEntries` and about `maxBytes` (always one if any exist). */
  entriesFrom(i: Index, maxBytes: number, maxEntries: number): Entry[] {
    if (i > this.lastIndex()) return [];
    return this.slice(i, Math.min(this.lastIndex() + 1, i + maxEntries), maxBytes);
  }

  commitTo(toCommit: Index): void {
    if (toCommit <= this.committed) return; // never decrease commit
    if (!(toCommit <= this.lastIndex())) invariantFailed(`commit ${toCommit} is beyond the last index ${this.lastIndex()}`);
    this.committed = toCommit;
  }

  /** Commits `index` if it belongs to `term` (Raft §5.4.2: count replicas only for current-term entries). */
  maybeCommit(index: Index, term: Term): boolean {
    if (index > this.committed && this.term(index) === term) {
      this.commitTo(index);
      return true;
    }
    return false;
  }

  appliedTo(i: Index): void {
    if (i === 0) return;
    if (!(i <= this.committed)) invariantFailed(`applied ${i} is beyond committed ${this.committed}`);
    if (!(i >= this.applied)) invariantFailed(`applied ${i} moves back from ${this.applied}`);
    this.applied = i;
  }

  /** Committed entries not yet handed out for applying, capped by `maxBytes`. */
  nextCommittedEntries(maxBytes: number): Entry[] {
    const lo = Math.max(this.applied + 1, this.firstIndex());
    if (this.committed + 1 <= lo) return [];
    return this.slice(lo, this.committed + 1, maxBytes);
  }

  hasNextCommittedEntries(): boolean {
    return this.committed + 1 > Math.max(this.applied + 1, this.firstIndex());
  }

  /** The snapshot to send a lagging follower: the pending one if any, else the stored one. */
  snapshot(): Snapshot | undefined {
    if (this.unstable.snapshot !== undefined) return this.unstable.snapshot;
    try {
      return this.storage.snapshot();
    } catch (e) {
      if (e instanceof SnapshotTemporarilyUnavailableError) return undefined;
      throw e;
    }
  }

  /** Replaces the log with a snapshot from the leader; it becomes the committed prefix. */
  restore(s: Snapshot): void {
    assertIndex(s.metadata.index, 'snapshot index');
    assert(s.metadata.index > this.committed, `restoring snapshot ${s.metadata.index} at or below commit`);
    this.committed = s.metadata.index;
    this.unstable.restore(s);
  }

  stableTo(i: Index, t: Term): void {
    this.unstable.stableTo(i, t);
  }

  /**
   * The last index of the longest prefix of the log that is durable: what this node may count for
   * itself when the leader computes the commit index (commit must mean "on a durable majority").
   */
  lastStableIndex(): Index {
    if (this.unstable.snapshot !== undefined) return 0;
    return Math.min(this.storage.lastIndex(), this.unstable.offset - 1);
  }
}
