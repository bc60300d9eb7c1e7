/**
 * The events a replica sent beyond what a read of a partition held elsewhere asked for, kept to answer
 * the next reads (partition-remote-reads.ts). A stream with a window of one event (batch_limit=1, or a
 * subscription's max_uncommitted_events=1) reads one event at a time: each a round trip to a replica
 * without this, a few milliseconds each, so a backlog drained at a few hundred events a second.
 *
 * Pure: no I/O, no clock. A run is what one remote read answered: the events after `after`, dense, so
 * a run holds every committed event in (after, last]. Committed events never change, so a run stays
 * true; it may still hold events retention removed since, which a read a moment earlier got too.
 * Runs are kept per partition (several: streams at different places of one partition do not push
 * each other's run out) within a byte budget for the node, the least recently used dropped first.
 */
import type { StoredEventView } from './partition-replica.js';

interface Run {
  after: number;
  last: number;
  events: StoredEventView[];
  bytes: number;
}

export interface ReadAheadLimits {
  /** Bytes of event payload held for all partitions together. */
  bytesMax: number;
  /** Runs held per partition. */
  runsPerPartition: number;
}

export class RemoteReadAhead {
  readonly #limits: ReadAheadLimits;
  /** By partition key, each partition's runs; the Map's order is the order of use (oldest first). */
  readonly #runs = new Map<string, Run[]>();
  #bytes = 0;

  constructor(limits: ReadAheadLimits) {
    this.#limits = limits;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The events after `after` that a run holds, up to `maxEvents` and `maxBytes` (one event at least,
   * as a replica's read answers); undefined when no run holds the event after `after`.
   */
  take(key: string, after: number, maxEvents: number, maxBytes: number): StoredEventView[] | undefined {
    const runs = this.#runs.get(key);
    const run = runs?.find((r) => r.after <= after && after < r.last);
    if (runs === undefined || run === undefined) return undefined;
    // Used: to the end of the order of use.
    this.#runs.delete(key);
    this.#runs.set(key, runs);
    let i = firstAfter(run.events, after);
    const out: StoredEventView[] = [];
    let bytes = 0;
    for (; i < run.events.length && out.length < maxEvents; i++) {
      const e = run.events[i]!;
      if (out.length > 0 && bytes + e.bytes.length > maxBytes) break;
      out.push(e);
      bytes += e.bytes.length;
    }
    return out;
  }

  /** Keeps what a replica answered to a read after `after` (nothing when it answered no event). */
  put(key: string, after: number, events: StoredEventView[]): void {
    const last = events[events.length - 1];
    if (last === undefined) return;
    const bytes = events.reduce((n, e) => n + e.bytes.length, 0);
    if (bytes > this.#limits.bytesMax) return;
    const runs = (this.#runs.get(key) ?? []).filter((r) => {
      // A run the new one covers is of no more use.
      const covered = r.after >= after && r.last <= last.offset;
      if (covered) this.#bytes -= r.bytes;
      return !covered;
    });
    runs.push({ after, last: last.offset, events, bytes });
    this.#bytes += bytes;
    while (runs.length > this.#limits.runsPerPartition) this.#bytes -= runs.shift()!.bytes;
    this.#runs.delete(key);
    this.#runs.set(key, runs);
    this.#evict();
  }

  /** Forgets a partition's runs (it is no longer read from elsewhere, or is gone). */
  drop(key: string): void {
    for (const r of this.#runs.get(key) ?? []) this.#bytes -= r.bytes;
    this.#runs.delete(key);
  }

  /** The least recently used partitions' oldest runs go until the budget holds. */
  #evict(): void {
    for (const [key, runs] of this.#runs) {
      if (this.#bytes <= this.#limits.bytesMax) return;
      while (runs.length > 0 && this.#bytes > this.#limits.bytesMax) this.#bytes -= runs.shift()!.bytes;
      if (runs.length === 0) this.#runs.delete(key);
    }
  }
}

/** The index of the first event with an offset above `after` (events in offset order). */
function firstAfter(events: readonly StoredEventView[], after: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid]!.offset <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
