/**
 * Conversions between the Raft core's values (src/raft/types.ts) and their protobuf form
 * (proto/raft.proto), on the wire. (The Raft log on disk has a format of its own, with checksums:
 * src/broker/raft-records.ts.)
 *
 * Decoding is where untrusted bytes become values the core trusts: the core asserts on malformed
 * input (an assertion is fatal), so every field is checked here first: known enum values, terms,
 * indexes and node ids that are safe integers, the message addressed to this node, append entries
 * contiguous and not above the message's term, conf change payloads that decode, a snapshot exactly
 * where one belongs, and terms and indexes of messages below limits.ts's bounds (a forged huge term
 * would stop every election for good). A message that fails is refused with a DecodeError naming the field; the
 * transport drops it and logs, and Raft treats it as lost.
 */
import { allocWithHeadroom } from '../core/headroom.js';
import { nodeOfMember } from '../core/member-id.js';
import { decodeConfChange } from '../raft/index.js';
import type { ConfState, Entry, EntryType, HardState, Message, MessageLease, MessageType, NodeId, Snapshot } from '../raft/index.js';
import type { EntryType as WireEntryType } from './generated/brook/raft/v1/EntryType.js';
import type { MessageType as WireMessageType } from './generated/brook/raft/v1/MessageType.js';
import type { Entry as WireEntry, Entry__Output as WireEntryOut } from './generated/brook/raft/v1/Entry.js';
import type { Message as WireMessage, Message__Output as WireMessageOut } from './generated/brook/raft/v1/Message.js';
import type { Snapshot as WireSnapshot, Snapshot__Output as WireSnapshotOut } from './generated/brook/raft/v1/Snapshot.js';
import type { ConfState__Output as WireConfStateOut } from './generated/brook/raft/v1/ConfState.js';
import { indexMax, termMax } from './limits.js';
import { raftProto } from './proto.js';

export class DecodeError extends Error {
  override name = 'DecodeError';
}

/** Longest ReadIndex context accepted (the host's contexts are about 50 bytes). */
export const contextBytesMax = 256;
/** Members listed in one configuration, at most. */
export const confMembersMax = 1024;

const messageTypes: Record<MessageType, WireMessageType & string> = {
  app: 'MESSAGE_TYPE_APP',
  appResp: 'MESSAGE_TYPE_APP_RESP',
  vote: 'MESSAGE_TYPE_VOTE',
  voteResp: 'MESSAGE_TYPE_VOTE_RESP',
  preVote: 'MESSAGE_TYPE_PRE_VOTE',
  preVoteResp: 'MESSAGE_TYPE_PRE_VOTE_RESP',
  heartbeat: 'MESSAGE_TYPE_HEARTBEAT',
  heartbeatResp: 'MESSAGE_TYPE_HEARTBEAT_RESP',
  snap: 'MESSAGE_TYPE_SNAP',
  timeoutNow: 'MESSAGE_TYPE_TIMEOUT_NOW',
  readIndex: 'MESSAGE_TYPE_READ_INDEX',
  readIndexResp: 'MESSAGE_TYPE_READ_INDEX_RESP',
  termProbe: 'MESSAGE_TYPE_TERM_PROBE',
  termProbeResp: 'MESSAGE_TYPE_TERM_PROBE_RESP',
};
const messageTypesByWire = new Map<string, MessageType>(
  Object.entries(messageTypes).map(([k, v]) => [v, k as MessageType]),
);
const entryTypes: Record<EntryType, WireEntryType & string> = { normal: 'ENTRY_TYPE_NORMAL', confChange: 'ENTRY_TYPE_CONF_CHANGE' };
const entryTypesByWire = new Map<string, EntryType>([
  ['ENTRY_TYPE_NORMAL', 'normal'],
  ['ENTRY_TYPE_CONF_CHANGE', 'confChange'],
]);

