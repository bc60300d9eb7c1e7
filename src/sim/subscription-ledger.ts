/**
 * The checks of the host simulation's subscriptions (host-subscriptions.ts feeds them), kept apart
 * from the simulation so that each can be shown to fail (subscription-ledger.test.ts):
 *
 * - SubscriptionCursorBackwards: a committed cursor, as a function of the metadata index at which a
 *   node held it, never decreases (every node applies the same log, so it never moves backwards).
 * - SubscriptionCommitLost: a commit acknowledged by a node that had applied index i leaves the cursor
 *   at least there on every node that applied i or more.
 * - SubscriptionResumedWrong: a stream (re)starts a partition right after a cursor the subscription
 *   committed at some point, or, with retention, past it where nothing retention had to keep lies
 *   before (nothing committed is sent again from further back, nothing uncommitted is skipped).
 * - SubscriptionSkipped: neither a committed cursor nor where a stream starts passes an offset no
 *   stream delivered, unless retention removed it (the partition ledger's `skipped` checks that it
 *   was allowed to: RetainedLost).
 */
import { InvariantViolation } from './invariants.js';
import type { PartitionLedger } from './partition-ledger.js';

interface Track {
  /** [metadata index, cursor] sorted by index, one per index. */
  readonly points: [number, number][];
  /** Acknowledged commits: every node that applied `index` holds a cursor of at least `offset`. */
  obligations: { index: number; offset: number; who: string }[];
  /** Offsets above h delivered by some stream (or removed by retention before any did). */
  readonly covered: Set<number>;
  /** Every offset up to h was delivered (or removed by retention). */
  h: number;
  /** Every committed cursor the state machine held, on any node. */
  readonly values: Set<number>;
}

export class SubscriptionLedger {
  readonly #tracks: Track[];
  readonly #ledger: Pick<PartitionLedger, 'keptFloor' | 'skipped'>;
  readonly #retention: boolean;

  constructor(partitions: number, ledger: Pick<PartitionLedger, 'keptFloor' | 'skipped'>, retention: boolean) {
    this.#tracks = Array.from({ length: partitions }, () => ({ points: [], obligations: [], covered: new Set<number>(), h: -1, values: new Set<number>() }));
    this.#ledger = ledger;
    this.#retention = retention;
  }

  /** Every offset of `p` up to this was delivered (or removed by retention). */
  coveredTo(p: number): number {
    return this.#tracks[p]!.h;
  }

  /** A state machine held `cursor` as the committed cursor of `p` (at an apply). */
  committedValue(p: number, cursor: number): void {
    this.#tracks[p]!.values.add(cursor);
  }

  /** A stream delivered the event at `offset` of `p`. */
  delivered(p: number, offset: number): void {
    const t = this.#tracks[p]!;
    if (offset <= t.h) return;
    t.covered.add(offset);
    while (t.covered.has(t.h + 1)) t.covered.delete(++t.h);
  }

  /** Node `node` had applied metadata index `index` and held `cursor` for `p` (newestEver: the highest offset any replica applied). */
  observed(node: string, p: number, index: number, cursor: number, newestEver: number): void {
    const t = this.#tracks[p]!;
    const pts = t.points;
    let lo = 0;
    let hi = pts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pts[mid]![0] < index) lo = mid + 1;
      else hi = mid;
    }
    const same = pts[lo];
    if (same !== undefined && same[0] === index) {
      if (same[1] !== cursor) throw new InvariantViolation('SubscriptionCursorBackwards', `p${p}: ${node} holds cursor ${cursor} at metadata index ${index}, another node held ${same[1]} there`);
    } else {
      const before = pts[lo - 1];
      const after = pts[lo];
      if (before !== undefined && before[1] > cursor) throw new InvariantViolation('SubscriptionCursorBackwards', `p${p}: ${node} holds cursor ${cursor} at metadata index ${index}, it was ${before[1]} at index ${before[0]}`);
      if (after !== undefined && after[1] < cursor) throw new InvariantViolation('SubscriptionCursorBackwards', `p${p}: ${node} holds cursor ${cursor} at metadata index ${index}, it is ${after[1]} at the later index ${after[0]}`);
      pts.splice(lo, 0, [index, cursor]);
    }
    for (const o of t.obligations) {
      if (o.index <= index && cursor < o.offset) throw new InvariantViolation('SubscriptionCommitLost', `p${p}: ${node} holds cursor ${cursor} at metadata index ${index}, but ${o.who} was acknowledged at index ${o.index} for ${o.offset}`);
    }
    if (cursor > t.h) this.#gap(`the cursor on ${node} at metadata index ${index}`, p, cursor + 1, newestEver);
  }

  /**
   * A commit of `offset` for `p` was acknowledged (committed or outdated) by a node that had applied
   * `index`; `holders` are the nodes that applied that far already, with the cursor they hold.
   */
  acknowledged(p: number, index: number, offset: number, who: string, holders: readonly { node: string; applied: number; cursor: number | undefined }[]): void {
    const t = this.#tracks[p]!;
    for (const h of holders) {
      if (h.applied >= index && (h.cursor ?? -2) < offset) throw new InvariantViolation('SubscriptionCommitLost', `p${p}: ${h.node} applied metadata index ${h.applied} and holds cursor ${h.cursor ?? 'none'}, but ${who} was acknowledged at index ${index} for ${offset}`);
    }
    // Obligations at a lower index with a higher offset cover this one.
    if (t.obligations.some((o) => o.index <= index && o.offset >= offset)) return;
    t.obligations = t.obligations.filter((o) => !(o.index >= index && o.offset <= offset));
    t.obligations.push({ index, offset, who });
  }

  /**
   * A stream (re)starts `p` after `after`: right after a cursor the subscription committed, or, with
   * retention, where nothing retention had to keep lies before; never past an offset not delivered.
   * `detail` adds what the node knew, for the message.
   */
  starts(who: string, p: number, after: number, newestEver: number, detail: () => string = () => ''): void {
    const t = this.#tracks[p]!;
    if (!t.values.has(after)) {
      const floor = this.#retention ? this.#ledger.keptFloor(p) : undefined;
      const keptBefore = floor !== undefined && floor.first! <= after && floor.first! + floor.payloads.length - 1 <= newestEver;
      if (!this.#retention || keptBefore) {
        const why = floor === undefined ? '' : `; batch ${floor.id} at ${floor.first}.. is one retention must keep`;
        throw new InvariantViolation('SubscriptionResumedWrong', `${who}: starts after ${after}, which is no cursor the subscription committed (${[...t.values].sort((a, b) => a - b).slice(-6).join(', ')})${detail()}${why}`);
      }
    }
    if (after > t.h) this.#gap(who, p, after + 1, newestEver);
  }

  /** Offsets after h up to `first` were never delivered: only retention may have removed them. */
  #gap(who: string, p: number, first: number, newestEver: number): void {
    const t = this.#tracks[p]!;
    if (!this.#retention) throw new InvariantViolation('SubscriptionSkipped', `${who}: goes to ${first}, but no stream delivered ${t.h + 1}..${first - 1} (retention is off)`);
    this.#ledger.skipped(who, p, t.h, first, Math.max(first - 1, newestEver));
    for (let o = t.h + 1; o < first; o++) t.covered.add(o);
    while (t.covered.has(t.h + 1)) t.covered.delete(++t.h);
  }
}
