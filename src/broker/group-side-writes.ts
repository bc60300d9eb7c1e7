/**
 * Writes of a group's own keys that run beside its Raft turns (memory compaction, retention): a drop
 * of the group waits for them, or one landing after the drop's delete would leave keys behind.
 */
export class GroupSideWrites {
  readonly #writes = new Map<number, Set<Promise<unknown>>>();

  /** Tracks `p` as a write of `group` until it settles; returns it. */
  track<T>(group: number, p: Promise<T>): Promise<T> {
    let set = this.#writes.get(group);
    if (set === undefined) this.#writes.set(group, (set = new Set()));
    set.add(p);
    const done = (): void => {
      set.delete(p);
      if (set.size === 0 && this.#writes.get(group) === set) this.#writes.delete(group);
    };
    p.then(done, done);
    return p;
  }

  /** Whether a write of `group` is in flight. */
  has(group: number): boolean {
    return this.#writes.has(group);
  }

  /** Waits until no write of `group` is in flight (writes started meanwhile too). */
  async settled(group: number): Promise<void> {
    for (let set = this.#writes.get(group); set !== undefined && set.size > 0; set = this.#writes.get(group)) await Promise.allSettled([...set]);
  }
}
