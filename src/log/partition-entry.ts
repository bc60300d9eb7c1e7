/**
 * The payload of a partition Raft group's log entries: the on-disk (and on-wire) form of what a
 * partition's log holds. The Raft log is the partition log, so an event batch is stored exactly once,
 * as the data of its Raft entry; its offsets are not in it (they are assigned when the entry is
 * applied, see src/replication/partition-state.ts), which is why a batch can be proposed, replicated
 * and retried before anyone knows its offsets.
 *
 * Layout (all integers big-endian):
 *
 *   event batch (kind 1):
 *     0   u8   kind = 1
 *     1   u32  CRC32C of the kind byte and bytes [5, end)
 *     5   u64  append time, ms since the epoch (the leader's clock when it proposed)
 *     13  u16  request id length r (0: no de-duplication)
 *     15  r    request id (UTF-8)
 *     ..  u32  count n (>= 1)
 *     ..  u32 × n  event lengths
 *     ..  event bytes, concatenated
 *
 *   base (kind 2): u8 kind, u32 CRC32C (as above), u64 base offset — sets where offsets start on an
 *   empty log (a timeline's first offset, or the end of data migrated from the pre-Raft store).
 *
 *   seal (kind 3): u8 kind, u32 CRC32C (as above), u64 floor, u16 timeline id length t, t timeline id
 *   (UTF-8) — closes the log for the timeline switch to that timeline (src/replication/partition-state.ts
 *   applySeal); `floor` is where this log's own timeline starts.
 *
 * An empty payload is Raft's own no-op (a new leader's first entry). Unknown kinds are refused when
 * decoded, so a newer node's entry is never misread as events.
 */
import { crc32c } from './crc32c.js';
import { readU64, writeU64 } from './keys.js';

export const kindBatch = 1;
export const kindBase = 2;
export const kindSeal = 3;
/** Timeline ids are UUIDs; bounded so a malformed one cannot bloat an entry. */
export const timelineIdBytesMax = 64;
const crcStart = 5;
const batchFixedBytes = 15;

/** The checksum covers the kind byte too, so a flipped kind is never read as another kind. */
function entryCrc(data: Buffer): number {
  return crc32c(data, crc32c(data, 0, 0, 1), crcStart);
}
/** Request ids are bounded so a hostile or buggy forwarder cannot bloat every entry. */
export const requestIdBytesMax = 128;

export class PartitionEntryError extends Error {
  override name = 'PartitionEntryError';
}

export function encodeBatchEntry(appendTimeMs: number, requestId: string, events: readonly Buffer[]): Buffer {
  if (events.length === 0) throw new PartitionEntryError('a batch holds at least one event');
  const id = Buffer.from(requestId, 'utf8');
  if (id.length > requestIdBytesMax) throw new PartitionEntryError(`request id of ${id.length} bytes (at most ${requestIdBytesMax})`);
  let payload = 0;
  for (const e of events) payload += e.length;
  const size = batchFixedBytes + id.length + 4 + 4 * events.length + payload;
  const out = Buffer.allocUnsafe(size);
  out[0] = kindBatch;
  writeU64(out, 5, appendTimeMs);
  out.writeUInt16BE(id.length, 13);
  let at = batchFixedBytes;
  id.copy(out, at);
  at += id.length;
  out.writeUInt32BE(events.length, at);
  at += 4;
  for (const e of events) {
    out.writeUInt32BE(e.length, at);
    at += 4;
  }
  for (const e of events) {
    e.copy(out, at);
    at += e.length;
  }
  out.writeUInt32BE(entryCrc(out), 1);
  return out;
}

export function encodeBaseEntry(base: number): Buffer {
  const out = Buffer.allocUnsafe(13);
  out[0] = kindBase;
  writeU64(out, 5, base);
  out.writeUInt32BE(entryCrc(out), 1);
  return out;
}

