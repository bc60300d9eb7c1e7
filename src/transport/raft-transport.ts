/**
 * The node-to-node transport over @grpc/grpc-js: a server for other nodes' Raft messages and
 * requests (server.ts), and one connection per peer (peer.ts) for ours.
 *
 * Raft messages. A send takes the messages of any number of groups and makes one MessageBatch per
 * destination (one stream write per peer per send, not per group), with heartbeats coalesced
 * (batch-codec.ts). Each node keeps one long-lived client stream to each peer; a stream is ordered and
 * costs no round trip per message, which is what pipelined appends need.
 *
 * Requests. Unary Propose (metadata writes to the metadata leader), Append (a client batch's events
 * to a partition's leader) and AppendMany (the parts of a client batch for every partition one node
 * leads, in one call: each call costs an HTTP/2 stream, headers and a proof, which was the largest
 * single CPU item of a small publish on three nodes; small ones travel on one long-lived AppendStream
 * per peer instead, append-stream.ts) carry the caller's flow id (also as x-flow-id metadata) and a deadline, and
 * never reject: a failure is an `unavailable` answer. Read and FetchLog are server-streaming with
 * backpressure and cancellation (streams.ts); they and Bounds fail with a TransportError.
 *
 * Identify. A node asks a peer what its data directory is (disk id, cluster id, founders) before it
 * decides to found a cluster (src/broker/founding.ts); the answer comes from `identify`, which works
 * before any Raft group is registered.
 *
 * Every call carries this node's id (x-brook-from). What arrives is checked before the handler sees
 * it (codec.ts, batch-codec.ts, forward-codec.ts, log-codec.ts) and so is every answer before the
 * caller sees it.
 */
import { nodeOfMember } from '../core/member-id.js';
import * as grpc from '@grpc/grpc-js';
import type { NodeId } from '../raft/index.js';
import type { ForwardClient } from './generated/brook/forward/v1/Forward.js';
import type { RaftTransportClient } from './generated/brook/raft/v1/RaftTransport.js';
import type { IdentifyReply__Output } from './generated/brook/raft/v1/IdentifyReply.js';
import type { ProposeReply__Output } from './generated/brook/raft/v1/ProposeReply.js';
import { decodeU64 } from './codec.js';
import { BatchBuilder } from './batch-codec.js';
import { fromWireAppendManyReply, fromWireAppendReply, fromWireBoundsReply, fromWireControlReply, fromWireReadChunk, toWireAppendManyRequest, toWireAppendRequest, toWireBoundsRequest, toWireControlRequest, toWireReadRequest } from './forward-codec.js';
import { fromWireFetchLogRequest, fromWireLogChunk, toWireFetchLogRequest } from './log-codec.js';
import { appendBytesMax, appendPartsMax, flowIdLengthMax, messageBytesMaxDefault, peerQueueBatchesMaxDefault, peerQueueBytesMaxDefault } from './limits.js';
import { Peer } from './peer.js';
import { AppendStreamClient } from './append-stream.js';
import { forwardClientConstructor, forwardServiceDefinition, raftClientConstructor, raftServiceDefinition } from './proto.js';
import { TransportServer } from './server.js';
import { authInterceptor, CallAuthenticator, channelCredentials, channelSecurityOptions, identityInterceptor, serverCredentials, type TransportSecurity } from './auth.js';
import { consumeStream, transportErrorOf } from './streams.js';
import {
  TransportError,
  type AppendAnswer,
  type AppendRequest,
  type BoundsAnswer,
  type BoundsRequest,
  type ControlAnswer,
  type ControlRequest,
  type FetchLogRequest,
  type ForwardAnswer,
  type GroupMessages,
  type LogChunk,
  type NodeHandler,
  type PeerIdentity,
  type ReadChunk,
  type ReadRequest,
  type TransportLogger,
} from './types.js';

export interface PeerAddress {
  readonly id: NodeId;
  /** host:port of the peer's node-to-node (gRPC) listener. */
  readonly raftAddress: string;
}

