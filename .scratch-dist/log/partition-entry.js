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
import { crc32c, crc32cCombine, crc32cUncombine } from './crc32c.js';
import { readU64, writeU64 } from './keys.js';
export const kindBatch = 1;
export const kindBase = 2;
export const kindBatches = 3;
const crcStart = 5;
const batchFixedBytes = 15;
/** The checksum covers the kind byte too, so a flipped kind is never read as another kind. */
function entryCrc(data) {
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
const encodedHere = new WeakSet();
/** Whether `data` is the very buffer an encoder of this process returned. */
export function isEncodedHere(data) {
    return encodedHere.has(data);
}
/**
 * The plain CRC32C of all the bytes of an entry this process encoded, derived from the checksum it
 * holds without reading its events again (a log record around it checksums it once more: this spares
 * that pass); undefined for any other buffer.
 */
export function knownCrc32c(data) {
    if (!encodedHere.has(data) || data.length < crcStart)
        return undefined;
    const b = Buffer.from(data.buffer, data.byteOffset, data.length);
    const rest = data.length - crcStart;
    // The entry's checksum covers the kind byte and the rest: take the kind byte out, put the whole
    // head (kind and checksum) back in front.
    const ofRest = crc32cUncombine(b.readUInt32BE(1), crc32c(b, 0, 0, 1), rest);
    return crc32cCombine(crc32c(b, 0, 0, crcStart), ofRest, rest);
}
export class PartitionEntryError extends Error {
    name = 'PartitionEntryError';
}
export function encodeBatchEntry(appendTimeMs, requestId, events) {
    if (events.length === 0)
        throw new PartitionEntryError('a batch holds at least one event');
    const id = Buffer.from(requestId, 'utf8');
    if (id.length > requestIdBytesMax)
        throw new PartitionEntryError(`request id of ${id.length} bytes (at most ${requestIdBytesMax})`);
    let payload = 0;
    for (const e of events)
        payload += e.length;
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
    encodedHere.add(out);
    return out;
}
export function encodeBaseEntry(base) {
    const out = Buffer.allocUnsafe(13);
    out[0] = kindBase;
    writeU64(out, 5, base);
    out.writeUInt32BE(entryCrc(out), 1);
    encodedHere.add(out);
    return out;
}
/** Publish batches (at least one) in one entry, in order: kind 3. */
export function encodeBatchesEntry(appendTimeMs, batches) {
    if (batches.length === 0 || batches.length > 0xffff)
        throw new PartitionEntryError(`an entry holds 1 to 65535 batches, not ${batches.length}`);
    const ids = [];
    let size = batchFixedBytes;
    for (const b of batches) {
        if (b.events.length === 0)
            throw new PartitionEntryError('a batch holds at least one event');
        const id = Buffer.from(b.requestId, 'utf8');
        if (id.length > requestIdBytesMax)
            throw new PartitionEntryError(`request id of ${id.length} bytes (at most ${requestIdBytesMax})`);
        ids.push(id);
        size += 6 + id.length + 4 * b.events.length;
        for (const e of b.events)
            size += e.length;
    }
    const out = Buffer.allocUnsafe(size);
    out[0] = kindBatches;
    writeU64(out, 5, appendTimeMs);
    out.writeUInt16BE(batches.length, 13);
    let at = batchFixedBytes;
    for (let i = 0; i < batches.length; i++) {
        const id = ids[i];
        out.writeUInt16BE(id.length, at);
        id.copy(out, at + 2);
        at += 2 + id.length;
        out.writeUInt32BE(batches[i].events.length, at);
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
            e.copy(out, at);
            at += e.length;
        }
    }
    out.writeUInt32BE(entryCrc(out), 1);
    encodedHere.add(out);
    return out;
}
function checkCrc(data) {
    if (data.length < crcStart)
        throw new PartitionEntryError(`entry of ${data.length} bytes`);
    const stored = data.readUInt32BE(1);
    const actual = entryCrc(data);
    if (stored !== actual)
        throw new PartitionEntryError(`checksum mismatch (stored ${stored.toString(16)}, computed ${actual.toString(16)})`);
}
/**
 * Verifies the checksum and reads the head of an entry. Throws PartitionEntryError on any damage.
 * `verified`: the checksum was checked already, or the bytes never left this process (isEncodedHere);
 * the structure is still checked.
 */
export function decodeEntryHead(data, verified = false) {
    if (data.length === 0)
        return { kind: 'noop' };
    if (verified) {
        if (data.length < crcStart)
            throw new PartitionEntryError(`entry of ${data.length} bytes`);
    }
    else
        checkCrc(data);
    switch (data[0]) {
        case kindBatch:
        case kindBatches: {
            const { batches, count } = readBatchHeads(data);
            return { kind: 'batches', batches, count, appendTimeMs: readU64(data, 5) };
        }
        case kindBase:
            if (data.length !== 13)
                throw new PartitionEntryError('malformed base entry');
            return { kind: 'base', base: readU64(data, 5) };
        default:
            throw new PartitionEntryError(`unknown partition entry kind ${data[0]}`);
    }
}
/** The batches of a kind 1 or 3 entry, their total count and where the event lengths start. */
function readBatchHeads(data) {
    if (data.length < batchFixedBytes)
        throw new PartitionEntryError('truncated batch header');
    if (data[0] === kindBatch) {
        const idLen = data.readUInt16BE(13);
        const countAt = batchFixedBytes + idLen;
        if (countAt + 4 > data.length)
            throw new PartitionEntryError('truncated request id');
        const count = data.readUInt32BE(countAt);
        if (count === 0)
            throw new PartitionEntryError('empty batch');
        return { batches: [{ requestId: data.toString('utf8', batchFixedBytes, countAt), count }], count, lengthsAt: countAt + 4 };
    }
    const m = data.readUInt16BE(13);
    if (m === 0)
        throw new PartitionEntryError('an entry of no batches');
    const batches = new Array(m);
    let at = batchFixedBytes;
    let count = 0;
    for (let i = 0; i < m; i++) {
        if (at + 2 > data.length)
            throw new PartitionEntryError(`truncated head of batch ${i}`);
        const idLen = data.readUInt16BE(at);
        const countAt = at + 2 + idLen;
        if (countAt + 4 > data.length)
            throw new PartitionEntryError(`truncated head of batch ${i}`);
        const n = data.readUInt32BE(countAt);
        if (n === 0)
            throw new PartitionEntryError(`batch ${i} is empty`);
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
export function batchEvents(data) {
    const { count, lengthsAt } = readBatchHeads(data);
    const at = lengthsAt;
    let body = at + 4 * count;
    if (body > data.length)
        throw new PartitionEntryError(`${count} lengths do not fit in ${data.length} bytes`);
    const events = new Array(count);
    for (let i = 0; i < count; i++) {
        const len = data.readUInt32BE(at + 4 * i);
        if (body + len > data.length)
            throw new PartitionEntryError(`event ${i} runs past the end of the entry`);
        events[i] = data.subarray(body, body + len);
        body += len;
    }
    if (body !== data.length)
        throw new PartitionEntryError(`${data.length - body} trailing bytes`);
    return events;
}
/** Bytes of the events alone (for read limits), without decoding them. */
export function batchPayloadBytes(data) {
    const { count, lengthsAt } = readBatchHeads(data);
    return data.length - (lengthsAt + 4 * count);
}
//# sourceMappingURL=partition-entry.js.map