/**
 * Forwarded appends, remote reads and bounds (proto/forward.proto) to and from their wire form.
 *
 * Both directions are untrusted: the server checks a request before its handler sees it (a request
 * that fails is answered `refused`, or the call fails with INVALID_ARGUMENT), and the client checks
 * the answer against its own request before its caller sees it (a committed append must cover exactly
 * the events sent, in the term it was routed for; a read chunk must continue after what was read and
 * stay within the sizes asked for). Oversized limits are clamped, nonsense is refused.
 */
import type { NodeId } from '../raft/index.js';
import type { AppendReply, AppendReply__Output } from './generated/brook/forward/v1/AppendReply.js';
import type { AppendRequest as WireAppendRequest, AppendRequest__Output } from './generated/brook/forward/v1/AppendRequest.js';
import type { AppendManyReply, AppendManyReply__Output } from './generated/brook/forward/v1/AppendManyReply.js';
import type { AppendManyRequest, AppendManyRequest__Output } from './generated/brook/forward/v1/AppendManyRequest.js';
import type { BoundsReply, BoundsReply__Output } from './generated/brook/forward/v1/BoundsReply.js';
import type { BoundsRequest as WireBoundsRequest, BoundsRequest__Output } from './generated/brook/forward/v1/BoundsRequest.js';
import type { ControlRequest as WireControlRequest, ControlRequest__Output } from './generated/brook/forward/v1/ControlRequest.js';
import type { ReadChunk as WireReadChunk, ReadChunk__Output } from './generated/brook/forward/v1/ReadChunk.js';
import type { ReadRequest as WireReadRequest, ReadRequest__Output } from './generated/brook/forward/v1/ReadRequest.js';
import { DecodeError, decodeBounded, decodeU64 } from './codec.js';
import { decodeGroup } from './batch-codec.js';
import {
  appendBytesMax,
  appendEventsMax,
  appendPartsMax,
  eventRecordBytesMax,
  flowIdLengthMax,
  forwardDeadlineMsMax,
  offsetMax,
  readChunkBytesMax,
  readEventsMax,
  readWaitMsMax,
  requestIdLengthMax,
  termMax,
  timelineIdLengthMax,
} from './limits.js';
import {
  TransportError,
  type AppendAnswer,
  type AppendRequest,
  type BoundsAnswer,
  type BoundsRequest,
  type ControlAnswer,
  type ControlCommand,
  type ControlRequest,
  type ReadChunk,
  type ReadEvent,
  type ReadRequest,
} from './types.js';

const detailLengthMax = 1024;

/** A signed 64-bit decimal string as a safe integer within [min, max]. */
export function decodeI64(v: unknown, min: number, max: number, what: string): number {
  const s = typeof v === 'number' ? String(v) : v;
  if (typeof s !== 'string' || !/^-?\d{1,16}$/.test(s)) throw new DecodeError(`${what}: not an int64: ${String(v)}`);
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new DecodeError(`${what}: ${s} outside [${min}, ${max}]`);
  return n;
}

function cut(s: unknown, max: number): string {
  return typeof s === 'string' ? s.slice(0, max) : '';
}

function partitionGroup(v: unknown, what: string): number {
  const g = decodeGroup(v, what);
  if (g === 0) throw new DecodeError(`${what}: 0 is the metadata group, not a partition`);
  return g;
}

