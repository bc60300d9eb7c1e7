/**
 * Bytes allocated with unused room in front of them, for the Raft log record that will hold them.
 *
 * Why: a partition entry's bytes are stored once more as their Raft log record, which puts a head
 * (format, checksum, kind, term, index, type: broker/raft-records.ts) before them; framing them in a
 * buffer of their own copied every entry again, on every replica (one ArrayBuffer as large as the
 * entry per entry per node, which is what starts V8's full collections on a partition leader and
 * follower: docs/benchmarks.md). An entry allocated here (its encoder on the leader, the transport's
 * copy out of a received message on a follower) leaves that head's room before its bytes, and the
 * record is written into the room around them instead.
 *
 * The room is taken once: the first record made of the bytes writes its head there and later ones
 * copy, so a record handed to a store is never changed under it. Nothing else may write into it.
 */

/** The room left before the bytes: the head of an entry's Raft log record (broker/raft-records.ts checks that it fits). */
export const recordHeadroomBytes = 23;

/** Buffers returned by allocWithHeadroom whose room is not taken yet (weak: gone with the buffer). */
const untaken = new WeakSet<Uint8Array>();

/**
 * `size` bytes in memory of their own (not a pool slab shared with other buffers), with
 * recordHeadroomBytes unused bytes before them in the same ArrayBuffer.
 */
export function allocWithHeadroom(size: number): Buffer {
  const whole = Buffer.allocUnsafeSlow(recordHeadroomBytes + size);
  const data = whole.subarray(recordHeadroomBytes);
  untaken.add(data);
  return data;
}

/**
 * The `room` bytes before `data` followed by `data` itself, as one buffer over the same memory, the
 * first time it is asked for `data` (allocated by allocWithHeadroom); undefined for any other buffer,
 * for room it does not have, and once taken. The caller writes its head into the first `room` bytes.
 */
export function takeHeadroom(data: Uint8Array, room: number): Buffer | undefined {
  if (room > recordHeadroomBytes || !untaken.delete(data)) return undefined;
  return Buffer.from(data.buffer, data.byteOffset - room, room + data.byteLength);
}
