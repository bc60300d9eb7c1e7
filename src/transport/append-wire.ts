/**
 * The bytes of the append stream's messages (proto/forward.proto AppendStreamRequest and
 * AppendStreamReply), written and read with protobufjs's Writer and Reader instead of the serializer
 * and deserializer @grpc/proto-loader makes, for the reason batch-wire.ts gives for the Raft stream:
 * proto-loader's pair copies every message into protobufjs instances and out again (a Long per 64-bit
 * field), and every small forwarded publish crosses this stream twice. A request is encoded straight
 * from what append-stream.ts and forward-codec.ts build, and each side decodes straight into the
 * object proto-loader produced (64-bit fields as numbers, defaults filled in, enums as names, absent
 * messages null), which forward-codec.ts checks as before.
 *
 * The bytes are the schema's protobuf (default-valued fields left out), so nodes of other builds read
 * them and are read (append-wire.test.ts checks both directions against proto-loader's pair).
 */
import protobuf from 'protobufjs';
import type { AppendStreamReply__Output } from './generated/brook/forward/v1/AppendStreamReply.js';
import type { AppendStreamRequest__Output } from './generated/brook/forward/v1/AppendStreamRequest.js';
import { forwardProto } from './proto.js';
import { delimited, endOf, ended, enumName, enumOf, expect, readU64, varint, writeEnum, writeString, writeU32, writeU64, type Loose, type Reader, type Writer } from './wire-fields.js';

let statuses: ReturnType<typeof enumOf> | undefined;
function statusEnum(): ReturnType<typeof enumOf> {
  statuses ??= enumOf(forwardProto().AppendStatus);
  return statuses;
}

// ---------------------------------------------------------------------------------------------
// Encoding

function writeAppendRequest(w: Writer, p: Loose): void {
  writeU32(w, 1, p['group']);
  writeU32(w, 2, p['topic']);
  writeU32(w, 3, p['partition']);
  writeU64(w, 4, p['epoch']);
  writeString(w, 5, p['request_id']);
  writeString(w, 6, p['flow_id']);
  writeU32(w, 7, p['deadline_ms']);
  // Every event, an empty one too: a repeated field's elements are all written.
  for (const e of (p['events'] as Uint8Array[] | undefined) ?? []) w.uint32((8 << 3) | delimited).bytes(e);
}

function writeAppendManyRequest(w: Writer, request: Loose): void {
  for (const p of (request['parts'] as Loose[] | undefined) ?? []) {
    w.uint32((1 << 3) | delimited).fork();
    writeAppendRequest(w, p);
    w.ldelim();
  }
  writeString(w, 2, request['flow_id']);
}

/**
 * The envelope AppendStreamRequest and AppendStreamReply share: id = 1, the payload = 2 (`request` or
 * `reply`), more = 3 (envelopes of the same kind), batches = 4. Only the payload differs.
 */
interface Envelope {
  readonly key: 'request' | 'reply';
  write(w: Writer, payload: Loose): void;
  read(r: Reader, end: number): Loose;
}

function writeEnvelope(w: Writer, m: Loose, e: Envelope): void {
  writeU64(w, 1, m['id']);
  const payload = m[e.key] as Loose | null | undefined;
  if (payload !== undefined && payload !== null) {
    w.uint32((2 << 3) | delimited).fork();
    e.write(w, payload);
    w.ldelim();
  }
  for (const more of (m['more'] as Loose[] | undefined) ?? []) {
    w.uint32((3 << 3) | delimited).fork();
    writeEnvelope(w, more, e);
    w.ldelim();
  }
  if (m['batches'] === true) w.uint32((4 << 3) | varint).bool(true);
}

/** An AppendStreamRequest's bytes (the append stream's request serializer). */
export function encodeAppendStreamRequest(m: object): Buffer {
  const w = protobuf.Writer.create();
  writeEnvelope(w, m as Loose, requestEnvelope);
  return w.finish() as Buffer;
}

function writeAppendReply(w: Writer, a: Loose): void {
  writeEnum(w, 1, a['status'], statusEnum().numbers);
  writeU64(w, 2, a['epoch']);
  writeU64(w, 3, a['first_offset']);
  writeU64(w, 4, a['last_offset']);
  writeU64(w, 5, a['leader_hint']);
  writeString(w, 6, a['detail']);
  writeString(w, 7, a['sealed_for']);
}

