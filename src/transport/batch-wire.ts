/**
 * The bytes of a MessageBatch (proto/raft.proto) on the Raft stream, written and read here with
 * protobufjs's Writer and Reader instead of the serializer and deserializer @grpc/proto-loader makes.
 *
 * Why: every Raft message between two nodes crosses the stream, and proto-loader's pair does the work
 * twice at each end. Its serializer first copies the object into protobufjs message instances
 * (`fromObject`: a Long per 64-bit field, enum names looked up) and then encodes those; its
 * deserializer decodes into instances (a Long per 64-bit field) and then copies them into plain objects
 * (`toObject`). Together that was about as much CPU as the Raft messages' own decoding and checks in
 * profiles of a small publish on three nodes. Here a batch is encoded straight from the object
 * BatchBuilder builds and decoded straight into the plain object proto-loader would have produced,
 * with 64-bit fields as numbers (as `raftServiceDefinition` asked of protobufjs before).
 *
 * The bytes are protobuf as the schema says, so a node of another build reads them and is read as
 * before (a rolling upgrade mixes both): batch-wire.test.ts checks each direction against
 * proto-loader's own pair over random batches. Fields holding their default (zero, empty, absent) are
 * not written, which proto3 defines as the same thing (proto-loader wrote some zeros). The decoder
 * takes every encoding protobuf allows the sender (fields in any order, repeated, unknown fields
 * skipped) and refuses, by throwing as protobufjs does, truncated input and a known field of the
 * wrong wire type; what the values mean is checked afterwards (batch-codec.ts, codec.ts), as before.
 */
import protobuf from 'protobufjs';
import { delimited, endOf, ended, enumName, enumOf, expect, fixed64, readU64, varint, writeBytes, writeEnum, writeString, writeU32, writeU64, type Loose, type Reader, type Writer } from './wire-fields.js';
import type { MessageBatch__Output } from './generated/brook/raft/v1/MessageBatch.js';
import { raftDefinitionsAsNumbers, raftProto } from './proto.js';

let enums: { message: ReturnType<typeof enumOf>; entry: ReturnType<typeof enumOf> } | undefined;
function enumsOf(): NonNullable<typeof enums> {
  enums ??= { message: enumOf(raftProto().MessageType), entry: enumOf(raftProto().EntryType) };
  return enums;
}

function writeEntry(w: Writer, e: Loose): void {
  writeU64(w, 1, e['term']);
  writeU64(w, 2, e['index']);
  writeEnum(w, 3, e['type'], enumsOf().entry.numbers);
  writeBytes(w, 4, e['data']);
}

function writeLease(w: Writer, l: Loose): void {
  const stamp = l['stamp'];
  if (typeof stamp === 'number' && stamp !== 0) w.uint32((1 << 3) | fixed64).double(stamp);
  writeU64(w, 2, l['seq']);
  writeU64(w, 3, l['index']);
  writeU64(w, 4, l['released']);
}

function writeMessage(w: Writer, m: Loose): void {
  writeEnum(w, 1, m['type'], enumsOf().message.numbers);
  writeU64(w, 2, m['from']);
  writeU64(w, 3, m['to']);
  writeU64(w, 4, m['term']);
  writeU64(w, 5, m['log_term']);
  writeU64(w, 6, m['index']);
  const entries = m['entries'] as Loose[] | undefined;
  if (entries !== undefined) {
    for (const e of entries) {
      w.uint32((7 << 3) | delimited).fork();
      writeEntry(w, e);
      w.ldelim();
    }
  }
  writeU64(w, 8, m['commit']);
  if (m['reject'] === true) w.uint32((9 << 3) | varint).bool(true);
  writeU64(w, 10, m['reject_hint']);
  writeString(w, 11, m['context']);
  const snapshot = m['snapshot'];
  // Rare (a snapshot for a follower far behind): proto-loader's serializer is good enough for it.
  if (snapshot !== undefined && snapshot !== null) w.uint32((12 << 3) | delimited).bytes(raftProto().Snapshot.serialize(snapshot));
  writeU32(w, 13, m['group']);
  const lease = m['lease'] as Loose | null | undefined;
  if (lease !== undefined && lease !== null) {
    w.uint32((14 << 3) | delimited).fork();
    writeLease(w, lease);
    w.ldelim();
  }
}

function writeHeartbeat(w: Writer, field: number, h: Loose): void {
  w.uint32((field << 3) | delimited).fork();
  writeU32(w, 1, h['group']);
  writeU64(w, 2, h['term']);
  writeU64(w, 3, h['commit']);
  writeString(w, 4, h['context']);
  w.ldelim();
}

/** A MessageBatch's bytes (the Raft stream's request serializer). */
export function encodeMessageBatch(b: object): Buffer {
  const batch = b as Loose;
  const w = protobuf.Writer.create();
  writeU64(w, 1, batch['from']);
  writeString(w, 2, batch['incarnation']);
  for (const m of (batch['messages'] as Loose[] | undefined) ?? []) {
    w.uint32((3 << 3) | delimited).fork();
    writeMessage(w, m);
    w.ldelim();
  }
  for (const h of (batch['heartbeats'] as Loose[] | undefined) ?? []) writeHeartbeat(w, 4, h);
  for (const h of (batch['heartbeat_responses'] as Loose[] | undefined) ?? []) writeHeartbeat(w, 5, h);
  return w.finish() as Buffer;
}