/**
 * A uint64 decimal string (or a number) as a safe integer; throws DecodeError otherwise. The Raft
 * stream's batches are decoded with 64-bit fields as numbers (proto.ts raftServiceDefinition): a value
 * above 2^53 then arrives as an inexact number, which is not a safe integer and is refused as before.
 */
export function decodeU64(v: unknown, what: string): number {
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v) && v >= 0) return v;
    throw new DecodeError(`${what}: not a uint64 below 2^53: ${String(v)}`);
  }
  const s = v;
  if (typeof s !== 'string' || !/^\d{1,16}$/.test(s)) throw new DecodeError(`${what}: not a uint64: ${String(v)}`);
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new DecodeError(`${what}: ${s} exceeds 2^53`);
  return n;
}

/** A uint64 that must also be at most `max` (terms, indexes from peers). */
export function decodeBounded(v: unknown, max: number, what: string): number {
  const n = decodeU64(v, what);
  if (n > max) throw new DecodeError(`${what}: ${n} above the bound ${max}`);
  return n;
}

function decodeNodeId(v: unknown, what: string): NodeId {
  const n = decodeU64(v, what);
  if (n === 0) throw new DecodeError(`${what}: node id 0`);
  return n;
}

function bytesOf(v: unknown, what: string): Uint8Array {
  if (v instanceof Uint8Array) return v;
  throw new DecodeError(`${what}: not bytes`);
}

/**
 * The bytes in memory of their own. The decoder hands out views into the received message, and an
 * entry kept in a follower's Raft memory tail would keep the whole message (up to a chunk of many
 * entries) alive while its bound counts only the entry's bytes.
 */
function ownedBytes(v: Uint8Array): Uint8Array {
  if (v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) return v;
  // With room before the bytes for the head of the Raft log record that stores them: this copy is
  // then the only one a follower makes of an entry (core/headroom.ts).
  const copy = allocWithHeadroom(v.byteLength);
  copy.set(v);
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Encoding (trusted values from our own core). 64-bit fields are given as numbers (safe integers):
// protobufjs converts a decimal string through Long.fromString, several times the cost.

export function toWireEntry(e: Entry): WireEntry {
  return { term: e.term, index: e.index, type: entryTypes[e.type], data: Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength) };
}

function toWireConfState(c: ConfState): { voters: number[]; learners: number[] } {
  return { voters: [...c.voters], learners: [...c.learners] };
}

export function toWireSnapshot(s: Snapshot): WireSnapshot {
  return {
    metadata: { index: s.metadata.index, term: s.metadata.term, conf_state: toWireConfState(s.metadata.confState) },
    data: Buffer.from(s.data.buffer, s.data.byteOffset, s.data.byteLength),
  };
}

export function toWireMessage(m: Message): WireMessage {
  return {
    type: messageTypes[m.type],
    from: m.from,
    to: m.to,
    term: m.term,
    log_term: m.logTerm,
    index: m.index,
    entries: m.entries.map(toWireEntry),
    commit: m.commit,
    reject: m.reject,
    reject_hint: m.rejectHint,
    context: m.context,
    snapshot: m.snapshot === undefined ? null : toWireSnapshot(m.snapshot),
    lease: m.lease === undefined ? null : { stamp: m.lease.stamp, seq: m.lease.seq, index: m.lease.index, released: m.lease.released },
  };
}

/** Message types that may carry a read lease field (metadata-lease.ts). */
const leaseTypes = new Set<MessageType>(['app', 'appResp', 'heartbeat', 'heartbeatResp']);

// ---------------------------------------------------------------------------------------------
// Decoding (untrusted)

export function fromWireEntry(w: WireEntryOut, what: string): Entry {
  const type = entryTypesByWire.get(w.type);
  if (type === undefined) throw new DecodeError(`${what}.type: unknown ${String(w.type)}`);
  const data = ownedBytes(bytesOf(w.data, `${what}.data`));
  if (type === 'confChange') {
    try {
      decodeConfChange(data);
    } catch (err) {
      throw new DecodeError(`${what}.data: not a conf change (${(err as Error).message})`);
    }
  }
  return { term: decodeU64(w.term, `${what}.term`), index: decodeU64(w.index, `${what}.index`), type, data };
}

