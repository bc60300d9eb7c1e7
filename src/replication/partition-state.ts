/**
 * The state machine of one partition's Raft group (pure): what applying the committed log does.
 *
 * The Raft log is the partition log. A committed entry is one of:
 * - an event batch: it takes the next `count` dense offsets, in log order, when it is applied (not
 *   when it is proposed), so no-ops, configuration changes and refused duplicates never show as gaps
 *   and every replica assigns the same offsets to the same batch;
 * - a seal for timeline T (a timeline switch, docs/decisions.md "Storages and timelines"): the log takes
 *   no more events; its outcome is the next offset N, where the new timeline of this partition starts.
 *   Sealing again for T answers the same N; sealing for another timeline is refused. A batch applied
 *   after the seal gets no offsets and the outcome `sealed` (it was not stored: its proposer routes it
 *   to the new timeline), except a retried request id that committed before the seal, which still gets
 *   the offsets of its first application;
 * - anything else (a new leader's no-op, a configuration change, a base): no offsets.
 *
 * Duplicates. A publish forwarded to a leader that is deposed before it answers is retried by the
 * forwarder with the same request id. If the first attempt did commit, applying the retry must not
 * append the events twice: the state remembers the offsets of the last `dedupWindow` request ids and
 * answers a repeated one with the offsets of its first application. The window is part of the image,
 * so a replica restored from a snapshot de-duplicates exactly as the others.
 *
 * Offsets are plain safe integers here (src/core/offset.ts brands them at the edges).
 */
import { assert, invariantFailed } from '../core/assert.js';
import { RequestWindow } from './request-window.js';

/** Request ids remembered for de-duplication, per partition. */
export const dedupWindow = 512;

/** What the state is at an applied index: small, so a snapshot of a partition group is cheap. */
export interface PartitionImage {
  /** The Raft index applied last. */
  readonly applied: number;
  /** The offset the next batch's first event gets. */
  readonly next: number;
  /** The oldest offset still stored (retention moves it; equals `next` when the log is empty). */
  readonly oldest: number;
  /** Recent request ids with the offsets they were given, oldest first. */
  readonly recent: readonly (readonly [id: string, first: number, last: number])[];
  /**
   * Where the replica that took this image holds its log from (absent: unknown): [raft index, offset]
   * such that applying its entries from that index on, starting at that offset, gives their offsets.
   * A follower behind it fetches the log from there (retention removed what came before).
   */
  readonly start?: readonly [index: number, offset: number];
  /** The timeline switch this log was sealed for (absent: open). */
  readonly sealed?: string;
}

/**
 * Why a value is not an image a replica can start from at Raft index `index` (a snapshot from the
 * leader), or undefined. Checked before anything of the snapshot is stored: the state asserts these
 * (offsets exact and in order, applied at the snapshot's index), so an image that breaks them would stop
 * the node when installed and again at every start.
 */
export function partitionImageProblem(img: unknown, index: number): string | undefined {
  if (typeof img !== 'object' || img === null || Array.isArray(img)) return 'not an object';
  const o = img as Record<string, unknown>;
  const offset = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (o['applied'] !== index) return `applied ${String(o['applied'])} is not the snapshot's index ${index}`;
  if (!offset(o['next']) || !offset(o['oldest'])) return 'next and oldest must be offsets';
  if ((o['oldest'] as number) > (o['next'] as number)) return `oldest ${String(o['oldest'])} beyond next ${String(o['next'])}`;
  const start = o['start'];
  if (start !== undefined) {
    if (!Array.isArray(start) || start.length !== 2 || !offset(start[0]) || !offset(start[1]) || start[0] < 1 || start[0] > index + 1 || start[1] > (o['next'] as number)) {
      return 'start must be [raft index, offset] within the image';
    }
  }
  const recent = o['recent'];
  if (!Array.isArray(recent) || recent.length > dedupWindow) return `recent must be a list of at most ${dedupWindow} request ids`;
  for (const r of recent) {
    if (!Array.isArray(r) || r.length !== 3 || typeof r[0] !== 'string' || !offset(r[1]) || !offset(r[2]) || r[1] > r[2] || r[2] >= (o['next'] as number)) {
      return 'recent holds an entry that is not [request id, first, last] below next';
    }
  }
  if (o['sealed'] !== undefined && (typeof o['sealed'] !== 'string' || o['sealed'] === '' || o['sealed'].length > 64)) return 'sealed must name a timeline';
  return undefined;
}

export type BatchOutcome =
  | { readonly kind: 'appended'; readonly first: number; readonly last: number }
  | { readonly kind: 'duplicate'; readonly first: number; readonly last: number }
  /** Not stored: the log was sealed for `timeline` before this batch was applied. */
  | { readonly kind: 'sealed'; readonly timeline: string };

export type SealOutcome =
  /** The log is sealed for `timeline`; offsets of the next timeline start at `next`. */
  | { readonly kind: 'seal'; readonly timeline: string; readonly next: number }
  /** Refused: the log was sealed for another timeline switch. */
  | { readonly kind: 'sealRefused'; readonly sealedFor: string };

export class PartitionState {
  #applied: number;
  #next: number;
  #oldest: number;
  /** Request id -> [first, last], oldest first (the eviction order); typed arrays, see request-window.ts. */
  readonly #recent: RequestWindow;
  #sealed: string | undefined;
  /**
   * Request ids with the offsets of their first application, as states at later indexes remember
   * them (absent: none). Given to a state that applies a part of the log starting after its
   * beginning, without the window the log had there (a replica fetching the log before its snapshot
   * from where retention moved its start): a batch whose id took offsets before this state's next
   * offset was a duplicate where it was first applied (a later window that holds its id held it at
   * that batch too: fewer ids came between). An id the later windows no longer hold cannot be told;
   * the offsets then do not add up, which the caller checks.
   */
  readonly #earlier: ReadonlyMap<string, readonly [number, number]> | undefined;

