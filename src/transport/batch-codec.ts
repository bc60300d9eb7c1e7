/**
 * The MessageBatch one node writes to another: Raft messages of many groups, each naming its group,
 * with heartbeats and heartbeat responses coalesced into small (group, term, commit, context) blocks.
 *
 * With thousands of partition groups, most traffic between two idle nodes is heartbeats; a full
 * Message per heartbeat would repeat the type, sender and receiver thousands of times a tick. Only a
 * heartbeat whose other fields are all zero (what the core emits) is coalesced, so decoding rebuilds
 * exactly the message that was sent. Coalesced heartbeats are delivered after the batch's other
 * messages; Raft does not depend on the order between a heartbeat and other messages.
 */
import { nodeOfMember } from '../core/member-id.js';
import { makeMessage, type Message, type NodeId } from '../raft/index.js';
import type { GroupHeartbeat, GroupHeartbeat__Output } from './generated/brook/raft/v1/GroupHeartbeat.js';
import type { Message as WireMessage } from './generated/brook/raft/v1/Message.js';
import type { MessageBatch, MessageBatch__Output } from './generated/brook/raft/v1/MessageBatch.js';
import { contextBytesMax, DecodeError, decodeBounded, decodeU64, fromWireMessage, toWireMessage } from './codec.js';
import { groupIdMax, incarnationLengthMax, indexMax, termMax } from './limits.js';
import type { GroupId } from './types.js';

/** Whether `m` travels as a coalesced heartbeat block (nothing but group, term, commit, context set). */
export function coalescible(m: Message): boolean {
  if (m.type !== 'heartbeat' && m.type !== 'heartbeatResp') return false;
  // A block has no room for a read lease field (the metadata group's heartbeats travel whole).
  if (m.lease !== undefined) return false;
  // A block names no member: the receiver takes the batch's nodes for sender and receiver, which are
  // the members only at incarnation 0 (core/member-id.ts).
  if (m.from !== nodeOfMember(m.from) || m.to !== nodeOfMember(m.to)) return false;
  if (m.type === 'heartbeatResp' && m.commit !== 0) return false;
  return m.logTerm === 0 && m.index === 0 && m.entries.length === 0 && !m.reject && m.rejectHint === 0 && m.snapshot === undefined;
}

/** Rough wire size of a message, for the bound on bytes queued per peer. */
function messageBytes(m: Message): number {
  let n = 48 + m.context.length;
  for (const e of m.entries) n += 16 + e.data.byteLength;
  if (m.snapshot !== undefined) n += 64 + m.snapshot.data.byteLength;
  return n;
}

/** One peer's share of a send, built up message by message. */
export class BatchBuilder {
  readonly messages: WireMessage[] = [];
  readonly heartbeats: GroupHeartbeat[] = [];
  readonly heartbeatResponses: GroupHeartbeat[] = [];
  /** The group of each snapshot in the batch: told delivered or not once the batch is written or dropped. */
  readonly snapshotGroups: GroupId[] = [];
  bytes = 0;

  add(group: GroupId, m: Message): void {
    if (coalescible(m)) {
      const block: GroupHeartbeat = { group, term: m.term, commit: m.commit, context: m.context };
      (m.type === 'heartbeat' ? this.heartbeats : this.heartbeatResponses).push(block);
      this.bytes += 16 + m.context.length;
      return;
    }
    const w = toWireMessage(m);
    w.group = group;
    this.messages.push(w);
    if (m.type === 'snap') this.snapshotGroups.push(group);
    this.bytes += messageBytes(m);
  }

  count(withSnapshots = true): number {
    return this.messages.length + this.heartbeats.length + this.heartbeatResponses.length - (withSnapshots ? 0 : this.snapshotGroups.length);
  }

  /** The batch; without its snapshots when `withSnapshots` is false. */
  toWire(from: NodeId, incarnation: string, withSnapshots = true): MessageBatch {
    const messages = withSnapshots || this.snapshotGroups.length === 0 ? this.messages : this.messages.filter((m) => m.type !== 'MESSAGE_TYPE_SNAP');
    return { from, incarnation, messages, heartbeats: this.heartbeats, heartbeat_responses: this.heartbeatResponses };
  }
}

export interface GroupMessage {
  readonly group: GroupId;
  readonly message: Message;
}

export interface DecodedBatch {
  readonly from: NodeId;
  /** The sender's process incarnation ('' when it named none): a new one means it restarted. */
  readonly incarnation: string;
  readonly messages: GroupMessage[];
  /** Messages dropped for failing a check, one error each. */
  readonly failures: DecodeError[];
}

export function decodeGroup(v: unknown, what: string): GroupId {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > groupIdMax) throw new DecodeError(`${what}: not a group id: ${String(v)}`);
  return v;
}

function fromHeartbeat(w: GroupHeartbeat__Output, type: 'heartbeat' | 'heartbeatResp', from: NodeId, self: NodeId, what: string): GroupMessage {
  const group = decodeGroup(w.group, `${what}.group`);
  const term = decodeBounded(w.term, termMax, `${what}.term`);
  const commit = decodeBounded(w.commit, indexMax, `${what}.commit`);
  if (type === 'heartbeatResp' && commit !== 0) throw new DecodeError(`${what}.commit: ${commit} on a heartbeat response`);
  if (typeof w.context !== 'string' || Buffer.byteLength(w.context) > contextBytesMax) {
    throw new DecodeError(`${what}.context: not a string of at most ${contextBytesMax} bytes`);
  }
  return { group, message: makeMessage({ type, from, to: self, term, commit, context: w.context }) };
}

/**
 * Decodes a batch received by node `self`. A batch whose sender is unreadable is refused whole (a
 * DecodeError is thrown); otherwise every message is checked on its own, so one bad message costs only
 * itself.
 */
export function decodeBatch(w: MessageBatch__Output, self: NodeId): DecodedBatch {
  const from = decodeU64(w.from, 'batch.from');
  if (from === 0 || from === self) throw new DecodeError(`batch.from: ${from} is not a peer`);
  const messages: GroupMessage[] = [];
  const failures: DecodeError[] = [];
  const attempt = (f: () => GroupMessage): void => {
    try {
      messages.push(f());
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
      failures.push(err);
    }
  };
  const list = (xs: unknown, what: string): unknown[] => {
    if (!Array.isArray(xs)) throw new DecodeError(`${what}: not a list`);
    return xs;
  };
  for (const m of list(w.messages, 'batch.messages') as MessageBatch__Output['messages']) {
    attempt(() => {
      const group = decodeGroup(m.group, 'message.group');
      const message = fromWireMessage(m, self);
      if (nodeOfMember(message.from) !== from) throw new DecodeError(`message.from ${message.from} is not a member on the batch's sender ${from}`);
      return { group, message };
    });
  }
  list(w.heartbeats, 'batch.heartbeats').forEach((h, k) => attempt(() => fromHeartbeat(h as GroupHeartbeat__Output, 'heartbeat', from, self, `batch.heartbeats[${k}]`)));
  list(w.heartbeat_responses, 'batch.heartbeat_responses').forEach((h, k) =>
    attempt(() => fromHeartbeat(h as GroupHeartbeat__Output, 'heartbeatResp', from, self, `batch.heartbeat_responses[${k}]`)),
  );
  // Bounded: it is kept per peer and logged; a longer one is not a real node's (main.ts: a UUID).
  const incarnation = typeof w.incarnation === 'string' && w.incarnation.length <= incarnationLengthMax ? w.incarnation : '';
  return { from, incarnation, messages, failures };
}
