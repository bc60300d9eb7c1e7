/**
 * A durable cell: a few hundred bytes in a small file of their own, overwritten in place and read
 * back at start. The node's "last durable raft write" marker lives in one (src/broker/node-disk.ts):
 * it must survive whatever happens to RocksDB's write-ahead log, so it is not stored in RocksDB.
 *
 * Layout: two slots of 512 bytes (one disk sector each, so that a torn write damages at most one):
 *
 *   [CRC32C u32 of the rest of the slot's used bytes][generation u64][length u16][payload]
 *
 * Writes alternate between the slots (generation g goes to slot g % 2) and each is fdatasync()ed, so
 * while one slot is being overwritten the other still holds the previous value. A read takes the
 * valid slot with the higher generation. Writing is asynchronous (node:fs/promises on the libuv
 * pool) and never blocks the event loop. The first write creates the file and fsyncs its directory.
 *
 * MemoryCell is the in-memory twin for tests (with hooks to lose or damage the cell).
 */
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { assert } from '../core/assert.js';
import { crc32c } from './crc32c.js';
const slotBytes = 512;
const slotHeaderBytes = 14;
/** The largest payload a cell holds. */
export const cellPayloadBytesMax = slotBytes - slotHeaderBytes;
function encodeSlot(generation, payload) {
    assert(payload.length <= cellPayloadBytesMax, `cell payload of ${payload.length} bytes exceeds ${cellPayloadBytesMax}`);
    const slot = Buffer.alloc(slotHeaderBytes + payload.length);
    slot.writeUInt32BE(Math.floor(generation / 0x1_0000_0000), 4);
    slot.writeUInt32BE(generation % 0x1_0000_0000, 8);
    slot.writeUInt16BE(payload.length, 12);
    payload.copy(slot, slotHeaderBytes);
    slot.writeUInt32BE(crc32c(slot, 0, 4), 0);
    return slot;
}
/** The generation and payload of a slot, or undefined when the slot is empty or damaged. */
function decodeSlot(slot) {
    if (slot.length < slotHeaderBytes)
        return undefined;
    const length = slot.readUInt16BE(12);
    if (length > cellPayloadBytesMax || slotHeaderBytes + length > slot.length)
        return undefined;
    const used = slot.subarray(0, slotHeaderBytes + length);
    if (used.readUInt32BE(0) !== crc32c(used, 0, 4))
        return undefined;
    const generation = used.readUInt32BE(4) * 0x1_0000_0000 + used.readUInt32BE(8);
    return { generation, payload: Buffer.from(used.subarray(slotHeaderBytes)) };
}
/** Picks the newest valid slot of a whole cell image. */
function readImage(image) {
    const slots = [0, 1].map((i) => decodeSlot(image.subarray(i * slotBytes, (i + 1) * slotBytes)));
    let best;
    for (const s of slots)
        if (s !== undefined && (best === undefined || s.generation > best.generation))
            best = s;
    if (best === undefined)
        return { state: 'corrupt', reason: `neither slot of the ${image.length}-byte cell passes its CRC32C` };
    return { state: 'ok', payload: best.payload, generation: best.generation };
}
export class FileCell {
    path;
    #fd;
    #generation = 0;
    constructor(path) {
        this.path = path;
    }
    async read() {
        let image;
        try {
            const fd = await open(this.path, 'r');
            try {
                image = Buffer.alloc(2 * slotBytes);
                const { bytesRead } = await fd.read(image, 0, image.length, 0);
                image = image.subarray(0, bytesRead);
            }
            finally {
                await fd.close();
            }
        }
        catch (err) {
            if (err.code === 'ENOENT')
                return { state: 'missing' };
            throw err;
        }
        const r = readImage(image);
        if (r.generation !== undefined)
            this.#generation = Math.max(this.#generation, r.generation);
        return r.state === 'ok' ? { state: 'ok', payload: r.payload } : r;
    }
    async write(payload) {
        const generation = this.#generation + 1;
        const slot = encodeSlot(generation, payload);
        let created = false;
        if (this.#fd === undefined) {
            try {
                this.#fd = await open(this.path, 'r+');
            }
            catch (err) {
                if (err.code !== 'ENOENT')
                    throw err;
                this.#fd = await open(this.path, 'w+');
                created = true;
            }
        }
        await this.#fd.write(slot, 0, slot.length, (generation % 2) * slotBytes);
        await this.#fd.datasync();
        if (created) {
            // The file's directory entry must be durable too, or a power loss could lose the whole file.
            const dir = await open(dirname(this.path), 'r');
            try {
                await dir.sync();
            }
            finally {
                await dir.close();
            }
        }
        this.#generation = generation;
    }
    async close() {
        const fd = this.#fd;
        this.#fd = undefined;
        await fd?.close();
    }
}
/** The in-memory twin: `image` is what a FileCell's file would hold. */
export class MemoryCell {
    image;
    #generation = 0;
    writes = 0;
    async read() {
        if (this.image === undefined)
            return { state: 'missing' };
        const r = readImage(this.image);
        if (r.generation !== undefined)
            this.#generation = Math.max(this.#generation, r.generation);
        return r.state === 'ok' ? { state: 'ok', payload: r.payload } : r;
    }
    async write(payload) {
        const generation = this.#generation + 1;
        const slot = encodeSlot(generation, payload);
        const image = Buffer.alloc(2 * slotBytes);
        this.image?.copy(image);
        slot.copy(image, (generation % 2) * slotBytes);
        this.image = image;
        this.#generation = generation;
        this.writes++;
    }
    async close() { }
}
//# sourceMappingURL=durable-cell.js.map