function u32(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2 ** 32 - 1) throw new DecodeError(`${what}: not a u32: ${String(v)}`);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Append (64-bit fields given as numbers when encoding: a decimal string costs protobufjs a
// Long.fromString per field; the wire bytes are the same)

export function toWireAppendRequest(r: AppendRequest): WireAppendRequest {
  return {
    group: r.group,
    topic: r.topic,
    partition: r.partition,
    epoch: r.epoch,
    request_id: r.requestId,
    flow_id: r.flowId,
    deadline_ms: r.deadlineMs,
    events: r.events as Buffer[],
  };
}

/** The server's check of a forwarded append; throws a DecodeError (answered `refused`). */
export function fromWireAppendRequest(w: AppendRequest__Output): AppendRequest {
  const group = partitionGroup(w.group, 'append.group');
  const requestId = w.request_id;
  if (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > requestIdLengthMax) {
    throw new DecodeError(`append.request_id: must hold 1 to ${requestIdLengthMax} characters`);
  }
  if (!Array.isArray(w.events) || w.events.length === 0) throw new DecodeError('append.events: none');
  if (w.events.length > appendEventsMax) throw new DecodeError(`append.events: ${w.events.length} events, more than ${appendEventsMax}`);
  let bytes = 0;
  w.events.forEach((e, k) => {
    if (!(e instanceof Uint8Array) || e.byteLength === 0) throw new DecodeError(`append.events[${k}]: empty`);
    if (e.byteLength > eventRecordBytesMax) throw new DecodeError(`append.events[${k}]: ${e.byteLength} bytes, more than ${eventRecordBytesMax}`);
    bytes += e.byteLength;
  });
  if (bytes > appendBytesMax) throw new DecodeError(`append.events: ${bytes} bytes, more than ${appendBytesMax}`);
  return {
    group,
    topic: u32(w.topic, 'append.topic'),
    partition: u32(w.partition, 'append.partition'),
    epoch: decodeBounded(w.epoch, termMax, 'append.epoch'),
    requestId,
    flowId: cut(w.flow_id, flowIdLengthMax),
    deadlineMs: Math.min(Math.max(1, u32(w.deadline_ms, 'append.deadline_ms')), forwardDeadlineMsMax),
    events: w.events,
  };
}

export function toWireAppendReply(a: AppendAnswer): AppendReply {
  switch (a.status) {
    case 'committed':
      return { status: 'APPEND_STATUS_COMMITTED', epoch: a.epoch, first_offset: a.firstOffset, last_offset: a.lastOffset };
    case 'notLeader':
      return { status: 'APPEND_STATUS_NOT_LEADER', leader_hint: a.leaderHint, epoch: a.epoch };
    case 'unavailable':
      return { status: 'APPEND_STATUS_UNAVAILABLE', detail: cut(a.detail, detailLengthMax) };
    case 'refused':
      return { status: 'APPEND_STATUS_REFUSED', detail: cut(a.detail, detailLengthMax) };
    case 'sealed':
      return { status: 'APPEND_STATUS_SEALED', sealed_for: cut(a.timeline, timelineIdLengthMax) };
  }
}

/**
 * The client's check of the leader's answer to `req`: a committed answer must give one dense offset
 * per event sent and, when the request named an epoch, be committed in that epoch. Anything else
 * becomes `unavailable` (the outcome is unknown; a retry with the same request id is safe).
 */
export function fromWireAppendReply(w: AppendReply__Output, req: AppendRequest, peer: NodeId): AppendAnswer {
  try {
    switch (w.status) {
      case 'APPEND_STATUS_COMMITTED': {
        const epoch = decodeBounded(w.epoch, termMax, 'reply.epoch');
        const firstOffset = decodeBounded(w.first_offset, offsetMax, 'reply.first_offset');
        const lastOffset = decodeBounded(w.last_offset, offsetMax, 'reply.last_offset');
        if (lastOffset - firstOffset + 1 !== req.events.length) {
          throw new DecodeError(`reply: offsets ${firstOffset}..${lastOffset} for ${req.events.length} events`);
        }
        if (epoch === 0) throw new DecodeError('reply.epoch: committed in term 0');
        if (req.epoch !== 0 && epoch !== req.epoch) throw new DecodeError(`reply.epoch: committed in ${epoch}, routed for ${req.epoch}`);
        return { status: 'committed', epoch, firstOffset, lastOffset };
      }
      case 'APPEND_STATUS_NOT_LEADER':
        return { status: 'notLeader', leaderHint: decodeU64(w.leader_hint, 'reply.leader_hint'), epoch: decodeBounded(w.epoch, termMax, 'reply.epoch') };
      case 'APPEND_STATUS_REFUSED':
        return { status: 'refused', detail: cut(w.detail, detailLengthMax) || 'refused by the leader' };
      case 'APPEND_STATUS_UNAVAILABLE':
        return { status: 'unavailable', detail: cut(w.detail, detailLengthMax) || 'the leader could not complete the append' };
      case 'APPEND_STATUS_SEALED':
        return { status: 'sealed', timeline: timelineId(w.sealed_for, 'reply.sealed_for') };
      default:
        throw new DecodeError(`reply.status: unknown ${String(w.status)}`);
    }
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    return { status: 'unavailable', detail: `malformed append reply from node ${peer}: ${err.message}` };
  }
}

// ---------------------------------------------------------------------------------------------
// AppendMany (the parts of one client batch for one node)

export function toWireAppendManyRequest(parts: readonly AppendRequest[], flowId: string): AppendManyRequest {
  return { parts: parts.map(toWireAppendRequest), flow_id: flowId };
}

/**
 * The server's check of a grouped append: the call as a whole (its number of parts, their bytes
 * together) throws a DecodeError (the call fails with INVALID_ARGUMENT, every part refused); each part
 * is then checked on its own as an Append is, and one that fails is that part's DecodeError (answered
 * `refused` for that part alone).
 */
export function fromWireAppendManyRequest(w: AppendManyRequest__Output): (AppendRequest | DecodeError)[] {
  if (!Array.isArray(w.parts) || w.parts.length === 0) throw new DecodeError('append_many.parts: none');
  if (w.parts.length > appendPartsMax) throw new DecodeError(`append_many.parts: ${w.parts.length} parts, more than ${appendPartsMax}`);
  let bytes = 0;
  for (const p of w.parts) if (Array.isArray(p?.events)) for (const e of p.events) bytes += e instanceof Uint8Array ? e.byteLength : 0;
  if (bytes > appendBytesMax && w.parts.length > 1) throw new DecodeError(`append_many.parts: ${bytes} bytes together, more than ${appendBytesMax}`);
  return w.parts.map((p, k) => {
    try {
      return fromWireAppendRequest(p);
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
      return new DecodeError(`part ${k}: ${err.message}`);
    }
  });
}

export function toWireAppendManyReply(answers: readonly AppendAnswer[]): AppendManyReply {
  return { replies: answers.map(toWireAppendReply) };
}

/**
 * The client's check of the answers to `parts`: one per part, each checked against its own part as
 * fromWireAppendReply does. A reply with another number of answers tells nothing about any part:
 * every part is then `unavailable` (a retry with the same request ids is safe).
 */
export function fromWireAppendManyReply(w: AppendManyReply__Output, parts: readonly AppendRequest[], peer: NodeId): AppendAnswer[] {
  if (!Array.isArray(w.replies) || w.replies.length !== parts.length) {
    const detail = `malformed append reply from node ${peer}: ${Array.isArray(w.replies) ? w.replies.length : 'no'} answers for ${parts.length} parts`;
    return parts.map(() => ({ status: 'unavailable', detail }));
  }
  return parts.map((p, k) => fromWireAppendReply(w.replies[k]!, p, peer));
}

// ---------------------------------------------------------------------------------------------
// Control (commands of a partition's group: seal, base)

function timelineId(v: unknown, what: string): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > timelineIdLengthMax) throw new DecodeError(`${what}: must hold 1 to ${timelineIdLengthMax} characters`);
  return v;
}

