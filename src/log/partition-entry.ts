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
 *   event batches (kind 3): the publish batches a leader took for the partition between two turns of
 *   its node, in one entry (one proposal, one record, one write for all of them, as the store before
 *   Raft merged the appends of one commit); each keeps its own request id, so each is de-duplicated
 *   on its own at apply:
 *     0   u8   kind = 3
 *     1   u32  CRC32C of the kind byte and bytes [5, end)
 *     5   u64  append time
 *     13  u16  number of batches m (>= 1)
 *     15  m ×  { u16 request id length r, r bytes request id (UTF-8), u32 count n (>= 1) }
 *     ..  u32 × (sum of n)  event lengths
 *     ..  event bytes, concatenated
 *   Kind 1 is what kind 3 is with one batch; it is still read (entries written before kind 3).
 *
 * An empty payload is Raft's own no-op (a new leader's first entry). Unknown kinds are refused when
 * decoded, so a newer node's entry is never misread as events.
 */
import { allocWithHeadroom } from '../core/headroom.js';
import { crc32c, crc32cCombine, crc32cUncombine } from './crc32c.js';
import { readU64, writeU64 } from './keys.js';

export const kindBatch = 1;
export const kindBase = 2;
export const kindBatches = 3;
export const kindSeal = 4;
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

/**
 * Entries this process encoded (its own proposals). Their bytes went from the encoder to apply in
 * memory, unstored and unsent, so apply need not check their checksum again (an entry that came
 * from another node or from the disk is a different buffer and is checked). Weak: an entry leaves
 * the set when its last copy in memory is gone.
 */
const encodedHere = new WeakSet<Uint8Array>();

/** Entries from elsewhere whose checksum was checked on arrival (checkArrived): apply does not check them again. */
const checkedHere = new WeakSet<Uint8Array>();

/** Whether `data` is the very buffer an encoder of this process returned. */
export function isEncodedHere(data: Uint8Array): boolean {
  return encodedHere.has(data);
}

/**
 * The plain CRC32C of all the bytes of an entry this process encoded, or whose checksum it checked
 * (on arrival from another node, or a copy of either: checkArrived, markChecked), derived from the
 * checksum the entry holds without reading its events again (a log record around it checksums it once
 * more: this spares that pass); undefined for any other buffer. For a checked entry the derivation is
 * as exact as for an encoded one: the check found its checksum to be that of its bytes. A follower
 * stored every entry it received after two passes over its events (the check, then its log record's
 * checksum); now one.
 */
export function knownCrc32c(data: Uint8Array): number | undefined {
  if (data.length < crcStart || !(encodedHere.has(data) || checkedHere.has(data))) return undefined;
  const b = Buffer.from(data.buffer, data.byteOffset, data.length);
  const rest = data.length - crcStart;
  // The entry's checksum covers the kind byte and the rest: take the kind byte out, put the whole
  // head (kind and checksum) back in front.
  const ofRest = crc32cUncombine(b.readUInt32BE(1), crc32c(b, 0, 0, 1), rest);
  return crc32cCombine(crc32c(b, 0, 0, crcStart), ofRest, rest);
}


/**
 * Checks the checksum of an entry that came from another node (throws PartitionEntryError), and
 * remembers that it passed, so that applying the same buffer later does not check it again.
 */
export function checkArrived(data: Uint8Array): void {
  if (data.length === 0 || encodedHere.has(data) || checkedHere.has(data)) return;
  checkCrc(Buffer.from(data.buffer, data.byteOffset, data.length));
  checkedHere.add(data);
}

/**
 * Marks a copy of an entry whose checksum was checked (or that was encoded here) as checked: a memory
 * tail that keeps entries' bytes rather than their buffers hands out copies (broker/ring-storage.ts).
 */
export function markChecked(data: Uint8Array): void {
  checkedHere.add(data);
}

/** Whether the checksum of `data` needs no check: this process encoded it, or checked it on arrival. */
export function isChecked(data: Uint8Array): boolean {
  return encodedHere.has(data) || checkedHere.has(data);
}

