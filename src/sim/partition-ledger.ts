/**
 * The partition-level checks of the host simulation: what clients were told about each batch, and
 * what every replica holds, compared as events arrive.
 *
 * - AckedBatchLost: an acknowledged batch is at the offsets it was given on every replica that has
 *   applied that far, also after any crash (a restarted replica is read again from its first offset).
 * - Duplicate: an event (every event is unique) is stored at one offset only; a batch retried with the
 *   same request id is stored once, and every acknowledgement of it names the same offsets.
 * - Reordered: a batch acknowledged before another was sent has lower offsets.
 * - Dense: every replica's offsets run without a gap from its first, and never go back while it runs.
 * - Converge: all replicas hold the same bytes at the same offset.
 * - FailedBatchAppeared: a batch the client was told failed for certain (the disk refused it) never
 *   shows up anywhere.
 * - RetainedLost: retention (each node on its own clock) removes only batches appended before its
 *   cutoff, oldest first: an acknowledged batch appended at or after the largest cutoff any node used
 *   is readable on every replica that applied that far. A replica's readable log may start after
 *   offset 0 (`skipped`), nowhere past such a batch.
 * - RetainedForgotten: a replica that starts again with at least the state of the latest snapshot it
 *   held when it stopped (its applied index at or past that snapshot's) reads from no later offset
 *   than it did then (its readable start, counting a fetch of the log before an installed snapshot
 *   under way). Since that snapshot, a replica's start only moves forward (retention, a fetch that
 *   ended, or was given up), and what its disk kept is an earlier point of that: a later start is
 *   a log forgotten (a fetch under way not resumed), events no retention removed, which RetainedLost
 *   sees only while they are within every node's cutoff (a node with a fast clock can have cut
 *   everything older than its last few hundred ms).
 * - AppendTime: a batch's append time (the leader's clock when it proposed it) is not before the
 *   batch was sent (the slowest node's clock then): so a batch sent at or after a cutoff, allowing for
 *   every node's clock skew, is protected whatever node stamped it.
 */
import { InvariantViolation } from './invariants.js';

export interface Batch {
  readonly id: string;
  readonly partition: number;
  readonly payloads: readonly string[];
  /** The highest offset of any batch acknowledged before this one was sent. */
  readonly floor: number;
  status: 'pending' | 'acked' | 'failed' | 'unknown';
  first?: number;
  /** The slowest node's wall clock when the batch was sent: every append time of it is at least this. */
  readonly sentWall: number;
  /** The earliest append time of it seen in a committed entry (a retry refused as duplicate comes later). */
  stamp?: number;
}

interface PartitionBook {
  /**
   * offset -> event, as the first replica that applied it reported it; a hole where replicas read
   * from a later oldest offset before any reported it (retention removed it first).
   */
  readonly ref: (string | undefined)[];
  /** event -> offset. */
  readonly where: Map<string, number>;
  /** offset -> event, from acknowledgements. */
  readonly expected: Map<number, string>;
  ackedMax: number;
  /** Replica -> where it read from when it stopped, and the latest snapshot it held (see stopped). */
  readonly stops: Map<string, { group: number; index: number; start: number }>;
  /** Acknowledged batches, and the largest retention cutoff any node used (wall-clock ms). */
  readonly acked: Batch[];
  cutoffMax: number;
  /** offset -> an event a consumer read there before any replica's reader reported that offset. */
  readonly claims: Map<number, { who: string; payload: string }>;
  /** event -> the offset consumers read it at. */
  readonly consumed: Map<string, number>;
  /** The acknowledged batch with the lowest offsets that retention must keep (recomputed when stale). */
  floor: Batch | undefined;
  floorStale: boolean;
}

export function batchOfEvent(payload: string): string {
  return payload.slice(0, payload.indexOf('.'));
}

export class PartitionLedger {
  readonly #books: PartitionBook[] = [];
  readonly #batches = new Map<string, Batch>();
  /** The slowest node's wall clock now (ms). */
  readonly #wallFloor: () => number;

  constructor(partitions: number, wallFloor: () => number = () => 0) {
    this.#wallFloor = wallFloor;
    for (let p = 0; p < partitions; p++) this.#books.push({ ref: [], where: new Map(), expected: new Map(), claims: new Map(), consumed: new Map(), stops: new Map(), ackedMax: -1, acked: [], cutoffMax: -Infinity, floor: undefined, floorStale: false });
  }

