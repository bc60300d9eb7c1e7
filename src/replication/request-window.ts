/**
 * The de-duplication window of one partition (PartitionState): the last request ids with the offsets
 * their batches got, oldest first, evicted oldest first. PURE.
 *
 * Why typed arrays and not a Map of strings to pairs: every id lives for the last `capacity` batches
 * of its partition (half a second to seconds under load), long enough for V8 to promote it, its pair
 * and its map slot to the old generation, where they then die by the thousand per second and make the
 * full collector run about three times as often as before partitions were Raft groups (docs/
 * benchmarks.md). Here an id is copied into a ring of UTF-16 code units and its offsets into number
 * columns; the ring, the columns and the open-addressing hash table are a handful of objects per
 * partition whatever the rate, and the id strings die young.
 *
 * Storage grows with use (an idle partition holds a few hundred bytes), doubling up to `capacity`
 * slots; the code-unit ring grows to what the live ids need.
 */

const slotsInitial = 16;
const charsInitial = 16 * 40;

export class RequestWindow {
  readonly #capacity: number;
  /** Physical slots; live ones are #size slots from #head, circularly, oldest first. */
  #slots = 0;
  #head = 0;
  #size = 0;
  #first = new Float64Array(0);
  #last = new Float64Array(0);
  #hash = new Int32Array(0);
  /** Where a slot's id starts in #chars, and its length in code units. */
  #idAt = new Int32Array(0);
  #idLen = new Int32Array(0);
  /** Code units of the live ids, circularly from #charHead, in slot order (so eviction frees the front). */
  #chars = new Uint16Array(0);
  #charHead = 0;
  #charUsed = 0;
  /** Open addressing, linear probing: slot + 1, 0 for empty; a power of two at least twice #slots. */
  #table = new Int32Array(0);

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`window capacity ${capacity}`);
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#size;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** The slot holding `id`, or -1. */
  find(id: string): number {
    if (this.#size === 0) return -1;
    const h = hashOf(id);
    const mask = this.#table.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = this.#table[i]!;
      if (v === 0) return -1;
      const s = v - 1;
      if (this.#hash[s] === h && this.#idEquals(s, id)) return s;
    }
  }

  firstAt(slot: number): number {
    return this.#first[slot]!;
  }

  lastAt(slot: number): number {
    return this.#last[slot]!;
  }

  /**
   * Remembers `id` as the newest (it must not be held: callers look it up first), evicting the oldest
   * when the window is full.
   */
  add(id: string, first: number, last: number): void {
    if (this.#size === this.#capacity) this.#evictOldest();
    if (this.#size === this.#slots) this.#growSlots();
    if (this.#charUsed + id.length > this.#chars.length) this.#growChars(id.length);
    const s = (this.#head + this.#size) % this.#slots;
    const cap = this.#chars.length;
    let at = cap === 0 ? 0 : (this.#charHead + this.#charUsed) % cap;
    this.#idAt[s] = at;
    this.#idLen[s] = id.length;
    for (let k = 0; k < id.length; k++) {
      this.#chars[at] = id.charCodeAt(k);
      at = at + 1 === cap ? 0 : at + 1;
    }
    this.#charUsed += id.length;
    const h = hashOf(id);
    this.#hash[s] = h;
    this.#first[s] = first;
    this.#last[s] = last;
    this.#size++;
    this.#insert(s);
  }

  /** As Map.set: a held id gets the new offsets and keeps its place; another one is added. */
  put(id: string, first: number, last: number): void {
    const s = this.find(id);
    if (s < 0) {
      this.add(id, first, last);
      return;
    }
    this.#first[s] = first;
    this.#last[s] = last;
  }

  /** The window, oldest first. */
  entries(): [id: string, first: number, last: number][] {
    const out: [string, number, number][] = [];
    for (let k = 0; k < this.#size; k++) {
      const s = (this.#head + k) % this.#slots;
      out.push([this.#idOf(s), this.#first[s]!, this.#last[s]!]);
    }
    return out;
  }

  #idOf(s: number): string {
    const cap = this.#chars.length;
    let at = this.#idAt[s]!;
    let id = '';
    for (let n = this.#idLen[s]!; n > 0; ) {
      const run = Math.min(n, cap - at, 4096);
      // apply, not a spread: a spread walks the typed array through its iterator, about five times the
      // CPU, and entries() decodes the whole window at every snapshot of the partition (a memory
      // compaction): 512 ids took several ms of one task after a burst of publishing (docs/benchmarks.md).
      id += String.fromCharCode.apply(null, this.#chars.subarray(at, at + run) as unknown as number[]);
      n -= run;
      at = at + run === cap ? 0 : at + run;
    }
    return id;
  }

  #idEquals(s: number, id: string): boolean {
    const len = this.#idLen[s]!;
    if (len !== id.length) return false;
    const cap = this.#chars.length;
    let at = this.#idAt[s]!;
    for (let k = 0; k < len; k++) {
      if (this.#chars[at] !== id.charCodeAt(k)) return false;
      at = at + 1 === cap ? 0 : at + 1;
    }
    return true;
  }

  #insert(s: number): void {
    const mask = this.#table.length - 1;
    let i = this.#hash[s]! & mask;
    while (this.#table[i] !== 0) i = (i + 1) & mask;
    this.#table[i] = s + 1;
  }

  #evictOldest(): void {
    const s = this.#head;
    const mask = this.#table.length - 1;
    let i = this.#hash[s]! & mask;
    while (this.#table[i] !== s + 1) i = (i + 1) & mask;
    // Backward-shift deletion: later entries of the probe run move into the hole when their home
    // position does not lie cyclically after it, so every lookup still finds them before an empty cell.
    for (let j = (i + 1) & mask; this.#table[j] !== 0; j = (j + 1) & mask) {
      const home = this.#hash[this.#table[j]! - 1]! & mask;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (stays) continue;
      this.#table[i] = this.#table[j]!;
      i = j;
    }
    this.#table[i] = 0;
    this.#charHead = this.#chars.length === 0 ? 0 : (this.#charHead + this.#idLen[s]!) % this.#chars.length;
    this.#charUsed -= this.#idLen[s]!;
    this.#head = (this.#head + 1) % this.#slots;
    this.#size--;
  }

  #growSlots(): void {
    const slots = Math.min(this.#capacity, Math.max(slotsInitial, this.#slots * 2));
    const order = (k: number) => (this.#head + k) % this.#slots;
    const first = new Float64Array(slots);
    const last = new Float64Array(slots);
    const hash = new Int32Array(slots);
    const idAt = new Int32Array(slots);
    const idLen = new Int32Array(slots);
    for (let k = 0; k < this.#size; k++) {
      const s = order(k);
      first[k] = this.#first[s]!;
      last[k] = this.#last[s]!;
      hash[k] = this.#hash[s]!;
      idAt[k] = this.#idAt[s]!;
      idLen[k] = this.#idLen[s]!;
    }
    this.#first = first;
    this.#last = last;
    this.#hash = hash;
    this.#idAt = idAt;
    this.#idLen = idLen;
    this.#slots = slots;
    this.#head = 0;
    let tableSize = 1;
    while (tableSize < slots * 2) tableSize *= 2;
    this.#table = new Int32Array(tableSize);
    for (let s = 0; s < this.#size; s++) this.#insert(s);
  }

  /** Room for `more` code units: the live ids copied to the front of a larger ring, in slot order. */
  #growChars(more: number): void {
    const chars = new Uint16Array(Math.max(charsInitial, this.#chars.length * 2, this.#charUsed + more));
    let to = 0;
    for (let k = 0; k < this.#size; k++) {
      const s = (this.#head + k) % this.#slots;
      const len = this.#idLen[s]!;
      let at = this.#idAt[s]!;
      this.#idAt[s] = to;
      for (let n = 0; n < len; n++) {
        chars[to++] = this.#chars[at]!;
        at = at + 1 === this.#chars.length ? 0 : at + 1;
      }
    }
    this.#chars = chars;
    this.#charHead = 0;
  }
}

/** FNV-1a over the UTF-16 code units. */
function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < id.length; k++) {
    h ^= id.charCodeAt(k);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