function fromWireConfState(w: WireConfStateOut | null, what: string): ConfState {
  if (w === null) throw new DecodeError(`${what}: missing`);
  const list = (xs: unknown, name: string): number[] => {
    if (!Array.isArray(xs)) throw new DecodeError(`${what}.${name}: not a list`);
    if (xs.length > confMembersMax) throw new DecodeError(`${what}.${name}: more than ${confMembersMax} members`);
    const ids = xs.map((x, i) => decodeNodeId(x, `${what}.${name}[${i}]`));
    for (let i = 1; i < ids.length; i++) {
      if (ids[i]! <= ids[i - 1]!) throw new DecodeError(`${what}.${name}: not sorted and unique`);
    }
    return ids;
  };
  const voters = list(w.voters, 'voters');
  const learners = list(w.learners, 'learners');
  for (const l of learners) if (voters.includes(l)) throw new DecodeError(`${what}: ${l} is both voter and learner`);
  return { voters, learners };
}

export function fromWireSnapshot(w: WireSnapshotOut, what: string): Snapshot {
  const md = w.metadata;
  if (md === null) throw new DecodeError(`${what}.metadata: missing`);
  return {
    metadata: {
      index: decodeU64(md.index, `${what}.metadata.index`),
      term: decodeU64(md.term, `${what}.metadata.term`),
      confState: fromWireConfState(md.conf_state, `${what}.metadata.conf_state`),
    },
    data: bytesOf(w.data, `${what}.data`),
  };
}

/**
 * Decodes and checks a message received from a peer for node `self`. The checks are those the core
 * would otherwise assert on; state-dependent rules stay in the core.
 */