export interface TransportOptions {
  readonly self: NodeId;
  /** A fresh id per process start, sent with every batch (diagnosis of restarts). */
  readonly incarnation: string;
  /** host:port to listen on; port 0 picks a free one. */
  readonly listen: string;
  readonly peers: readonly PeerAddress[];
  /** What arrives, for every group (a GroupDispatcher). */
  readonly handler: NodeHandler;
  /** How calls are authenticated both ways (auth.ts); 'insecure' only for local testing. */
  readonly security: TransportSecurity;
  /** Whether a (proven) node may call this one; default: it is one of the peers added. */
  readonly isMember?: (id: NodeId) => boolean;
  readonly logger: TransportLogger;
  /** Batches waiting for one peer's stream to drain before new ones are dropped. */
  readonly queueBatchesMax?: number;
  /** Bytes of entries and snapshots waiting for one peer's stream to drain before new batches are dropped. */
  readonly queueBytesMax?: number;
  /** Largest gRPC message accepted or sent (a snapshot or a forwarded batch travels in one message). */
  readonly messageBytesMax?: number;
  /** This node's answer to Identify (its data directory's identity); without it Identify is refused. */
  readonly identify?: () => PeerIdentity;
  /**
   * This node's cluster id, read at every call ('' before it founded or joined one): calls carry it,
   * and calls naming another cluster are refused (auth.ts). Absent: none, nothing refused for it.
   */
  readonly clusterId?: () => string;
}

function channelOptions(messageBytesMax: number): grpc.ChannelOptions {
  return {
    'grpc.max_receive_message_length': messageBytesMax,
    'grpc.max_send_message_length': messageBytesMax,
    // A restarted peer is found again within a second, not after grpc's default backoff (up to 120 s).
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.min_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
    // Find silent peers (a partition drops packets, nothing resets the connection).
    'grpc.keepalive_time_ms': 5000,
    'grpc.keepalive_timeout_ms': 2000,
    'grpc.keepalive_permit_without_calls': 1,
  };
}

/** How long `bounds` waits by default. */
const boundsDeadlineMsDefault = 5000;
/**
 * How long a peer that answered AppendMany with UNIMPLEMENTED (a node of an older build, during a
 * rolling upgrade) is sent single Appends before AppendMany is tried again.
 */
const singleAppendsMs = 60_000;
/**
 * Publishes whose events together are at most this many bytes go over the peer's append stream; larger
 * ones in unary calls (their per-call cost is small beside their bytes, and one large request on the
 * shared stream would hold back the small ones behind it).
 */
export const appendStreamBytesMax = 64 * 1024;

export class GrpcTransport {
  readonly self: NodeId;
  readonly incarnation: string;
  readonly handler: NodeHandler;
  readonly logger: TransportLogger;
  readonly queueBatchesMax: number;
  readonly queueBytesMax: number;
  /** The port the server listens on (useful with port 0). */
  readonly port: number;
  readonly #server: grpc.Server;
  readonly #services: TransportServer;
  readonly #peers = new Map<NodeId, Peer>();
  readonly #messageBytesMax: number;
  readonly #security: TransportSecurity;
  /** This node's cluster id as its directory records it ('' before it founded or joined one). */
  readonly #clusterId: () => string;
  readonly #auth: CallAuthenticator;
  /** Peers that do not know AppendMany (an older build), until when they are sent single Appends. */
  readonly #singleAppendsUntil = new Map<NodeId, number>();
  /** The append stream to each peer that was sent a small publish. */
  readonly #appendStreams = new Map<NodeId, AppendStreamClient>();
  /**
   * Set by close(). The host may still send after it (a Ready in flight, the node-level ping, a forward
   * begun before the shutdown): a call on a closed channel throws, so after the close the peers are
   * forgotten, sends are dropped and calls answer as for a node without an address.
   */
  #closed = false;

  private constructor(opts: TransportOptions, server: grpc.Server, services: TransportServer, auth: CallAuthenticator, port: number) {
    this.self = opts.self;
    this.incarnation = opts.incarnation;
    this.handler = opts.handler;
    this.logger = opts.logger;
    this.queueBatchesMax = opts.queueBatchesMax ?? peerQueueBatchesMaxDefault;
    this.queueBytesMax = opts.queueBytesMax ?? peerQueueBytesMaxDefault;
    this.#messageBytesMax = opts.messageBytesMax ?? messageBytesMaxDefault;
    this.#server = server;
    this.#services = services;
    this.#security = opts.security;
    this.#clusterId = opts.clusterId ?? (() => '');
    this.#auth = auth;
    this.port = port;
    for (const p of opts.peers) this.addPeer(p);
  }

