/**
 * The cursor tools of the interface ("Partitions and cursors (unmanaged)"): the distance between two
 * cursors, the lag of a cursor, and a cursor shifted by a number of events. The HTTP routes
 * (api/routes/partitions.ts) answer with these, and the host simulation runs them on its nodes during
 * chaos. Every cursor is resolved against the node's bounds of the partition (cursors.ts), so an
 * answer never names an offset past what the node knows is committed; a cursor it cannot place is a
 * 422 Problem, and a partition it cannot reach a 503.
 */
import { problems } from '../core/problem.js';
import { toOffset } from '../core/offset.js';
import type { EventTypeRecord } from '../metadata/types.js';
import type { CursorResolver, PartitionView, WireCursor } from './cursors.js';

/** Events after `initial` up to `final` (negative when final comes first); offsets are dense. */
export function cursorDistance(cursors: CursorResolver, rec: EventTypeRecord, initial: WireCursor, final: WireCursor, where: string): number {
  if (initial.partition !== final.partition) throw problems.unprocessable(`${where}: initial_cursor and final_cursor must name the same partition`);
  const a = cursors.resolve(rec, initial.partition, initial.offset);
  const b = cursors.resolve(rec, final.partition, final.offset);
  return b - a;
}

/** The partition with the events not consumed after `cursor` (cursors-lag). */
export function cursorLag(cursors: CursorResolver, rec: EventTypeRecord, cursor: WireCursor): PartitionView {
  return cursors.partitionView(rec, cursor.partition, cursors.resolve(rec, cursor.partition, cursor.offset));
}

/** `cursor` moved by `shift` events: within [oldest - 1, newest] of the partition, else 422. */
export function shiftCursor(cursors: CursorResolver, rec: EventTypeRecord, cursor: WireCursor, shift: number, where: string): WireCursor {
  const start = cursors.resolve(rec, cursor.partition, cursor.offset);
  const target = start + shift;
  if (target < -1) throw problems.invalidCursor(`${where}: shifting ${cursor.offset} by ${shift} goes before the first offset`);
  // Past 2^53 the sum is no longer exact (and no partition holds that many events): not yet existing.
  if (!Number.isSafeInteger(target)) throw problems.invalidCursor(`${where}: shifting ${cursor.offset} by ${shift} goes past the newest offset`);
  cursors.checkInRange(rec, cursor.partition, toOffset(target), `${cursor.offset} shifted by ${shift}`);
  return { partition: cursor.partition, offset: cursors.formatCursor(rec, cursor.partition, toOffset(target)) };
}