export function encodeSealEntry(timeline: string, floor: number): Buffer {
  const id = Buffer.from(timeline, 'utf8');
  if (id.length === 0 || id.length > timelineIdBytesMax) throw new PartitionEntryError(`timeline id of ${id.length} bytes (1 to ${timelineIdBytesMax})`);
  const out = Buffer.allocUnsafe(15 + id.length);
  out[0] = kindSeal;
  writeU64(out, 5, floor);
  out.writeUInt16BE(id.length, 13);
  id.copy(out, 15);
  out.writeUInt32BE(entryCrc(out), 1);
  return out;
}

/** What apply needs of an entry, read without touching the events (no per-event work on apply). */
export type EntryHead =
  | { readonly kind: 'noop' }
  | { readonly kind: 'batch'; readonly requestId: string; readonly count: number; readonly appendTimeMs: number }
  | { readonly kind: 'base'; readonly base: number }
  | { readonly kind: 'seal'; readonly timeline: string; readonly floor: number };

function checkCrc(data: Buffer): void {
  if (data.length < crcStart) throw new PartitionEntryError(`entry of ${data.length} bytes`);
  const stored = data.readUInt32BE(1);
  const actual = entryCrc(data);
  if (stored !== actual) throw new PartitionEntryError(`checksum mismatch (stored ${stored.toString(16)}, computed ${actual.toString(16)})`);
}

/** Verifies the checksum and reads the head of an entry. Throws PartitionEntryError on any damage. */
export function decodeEntryHead(data: Buffer): EntryHead {
  if (data.length === 0) return { kind: 'noop' };
  checkCrc(data);
  switch (data[0]) {
    case kindBatch: {
      if (data.length < batchFixedBytes + 4) throw new PartitionEntryError('truncated batch header');
      const idLen = data.readUInt16BE(13);
      const countAt = batchFixedBytes + idLen;
      if (countAt + 4 > data.length) throw new PartitionEntryError('truncated request id');
      const count = data.readUInt32BE(countAt);
      if (count === 0) throw new PartitionEntryError('empty batch');
      return { kind: 'batch', requestId: data.toString('utf8', batchFixedBytes, countAt), count, appendTimeMs: readU64(data, 5) };
    }
    case kindBase:
      if (data.length !== 13) throw new PartitionEntryError('malformed base entry');
      return { kind: 'base', base: readU64(data, 5) };
    case kindSeal: {
      if (data.length < 15) throw new PartitionEntryError('truncated seal entry');
      const len = data.readUInt16BE(13);
      if (len === 0 || len > timelineIdBytesMax || data.length !== 15 + len) throw new PartitionEntryError('malformed seal entry');
      return { kind: 'seal', timeline: data.toString('utf8', 15), floor: readU64(data, 5) };
    }
    default:
      throw new PartitionEntryError(`unknown partition entry kind ${data[0]}`);
  }
}

/**
 * The events of a batch entry whose checksum was verified (decodeEntryHead), as views into `data`
 * (no copy). Lengths are checked against the entry's size.
 */
export function batchEvents(data: Buffer): Buffer[] {
  const idLen = data.readUInt16BE(13);
  let at = batchFixedBytes + idLen;
  const count = data.readUInt32BE(at);
  at += 4;
  let body = at + 4 * count;
  if (body > data.length) throw new PartitionEntryError(`${count} lengths do not fit in ${data.length} bytes`);
  const events: Buffer[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const len = data.readUInt32BE(at + 4 * i);
    if (body + len > data.length) throw new PartitionEntryError(`event ${i} runs past the end of the entry`);
    events[i] = data.subarray(body, body + len);
    body += len;
  }
  if (body !== data.length) throw new PartitionEntryError(`${data.length - body} trailing bytes`);
  return events;
}

/** Bytes of the events alone (for read limits), without decoding them. */
export function batchPayloadBytes(data: Buffer): number {
  const idLen = data.readUInt16BE(13);
  const count = data.readUInt32BE(batchFixedBytes + idLen);
  return data.length - (batchFixedBytes + idLen + 4 + 4 * count);
}
