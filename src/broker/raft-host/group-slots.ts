/**
 * Per-group flags and times of the node host that change at every turn (which groups have work,
 * since when a phase runs), kept without a hash table that changes size at every turn.
 *
 * Why: a Set or Map that goes from a few entries to none at every turn replaces its hash table each
 * time (V8 shrinks it on delete, grows it on insert), and a replaced table points to its successor. Once
 * one table of that chain is in the old generation, each scavenge promotes the next: a steady publish
 * load then promotes a table or two per turn, for nothing (see pending-proposals.ts, where the same
 * chain held the waiting proposals). Here each group id gets one small record the first time it is
 * seen, in a Map that only changes when a group comes or goes (`forget`), and the per-turn changes are
 * writes to that record and pushes to an array.
 */
interface Slot {
  /** In the set (GroupIdSet) or the time (GroupTimes; NaN: none). */
  on: boolean;
  time: number;
  /** Where the id was last pushed in the set's order array. */
  at: number;
}

class Slots {
  readonly #slots = new Map<number, Slot>();

  slot(id: number): Slot {
    let s = this.#slots.get(id);
    if (s === undefined) {
      s = { on: false, time: NaN, at: -1 };
      this.#slots.set(id, s);
    }
    return s;
  }

  peek(id: number): Slot | undefined {
    return this.#slots.get(id);
  }

  forget(id: number): void {
    this.#slots.delete(id);
  }
}

/**
 * The ids of the groups that have work, as a Set<number> would hold them: insertion order, and an
 * iteration that sees ids added while it runs (at the end, in the order they came) and skips ids
 * deleted before it reaches them.
 */
export class GroupIdSet {
  readonly #slots = new Slots();
  /** Ids in insertion order; an entry whose slot is off or was pushed again later is stale. */
  #order: number[] = [];
  #size = 0;
  #iterating = 0;

  get size(): number {
    return this.#size;
  }

  has(id: number): boolean {
    return this.#slots.peek(id)?.on === true;
  }

  add(id: number): void {
    const s = this.#slots.slot(id);
    if (s.on) return;
    s.on = true;
    s.at = this.#order.length;
    this.#order.push(id);
    this.#size++;
    if (this.#iterating === 0 && this.#order.length > 64 && this.#order.length > 4 * this.#size) this.#compact();
  }

  delete(id: number): void {
    const s = this.#slots.peek(id);
    if (s === undefined || !s.on) return;
    s.on = false;
    this.#size--;
    if (this.#size === 0 && this.#iterating === 0) this.#order.length = 0;
  }

  /** Deletes the id and forgets its record (its group is no longer hosted). */
  forget(id: number): void {
    this.delete(id);
    this.#slots.forget(id);
  }

  *[Symbol.iterator](): IterableIterator<number> {
    this.#iterating++;
    try {
      const order = this.#order;
      for (let i = 0; i < order.length; i++) {
        const id = order[i]!;
        const s = this.#slots.peek(id);
        if (s !== undefined && s.on && s.at === i) yield id;
      }
    } finally {
      this.#iterating--;
      if (this.#iterating === 0 && this.#order.length > 2 * this.#size) this.#compact();
    }
  }

  #compact(): void {
    const kept: number[] = [];
    for (let i = 0; i < this.#order.length; i++) {
      const id = this.#order[i]!;
      const s = this.#slots.peek(id);
      if (s === undefined || !s.on || s.at !== i) continue;
      s.at = kept.length;
      kept.push(id);
    }
    this.#order = kept;
  }
}

/** A time per group id, as a Map<number, number> would hold it (get, has, set, delete). */
export class GroupTimes {
  readonly #slots = new Slots();

  get(id: number): number | undefined {
    const t = this.#slots.peek(id)?.time;
    return t === undefined || Number.isNaN(t) ? undefined : t;
  }

  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  set(id: number, time: number): void {
    this.#slots.slot(id).time = time;
  }

  delete(id: number): void {
    const s = this.#slots.peek(id);
    if (s !== undefined) s.time = NaN;
  }

  forget(id: number): void {
    this.#slots.forget(id);
  }
}