export class PartitionEntryError extends Error {
  override name = 'PartitionEntryError';
}

/**
 * A buffer with its own memory for an encoded entry. Entries stay in the Raft memory tail for seconds
 * to minutes, counted there by their byteLength: Buffer.allocUnsafe would give one under 4 KB (an
 * entry of a few small events) as a slice of Node's shared 8 KB pool, and keep the whole pool slab (and
 * whatever else was cut from it) alive as long as the entry, i.e. several times the bytes counted.
 */
function ownedBuffer(size: number): Buffer {
  // With room before the bytes for the head of the Raft log record that will store them.
  return allocWithHeadroom(size);
}

export function encodeBatchEntry(appendTimeMs: number, requestId: string, events: readonly Buffer[]): Buffer {
  if (events.length === 0) throw new PartitionEntryError('a batch holds at least one event');
  const id = Buffer.from(requestId, 'utf8');
  if (id.length > requestIdBytesMax) throw new PartitionEntryError(`request id of ${id.length} bytes (at most ${requestIdBytesMax})`);
  let payload = 0;
  for (const e of events) payload += e.length;
  const size = batchFixedBytes + id.length + 4 + 4 * events.length + payload;
  const out = ownedBuffer(size);
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
  encodedHere.add(out);
  return out;
}

export function encodeBaseEntry(base: number): Buffer {
  const out = ownedBuffer(13);
  out[0] = kindBase;
  writeU64(out, 5, base);
  out.writeUInt32BE(entryCrc(out), 1);
  encodedHere.add(out);
  return out;
}

export function encodeSealEntry(timeline: string, floor: number): Buffer {
  const id = Buffer.from(timeline, 'utf8');
  if (id.length === 0 || id.length > timelineIdBytesMax) throw new PartitionEntryError(`timeline id of ${id.length} bytes (1 to ${timelineIdBytesMax})`);
  const out = ownedBuffer(15 + id.length);
  out[0] = kindSeal;
  writeU64(out, 5, floor);
  out.writeUInt16BE(id.length, 13);
  id.copy(out, 15);
  out.writeUInt32BE(entryCrc(out), 1);
  encodedHere.add(out);
  return out;
}

/** One publish batch of a kind-3 entry. */
export interface EntryBatch {
  readonly requestId: string;
  readonly events: readonly Buffer[];
}

/** Publish batches (at least one) in one entry, in order: kind 3. */
export function encodeBatchesEntry(appendTimeMs: number, batches: readonly EntryBatch[]): Buffer {
  if (batches.length === 0 || batches.length > 0xffff) throw new PartitionEntryError(`an entry holds 1 to 65535 batches, not ${batches.length}`);
  // Request ids are written straight into the entry, not first encoded into buffers of their own, and
  // events copied with TypedArray.set (Buffer.copy makes a view of its source per call): this runs for
  // every entry of every partition a publish touches.
  const idBytes: number[] = new Array<number>(batches.length);
  let size = batchFixedBytes;
  for (let i = 0; i < batches.length; i++) {
    const b = batches[i]!;
    if (b.events.length === 0) throw new PartitionEntryError('a batch holds at least one event');
    const n = Buffer.byteLength(b.requestId, 'utf8');
    if (n > requestIdBytesMax) throw new PartitionEntryError(`request id of ${n} bytes (at most ${requestIdBytesMax})`);
    idBytes[i] = n;
    size += 6 + n + 4 * b.events.length;
    for (const e of b.events) size += e.length;
  }
  const out = ownedBuffer(size);
  out[0] = kindBatches;
  writeU64(out, 5, appendTimeMs);
  out.writeUInt16BE(batches.length, 13);
  let at = batchFixedBytes;
  for (let i = 0; i < batches.length; i++) {
    const n = idBytes[i]!;
    out.writeUInt16BE(n, at);
    out.write(batches[i]!.requestId, at + 2, n, 'utf8');
    at += 2 + n;
    out.writeUInt32BE(batches[i]!.events.length, at);
    at += 4;
  }
  for (const b of batches) {
    for (const e of b.events) {
      out.writeUInt32BE(e.length, at);
      at += 4;
    }
  }
  for (const b of batches) {
    for (const e of b.events) {
      out.set(e, at);
      at += e.length;
    }
  }
  out.writeUInt32BE(entryCrc(out), 1);
  encodedHere.add(out);
  return out;
}