export function toWireControlRequest(r: ControlRequest): WireControlRequest {
  const head = { group: r.group, topic: r.topic, partition: r.partition, epoch: String(r.epoch), flow_id: r.flowId, deadline_ms: r.deadlineMs };
  const c: ControlCommand = r.command;
  return c.kind === 'seal' ? { ...head, seal: { timeline: c.timeline, floor: String(c.floor) } } : { ...head, base: { base: String(c.base) } };
}

/** The server's check of a control request; throws a DecodeError (answered `refused`). */
export function fromWireControlRequest(w: ControlRequest__Output): ControlRequest {
  let command: ControlCommand;
  if (w.command === 'seal' && w.seal != null) {
    command = { kind: 'seal', timeline: timelineId(w.seal.timeline, 'control.seal.timeline'), floor: decodeBounded(w.seal.floor, offsetMax, 'control.seal.floor') };
  } else if (w.command === 'base' && w.base != null) {
    command = { kind: 'base', base: decodeBounded(w.base.base, offsetMax, 'control.base.base') };
  } else throw new DecodeError(`control.command: none or unknown (${String(w.command)})`);
  return {
    group: partitionGroup(w.group, 'control.group'),
    topic: u32(w.topic, 'control.topic'),
    partition: u32(w.partition, 'control.partition'),
    epoch: decodeBounded(w.epoch, termMax, 'control.epoch'),
    flowId: cut(w.flow_id, flowIdLengthMax),
    deadlineMs: Math.min(Math.max(1, u32(w.deadline_ms, 'control.deadline_ms')), forwardDeadlineMsMax),
    command,
  };
}