  static async start(opts: TransportOptions): Promise<GrpcTransport> {
    const bytesMax = opts.messageBytesMax ?? messageBytesMaxDefault;
    // Membership is asked of the transport once it exists (its peers), unless the caller decides.
    let transport: GrpcTransport | undefined;
    const auth = new CallAuthenticator({
      self: opts.self,
      security: opts.security,
      isMember: opts.isMember ?? ((id) => transport?.hasPeer(id) ?? false),
      ...(opts.clusterId === undefined ? {} : { clusterId: opts.clusterId }),
      logger: opts.logger,
    });
    const server = new grpc.Server({
      'grpc.max_receive_message_length': bytesMax,
      'grpc.max_send_message_length': bytesMax,
      'grpc.keepalive_permit_without_calls': 1,
      // Every call, streams included, is authenticated before any handler runs.
      interceptors: [authInterceptor(auth)],
    });
    const services = new TransportServer({ self: opts.self, handler: opts.handler, logger: opts.logger, identify: opts.identify });
    server.addService(raftServiceDefinition(), services.raftService());
    server.addService(forwardServiceDefinition(), services.forwardService());
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(opts.listen, serverCredentials(opts.security), (err, p) => (err ? reject(err) : resolve(p)));
    });
    transport = new GrpcTransport(opts, server, services, auth, port);
    return transport;
  }

  addPeer(p: PeerAddress): void {
    if (this.#closed || p.id === this.self || this.#peers.has(p.id)) return;
    // Every call to the peer names this node and proves it, streams included.
    const interceptors = [identityInterceptor(this.self, p.id, this.#security, Date.now, this.#clusterId)];
    const credentials = channelCredentials(this.#security, p.id);
    const raft = new (raftClientConstructor())(p.raftAddress, credentials, { ...channelOptions(this.#messageBytesMax), ...channelSecurityOptions(this.#security, p.id), interceptors }) as unknown as RaftTransportClient;
    const forward = new (forwardClientConstructor())(p.raftAddress, credentials, { channelOverride: raft.getChannel(), interceptors }) as unknown as ForwardClient;
    const peer = new Peer(this, p.id, p.raftAddress, raft, forward);
    this.#peers.set(p.id, peer);
    peer.reachable(); // connect now rather than on the first message
  }

  hasPeer(id: NodeId): boolean {
    return this.#peers.has(id);
  }

  peerIds(): NodeId[] {
    return [...this.#peers.keys()];
  }

  reachable(id: NodeId): boolean {
    return this.#peers.get(id)?.reachable() ?? false;
  }

  address(id: NodeId): string | undefined {
    return this.#peers.get(id)?.address;
  }

  /**
   * Sends the messages of any number of groups: one batch, in one stream write, per destination;
   * messages keep their order per group and destination. Never blocks.
   */
  send(groups: readonly GroupMessages[]): void {
    if (this.#closed) return;
    const byPeer = new Map<NodeId, BatchBuilder>();
    for (const { group, messages } of groups) {
      for (const m of messages) {
        // Routed by node: a member id names its node (core/member-id.ts).
        const node = nodeOfMember(m.to);
        let b = byPeer.get(node);
        if (b === undefined) byPeer.set(node, (b = new BatchBuilder()));
        b.add(group, m);
      }
    }
    for (const [to, b] of byPeer) {
      const peer = this.#peers.get(to);
      if (peer === undefined) {
        // A member we have no address for (joined without one): nothing to do but report it.
        this.handler.unreachable(to);
        for (const g of b.snapshotGroups) this.handler.snapshotStatus(g, to, false);
        continue;
      }
      peer.send(b);
    }
  }

  /**
   * The node-level heartbeat: an empty batch to every peer that got no batch in the last
   * `quietMs`, so each knows this node is alive even when all the groups they share are quiesced
   * (NodeHandler.heard on the receiving side). Never blocks.
   */
  ping(quietMs: number): void {
    if (this.#closed) return;
    const now = Date.now();
    for (const peer of this.#peers.values()) if (now - peer.lastSentMs >= quietMs) peer.send(new BatchBuilder());
  }

  /** Asks peer `to` what its data directory is; undefined when it does not answer in time. Never rejects. */
  identify(to: NodeId, diskId: string, timeoutMs: number): Promise<PeerIdentity | undefined> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      peer.raft.Identify({ from: String(this.self), disk_id: diskId }, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, reply) => {
        resolve(err || reply === undefined ? undefined : decodeIdentifyReply(reply, to, this.logger));
      });
    });
  }

  /** Forwards a metadata proposal to `to` (the leader as far as the caller knows). Never rejects. */
  forward(to: NodeId, req: { command: Buffer; flowId: string; deadlineMs: number }): Promise<ForwardAnswer> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return Promise.resolve({ status: 'unavailable', detail: `no address for node ${to}` });
    return new Promise((resolve) => {
      peer.raft.Propose(
        { from: String(this.self), command: req.command, flow_id: req.flowId, deadline_ms: req.deadlineMs },
        flowMetadata(req.flowId),
        { deadline: Date.now() + req.deadlineMs },
        (err, reply) => {
          if (err || reply === undefined) {
            resolve({ status: 'unavailable', detail: `forwarding to node ${to} failed: ${err?.details ?? 'no reply'}` });
            return;
          }
          resolve(decodeProposeReply(reply));
        },
      );
    });
  }

  /**
   * Forwards a client batch's events for one partition to `to` (its leader as far as the caller
   * knows). Never rejects: a failure or a passed deadline is `unavailable` (retry with the same
   * requestId), a malformed answer too.
   */
  forwardAppend(to: NodeId, req: AppendRequest): Promise<AppendAnswer> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return Promise.resolve({ status: 'unavailable', detail: `no address for node ${to}` });
    return new Promise((resolve) => {
      peer.forward.Append(toWireAppendRequest(req), flowMetadata(req.flowId), { deadline: Date.now() + req.deadlineMs }, (err, reply) => {
        if (err || reply === undefined) {
          const e = transportErrorOf(err, to);
          resolve(e.kind === 'refused' ? { status: 'refused', detail: e.message } : { status: 'unavailable', detail: `forwarding to node ${to} failed: ${e.message}` });
          return;
        }
        resolve(fromWireAppendReply(reply, req, to));
      });
    });
  }

  /**
   * Forwards the parts of one client batch that go to `to` (each for a partition it is believed to
   * lead) together: up to appendStreamBytesMax of events as one request on the peer's append stream,
   * larger ones in one AppendMany call (or as few as the byte bound allows); each part gets its own
   * answer, in order, as forwardAppend would give it (each part keeps its request id, epoch and
   * deadline). A peer of an older build (UNIMPLEMENTED: it ran nothing) gets unary AppendMany calls,
   * or single Appends. Never rejects.
   */
  forwardAppendMany(to: NodeId, parts: readonly AppendRequest[]): Promise<AppendAnswer[]> {
    let bytes = 0;
    for (const p of parts) for (const e of p.events) bytes += e.byteLength;
    if (bytes <= appendStreamBytesMax) {
      const stream = this.#appendStream(to);
      if (stream?.usable() === true) return stream.send(parts);
    }
    return this.#unaryAppendMany(to, parts);
  }

  /** The append stream to `to` (opened on its first request); undefined for a node without an address. */
  #appendStream(to: NodeId): AppendStreamClient | undefined {
    let s = this.#appendStreams.get(to);
    if (s === undefined) {
      const peer = this.#peers.get(to);
      if (peer === undefined) return undefined;
      s = new AppendStreamClient(to, peer.forward, this.logger, (parts) => this.#unaryAppendMany(to, parts));
      this.#appendStreams.set(to, s);
    }
    return s;
  }

  /**
   * The append streams' counts since start: requests this node sent on them and the messages that
   * carried them, replies it sent and their messages (brook_append_stream_total).
   */
  appendStreamStats(): Record<'requests' | 'messages' | 'replies' | 'replyMessages', number> {
    let requests = 0;
    let messages = 0;
    for (const s of this.#appendStreams.values()) {
      requests += s.counts.requests;
      messages += s.counts.messages;
    }
    return { requests, messages, ...this.#services.appendStreamCounts };
  }

  /** forwardAppendMany in unary calls only (the transport bench compares the ways). */
  unaryAppendMany(to: NodeId, parts: readonly AppendRequest[]): Promise<AppendAnswer[]> {
    return this.#unaryAppendMany(to, parts);
  }

  /** forwardAppendMany in unary calls: one AppendMany per byte bound, or single Appends. */
  #unaryAppendMany(to: NodeId, parts: readonly AppendRequest[]): Promise<AppendAnswer[]> {
    if (parts.length === 1) return this.forwardAppend(to, parts[0]!).then((a) => [a]);
    if ((this.#singleAppendsUntil.get(to) ?? 0) > Date.now()) return Promise.all(parts.map((p) => this.forwardAppend(to, p)));
    const calls: AppendRequest[][] = [];
    let bytes = Infinity;
    for (const p of parts) {
      let b = 0;
      for (const e of p.events) b += e.byteLength;
      const last = calls[calls.length - 1];
      if (last === undefined || bytes + b > appendBytesMax || last.length >= appendPartsMax) {
        calls.push([p]);
        bytes = b;
      } else {
        last.push(p);
        bytes += b;
      }
    }
    return Promise.all(calls.map((c) => (c.length === 1 ? this.forwardAppend(to, c[0]!).then((a) => [a]) : this.#appendMany(to, c)))).then((answers) => answers.flat());
  }

  #appendMany(to: NodeId, parts: readonly AppendRequest[]): Promise<AppendAnswer[]> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return Promise.resolve(parts.map(() => ({ status: 'unavailable', detail: `no address for node ${to}` })));
    const flowId = parts[0]!.flowId;
    let deadlineMs = 0;
    for (const p of parts) deadlineMs = Math.max(deadlineMs, p.deadlineMs);
    return new Promise((resolve) => {
      peer.forward.AppendMany(toWireAppendManyRequest(parts, flowId), flowMetadata(flowId), { deadline: Date.now() + deadlineMs }, (err, reply) => {
        if (err?.code === grpc.status.UNIMPLEMENTED) {
          // An older build: nothing was appended, so the parts go again as single Appends.
          this.#singleAppendsUntil.set(to, Date.now() + singleAppendsMs);
          this.logger.info({ peer: to }, 'peer does not know AppendMany (an older build): forwarding single appends to it for a while');
          resolve(Promise.all(parts.map((p) => this.forwardAppend(to, p))));
          return;
        }
        if (err || reply === undefined) {
          const e = transportErrorOf(err, to);
          const answer: AppendAnswer = e.kind === 'refused' ? { status: 'refused', detail: e.message } : { status: 'unavailable', detail: `forwarding to node ${to} failed: ${e.message}` };
          resolve(parts.map(() => answer));
          return;
        }
        resolve(fromWireAppendManyReply(reply, parts, to));
      });
    });
  }

  /**
   * Sends a control command (seal, base) of a partition group to `to` (its leader as far as the caller
   * knows). Never rejects: a failure or a passed deadline is `unavailable` (both commands are
   * idempotent, so a retry is safe).
   */
  forwardControl(to: NodeId, req: ControlRequest): Promise<ControlAnswer> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return Promise.resolve({ status: 'unavailable', detail: `no address for node ${to}` });
    return new Promise((resolve) => {
      peer.forward.Control(toWireControlRequest(req), flowMetadata(req.flowId), { deadline: Date.now() + req.deadlineMs }, (err, reply) => {
        if (err || reply === undefined) {
          const e = transportErrorOf(err, to);
          resolve(e.kind === 'refused' ? { status: 'refused', detail: e.message } : { status: 'unavailable', detail: `sending a control command to node ${to} failed: ${e.message}` });
          return;
        }
        resolve(fromWireControlReply(reply, req, to));
      });
    });
  }

  /**
   * Reads committed events of a partition from a replica on `to`, chunk by chunk, only as fast as the
   * caller iterates; stops the server when `signal` aborts or the caller stops iterating. Fails with
   * a TransportError.
   */
  read(to: NodeId, req: ReadRequest, signal?: AbortSignal): AsyncIterable<ReadChunk> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return failing(new TransportError('unavailable', `no address for node ${to}`));
    let after = req.afterOffset;
    return consumeStream(
      () => peer.forward.Read(toWireReadRequest(req), flowMetadata(req.flowId)),
      (w) => {
        const chunk = fromWireReadChunk(w, req, after);
        const last = chunk.events[chunk.events.length - 1];
        if (last !== undefined) after = last.offset;
        return chunk;
      },
      to,
      'read chunk',
      signal,
    );
  }

  /** A partition's committed bounds as a replica on `to` knows them. Fails with a TransportError. */
  bounds(to: NodeId, req: BoundsRequest, deadlineMs = boundsDeadlineMsDefault): Promise<BoundsAnswer> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return Promise.reject(new TransportError('unavailable', `no address for node ${to}`));
    return new Promise((resolve, reject) => {
      peer.forward.Bounds(toWireBoundsRequest(req), new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err, reply) => {
        if (err || reply === undefined) {
          reject(transportErrorOf(err, to));
          return;
        }
        try {
          resolve(fromWireBoundsReply(reply));
        } catch (e) {
          reject(new TransportError('unavailable', `malformed bounds from node ${to}: ${(e as Error).message}`));
        }
      });
    });
  }

  /**
   * Fetches the entries [fromIndex, toIndex] of a group from `to`, in chunks of at most maxBytes of
   * entry data, checked to continue one another. The server may end early (its log ends or was
   * compacted): the caller sees fewer entries. Fails with a TransportError.
   */
  fetchLog(to: NodeId, req: FetchLogRequest, signal?: AbortSignal): AsyncIterable<LogChunk> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return failing(new TransportError('unavailable', `no address for node ${to}`));
    let checked: FetchLogRequest;
    try {
      // The server's reading of the request (maxBytes 0: the default), so the chunks are checked against it.
      checked = fromWireFetchLogRequest({ group: req.group, from_index: String(req.fromIndex), to_index: String(req.toIndex), max_bytes: req.maxBytes });
    } catch (err) {
      return failing(new TransportError('refused', (err as Error).message));
    }
    let next = checked.fromIndex;
    return consumeStream(
      () => peer.raft.FetchLog(toWireFetchLogRequest(checked), new grpc.Metadata()),
      (w) => {
        const chunk = fromWireLogChunk(w, checked, next);
        next += chunk.entries.length;
        return chunk;
      },
      to,
      'log chunk',
      signal,
    );
  }

  /** Raft messages dropped on the way out (queue full, stream failed). */
  droppedMessages(): number {
    let n = 0;
    for (const p of this.#peers.values()) n += p.dropped;
    return n;
  }

  /** Calls refused for want of a valid proof or membership. */
  refusedCalls(): number {
    return this.#auth.refusedCalls();
  }

  /** Message batches received from peers (one per sender per send). */
  receivedBatches(): number {
    return this.#services.batches();
  }

  /** Messages and requests from peers refused for failing a check. */
  decodeFailures(): number {
    return this.#services.decodeFailures();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const s of this.#appendStreams.values()) s.close();
    for (const p of this.#peers.values()) p.close();
    this.#appendStreams.clear();
    this.#peers.clear();
    await new Promise<void>((resolve) => {
      this.#server.tryShutdown(() => resolve());
      // Open peer streams would hold a graceful shutdown forever.
      setTimeout(() => {
        this.#server.forceShutdown();
        resolve();
      }, 500).unref();
    });
  }
}

function flowMetadata(flowId: string): grpc.Metadata {
  const meta = new grpc.Metadata();
  if (flowId !== '') meta.set('x-flow-id', flowId.slice(0, flowIdLengthMax));
  return meta;
}

async function* failing(err: TransportError): AsyncGenerator<never, void, undefined> {
  throw err;
}

function decodeProposeReply(reply: ProposeReply__Output): ForwardAnswer {
  try {
    switch (reply.status) {
      case 'PROPOSE_STATUS_APPLIED':
        return { status: 'applied', index: decodeU64(reply.index, 'reply.index'), result: reply.result };
      case 'PROPOSE_STATUS_NOT_LEADER':
        return { status: 'notLeader', leaderHint: decodeU64(reply.leader_hint, 'reply.leader_hint') };
      default:
        return { status: 'unavailable', detail: reply.detail || 'the leader could not complete the proposal' };
    }
  } catch (err) {
    return { status: 'unavailable', detail: `malformed propose reply: ${(err as Error).message}` };
  }
}

function decodeIdentifyReply(reply: IdentifyReply__Output, from: NodeId, logger: TransportLogger): PeerIdentity | undefined {
  try {
    return {
      nodeId: decodeU64(reply.node_id, 'identify.node_id'),
      diskId: String(reply.disk_id),
      clusterId: String(reply.cluster_id),
      founders: reply.founders.map((f, i) => ({ id: decodeU64(f.id, `identify.founders[${i}].id`), diskId: String(f.disk_id) })),
    };
  } catch (err) {
    logger.warn({ peer: from, err: (err as Error).message }, 'dropped a malformed identify reply');
    return undefined;
  }
}