/** One batch of an entry as apply sees it: its request id and how many events it holds. */
export interface BatchHead {
  readonly requestId: string;
  readonly count: number;
}

/** What apply needs of an entry, read without touching the events (no per-event work on apply). */
export type EntryHead =
  | { readonly kind: 'noop' }
  | { readonly kind: 'batches'; readonly batches: readonly BatchHead[]; readonly count: number; readonly appendTimeMs: number }
  | { readonly kind: 'base'; readonly base: number }
  | { readonly kind: 'seal'; readonly timeline: string; readonly floor: number };

function checkCrc(data: Buffer): void {
  if (data.length < crcStart) throw new PartitionEntryError(`entry of ${data.length} bytes`);
  const stored = data.readUInt32BE(1);
  const actual = entryCrc(data);
  if (stored !== actual) throw new PartitionEntryError(`checksum mismatch (stored ${stored.toString(16)}, computed ${actual.toString(16)})`);
}

/**
 * Verifies the checksum and reads the head of an entry. Throws PartitionEntryError on any damage.
 * `verified`: the checksum was checked already, or the bytes never left this process (isEncodedHere);
 * the structure is still checked.
 */
export function decodeEntryHead(data: Buffer, verified = false): EntryHead {
  if (data.length === 0) return { kind: 'noop' };
  if (verified) {
    if (data.length < crcStart) throw new PartitionEntryError(`entry of ${data.length} bytes`);
  } else checkCrc(data);
  switch (data[0]) {
    case kindBatch:
    case kindBatches: {
      const { batches, count } = readBatchHeads(data);
      return { kind: 'batches', batches, count, appendTimeMs: readU64(data, 5) };
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

/** The batches of a kind 1 or 3 entry, their total count and where the event lengths start. */
function readBatchHeads(data: Buffer): { batches: BatchHead[]; count: number; lengthsAt: number } {
  if (data.length < batchFixedBytes) throw new PartitionEntryError('truncated batch header');
  if (data[0] === kindBatch) {
    const idLen = data.readUInt16BE(13);
    const countAt = batchFixedBytes + idLen;
    if (countAt + 4 > data.length) throw new PartitionEntryError('truncated request id');
    const count = data.readUInt32BE(countAt);
    if (count === 0) throw new PartitionEntryError('empty batch');
    return { batches: [{ requestId: data.toString('utf8', batchFixedBytes, countAt), count }], count, lengthsAt: countAt + 4 };
  }
  const m = data.readUInt16BE(13);
  if (m === 0) throw new PartitionEntryError('an entry of no batches');
  const batches: BatchHead[] = new Array(m);
  let at = batchFixedBytes;
  let count = 0;
  for (let i = 0; i < m; i++) {
    if (at + 2 > data.length) throw new PartitionEntryError(`truncated head of batch ${i}`);
    const idLen = data.readUInt16BE(at);
    const countAt = at + 2 + idLen;
    if (countAt + 4 > data.length) throw new PartitionEntryError(`truncated head of batch ${i}`);
    const n = data.readUInt32BE(countAt);
    if (n === 0) throw new PartitionEntryError(`batch ${i} is empty`);
    batches[i] = { requestId: data.toString('utf8', at + 2, countAt), count: n };
    count += n;
    at = countAt + 4;
  }
  return { batches, count, lengthsAt: at };
}

/**
 * The events of a batches entry (kind 1 or 3) whose checksum was verified (decodeEntryHead), as views
 * into `data` (no copy), the batches' events one after the other. Lengths are checked against the
 * entry's size.
 */
export function batchEvents(data: Buffer): Buffer[] {
  const { count, lengthsAt } = readBatchHeads(data);
  const at = lengthsAt;
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
  const { count, lengthsAt } = readBatchHeads(data);
  return data.length - (lengthsAt + 4 * count);
}