export function toWireControlReply(a: ControlAnswer): AppendReply {
  switch (a.status) {
    case 'applied':
      return { status: 'APPEND_STATUS_COMMITTED', epoch: String(a.epoch), first_offset: String(a.next) };
    case 'notLeader':
      return { status: 'APPEND_STATUS_NOT_LEADER', leader_hint: String(a.leaderHint), epoch: String(a.epoch) };
    case 'unavailable':
      return { status: 'APPEND_STATUS_UNAVAILABLE', detail: cut(a.detail, detailLengthMax) };
    case 'refused':
      return { status: 'APPEND_STATUS_REFUSED', detail: cut(a.detail, detailLengthMax), sealed_for: cut(a.sealedFor ?? '', timelineIdLengthMax) };
  }
}

/** The client's check of a control answer to `req`; anything malformed becomes `unavailable`. */
export function fromWireControlReply(w: AppendReply__Output, req: ControlRequest, peer: NodeId): ControlAnswer {
  try {
    switch (w.status) {
      case 'APPEND_STATUS_COMMITTED': {
        const epoch = decodeBounded(w.epoch, termMax, 'reply.epoch');
        if (epoch === 0) throw new DecodeError('reply.epoch: applied in term 0');
        if (req.epoch !== 0 && epoch !== req.epoch) throw new DecodeError(`reply.epoch: applied in ${epoch}, routed for ${req.epoch}`);
        return { status: 'applied', epoch, next: decodeBounded(w.first_offset, offsetMax, 'reply.first_offset') };
      }
      case 'APPEND_STATUS_NOT_LEADER':
        return { status: 'notLeader', leaderHint: decodeU64(w.leader_hint, 'reply.leader_hint'), epoch: decodeBounded(w.epoch, termMax, 'reply.epoch') };
      case 'APPEND_STATUS_REFUSED': {
        const detail = cut(w.detail, detailLengthMax) || 'refused by the leader';
        return typeof w.sealed_for === 'string' && w.sealed_for !== '' ? { status: 'refused', detail, sealedFor: timelineId(w.sealed_for, 'reply.sealed_for') } : { status: 'refused', detail };
      }
      case 'APPEND_STATUS_UNAVAILABLE':
        return { status: 'unavailable', detail: cut(w.detail, detailLengthMax) || 'the leader could not apply the command' };
      default:
        throw new DecodeError(`reply.status: ${String(w.status)} is no answer to a control command`);
    }
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    return { status: 'unavailable', detail: `malformed control reply from node ${peer}: ${err.message}` };
  }
}

// ---------------------------------------------------------------------------------------------
// Read

export function toWireReadRequest(r: ReadRequest): WireReadRequest {
  return {
    group: r.group,
    topic: r.topic,
    partition: r.partition,
    after_offset: String(r.afterOffset),
    max_events: r.maxEvents,
    max_bytes: r.maxBytes,
    wait_ms: r.waitMs,
    follow: r.follow,
    flow_id: r.flowId,
  };
}

/** The server's check of a read request; limits above the bounds are clamped to them. */
export function fromWireReadRequest(w: ReadRequest__Output): ReadRequest {
  const maxEvents = u32(w.max_events, 'read.max_events');
  const maxBytes = u32(w.max_bytes, 'read.max_bytes');
  if (maxEvents === 0) throw new DecodeError('read.max_events: 0');
  if (maxBytes === 0) throw new DecodeError('read.max_bytes: 0');
  if (typeof w.follow !== 'boolean') throw new DecodeError('read.follow: not a boolean');
  return {
    group: partitionGroup(w.group, 'read.group'),
    topic: u32(w.topic, 'read.topic'),
    partition: u32(w.partition, 'read.partition'),
    afterOffset: decodeI64(w.after_offset, -1, offsetMax, 'read.after_offset'),
    maxEvents: Math.min(maxEvents, readEventsMax),
    maxBytes: Math.min(maxBytes, readChunkBytesMax),
    waitMs: Math.min(u32(w.wait_ms, 'read.wait_ms'), readWaitMsMax),
    follow: w.follow,
    flowId: cut(w.flow_id, flowIdLengthMax),
  };
}

/**
 * The wire chunks of one handler chunk, after offset `after`: runs of dense offsets, each within the
 * request's maxEvents and maxBytes (a single larger event travels alone). Throws a TransportError when
 * the handler's offsets do not increase past `after` (a bug on this side: the call ends).
 */