export function fromWireMessage(w: WireMessageOut, self: NodeId): Message {
  const type = messageTypesByWire.get(w.type);
  if (type === undefined) throw new DecodeError(`message.type: unknown ${String(w.type)}`);
  const from = decodeNodeId(w.from, 'message.from');
  const to = decodeNodeId(w.to, 'message.to');
  // A group's member id names its node (core/member-id.ts): the metadata group's members after a
  // wipe are not the node ids themselves. Whether `to` is the receiving group's member now is the
  // node host's check; here only the node.
  if (nodeOfMember(to) !== self) throw new DecodeError(`message.to: ${to}, but this node is ${self}`);
  if (nodeOfMember(from) === self) throw new DecodeError(`message.from: this node's own id ${self}`);
  const term = decodeBounded(w.term, termMax, 'message.term');
  // A term probe's answer carries in `index` the member it answers for (a former member of the
  // answerer's node, or 0): a member id, which may be above the index bound (core/member-id.ts).
  const index = type === 'termProbeResp' ? decodeU64(w.index, 'message.index') : decodeBounded(w.index, indexMax, 'message.index');
  if (typeof w.context !== 'string' || Buffer.byteLength(w.context) > contextBytesMax) {
    throw new DecodeError(`message.context: not a string of at most ${contextBytesMax} bytes`);
  }
  if (!Array.isArray(w.entries)) throw new DecodeError('message.entries: not a list');
  if (w.entries.length > 0 && type !== 'app') throw new DecodeError(`message.entries: a ${type} message carries none`);
  if (w.entries.length > 0 && index + w.entries.length > indexMax) throw new DecodeError(`message.entries: beyond the index bound ${indexMax}`);
  const entries = w.entries.map((e, k) => fromWireEntry(e, `message.entries[${k}]`));
  entries.forEach((e, k) => {
    if (e.index !== index + 1 + k) throw new DecodeError(`message.entries[${k}].index: ${e.index}, expected ${index + 1 + k}`);
    if (e.term > term) throw new DecodeError(`message.entries[${k}].term: ${e.term} above the message term ${term}`);
    if (e.term === 0) throw new DecodeError(`message.entries[${k}].term: 0`);
  });
  let snapshot: Snapshot | undefined;
  if (type === 'snap') {
    if (w.snapshot === null) throw new DecodeError('message.snapshot: missing on a snap message');
    snapshot = fromWireSnapshot(w.snapshot, 'message.snapshot');
    if (snapshot.metadata.index === 0 || snapshot.metadata.term === 0) throw new DecodeError('message.snapshot.metadata: empty snapshot');
    if (snapshot.metadata.index > indexMax) throw new DecodeError(`message.snapshot.metadata.index: above the bound ${indexMax}`);
    if (snapshot.metadata.term > term) throw new DecodeError('message.snapshot.metadata.term: above the message term');
    if (snapshot.metadata.confState.voters.length === 0) throw new DecodeError('message.snapshot.metadata.conf_state: no voters');
  } else if (w.snapshot !== null) {
    throw new DecodeError(`message.snapshot: a ${type} message carries none`);
  }
  if (typeof w.reject !== 'boolean') throw new DecodeError('message.reject: not a boolean');
  let lease: MessageLease | undefined;
  // Absent (null) from a build without leases, and from this one on messages without one.
  if (w.lease !== null && w.lease !== undefined) {
    if (!leaseTypes.has(type)) throw new DecodeError(`message.lease: a ${type} message carries none`);
    const stamp = w.lease.stamp;
    if (typeof stamp !== 'number' || !Number.isFinite(stamp) || stamp < 0) throw new DecodeError('message.lease.stamp: not a finite non-negative number');
    lease = {
      stamp,
      seq: decodeBounded(w.lease.seq, indexMax, 'message.lease.seq'),
      index: decodeBounded(w.lease.index, indexMax, 'message.lease.index'),
      released: decodeBounded(w.lease.released, indexMax, 'message.lease.released'),
    };
  }
  return {
    type,
    from,
    to,
    term,
    logTerm: decodeBounded(w.log_term, termMax, 'message.log_term'),
    index,
    entries,
    commit: decodeBounded(w.commit, indexMax, 'message.commit'),
    reject: w.reject,
    rejectHint: decodeBounded(w.reject_hint, indexMax, 'message.reject_hint'),
    context: w.context,
    snapshot,
    ...(lease === undefined ? {} : { lease }),
  };
}

// ---------------------------------------------------------------------------------------------
// Bytes (what the tests feed the decoder; until the checksummed disk format also the Raft log's form on disk)

export function encodeEntry(e: Entry): Buffer {
  return raftProto().Entry.serialize(toWireEntry(e));
}

export function decodeEntry(buf: Buffer): Entry {
  return fromWireEntry(raftProto().Entry.deserialize(buf), 'entry');
}

export function encodeHardState(hs: HardState): Buffer {
  return raftProto().HardState.serialize({ term: String(hs.term), vote: String(hs.vote), commit: String(hs.commit) });
}

export function decodeHardState(buf: Buffer): HardState {
  const w = raftProto().HardState.deserialize(buf);
  return { term: decodeU64(w.term, 'hardState.term'), vote: decodeU64(w.vote, 'hardState.vote'), commit: decodeU64(w.commit, 'hardState.commit') };
}

export function encodeSnapshot(s: Snapshot): Buffer {
  return raftProto().Snapshot.serialize(toWireSnapshot(s));
}

export function decodeSnapshot(buf: Buffer): Snapshot {
  return fromWireSnapshot(raftProto().Snapshot.deserialize(buf), 'snapshot');
}

export function encodeMessage(m: Message): Buffer {
  return raftProto().Message.serialize(toWireMessage(m));
}

/** Decodes message bytes as the server does: protobuf parse errors become DecodeErrors too. */
export function decodeMessage(buf: Buffer, self: NodeId): Message {
  let w: WireMessageOut;
  try {
    w = raftProto().Message.deserialize(buf);
  } catch (err) {
    throw new DecodeError(`message: not a protobuf Message (${(err as Error).message})`);
  }
  return fromWireMessage(w, self);
}