  constructor(image: PartitionImage = { applied: 0, next: 0, oldest: 0, recent: [] }, earlier?: ReadonlyMap<string, readonly [number, number]>) {
    this.#earlier = earlier;
    this.#applied = image.applied;
    this.#next = image.next;
    this.#oldest = image.oldest;
    this.#sealed = image.sealed;
    // An image never holds more than the window (partitionImageProblem, load, restore); one that did
    // would keep that many, as the Map this replaced did.
    this.#recent = new RequestWindow(image.recent.length <= dedupWindow ? dedupWindow : new Set(image.recent.map(([id]) => id)).size);
    for (const [id, first, last] of image.recent) this.#recent.put(id, first, last);
    if (!(this.#oldest <= this.#next)) invariantFailed(`oldest ${this.#oldest} beyond next ${this.#next}`);
  }

  get applied(): number {
    return this.#applied;
  }

  /** The newest offset written, -1 when none ever was. */
  get newest(): number {
    return this.#next - 1;
  }

  get oldest(): number {
    return this.#oldest;
  }

  /** The timeline switch the log was sealed for, undefined while it takes events. */
  get sealed(): string | undefined {
    return this.#sealed;
  }

  /** Applies an event batch committed at `index`. An empty request id is never de-duplicated. */
  applyBatch(index: number, requestId: string, count: number): BatchOutcome {
    this.#advance(index);
    return this.#batch(requestId, count);
  }

  /**
   * Applies the event batches of one entry committed at `index`, in order, each de-duplicated on its
   * own (a retried batch may share an entry with its own first attempt: the first one counts).
   */
  applyBatches(index: number, batches: readonly { readonly requestId: string; readonly count: number }[]): BatchOutcome[] {
    this.#advance(index);
    // A loop, not batches.map with an arrow: a closure made per entry loses its optimized code at each
    // full GC and is compiled again (docs/benchmarks.md, "V8 on a warm cluster").
    const outcomes: BatchOutcome[] = [];
    for (const b of batches) outcomes.push(this.#batch(b.requestId, b.count));
    return outcomes;
  }

  #batch(requestId: string, count: number): BatchOutcome {
    if (!(Number.isSafeInteger(count) && count > 0)) invariantFailed(`batch of ${count} events`);
    if (requestId !== '') {
      const seen = this.#recent.find(requestId);
      if (seen >= 0) return { kind: 'duplicate', first: this.#recent.firstAt(seen), last: this.#recent.lastAt(seen) };
      const known = this.#earlier?.get(requestId);
      if (known !== undefined && known[0] < this.#next) return { kind: 'duplicate', first: known[0], last: known[1] };
    }
    if (this.#sealed !== undefined) return { kind: 'sealed', timeline: this.#sealed };
    const first = this.#next;
    const last = first + count - 1;
    this.#next = last + 1;
    if (requestId !== '') this.#recent.add(requestId, first, last);
    return { kind: 'appended', first, last };
  }

  /** Applies an entry that carries no events (no-op, configuration change, control command). */
  applyOther(index: number): void {
    this.#advance(index);
  }

  /**
   * Sets where offsets start on an empty log (the first offset of a new timeline, or the base that
   * migrated data ends at), applied as a command of the group so every replica agrees.
   */
  applyBase(index: number, base: number): boolean {
    this.#advance(index);
    if (this.#sealed !== undefined || this.#next !== this.#oldest || base < this.#next) return false;
    this.#next = base;
    this.#oldest = base;
    return true;
  }

  /**
   * Seals the log for the timeline switch `timeline`: no event is stored after it. `floor` is where
   * this log's timeline starts: a log that never took an event and was never based starts there
   * (so the seal of an untouched log answers its timeline's start, not 0).
   */
  applySeal(index: number, timeline: string, floor: number): SealOutcome {
    this.#advance(index);
    assert(timeline !== '', 'a seal names its timeline');
    if (this.#sealed === undefined) {
      if (this.#next === this.#oldest && this.#next < floor) {
        this.#next = floor;
        this.#oldest = floor;
      }
      this.#sealed = timeline;
    }
    if (this.#sealed !== timeline) return { kind: 'sealRefused', sealedFor: this.#sealed };
    return { kind: 'seal', timeline, next: this.#next };
  }

  /** Retention removed every event before `oldest` (a local decision: retention runs on every replica). */
  truncateBefore(oldest: number): void {
    assert(oldest <= this.#next, `truncating to ${oldest} beyond next ${this.#next}`);
    if (oldest > this.#oldest) this.#oldest = oldest;
  }

  /**
   * Events before `oldest` became readable on this replica again: a replica that took a snapshot
   * without the log before it fetched that log afterwards (its history; a local fact like retention).
   */
  extendBack(oldest: number): void {
    assert(Number.isSafeInteger(oldest) && oldest >= 0 && oldest <= this.#oldest, `extending back to ${oldest} from ${this.#oldest}`);
    this.#oldest = oldest;
  }

  /** The events before `next` are not held here (a snapshot installed without its log): none is readable. */
  forgetAll(): void {
    this.#oldest = this.#next;
  }

  image(): PartitionImage {
    return {
      applied: this.#applied,
      next: this.#next,
      oldest: this.#oldest,
      recent: this.#recent.entries(),
      ...(this.#sealed === undefined ? {} : { sealed: this.#sealed }),
    };
  }

  #advance(index: number): void {
    if (!(index === this.#applied + 1)) invariantFailed(`partition entry ${index} applied after ${this.#applied}`);
    this.#applied = index;
  }
}
