/**
 * Record batch codec: the value stored under one batch key, holding the events of one append for one
 * partition.
 *
 * Layout (format version 1, all integers big-endian):
 *   0   u8    format version (1)
 *   1   u32   CRC32C of bytes [5, end)
 *   5   u64   first offset
 *   13  u32   count (>= 1)
 *   17  u64   append time, ms since the epoch
 *   25  u32 × count   event lengths
 *   ..  event bytes, concatenated, exactly as appended
 *
 * The checksum covers everything after itself, so a flipped bit anywhere in the header, lengths or
 * events is detected. The decoder also checks that the batch matches its key (its last offset) and that
 * the lengths add up to the value's size, so a value under the wrong key or a truncated value is caught
 * even with a matching CRC.
 */
import { assert } from '../core/assert.js';
import { crc32c } from './crc32c.js';
import { readU64, writeU64 } from './keys.js';
export const formatVersion = 1;
export const headerBytes = 25;
const crcStart = 5;
export class BatchFormatError extends Error {
    name = 'BatchFormatError';
}
export function encodeRecordBatch(first, appendTimeMs, events) {
    assert(events.length > 0, 'a record batch holds at least one event');
    assert(Number.isSafeInteger(appendTimeMs) && appendTimeMs >= 0, `append time ${appendTimeMs} invalid`);
    let payload = 0;
    for (const e of events)
        payload += e.length;
    const size = headerBytes + 4 * events.length + payload;
    const out = Buffer.allocUnsafe(size);
    out[0] = formatVersion;
    writeU64(out, 5, first);
    out.writeUInt32BE(events.length, 13);
    writeU64(out, 17, appendTimeMs);
    let at = headerBytes;
    for (const e of events) {
        out.writeUInt32BE(e.length, at);
        at += 4;
    }
    for (const e of events) {
        e.copy(out, at);
        at += e.length;
    }
    assert(at === size, 'record batch size mismatch');
    out.writeUInt32BE(crc32c(out, 0, crcStart), 1);
    return out;
}
/** Reads the header without verifying the checksum (for retention, which only needs times). */
export function readBatchHeader(value) {
    if (value.length < headerBytes)
        throw new BatchFormatError(`value of ${value.length} bytes is shorter than a header`);
    if (value[0] !== formatVersion)
        throw new BatchFormatError(`unknown format version ${value[0]}`);
    return { first: readU64(value, 5), count: value.readUInt32BE(13), appendTimeMs: readU64(value, 17) };
}
/**
 * Verifies and decodes a stored record batch. `lastOffset` is the offset from its key.
 * Throws BatchFormatError on any mismatch; never returns unverified bytes.
 */
export function decodeRecordBatch(value, lastOffset) {
    if (value.length < headerBytes)
        throw new BatchFormatError(`value of ${value.length} bytes is shorter than a header`);
    if (value[0] !== formatVersion)
        throw new BatchFormatError(`unknown format version ${value[0]}`);
    const stored = value.readUInt32BE(1);
    const actual = crc32c(value, 0, crcStart);
    if (stored !== actual) {
        throw new BatchFormatError(`checksum mismatch (stored ${hex(stored)}, computed ${hex(actual)})`);
    }
    const first = value.readUInt32BE(5) * 0x1_0000_0000 + value.readUInt32BE(9);
    const count = value.readUInt32BE(13);
    const appendTimeMs = value.readUInt32BE(17) * 0x1_0000_0000 + value.readUInt32BE(21);
    if (count === 0)
        throw new BatchFormatError('empty batch');
    if (first + count - 1 !== lastOffset) {
        throw new BatchFormatError(`batch holds offsets ${first}..${first + count - 1} but its key says ${lastOffset}`);
    }
    let at = headerBytes + 4 * count;
    if (at > value.length)
        throw new BatchFormatError(`${count} lengths do not fit in ${value.length} bytes`);
    const events = new Array(count);
    for (let i = 0; i < count; i++) {
        const len = value.readUInt32BE(headerBytes + 4 * i);
        if (at + len > value.length)
            throw new BatchFormatError(`event ${first + i} runs past the end of the value`);
        events[i] = value.subarray(at, at + len);
        at += len;
    }
    if (at !== value.length)
        throw new BatchFormatError(`${value.length - at} trailing bytes`);
    return { first, count, appendTimeMs, events };
}
/**
 * Byte positions of the events of an encoded (already verified) record batch: event i spans
 * [starts[i], starts[i + 1]). One typed array per batch instead of one Buffer view per event keeps the
 * number of long-lived heap objects in the tail cache proportional to batches, not events (per-event
 * views made the old generation grow fast enough to cause full GCs every second under load).
 */
export function eventStarts(value, count) {
    const starts = new Uint32Array(count + 1);
    let at = headerBytes + 4 * count;
    for (let i = 0; i < count; i++) {
        starts[i] = at;
        at += value.readUInt32BE(headerBytes + 4 * i);
    }
    starts[count] = at;
    return starts;
}
function hex(n) {
    return n.toString(16).padStart(8, '0');
}
//# sourceMappingURL=record-batch.js.map