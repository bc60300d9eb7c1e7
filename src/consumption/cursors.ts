/**
 * Cursor rules for the low-level API and the cursor tools (interface.md, "Partitions and cursors"):
 * decoding wire cursors against an event type's partitions and bounds, with 422 for unknown partitions,
 * malformed, expired or not-yet-existing offsets. A cursor is exclusive: it names the last consumed
 * event, so the valid range is [oldest - 1, newest].
 */
import { problems } from '../core/problem.js';
import { formatCursor, formatOffset, parseOffset, toOffset, type Offset } from '../core/offset.js';
import { timelineAt, timelinesOf } from '../metadata/timelines.js';
import type { EventTypeRecord } from '../metadata/types.js';
import type { PartitionBounds, PartitionReader } from './ports.js';

export interface WireCursor {
  partition: string;
  offset: string;
}

/** Checks the shape of a cursor object from a body or header; returns a 422 detail or null. */
export function cursorShapeError(c: unknown, where: string): string | null {
  if (c === null || typeof c !== 'object' || Array.isArray(c)) return `${where} must be an object with partition and offset`;
  const o = c as Record<string, unknown>;
  if (typeof o['partition'] !== 'string') return `${where}.partition must be a string`;
  if (typeof o['offset'] !== 'string') return `${where}.offset must be a string`;
  return null;
}

export class CursorResolver {
  readonly #reader: PartitionReader;

  constructor(reader: PartitionReader) {
    this.#reader = reader;
  }

  bounds(rec: EventTypeRecord, partition: string): PartitionBounds {
    return this.#reader.bounds(rec.storage.topic, this.partitionIndex(rec, partition));
  }

  /**
   * Brings the bounds of `partitions` (those of the event type; others are left to the checks that
   * refuse them) up to date where this node holds no replica of them, so that an answer after a publish
   * acknowledged on another node sees it (ports.ts, freshenBounds); a bounded wait, never a failure.
   */
  async freshen(rec: EventTypeRecord, partitions: Iterable<string>): Promise<void> {
    const fresh = this.#reader.freshenBounds?.bind(this.#reader);
    if (fresh === undefined) return;
    const known = new Set([...partitions].filter((p) => rec.storage.partitions.includes(p)));
    await Promise.all([...known].map((p) => fresh(rec.storage.topic, Number(p)).catch(() => undefined)));
  }

  partitionIndex(rec: EventTypeRecord, partition: string): number {
    if (!rec.storage.partitions.includes(partition)) {
      throw problems.invalidCursor(`Partition "${partition}" does not exist in event type "${rec.eventType.name}"`);
    }
    return Number(partition);
  }

  /** Decodes an offset string into an exclusive position without range checks (422 if malformed). */
  decode(rec: EventTypeRecord, partition: string, offset: string): Offset {
    const b = this.bounds(rec, partition);
    const pos = parseOffset(offset);
    if (pos === undefined) throw problems.invalidCursor(`Offset "${offset}" of partition "${partition}" is not a valid offset`);
    if (pos.kind === 'begin') return toOffset(b.oldest - 1);
    if (!timelinesOf(rec).some((t) => t.order === pos.timeline)) {
      throw problems.invalidCursor(`Offset "${offset}" of partition "${partition}" names an unknown timeline`);
    }
    return pos.offset;
  }

  /** Decodes and checks that the position is within [oldest-1, newest]. */
  resolve(rec: EventTypeRecord, partition: string, offset: string): Offset {
    const after = this.decode(rec, partition, offset);
    this.checkInRange(rec, partition, after, offset);
    return after;
  }

  /**
   * resolve(), but a cursor a little ahead of this node's copy of the partition (another node handed it
   * out and this replica has not applied that far yet: it trails its leader by a heartbeat or is
   * catching up after a restart) waits up to `waitMs` for the copy to get there before it is refused.
   */
  async resolveCatchingUp(rec: EventTypeRecord, partition: string, offset: string, waitMs: number): Promise<Offset> {
    const after = this.decode(rec, partition, offset);
    if (after > this.bounds(rec, partition).newest && waitMs > 0) {
      const index = this.partitionIndex(rec, partition);
      const deadline = AbortSignal.timeout(waitMs);
      while (!deadline.aborted && after > this.bounds(rec, partition).newest) {
        await this.#reader.waitForEvents(rec.storage.topic, index, this.bounds(rec, partition).newest, deadline);
      }
      const newest = this.bounds(rec, partition).newest;
      if (after > newest && this.#reader.newestElsewhere !== undefined) {
        // Still ahead of this copy: a cursor the broker handed out is not invalid because this node
        // trails (it restarted, or is cut off from the partition's leader). Only when the other
        // replicas do not know it either is it refused as invalid; when they do, or none answers,
        // the client is told to retry (its reading position stays valid).
        const elsewhere = await this.#reader.newestElsewhere(rec.storage.topic, index);
        if (elsewhere.asked > 0 && (elsewhere.newest === undefined || elsewhere.newest >= after)) {
          const why = elsewhere.newest === undefined ? 'no other replica of it answered' : `another replica holds it (its newest offset is ${this.formatCursor(rec, partition, elsewhere.newest as Offset)})`;
          throw problems.unavailable(`Offset "${offset}" of partition "${partition}" is ahead of this node's copy of the partition (newest here ${this.formatCursor(rec, partition, newest)}), which is catching up; ${why}. Retry, or read from another node.`);
        }
      }
    }
    this.checkInRange(rec, partition, after, offset);
    return after;
  }

  checkInRange(rec: EventTypeRecord, partition: string, after: Offset, shownAs: string): void {
    const b = this.bounds(rec, partition);
    if (after < b.oldest - 1) {
      throw problems.invalidCursor(`Offset "${shownAs}" of partition "${partition}" is expired; the oldest available offset is ${this.format(rec, partition, b.oldest)}`);
    }
    if (after > b.newest) {
      throw problems.invalidCursor(`Offset "${shownAs}" of partition "${partition}" does not exist yet; the newest offset is ${this.formatCursor(rec, partition, b.newest)}`);
    }
  }

  /** The wire form of an offset: the order of the timeline holding it (offsets are dense over timelines). */
  format(rec: EventTypeRecord, partition: string, offset: Offset): string {
    return formatOffset(timelineAt(timelinesOf(rec), Number(partition), offset).order, offset);
  }

  formatCursor(rec: EventTypeRecord, partition: string, after: Offset): string {
    return after < 0 ? formatCursor(1, after) : this.format(rec, partition, after);
  }

  /** The Partition object of the interface. Never-written partitions report BEGIN for both offsets. */
  partitionView(rec: EventTypeRecord, partition: string, consumedAfter?: Offset): PartitionView {
    const b = this.bounds(rec, partition);
    const view: PartitionView = {
      partition,
      oldest_available_offset: b.newest < 0 ? 'BEGIN' : this.format(rec, partition, b.oldest),
      newest_available_offset: this.formatCursor(rec, partition, b.newest),
    };
    if (consumedAfter !== undefined) view.unconsumed_events = Math.max(0, b.newest - consumedAfter);
    return view;
  }
}

export interface PartitionView {
  partition: string;
  oldest_available_offset: string;
  newest_available_offset: string;
  unconsumed_events?: number;
}
