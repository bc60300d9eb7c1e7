/**
 * The on-disk form of a Raft group member's records (entries, hard state, snapshot, damage mark) and
 * of the node's own records beside them (node-disk.ts). This format is ours and independent of the
 * wire: the transport's protobuf codec (src/transport/codec.ts) can change without touching a byte
 * on disk. (Until this format existed the records were stored as protobuf without a checksum;
 * raft-legacy-records.ts reads those once to rewrite them.)
 *
 * Every record is framed the same way, integers big-endian:
 *
 *   [format u8 = 1][CRC32C u32][kind u8][body...]
 *
 * The CRC32C covers the record's KEY and then every byte after the CRC, so a record that is intact
 * but sits under the wrong key (a misdirected or stale write) fails the check as well as flipped
 * bits do. A record that fails any check raises RaftRecordCorruptError, which the store turns into
 * "this replica is damaged" (it must not vote or lead until repaired from a healthy leader), never
 * into an assertion: corrupt bytes on disk are an expected operating condition, not a bug.
 *
 * Bodies:
 *   entry       term u64, index u64, type u8 (0 normal, 1 conf change), data (the rest)
 *   hard state  term u64, vote u64, commit u64
 *   snapshot    index u64, term u64, voters u32 + u64 each, learners u32 + u64 each, data (the rest)
 *   damage      term u64, index u64, [0x00, flags u8], reason (UTF-8, the rest). The flags pair is there
              only when a flag is set (bit 0: termUnknown); a reason never starts with a NUL byte, and
              records written before the flags existed have none.
 *   (node records: see node-disk.ts)
 *
 * Format versions only ever grow; a reader refuses a version it does not know (as corruption, with
 * the version named), so an older binary never misreads a newer directory.
 */
import { takeHeadroom } from '../core/headroom.js';
import { crc32c } from '../log/index.js';
import { crc32cCombine } from '../log/crc32c.js';
import { knownCrc32c } from '../log/partition-entry.js';
import { decodeConfChange } from '../raft/index.js';
import type { ConfState, Entry, HardState, Index, NodeId, Snapshot, Term } from '../raft/index.js';

export const recordFormat = 1;
const headerBytes = 6;

/** What a record is; stored in its frame so that a record read for one kind cannot pass as another. */
export const recordKind = {
  entry: 1,
  hardState: 2,
  snapshot: 3,
  damage: 4,
  nodeIdentity: 5,
  writeSeq: 6,
} as const;
export type RecordKind = keyof typeof recordKind;

/** A stored record failed its checksum or its structure: the bytes on disk are not what was written. */
export class RaftRecordCorruptError extends Error {
  override name = 'RaftRecordCorruptError';
  constructor(
    readonly key: Buffer,
    readonly reason: string,
  ) {
    super(`corrupt raft record under key ${key.toString('hex')}: ${reason}`);
  }
}

/** Frames `body` as a record of `kind` stored under `key`. */
export function frameRecord(kind: RecordKind, key: Buffer, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(headerBytes + body.length);
  out[0] = recordFormat;
  out[5] = recordKind[kind];
  body.copy(out, headerBytes);
  out.writeUInt32BE(crc32c(out, crc32c(key), 5), 1);
  return out;
}

/** Checks the frame of a record of `kind` under `key` and returns its body (a view, not a copy). */
export function unframeRecord(kind: RecordKind, key: Buffer, value: Buffer): Buffer {
  if (value.length < headerBytes) throw new RaftRecordCorruptError(key, `${value.length} bytes, shorter than a record header`);
  if (value[0] !== recordFormat) throw new RaftRecordCorruptError(key, `unknown record format ${value[0]} (this version reads ${recordFormat})`);
  const stored = value.readUInt32BE(1);
  const actual = crc32c(value, crc32c(key), 5);
  if (stored !== actual) throw new RaftRecordCorruptError(key, `CRC32C mismatch (stored ${hex32(stored)}, computed ${hex32(actual)})`);
  if (value[5] !== recordKind[kind]) throw new RaftRecordCorruptError(key, `a record of kind ${value[5]} where ${kind} (${recordKind[kind]}) belongs`);
  return value.subarray(headerBytes);
}