export function toWireReadChunks(c: ReadChunk, req: ReadRequest, after: number): WireReadChunk[] {
  const bounds = { oldest: String(c.oldest), newest: String(c.newest), epoch: String(c.epoch) };
  if (c.events.length === 0) return [{ first_offset: '0', events: [], ...bounds }];
  const out: WireReadChunk[] = [];
  let run: Buffer[] = [];
  let first = 0;
  let bytes = 0;
  let prev = after;
  const flush = () => {
    if (run.length > 0) out.push({ first_offset: String(first), events: run, ...bounds });
    run = [];
    bytes = 0;
  };
  for (const e of c.events) {
    if (!Number.isSafeInteger(e.offset) || e.offset <= prev) {
      throw new TransportError('unavailable', `read produced offset ${e.offset} after ${prev}`);
    }
    if (e.offset > c.newest) throw new TransportError('unavailable', `read produced offset ${e.offset} beyond its newest ${c.newest}`);
    const dense = run.length > 0 && e.offset === prev + 1;
    if (!dense || run.length >= req.maxEvents || bytes + e.bytes.byteLength > req.maxBytes) flush();
    if (run.length === 0) first = e.offset;
    run.push(e.bytes);
    bytes += e.bytes.byteLength;
    prev = e.offset;
  }
  flush();
  return out;
}

/**
 * The client's check of one chunk of the read `req`, the last offset read so far being `after`. The
 * events' offsets are dense from first_offset, after `after`, and within the committed bounds the
 * chunk states.
 */
export function fromWireReadChunk(w: ReadChunk__Output, req: ReadRequest, after: number): ReadChunk {
  const oldest = decodeI64(w.oldest, 0, offsetMax, 'chunk.oldest');
  const newest = decodeI64(w.newest, -1, offsetMax, 'chunk.newest');
  const epoch = decodeBounded(w.epoch, termMax, 'chunk.epoch');
  if (!Array.isArray(w.events)) throw new DecodeError('chunk.events: not a list');
  const n = w.events.length;
  if (n === 0) return { events: [], oldest, newest, epoch };
  if (n > req.maxEvents) throw new DecodeError(`chunk.events: ${n}, more than the ${req.maxEvents} asked for`);
  const first = decodeI64(w.first_offset, 0, offsetMax - n, 'chunk.first_offset');
  if (first <= after) throw new DecodeError(`chunk.first_offset: ${first}, not after ${after}`);
  if (first + n - 1 > newest) throw new DecodeError(`chunk: offsets up to ${first + n - 1} beyond the committed ${newest}`);
  let bytes = 0;
  const events: ReadEvent[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const b = w.events[k]!;
    if (!(b instanceof Uint8Array) || b.byteLength > eventRecordBytesMax) throw new DecodeError(`chunk.events[${k}]: not an event record`);
    bytes += b.byteLength;
    events[k] = { offset: first + k, bytes: b };
  }
  if (n > 1 && bytes > req.maxBytes) throw new DecodeError(`chunk.events: ${bytes} bytes, more than the ${req.maxBytes} asked for`);
  return { events, oldest, newest, epoch };
}

// ---------------------------------------------------------------------------------------------
// Bounds

export function toWireBoundsRequest(r: BoundsRequest): WireBoundsRequest {
  return { group: r.group, topic: r.topic, partition: r.partition };
}

export function fromWireBoundsRequest(w: BoundsRequest__Output): BoundsRequest {
  return { group: partitionGroup(w.group, 'bounds.group'), topic: u32(w.topic, 'bounds.topic'), partition: u32(w.partition, 'bounds.partition') };
}

export function toWireBoundsReply(a: BoundsAnswer): BoundsReply {
  return { oldest: String(a.oldest), newest: String(a.newest), epoch: String(a.epoch), leader: String(a.leader) };
}

export function fromWireBoundsReply(w: BoundsReply__Output): BoundsAnswer {
  return {
    oldest: decodeI64(w.oldest, 0, offsetMax, 'bounds.oldest'),
    newest: decodeI64(w.newest, -1, offsetMax, 'bounds.newest'),
    epoch: decodeBounded(w.epoch, termMax, 'bounds.epoch'),
    leader: decodeU64(w.leader, 'bounds.leader'),
  };
}