  #book(p: number): PartitionBook {
    return this.#books[p]!;
  }

  /** A client is about to send a new batch. */
  newBatch(id: string, partition: number, size: number): Batch {
    const payloads = Array.from({ length: size }, (_, k) => `${id}.${k}`);
    const b: Batch = { id, partition, payloads, floor: this.#book(partition).ackedMax, status: 'pending', sentWall: this.#wallFloor() };
    this.#batches.set(id, b);
    return b;
  }

  ackedMax(p: number): number {
    return this.#book(p).ackedMax;
  }

  /** The newest offset some replica has applied (the longest log seen). */
  appliedMax(p: number): number {
    return this.#book(p).ref.length - 1;
  }

  /** The client was told the batch is stored at first..last. */
  acked(b: Batch, first: number, last: number): void {
    if (last - first + 1 !== b.payloads.length) {
      throw new InvariantViolation('AckedBatchLost', `batch ${b.id} of ${b.payloads.length} events acknowledged at ${first}..${last}`);
    }
    if (b.first !== undefined && b.first !== first) {
      throw new InvariantViolation('Duplicate', `batch ${b.id} acknowledged at ${b.first} and again at ${first} (a retry was stored twice)`);
    }
    if (b.status === 'failed') throw new InvariantViolation('FailedBatchAppeared', `batch ${b.id} was told failed and then acknowledged`);
    if (first <= b.floor) {
      throw new InvariantViolation('Reordered', `batch ${b.id} acknowledged at ${first}, not after offset ${b.floor} acknowledged before it was sent`);
    }
    const book = this.#book(b.partition);
    for (let k = 0; k < b.payloads.length; k++) {
      const o = first + k;
      const want = b.payloads[k]!;
      const have = book.ref[o];
      if (have !== undefined && have !== want) {
        throw new InvariantViolation('AckedBatchLost', `batch ${b.id} acknowledged at ${first}..${last}, but offset ${o} of partition ${b.partition} holds ${have}`);
      }
      const other = book.expected.get(o);
      if (other !== undefined && other !== want) {
        throw new InvariantViolation('AckedBatchLost', `batch ${b.id} acknowledged at ${first}..${last}, but ${other} was acknowledged at offset ${o} of partition ${b.partition}`);
      }
      book.expected.set(o, want);
      const claim = book.claims.get(o);
      if (claim !== undefined && claim.payload !== want) {
        throw new InvariantViolation('ConsumerReadLost', `batch ${b.id} acknowledged at ${first}..${last}, but consumer ${claim.who} read ${claim.payload} at offset ${o} of partition ${b.partition}`);
      }
    }
    b.status = 'acked';
    b.first = first;
    book.ackedMax = Math.max(book.ackedMax, last);
    book.acked.push(b);
    if (this.#kept(book, b) && (book.floor === undefined || first < book.floor.first!)) book.floor = b;
  }

  // ------------------------------------------------------------------ retention

  /** Whether retention must keep `b`: appended at or after every cutoff used so far. */
  #kept(book: PartitionBook, b: Batch): boolean {
    return Math.max(b.stamp ?? -Infinity, b.sentWall) >= book.cutoffMax;
  }

  /** A node applies retention to partition `p` with `cutoffMs` (its own wall clock minus the retention time). */
  retention(p: number, cutoffMs: number): void {
    const book = this.#book(p);
    if (cutoffMs <= book.cutoffMax) return;
    book.cutoffMax = cutoffMs;
    book.floorStale = true;
  }

  /** A committed entry holds (a copy of) batch `id` appended at `appendTimeMs` by its leader. */
  stamped(p: number, id: string, appendTimeMs: number): void {
    const b = this.#batches.get(id);
    if (b === undefined || b.partition !== p) return;
    if (appendTimeMs < b.sentWall) {
      throw new InvariantViolation('AppendTime', `batch ${b.id} of partition ${p} appended at ${appendTimeMs}, before it was sent (every clock was at ${b.sentWall} or later)`);
    }
    if (b.stamp !== undefined && b.stamp <= appendTimeMs) return;
    b.stamp = appendTimeMs;
    if (b.status === 'acked') this.#book(p).floorStale = true;
  }

  /** The acknowledged batch at the lowest offsets that retention must keep, if any. */
  keptFloor(p: number): Batch | undefined {
    const book = this.#book(p);
    if (book.floorStale) {
      book.floorStale = false;
      book.floor = undefined;
      for (const b of book.acked) if (this.#kept(book, b) && (book.floor === undefined || b.first! < book.floor.first!)) book.floor = b;
    }
    return book.floor;
  }

  /**
   * Replica `who` of partition `p` reads from `oldest` on and has applied up to `newest`: every
   * acknowledged batch retention must keep that it applied is at or after `oldest`.
   */
  retained(who: string, p: number, oldest: number, newest: number): void {
    const f = this.keptFloor(p);
    if (f === undefined || f.first! >= oldest) return;
    const last = f.first! + f.payloads.length - 1;
    if (last > newest) return;
    const book = this.#book(p);
    throw new InvariantViolation('RetainedLost', `${who} partition ${p} reads from offset ${oldest} (applied to ${newest}), but batch ${f.id} at ${f.first}..${last} was appended at ${Math.max(f.stamp ?? -Infinity, f.sentWall)}, not before the largest retention cutoff ${book.cutoffMax}`);
  }

  /**
   * A reader of replica `who` read up to `previous` and the replica's readable log now starts at
   * `oldest` (retention removed what lies between, or the replica never held it: a snapshot installed
   * without its log). `kept`: where the replica holds the log from for this check (lower while it
   * fetches the log before a snapshot: those events are still coming).
   */
  skipped(who: string, p: number, previous: number, oldest: number, newest: number, kept = oldest): void {
    if (oldest <= previous + 1) throw new InvariantViolation('Dense', `${who} partition ${p}: skipping from ${previous} to ${oldest}`);
    if (oldest > newest + 1) throw new InvariantViolation('Dense', `${who} partition ${p}: oldest offset ${oldest} beyond newest ${newest}`);
    this.retained(who, p, kept, newest);
    // The offsets before it exist (committed) even if no reader saw them.
    const book = this.#book(p);
    if (book.ref.length < oldest) book.ref.length = oldest;
  }

  /**
   * Replica `who` of partition `p` (raft group `group`) stopped reading from offset `start` (counting
   * a fetch of the log before its snapshot under way), holding the state of a snapshot at raft index
   * `index` (the latest it installed or took; 0: none).
   */
  stopped(who: string, p: number, group: number, index: number, start: number): void {
    this.#book(p).stops.set(who, { group, index, start });
  }

  /**
   * Replica `who` of partition `p` (raft group `group`) opened at raft index `applied`, reading from
   * offset `start`, with the stored snapshot `snapshot` (its raft index, and the offset its image says
   * the log starts at: the next offset if it names none). If it stopped before holding a snapshot it
   * still holds (applied at or past that snapshot's index), it reads from no later than then
   * (RetainedForgotten).
   *
   * A stored snapshot later than the one of the stop record was written, durably, while the node
   * still ran on the older one: a snapshot's records are made durable first and installed after (a
   * node that stops between the two, say while its turn waits for another write, installs it at its
   * next start). A replica that installs its leader's snapshot without the log before it (the
   * leader's retention had removed what it lacked) reads from where that image says the log starts,
   * as it would have without the stop: its start may move up to there, and no further.
   */
  reopened(who: string, p: number, group: number, applied: number, start: number, snapshot?: { index: number; start: number }): void {
    const book = this.#book(p);
    const s = book.stops.get(who);
    book.stops.delete(who);
    if (s === undefined || s.group !== group || applied < s.index || start <= s.start) return;
    if (snapshot !== undefined && snapshot.index > s.index && start <= snapshot.start) return;
    const newer = snapshot !== undefined && snapshot.index > s.index ? ` (its snapshot at index ${snapshot.index}, stored meanwhile, names offset ${snapshot.start})` : '';
    throw new InvariantViolation('RetainedForgotten', `${who} partition ${p} stopped reading from offset ${s.start} with the state of its snapshot at index ${s.index}, and started again at index ${applied} reading from offset ${start}${newer}: it dropped the log between`);
  }

  /** The client was told the batch failed for certain (nothing stored). */
  failed(b: Batch): void {
    if (b.status === 'acked') throw new InvariantViolation('FailedBatchAppeared', `batch ${b.id} was acknowledged and then told failed`);
    const book = this.#book(b.partition);
    for (const p of b.payloads) {
      const o = book.where.get(p);
      if (o !== undefined) throw new InvariantViolation('FailedBatchAppeared', `batch ${b.id} was told failed but is stored at offset ${o} of partition ${b.partition}`);
      const c = book.consumed.get(p);
      if (c !== undefined) throw new InvariantViolation('FailedBatchAppeared', `batch ${b.id} was told failed but a consumer read it at offset ${c} of partition ${b.partition}`);
    }
    b.status = 'failed';
  }

  /** The outcome is unknown (a timeout, a crash of the node the client talked to): either is fine. */
  unknown(b: Batch): void {
    if (b.status === 'pending') b.status = 'unknown';
  }

  /** A replica (`who`) holds `payload` at `offset`, right after `previous` (-1: its first). */
  stored(who: string, p: number, previous: number, offset: number, payload: string): void {
    if (offset !== previous + 1) {
      throw new InvariantViolation('Dense', `${who} partition ${p}: offset ${offset} follows ${previous}`);
    }
    const book = this.#book(p);
    const have = book.ref[offset];
    if (have === undefined) {
      if (offset > book.ref.length) throw new InvariantViolation('Dense', `${who} partition ${p}: offset ${offset} while others hold ${book.ref.length - 1}`);
      const exp = book.expected.get(offset);
      if (exp !== undefined && exp !== payload) throw new InvariantViolation('AckedBatchLost', `${who} partition ${p} holds ${payload} at offset ${offset}, acknowledged there: ${exp}`);
      book.ref[offset] = payload;
      const claim = book.claims.get(offset);
      book.claims.delete(offset);
      if (claim !== undefined && claim.payload !== payload) {
        throw new InvariantViolation('ConsumerReadLost', `consumer ${claim.who} read ${claim.payload} at offset ${offset} of partition ${p}, but ${who} holds ${payload} there`);
      }
    } else if (have !== payload) {
      const exp = book.expected.get(offset);
      const what = exp === undefined ? 'Converge' : 'AckedBatchLost';
      throw new InvariantViolation(what, `${who} partition ${p} holds ${payload} at offset ${offset}; ${exp === undefined ? 'another replica holds' : 'acknowledged there:'} ${have}`);
    }
    const at = book.where.get(payload);
    if (at === undefined) book.where.set(payload, offset);
    else if (at !== offset) throw new InvariantViolation('Duplicate', `${who} partition ${p}: event ${payload} stored at ${at} and at ${offset}`);
    const b = this.#batches.get(batchOfEvent(payload));
    if (b === undefined) throw new InvariantViolation('Converge', `${who} partition ${p}: offset ${offset} holds ${payload}, which no client sent`);
    if (b.status === 'failed') throw new InvariantViolation('FailedBatchAppeared', `${who} partition ${p}: batch ${b.id} was told failed but is stored at offset ${offset}`);
    if (b.partition !== p) throw new InvariantViolation('Converge', `${who}: batch ${b.id} of partition ${b.partition} stored in partition ${p}`);
    const k = Number(payload.slice(payload.indexOf('.') + 1));
    if (b.first !== undefined && b.first + k !== offset) {
      throw new InvariantViolation('AckedBatchLost', `${who} partition ${p}: event ${payload} at ${offset}, acknowledged at ${b.first + k}`);
    }
  }

  /**
   * A consumer (`who`) read `payload` at `offset` of partition `p` (its stream's continuity is checked
   * by the consumer): the event must be the one the partition's log holds there — what the replicas'
   * readers reported, or, if none reported that offset yet, what they report later (`claims`) — of a
   * batch a client sent to that partition, not told failed, and at the offsets it was acknowledged at.
   */
  consumed(who: string, p: number, offset: number, payload: string): void {
    const book = this.#book(p);
    const b = this.#batches.get(batchOfEvent(payload));
    if (b === undefined || b.partition !== p) throw new InvariantViolation('ConsumerPhantom', `consumer ${who} read ${payload} at offset ${offset} of partition ${p}, which no client sent to it`);
    if (b.status === 'failed') throw new InvariantViolation('FailedBatchAppeared', `consumer ${who} read ${payload} at offset ${offset} of partition ${p}: its batch was told failed`);
    const k = Number(payload.slice(payload.indexOf('.') + 1));
    if (b.first !== undefined && b.first + k !== offset) throw new InvariantViolation('ConsumerReadLost', `consumer ${who} read ${payload} at offset ${offset} of partition ${p}, acknowledged at ${b.first + k}`);
    const exp = book.expected.get(offset);
    if (exp !== undefined && exp !== payload) throw new InvariantViolation('ConsumerReadLost', `consumer ${who} read ${payload} at offset ${offset} of partition ${p}, acknowledged there: ${exp}`);
    const at = book.consumed.get(payload) ?? book.where.get(payload);
    if (at !== undefined && at !== offset) throw new InvariantViolation('Duplicate', `consumer ${who} read ${payload} at offset ${offset} of partition ${p}, and it is at ${at}`);
    book.consumed.set(payload, offset);
    const have = book.ref[offset];
    if (have !== undefined) {
      if (have !== payload) throw new InvariantViolation('ConsumerReadLost', `consumer ${who} read ${payload} at offset ${offset} of partition ${p}, the replicas hold ${have} there`);
      return;
    }
    const claim = book.claims.get(offset);
    if (claim !== undefined && claim.payload !== payload) throw new InvariantViolation('ConsumerReadLost', `consumers ${claim.who} and ${who} read ${claim.payload} and ${payload} at offset ${offset} of partition ${p}`);
    book.claims.set(offset, { who, payload });
  }

  /** Events consumers read at offsets beyond every replica's log (checked once the replicas converged). */
  claimsBeyond(p: number): string[] {
    const book = this.#book(p);
    return [...book.claims].filter(([o]) => o >= book.ref.length).map(([o, c]) => `${c.who} read ${c.payload} at ${o}`);
  }

  counts(): { acked: number; failed: number; unknown: number; pending: number } {
    const c = { acked: 0, failed: 0, unknown: 0, pending: 0 };
    for (const b of this.#batches.values()) c[b.status]++;
    return c;
  }
}
