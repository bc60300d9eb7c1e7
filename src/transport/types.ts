/**
 * The values and handler contracts of the node-to-node transport, free of gRPC: what a node sends
 * (Raft messages of many groups, forwarded proposals and appends, remote reads, log fetches) and what
 * it must answer. Every number here is a safe integer already checked against src/transport/limits.ts
 * when it came from a peer.
 */
import type { Entry, Message, NodeId } from '../raft/index.js';

export interface TransportLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A Raft group: 0 is the metadata group, partition groups have u32 ids above 0 (assigned in metadata). */
export type GroupId = number;
export const metadataGroup: GroupId = 0;

/** One group's messages of a send (a Ready's messages, addressed to any peers). */
export interface GroupMessages {
  readonly group: GroupId;
  readonly messages: readonly Message[];
}

/** A metadata proposal a follower forwarded to the node it believes leads group 0. */
export interface ForwardedProposal {
  readonly from: NodeId;
  readonly command: Buffer;
  readonly flowId: string;
  readonly deadlineMs: number;
}

export type ForwardAnswer =
  | { readonly status: 'applied'; readonly index: number; readonly result: Buffer }
  | { readonly status: 'notLeader'; readonly leaderHint: NodeId }
  | { readonly status: 'unavailable'; readonly detail: string };

/** One client batch's events for one partition, forwarded to the node believed to lead it. */
export interface AppendRequest {
  readonly group: GroupId;
  readonly topic: number;
  readonly partition: number;
  /** The leader term the sender routed for; 0: any. */
  readonly epoch: number;
  /** Unique per client batch per partition; a retry reuses it so the leader can de-duplicate. */
  readonly requestId: string;
  readonly flowId: string;
  /** How long the caller waits, from when it sent the request. */
  readonly deadlineMs: number;
  /** One record per event (JSON bytes). */
  readonly events: readonly Buffer[];
}

export type AppendAnswer =
  /** Committed at the dense offsets [firstOffset, lastOffset] (one per event, in order) in term `epoch`. */
  | { readonly status: 'committed'; readonly epoch: number; readonly firstOffset: number; readonly lastOffset: number }
  /** Not appended: the receiver does not lead the partition (in `epoch`); leaderHint 0: unknown. */
  | { readonly status: 'notLeader'; readonly leaderHint: NodeId; readonly epoch: number }
  /** Outcome unknown or not attempted: retriable with the same requestId. */
  | { readonly status: 'unavailable'; readonly detail: string }
  /** Never appendable as sent (too large, malformed): not retriable. */
  | { readonly status: 'refused'; readonly detail: string }
  /** Not appended: the partition's log was sealed by the switch to timeline `timeline`. */
  | { readonly status: 'sealed'; readonly timeline: string };

/** A command of a partition's group, not events (src/broker/partition-control.ts). */
export type ControlCommand =
  /** Seal the log for the switch to `timeline`; `floor`: where the log's own timeline starts. */
  | { readonly kind: 'seal'; readonly timeline: string; readonly floor: number }
  /** Set the first offset of a log that never took an event. */
  | { readonly kind: 'base'; readonly base: number };

export interface ControlRequest {
  readonly group: GroupId;
  readonly topic: number;
  readonly partition: number;
  /** The leader term the sender routed for; 0: any. */
  readonly epoch: number;
  readonly flowId: string;
  readonly deadlineMs: number;
  readonly command: ControlCommand;
}

export type ControlAnswer =
  /** Applied in term `epoch`; `next`: the log's next offset after it (a seal: where the new timeline starts). */
  | { readonly status: 'applied'; readonly epoch: number; readonly next: number }
  | { readonly status: 'notLeader'; readonly leaderHint: NodeId; readonly epoch: number }
  /** Outcome unknown or not attempted: retriable (control commands are idempotent). */
  | { readonly status: 'unavailable'; readonly detail: string }
  /** Never applicable; `sealedFor`: a seal refused because the log was sealed for that other switch. */
  | { readonly status: 'refused'; readonly detail: string; readonly sealedFor?: string };

export interface ReadRequest {
  readonly group: GroupId;
  readonly topic: number;
  readonly partition: number;
  /** The last offset already read; -1: from the first event. */
  readonly afterOffset: number;
  readonly maxEvents: number;
  readonly maxBytes: number;
  /** How long the server may wait for new committed events before answering an empty chunk. */
  readonly waitMs: number;
  /** Keep streaming as new events commit, until cancelled. */
  readonly follow: boolean;
  readonly flowId: string;
}

export interface ReadEvent {
  readonly offset: number;
  readonly bytes: Buffer;
}

