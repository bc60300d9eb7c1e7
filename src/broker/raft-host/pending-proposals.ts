/**
 * The proposals of one Raft group that wait for their entry to be applied, in one array sorted by
 * index (proposals come in index order, so an add is nearly always a push, and an apply takes from the
 * front).
 *
 * Why not a Map from index to proposals, as before: a Map that goes from one entry to none at every
 * apply replaces its hash table each time (V8 shrinks it on delete), and the replaced table keeps a
 * pointer to its successor and its old keys and values. Once one table of the chain is in the old
 * generation, every later one is reachable from it through the remembered set, so each scavenge
 * promotes the whole chain: every table, and every proposal, promise and closure a table held, until a
 * full collection. Under a steady 500 publishes a second that was most of what the new build promoted
 * per publish and the cause of its mark-compacts every second or so (docs/benchmarks.md, 2026-11-27
 * evening). An array's old backing store points nowhere, so nothing outlives its proposal.
 */
export interface PendingProposal {
  readonly index: number;
  readonly deadlineMs: number;
}

export class PendingProposals<P extends PendingProposal> {
  #items: P[] = [];

  get size(): number {
    return this.#items.length;
  }

  add(p: P): void {
    const items = this.#items;
    let at = items.length;
    // A proposal at a lower index than one waiting: a node leading again after its log was cut back.
    while (at > 0 && items[at - 1]!.index > p.index) at--;
    if (at === items.length) items.push(p);
    else items.splice(at, 0, p);
  }

  /**
   * Removes and returns the proposals at `index` or below, in index order (those below it can only be
   * left from a log that was overwritten below what is applied now), or undefined if there are none.
   */
  takeUpTo(index: number): P[] | undefined {
    const items = this.#items;
    if (items.length === 0 || items[0]!.index > index) return undefined;
    let n = 1;
    while (n < items.length && items[n]!.index <= index) n++;
    if (n === items.length) {
      this.#items = [];
      return items;
    }
    return items.splice(0, n);
  }

  /** Removes and returns the proposals whose deadline is at or before `nowMs`. */
  takeExpired(nowMs: number): P[] {
    const items = this.#items;
    const late: P[] = [];
    let kept = 0;
    for (const p of items) {
      if (p.deadlineMs <= nowMs) late.push(p);
      else items[kept++] = p;
    }
    items.length = kept;
    return late;
  }

  /** Removes and returns every proposal, in index order. */
  takeAll(): P[] {
    const items = this.#items;
    this.#items = [];
    return items;
  }
}
