/**
 * Key codec for partition data in the shared ordered KV.
 *
 * KEY PREFIXES (first byte of every key; one KV holds several users, each owns its prefixes):
 *   0x01        reserved (held single-node metadata before the Raft group existed; never reuse)
 *   0x02        Raft groups' durable state: [0x02][group u32][kind u8]... -> hard state, snapshot, log entries,
 *                damage mark (src/broker/raft-keys.ts; group 0 is the metadata group)
 *   0x03        the node's own records: identity (node id, disk id, cluster id), raft write sequence
 *                (src/broker/node-disk.ts)
 *   0x10        partition record batches: [0x10][topic u32][partition u32][last offset u64] -> record batch
 *   0x11        partition low watermark:  [0x11][topic u32][partition u32] -> first available offset
 *                (written by retention so offsets continue after a restart when everything was deleted)
 *   0x12        partition verified-through: [0x12][topic u32][partition u32] -> last offset checked by a
 *                clean start/shutdown; start-up verification resumes after it
 *   0x14        partition offset index: [0x14][group u32][last offset u64] -> raft index, first offset, append
 *                time, request id (src/broker/partition-replica.ts; the Raft log under 0x02 holds the events)
 *   0x15        partition applied state: [0x15][group u32] -> applied index, next offset, oldest offset
 *                (the newest 0x14 row is newer when it names a later raft index: partition-replica.ts)
 *   0x16        partition group directory: [0x16][group u32] -> topic u32, partition u32 (groups held here)
 *   0x17        partition history still to fetch: [0x17][group u32] -> snapshot index, next offset, first raft
 *                index and offset of the log before the snapshot (a replica that installed a snapshot without
 *                that log; src/broker/partition-replica.ts)
 *   0x18        accepted loss acted on: [0x18][group u32] -> the id of the accepted loss (partition.loss) for
 *                which this node emptied its replica of the group (src/broker/partition-group-keys.ts)
 *   0x13, 0x19..0x1f  reserved for future partition-log data
 * Nothing else may write keys in 0x10..0x1f.
 *
 * All integers are big-endian and unsigned so RocksDB's bytewise order is numeric order: batches of
 * one partition are contiguous and sorted by offset, and partitions of one topic are contiguous. Keying
 * a batch by its LAST offset makes "the batch holding offset o" a single seek: the first key >= o.
 */
import { assert, invariantFailed } from '../core/assert.js';

export const prefixBatch = 0x10;
export const prefixLowWatermark = 0x11;
export const prefixVerified = 0x12;

export const u32Max = 0xffff_ffff;
const partitionKeyBytes = 9;
export const batchKeyBytes = 17;

function checkU32(n: number, what: string): void {
  if (!(Number.isInteger(n) && n >= 0 && n <= u32Max)) invariantFailed(`${what} ${n} is not a u32`);
}

function writeU64(buf: Buffer, at: number, n: number): void {
  if (!(Number.isSafeInteger(n) && n >= 0)) invariantFailed(`offset ${n} is not a non-negative safe integer`);
  buf.writeUInt32BE(Math.floor(n / 0x1_0000_0000), at);
  buf.writeUInt32BE(n % 0x1_0000_0000, at + 4);
}

export function readU64(buf: Buffer, at: number): number {
  const n = buf.readUInt32BE(at) * 0x1_0000_0000 + buf.readUInt32BE(at + 4);
  if (!Number.isSafeInteger(n)) invariantFailed(`stored u64 at ${at} exceeds 2^53`);
  return n;
}

export { writeU64 };

/** [prefix][topic][partition]: the key of a per-partition record, and the prefix of its batches. */
export function partitionKey(prefix: number, topic: number, partition: number): Buffer {
  return encodePartitionKey(prefix, topic, partition, undefined);
}

/** The shared layout; with `offset` the key gets a u64 suffix (record batches). */
function encodePartitionKey(prefix: number, topic: number, partition: number, offset: number | undefined): Buffer {
  checkU32(topic, 'topic');
  checkU32(partition, 'partition');
  const k = Buffer.allocUnsafe(offset === undefined ? partitionKeyBytes : batchKeyBytes);
  k[0] = prefix;
  k.writeUInt32BE(topic, 1);
  k.writeUInt32BE(partition, 5);
  if (offset !== undefined) writeU64(k, partitionKeyBytes, offset);
  return k;
}

/** [prefixBatch][topic][partition][last offset]: a record batch, found by seeking its last offset. */
export function batchKey(topic: number, partition: number, lastOffset: number): Buffer {
  return encodePartitionKey(prefixBatch, topic, partition, lastOffset);
}

export interface DecodedBatchKey {
  topic: number;
  partition: number;
  lastOffset: number;
}

export function decodeBatchKey(k: Buffer): DecodedBatchKey {
  assert(k.length === batchKeyBytes && k[0] === prefixBatch, `not a batch key: ${k.toString('hex')}`);
  return { topic: k.readUInt32BE(1), partition: k.readUInt32BE(5), lastOffset: readU64(k, 9) };
}

export function decodePartitionKey(k: Buffer, prefix: number): { topic: number; partition: number } {
  assert(k.length === partitionKeyBytes && k[0] === prefix, `not a ${prefix} key: ${k.toString('hex')}`);
  return { topic: k.readUInt32BE(1), partition: k.readUInt32BE(5) };
}

/** Half-open key range [gte, lt) holding every batch of one partition. */
export function partitionBatchRange(topic: number, partition: number): { gte: Buffer; lt: Buffer } {
  return { gte: partitionKey(prefixBatch, topic, partition), lt: afterPrefix(partitionKey(prefixBatch, topic, partition)) };
}

/** Half-open key range [gte, lt) holding every key of `prefix` for one topic. */
export function topicRange(prefix: number, topic: number): { gte: Buffer; lt: Buffer } {
  checkU32(topic, 'topic');
  const k = Buffer.allocUnsafe(5);
  k[0] = prefix;
  k.writeUInt32BE(topic, 1);
  return { gte: k, lt: afterPrefix(k) };
}

/** Half-open key range [gte, lt) holding every key that starts with the byte `prefix`. */
export function prefixRange(prefix: number): { gte: Buffer; lt: Buffer } {
  assert(prefix >= 0 && prefix < 0xff, `prefix ${prefix} out of range`);
  return { gte: Buffer.from([prefix]), lt: Buffer.from([prefix + 1]) };
}

/** The smallest key greater than every key starting with `p` (p must not be all 0xff). */
export function afterPrefix(p: Buffer): Buffer {
  const out = Buffer.from(p);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]!++;
      return out.subarray(0, i + 1);
    }
  }
  assert(false, 'prefix of all 0xff has no successor');
}