export interface ReadChunk {
  /** Committed events, in offset order, all after the request's afterOffset and the previous chunk's. */
  readonly events: readonly ReadEvent[];
  /**
   * The committed bounds the server knows (oldest > newest: empty; newest -1: never written); newest
   * is at least the offset of every event of the chunk.
   */
  readonly oldest: number;
  readonly newest: number;
  readonly epoch: number;
}

export interface BoundsRequest {
  readonly group: GroupId;
  readonly topic: number;
  readonly partition: number;
}

export interface BoundsAnswer {
  readonly oldest: number;
  readonly newest: number;
  readonly epoch: number;
  /** The leader the server knows; 0: none. */
  readonly leader: NodeId;
}

export interface FetchLogRequest {
  readonly group: GroupId;
  readonly fromIndex: number;
  /** Inclusive. */
  readonly toIndex: number;
  /** The most entry bytes per chunk (a single larger entry travels alone). */
  readonly maxBytes: number;
}

export interface LogChunk {
  /** Contiguous, continuing where the previous chunk of the same fetch ended. */
  readonly entries: readonly Entry[];
}

export type TransportErrorKind =
  /** The peer could not be reached or could not serve the call (not hosting the group, shutting down). */
  | 'unavailable'
  /** The request can never succeed as sent (malformed, out of bounds). */
  | 'refused'
  /** The caller cancelled. */
  | 'cancelled';

/** How a streaming call or `bounds` fails; a handler may throw one to choose the kind the caller sees. */
export class TransportError extends Error {
  override name = 'TransportError';
  readonly kind: TransportErrorKind;
  constructor(kind: TransportErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

/**
 * One group's side of the transport, registered with a GroupDispatcher. Services a group does not
 * offer are left out (the metadata group takes proposals, partition groups appends, reads and log
 * fetches). All callbacks run on the event loop.
 */
export interface GroupHandler {
  receive(m: Message): void;
  /** The peer could not be sent to (every group hears it). */
  unreachable(peer: NodeId): void;
  snapshotStatus(peer: NodeId, delivered: boolean): void;
  propose?(p: ForwardedProposal): Promise<ForwardAnswer>;
  append?(from: NodeId, req: AppendRequest): Promise<AppendAnswer>;
  control?(from: NodeId, req: ControlRequest): Promise<ControlAnswer>;
  /** Chunks are produced only as the caller consumes them; `signal` aborts when the call ends. */
  read?(from: NodeId, req: ReadRequest, signal: AbortSignal): AsyncIterable<ReadChunk>;
  bounds?(from: NodeId, req: BoundsRequest): Promise<BoundsAnswer>;
  fetchLog?(from: NodeId, req: FetchLogRequest, signal: AbortSignal): AsyncIterable<LogChunk>;
}

/** The metadata group's (group 0) handler: it takes forwarded proposals. */
export interface TransportHandler extends GroupHandler {
  propose(p: ForwardedProposal): Promise<ForwardAnswer>;
}

/**
 * What GrpcTransport calls with what arrives, for every group (GroupDispatcher routes it by group).
 * Requests are checked before they get here; answers are checked by the caller's transport.
 */
export interface NodeHandler {
  receive(group: GroupId, m: Message): void;
  /**
   * A batch (maybe empty: a ping) came from `peer`: its node is alive. `incarnation` is the peer's
   * process incarnation as the batch names it ('' if none): a new one means the peer restarted.
   */
  heard?(peer: NodeId, incarnation: string): void;
  /** Sending to `peer` failed: affects every group. */
  unreachable(peer: NodeId): void;
  snapshotStatus(group: GroupId, peer: NodeId, delivered: boolean): void;
  propose(p: ForwardedProposal): Promise<ForwardAnswer>;
  append(from: NodeId, req: AppendRequest): Promise<AppendAnswer>;
  control(from: NodeId, req: ControlRequest): Promise<ControlAnswer>;
  read(from: NodeId, req: ReadRequest, signal: AbortSignal): AsyncIterable<ReadChunk>;
  bounds(from: NodeId, req: BoundsRequest): Promise<BoundsAnswer>;
  fetchLog(from: NodeId, req: FetchLogRequest, signal: AbortSignal): AsyncIterable<LogChunk>;
}

/**
 * What a node's data directory is, as Identify answers it (src/broker/node-disk.ts NodeIdentity): asked
 * by a node whose directory belongs to no cluster before it founds one (src/broker/founding.ts).
 */
export interface PeerIdentity {
  readonly nodeId: NodeId;
  readonly diskId: string;
  /** '' while the node has not founded or joined a cluster. */
  readonly clusterId: string;
  readonly founders: readonly { readonly id: NodeId; readonly diskId: string }[];
}