function hex32(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** Reads a body field by field; any overrun or out-of-range value is corruption of `key`. */
class BodyReader {
  #at = 0;
  constructor(
    readonly key: Buffer,
    readonly body: Buffer,
  ) {}

  #need(n: number, what: string): void {
    if (this.#at + n > this.body.length) throw new RaftRecordCorruptError(this.key, `truncated at ${what}`);
  }

  u8(what: string): number {
    this.#need(1, what);
    return this.body[this.#at++]!;
  }

  u32(what: string): number {
    this.#need(4, what);
    const n = this.body.readUInt32BE(this.#at);
    this.#at += 4;
    return n;
  }

  u64(what: string): number {
    this.#need(8, what);
    const n = this.body.readUInt32BE(this.#at) * 0x1_0000_0000 + this.body.readUInt32BE(this.#at + 4);
    this.#at += 8;
    if (!Number.isSafeInteger(n)) throw new RaftRecordCorruptError(this.key, `${what} exceeds 2^53`);
    return n;
  }

  rest(): Buffer {
    const r = this.body.subarray(this.#at);
    this.#at = this.body.length;
    return r;
  }

  end(what: string): void {
    if (this.#at !== this.body.length) throw new RaftRecordCorruptError(this.key, `${this.body.length - this.#at} bytes left after ${what}`);
  }
}

function putU64(buf: Buffer, at: number, n: number): void {
  // Values come from our own core, which asserts they are safe non-negative integers.
  buf.writeUInt32BE(Math.floor(n / 0x1_0000_0000), at);
  buf.writeUInt32BE(n % 0x1_0000_0000, at + 4);
}

// ---------------------------------------------------------------------------------------------
// Entries

const entryTypeCodes = { normal: 0, confChange: 1 } as const;

/**
 * An entry record's bytes before its data: the frame's header, term, index, type. The room an entry's
 * encoder leaves before its bytes (core/headroom.ts) must hold it (raft-records.test.ts).
 */
export const entryHeadBytes = headerBytes + 17;

export function encodeEntryRecord(key: Buffer, e: Entry): Buffer {
  // Framed around the entry's data where it was allocated with room for the head (its encoder's or
  // the transport's copy: core/headroom.ts), so the data is not copied again; otherwise framed in a
  // buffer of its own (one allocation, the data copied once): an entry may hold a whole batch.
  const around = takeHeadroom(e.data, entryHeadBytes);
  const out = around ?? Buffer.allocUnsafe(entryHeadBytes + e.data.byteLength);
  out[0] = recordFormat;
  out[5] = recordKind.entry;
  putU64(out, headerBytes, e.term);
  putU64(out, headerBytes + 8, e.index);
  out[headerBytes + 16] = entryTypeCodes[e.type];
  if (around === undefined) out.set(e.data, entryHeadBytes);
  // A partition entry this node encoded knows its own CRC32C: the record's is derived from it
  // instead of reading the events a second time.
  const known = knownCrc32c(e.data);
  const crc = known === undefined ? crc32c(out, crc32c(key), 5) : crc32cCombine(crc32c(out, crc32c(key), 5, entryHeadBytes), known, e.data.byteLength);
  out.writeUInt32BE(crc, 1);
  return out;
}

export function decodeEntryRecord(key: Buffer, value: Buffer): Entry {
  const r = new BodyReader(key, unframeRecord('entry', key, value));
  const term = r.u64('entry term');
  const index = r.u64('entry index');
  const code = r.u8('entry type');
  if (code !== 0 && code !== 1) throw new RaftRecordCorruptError(key, `unknown entry type ${code}`);
  // A view, not a copy: the KV hands out a value buffer of its own per read (RocksDB) or the buffer
  // it was given (MemoryKv), and nothing writes into an entry's data.
  const data = r.rest();
  if (code === 1) {
    try {
      decodeConfChange(data);
    } catch (err) {
      throw new RaftRecordCorruptError(key, `conf change entry ${index} does not decode (${(err as Error).message})`);
    }
  }
  return { term, index, type: code === 1 ? 'confChange' : 'normal', data };
}

// ---------------------------------------------------------------------------------------------
// Hard state

export function encodeHardStateRecord(key: Buffer, hs: HardState): Buffer {
  const body = Buffer.allocUnsafe(24);
  putU64(body, 0, hs.term);
  putU64(body, 8, hs.vote);
  putU64(body, 16, hs.commit);
  return frameRecord('hardState', key, body);
}

export function decodeHardStateRecord(key: Buffer, value: Buffer): HardState {
  const r = new BodyReader(key, unframeRecord('hardState', key, value));
  const hs = { term: r.u64('term'), vote: r.u64('vote'), commit: r.u64('commit') };
  r.end('hard state');
  return hs;
}

// ---------------------------------------------------------------------------------------------
// Snapshots

export function encodeSnapshotRecord(key: Buffer, s: Snapshot): Buffer {
  const { voters, learners } = s.metadata.confState;
  const head = 16 + 4 + 8 * voters.length + 4 + 8 * learners.length;
  const body = Buffer.allocUnsafe(head + s.data.byteLength);
  putU64(body, 0, s.metadata.index);
  putU64(body, 8, s.metadata.term);
  let at = 16;
  for (const list of [voters, learners]) {
    body.writeUInt32BE(list.length, at);
    at += 4;
    for (const id of list) {
      putU64(body, at, id);
      at += 8;
    }
  }
  body.set(s.data, head);
  return frameRecord('snapshot', key, body);
}

export function decodeSnapshotRecord(key: Buffer, value: Buffer): Snapshot {
  const r = new BodyReader(key, unframeRecord('snapshot', key, value));
  const index = r.u64('snapshot index');
  const term = r.u64('snapshot term');
  const ids = (what: string): NodeId[] => {
    const n = r.u32(`${what} count`);
    if (n * 8 > r.body.length) throw new RaftRecordCorruptError(key, `${what} count ${n} exceeds the record`);
    const out: NodeId[] = [];
    for (let i = 0; i < n; i++) {
      const id = r.u64(`${what}[${i}]`);
      if (id === 0 || (i > 0 && id <= out[i - 1]!)) throw new RaftRecordCorruptError(key, `${what} not sorted, unique node ids`);
      out.push(id);
    }
    return out;
  };
  const confState: ConfState = { voters: ids('voters'), learners: ids('learners') };
  return { metadata: { index, term, confState }, data: new Uint8Array(r.rest()) };
}

// ---------------------------------------------------------------------------------------------
// Damage: why this member must not vote or lead, kept until a healthy leader has repaired it

export interface DamageRecord {
  /** The member may have voted in terms up to this one before the damage (0: unknown). */
  readonly term: Term;
  /** The member may have acknowledged entries up to this index before the damage (0: unknown). */
  readonly index: Index;
  /** What was found, in words, for logs and GET /cluster. */
  readonly reason: string;
  /**
   * Nothing bounds the terms it used before (a wiped directory keeps no term ceiling): it learns a term
   * floor from the other voters before it acknowledges anything (src/raft Damage.termUnknown).
   */
  readonly termUnknown?: boolean;
}

const damageFlagTermUnknown = 0x01;

export function encodeDamageRecord(key: Buffer, d: DamageRecord): Buffer {
  const reason = Buffer.from(d.reason.replace(/^\0+/, ''), 'utf8');
  const flags = d.termUnknown === true ? damageFlagTermUnknown : 0;
  const at = flags === 0 ? 16 : 18;
  const body = Buffer.allocUnsafe(at + reason.length);
  putU64(body, 0, d.term);
  putU64(body, 8, d.index);
  if (flags !== 0) {
    body[16] = 0;
    body[17] = flags;
  }
  reason.copy(body, at);
  return frameRecord('damage', key, body);
}

export function decodeDamageRecord(key: Buffer, value: Buffer): DamageRecord {
  const r = new BodyReader(key, unframeRecord('damage', key, value));
  const term = r.u64('damage term');
  const index = r.u64('damage index');
  const rest = r.rest();
  if (rest.length > 0 && rest[0] === 0) {
    if (rest.length < 2) throw new RaftRecordCorruptError(key, 'damage record: flags marker without flags');
    const flags = rest[1]!;
    if ((flags & ~damageFlagTermUnknown) !== 0) throw new RaftRecordCorruptError(key, `damage record: unknown flags ${flags}`);
    return { term, index, reason: rest.subarray(2).toString('utf8'), ...((flags & damageFlagTermUnknown) !== 0 ? { termUnknown: true } : {}) };
  }
  return { term, index, reason: rest.toString('utf8') };
}

// ---------------------------------------------------------------------------------------------
// u64 records (the node's raft write sequence)

export function encodeU64Record(kind: RecordKind, key: Buffer, n: number): Buffer {
  const body = Buffer.allocUnsafe(8);
  putU64(body, 0, n);
  return frameRecord(kind, key, body);
}

export function decodeU64Record(kind: RecordKind, key: Buffer, value: Buffer): number {
  const r = new BodyReader(key, unframeRecord(kind, key, value));
  const n = r.u64(kind);
  r.end(kind);
  return n;
}