function writeAppendManyReply(w: Writer, reply: Loose): void {
  for (const a of (reply['replies'] as Loose[] | undefined) ?? []) {
    w.uint32((1 << 3) | delimited).fork();
    writeAppendReply(w, a);
    w.ldelim();
  }
}

/** An AppendStreamReply's bytes (the append stream's reply serializer). */
export function encodeAppendStreamReply(m: object): Buffer {
  const w = protobuf.Writer.create();
  writeEnvelope(w, m as Loose, replyEnvelope);
  return w.finish() as Buffer;
}

// ---------------------------------------------------------------------------------------------
// Decoding

function readAppendRequest(r: Reader, end: number): Loose {
  const events: Uint8Array[] = [];
  const p: Loose = { events, group: 0, topic: 0, partition: 0, epoch: 0, request_id: '', flow_id: '', deadline_ms: 0 };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, varint);
        p['group'] = r.uint32();
        break;
      case 2:
        expect(tag, varint);
        p['topic'] = r.uint32();
        break;
      case 3:
        expect(tag, varint);
        p['partition'] = r.uint32();
        break;
      case 4:
        expect(tag, varint);
        p['epoch'] = readU64(r);
        break;
      case 5:
        expect(tag, delimited);
        p['request_id'] = r.string();
        break;
      case 6:
        expect(tag, delimited);
        p['flow_id'] = r.string();
        break;
      case 7:
        expect(tag, varint);
        p['deadline_ms'] = r.uint32();
        break;
      case 8:
        expect(tag, delimited);
        events.push(r.bytes());
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  return p;
}

function readAppendManyRequest(r: Reader, end: number): Loose {
  const parts: Loose[] = [];
  const m: Loose = { parts, flow_id: '' };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, delimited);
        parts.push(readAppendRequest(r, endOf(r)));
        break;
      case 2:
        expect(tag, delimited);
        m['flow_id'] = r.string();
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  return m;
}

function readEnvelope(r: Reader, end: number, e: Envelope): Loose {
  const more: Loose[] = [];
  const m: Loose = { more, id: 0, [e.key]: null, batches: false };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, varint);
        m['id'] = readU64(r);
        break;
      case 2:
        expect(tag, delimited);
        m[e.key] = e.read(r, endOf(r));
        break;
      case 3:
        expect(tag, delimited);
        more.push(readEnvelope(r, endOf(r), e));
        break;
      case 4:
        expect(tag, varint);
        m['batches'] = r.bool();
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  return m;
}

/** An AppendStreamRequest from its bytes (the server's deserializer); throws on bytes that are not one. */
export function decodeAppendStreamRequest(buf: Buffer): AppendStreamRequest__Output {
  const r = protobuf.Reader.create(buf);
  return readEnvelope(r, r.len, requestEnvelope) as unknown as AppendStreamRequest__Output;
}

function readAppendReply(r: Reader, end: number): Loose {
  const a: Loose = { status: 'APPEND_STATUS_UNSPECIFIED', epoch: 0, first_offset: 0, last_offset: 0, leader_hint: 0, detail: '', sealed_for: '' };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, varint);
        a['status'] = enumName(statusEnum().names, r.int32());
        break;
      case 2:
        expect(tag, varint);
        a['epoch'] = readU64(r);
        break;
      case 3:
        expect(tag, varint);
        a['first_offset'] = readU64(r);
        break;
      case 4:
        expect(tag, varint);
        a['last_offset'] = readU64(r);
        break;
      case 5:
        expect(tag, varint);
        a['leader_hint'] = readU64(r);
        break;
      case 6:
        expect(tag, delimited);
        a['detail'] = r.string();
        break;
      case 7:
        expect(tag, delimited);
        a['sealed_for'] = r.string();
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  return a;
}

function readAppendManyReply(r: Reader, end: number): Loose {
  const replies: Loose[] = [];
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        expect(tag, delimited);
        replies.push(readAppendReply(r, endOf(r)));
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  ended(r, end);
  return { replies };
}

/** An AppendStreamReply from its bytes (the client's deserializer); throws on bytes that are not one. */
export function decodeAppendStreamReply(buf: Buffer): AppendStreamReply__Output {
  const r = protobuf.Reader.create(buf);
  return readEnvelope(r, r.len, replyEnvelope) as unknown as AppendStreamReply__Output;
}

const requestEnvelope: Envelope = { key: 'request', write: writeAppendManyRequest, read: readAppendManyRequest };
const replyEnvelope: Envelope = { key: 'reply', write: writeAppendManyReply, read: readAppendManyReply };