// ---------------------------------------------------------------------------------------------
// Decoding: into the objects proto-loader's deserializer makes (defaults filled in, enums as their
// names, an unknown enum value as its number, absent messages null), 64-bit fields as numbers.

let snapshotDeserialize: ((b: Buffer) => Loose) | undefined;
function snapshotDeserializer(): (b: Buffer) => Loose {
  snapshotDeserialize ??= (raftDefinitionsAsNumbers()['brook.raft.v1.Snapshot'] as unknown as { deserialize: (b: Buffer) => Loose }).deserialize;
  return snapshotDeserialize;
}

function readEntry(r: Reader, end: number): Loose {
  const e: Loose = { term: 0, index: 0, type: 'ENTRY_TYPE_NORMAL', data: undefined };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, varint);
        e['term'] = readU64(r);
        break;
      case 2:
        expect(tag, varint);
        e['index'] = readU64(r);
        break;
      case 3:
        expect(tag, varint);
        e['type'] = enumName(enumsOf().entry.names, r.int32());
        break;
      case 4:
        expect(tag, delimited);
        e['data'] = r.bytes();
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  e['data'] ??= Buffer.alloc(0);
  return e;
}

function readLease(r: Reader, end: number): Loose {
  const l: Loose = { stamp: 0, seq: 0, index: 0, released: 0 };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, fixed64);
        l['stamp'] = r.double();
        break;
      case 2:
        expect(tag, varint);
        l['seq'] = readU64(r);
        break;
      case 3:
        expect(tag, varint);
        l['index'] = readU64(r);
        break;
      case 4:
        expect(tag, varint);
        l['released'] = readU64(r);
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  return l;
}

function readMessage(r: Reader, end: number): Loose {
  const entries: Loose[] = [];
  const m: Loose = {
    entries,
    type: 'MESSAGE_TYPE_UNSPECIFIED',
    from: 0,
    to: 0,
    term: 0,
    log_term: 0,
    index: 0,
    commit: 0,
    reject: false,
    reject_hint: 0,
    context: '',
    snapshot: null,
    group: 0,
    lease: null,
  };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, varint);
        m['type'] = enumName(enumsOf().message.names, r.int32());
        break;
      case 2:
        expect(tag, varint);
        m['from'] = readU64(r);
        break;
      case 3:
        expect(tag, varint);
        m['to'] = readU64(r);
        break;
      case 4:
        expect(tag, varint);
        m['term'] = readU64(r);
        break;
      case 5:
        expect(tag, varint);
        m['log_term'] = readU64(r);
        break;
      case 6:
        expect(tag, varint);
        m['index'] = readU64(r);
        break;
      case 7:
        expect(tag, delimited);
        entries.push(readEntry(r, endOf(r)));
        break;
      case 8:
        expect(tag, varint);
        m['commit'] = readU64(r);
        break;
      case 9:
        expect(tag, varint);
        m['reject'] = r.bool();
        break;
      case 10:
        expect(tag, varint);
        m['reject_hint'] = readU64(r);
        break;
      case 11:
        expect(tag, delimited);
        m['context'] = r.string();
        break;
      case 12:
        // Rare (a snapshot for a follower far behind): proto-loader's deserializer is good enough for it.
        expect(tag, delimited);
        m['snapshot'] = snapshotDeserializer()(r.bytes() as Buffer);
        break;
      case 13:
        expect(tag, varint);
        m['group'] = r.uint32();
        break;
      case 14:
        expect(tag, delimited);
        m['lease'] = readLease(r, endOf(r));
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  return m;
}

function readHeartbeat(r: Reader, end: number): Loose {
  const h: Loose = { group: 0, term: 0, commit: 0, context: '' };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, varint);
        h['group'] = r.uint32();
        break;
      case 2:
        expect(tag, varint);
        h['term'] = readU64(r);
        break;
      case 3:
        expect(tag, varint);
        h['commit'] = readU64(r);
        break;
      case 4:
        expect(tag, delimited);
        h['context'] = r.string();
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  return h;
}

/**
 * A MessageBatch from its bytes (the Raft stream's request deserializer), as proto-loader's would
 * decode it with 64-bit fields as numbers. Throws on bytes that are not one.
 */
export function decodeMessageBatch(buf: Buffer): MessageBatch__Output {
  const r = protobuf.Reader.create(buf);
  const messages: Loose[] = [];
  const heartbeats: Loose[] = [];
  const heartbeatResponses: Loose[] = [];
  const b: Loose = { messages, heartbeats, heartbeat_responses: heartbeatResponses, from: 0, incarnation: '' };
  while (r.pos < r.len) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, varint);
        b['from'] = readU64(r);
        break;
      case 2:
        expect(tag, delimited);
        b['incarnation'] = r.string();
        break;
      case 3:
        expect(tag, delimited);
        messages.push(readMessage(r, endOf(r)));
        break;
      case 4:
        expect(tag, delimited);
        heartbeats.push(readHeartbeat(r, endOf(r)));
        break;
      case 5:
        expect(tag, delimited);
        heartbeatResponses.push(readHeartbeat(r, endOf(r)));
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  return b as unknown as MessageBatch__Output;
}
