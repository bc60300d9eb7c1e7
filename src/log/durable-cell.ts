/**
 * A durable cell: a few hundred bytes in a small file of their own, overwritten in place and read
 * back at start. The node's "last durable raft write" marker lives in one (src/broker/node-disk.ts):
 * it must survive whatever happens to RocksDB's write-ahead log, so it is not stored in RocksDB.
 *
 * Layout: two slots of 512 bytes (one disk sector each, so that a torn write damages at most one):
 *
 *   [CRC32C u32 of the rest of the slot's used bytes][generation u64][length u16][payload]
 *
 * Writes alternate between the slots (generation g goes to slot g % 2) and each is durable before it
 * resolves, so while one slot is being overwritten the other still holds the previous value. A read
 * takes the valid slot with the higher generation. The file is opened with O_DSYNC where the platform
 * has it: one pwrite that returns once its data is durable, as a write followed by fdatasync() would
 * (elsewhere it is exactly that). The node writes its marker after every durable raft write, so this is
 * on a busy path: one libuv request and one callback per write, not the two promise-based requests of
 * node:fs/promises (which cost as much main-thread CPU as the raft write itself in a profile of small
 * publishes). Writing is asynchronous (on the libuv pool) and never blocks the event loop. The first
 * write creates the file and fsyncs its directory.
 *
 * MemoryCell is the in-memory twin for tests (with hooks to lose or damage the cell).
 */
import { close, constants, fdatasync, open as openFd, write } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { assert } from '../core/assert.js';
import { crc32c } from './crc32c.js';

const slotBytes = 512;
const slotHeaderBytes = 14;
/** The largest payload a cell holds. */
export const cellPayloadBytesMax = slotBytes - slotHeaderBytes;

export type CellRead =
  | { readonly state: 'ok'; readonly payload: Buffer }
  /** The cell was never written (its file does not exist). */
  | { readonly state: 'missing' }
  /** The file exists but no slot passes its checksum. */
  | { readonly state: 'corrupt'; readonly reason: string };

export interface DurableCell {
  read(): Promise<CellRead>;
  /** Resolves once `payload` is durable; the previous value stays readable until then. */
  write(payload: Buffer): Promise<void>;
  close(): Promise<void>;
}

function encodeSlot(generation: number, payload: Buffer): Buffer {
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
function decodeSlot(slot: Buffer): { generation: number; payload: Buffer } | undefined {
  if (slot.length < slotHeaderBytes) return undefined;
  const length = slot.readUInt16BE(12);
  if (length > cellPayloadBytesMax || slotHeaderBytes + length > slot.length) return undefined;
  const used = slot.subarray(0, slotHeaderBytes + length);
  if (used.readUInt32BE(0) !== crc32c(used, 0, 4)) return undefined;
  const generation = used.readUInt32BE(4) * 0x1_0000_0000 + used.readUInt32BE(8);
  return { generation, payload: Buffer.from(used.subarray(slotHeaderBytes)) };
}

/** Picks the newest valid slot of a whole cell image. */
function readImage(image: Buffer): CellRead & { generation?: number } {
  const slots = [0, 1].map((i) => decodeSlot(image.subarray(i * slotBytes, (i + 1) * slotBytes)));
  let best: { generation: number; payload: Buffer } | undefined;
  for (const s of slots) if (s !== undefined && (best === undefined || s.generation > best.generation)) best = s;
  if (best === undefined) return { state: 'corrupt', reason: `neither slot of the ${image.length}-byte cell passes its CRC32C` };
  return { state: 'ok', payload: best.payload, generation: best.generation };
}

/** O_DSYNC where the platform has it (Linux, macOS, the BSDs); 0 elsewhere, and each write is fdatasync()ed. */
const dsync: number = constants.O_DSYNC ?? 0;
const openAsync = promisify(openFd);
const closeAsync = promisify(close);

/** Writes `buf` at `position` of `fd` and resolves once it is durable (one libuv request with O_DSYNC). */
function writeDurable(fd: number, buf: Buffer, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    write(fd, buf, 0, buf.length, position, (err, written) => {
      if (err !== null) return reject(err);
      if (written !== buf.length) return reject(new Error(`short write to a durable cell: ${written} of ${buf.length} bytes`));
      if (dsync !== 0) return resolve();
      fdatasync(fd, (e) => (e === null ? resolve() : reject(e)));
    });
  });
}

export class FileCell implements DurableCell {
  readonly path: string;
  #fd: number | undefined;
  #generation = 0;

  constructor(path: string) {
    this.path = path;
  }

  async read(): Promise<CellRead> {
    let image: Buffer;
    try {
      const fd = await open(this.path, 'r');
      try {
        image = Buffer.alloc(2 * slotBytes);
        const { bytesRead } = await fd.read(image, 0, image.length, 0);
        image = image.subarray(0, bytesRead);
      } finally {
        await fd.close();
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
      throw err;
    }
    const r = readImage(image);
    if (r.generation !== undefined) this.#generation = Math.max(this.#generation, r.generation);
    return r.state === 'ok' ? { state: 'ok', payload: r.payload } : r;
  }

  async write(payload: Buffer): Promise<void> {
    const generation = this.#generation + 1;
    const slot = encodeSlot(generation, payload);
    let created = false;
    if (this.#fd === undefined) {
      try {
        this.#fd = await openAsync(this.path, constants.O_RDWR | dsync);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        this.#fd = await openAsync(this.path, constants.O_RDWR | constants.O_CREAT | dsync, 0o644);
        created = true;
      }
    }
    await writeDurable(this.#fd, slot, (generation % 2) * slotBytes);
    if (created) {
      // The file's directory entry must be durable too, or a power loss could lose the whole file.
      const dir = await open(dirname(this.path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    }
    this.#generation = generation;
  }

  async close(): Promise<void> {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd !== undefined) await closeAsync(fd);
  }
}

/** The in-memory twin: `image` is what a FileCell's file would hold. */
export class MemoryCell implements DurableCell {
  image: Buffer | undefined;
  #generation = 0;
  writes = 0;

  async read(): Promise<CellRead> {
    if (this.image === undefined) return { state: 'missing' };
    const r = readImage(this.image);
    if (r.generation !== undefined) this.#generation = Math.max(this.#generation, r.generation);
    return r.state === 'ok' ? { state: 'ok', payload: r.payload } : r;
  }

  async write(payload: Buffer): Promise<void> {
    const generation = this.#generation + 1;
    const slot = encodeSlot(generation, payload);
    const image = Buffer.alloc(2 * slotBytes);
    this.image?.copy(image);
    slot.copy(image, (generation % 2) * slotBytes);
    this.image = image;
    this.#generation = generation;
    this.writes++;
  }

  async close(): Promise<void> {}
}
