/**
 * The Raft transport over @grpc/grpc-js: a server that receives other nodes' messages and forwarded
 * proposals, and one client per peer.
 *
 * Messages. Each node keeps one long-lived client stream (RaftTransport.Stream) to each peer and
 * writes one MessageBatch per Ready (all that Ready's messages for that peer). A stream is ordered and
 * costs no round trip per message, which is what pipelined appends need. Sending never blocks and
 * never waits: when HTTP/2 flow control pushes back (write() returns false) batches wait in a bounded
 * queue, and when the queue is full, or the stream fails, batches are dropped and the peer is reported
 * unreachable to the core (which then probes it gently). Raft tolerates lost messages; a dropped
 * snapshot is reported as not delivered so the leader retries it.
 *
 * Receiving. Every message is decoded and checked (codec.ts) before the handler sees it; a message
 * that fails is dropped and logged, never stepped into the core.
 *
 * Forwarding. A follower sends a metadata proposal to the leader with a unary Propose call that
 * carries the client's flow id (also as x-flow-id metadata) and a deadline.
 *
 * Identify. A node asks a peer what its data directory is (disk id, cluster id, founders) before it
 * decides to found a cluster (src/broker/founding.ts); the answer comes from `identify`, which works
 * before any Raft group is open.
 */
import * as grpc from '@grpc/grpc-js';
import type { Message, NodeId } from '../raft/index.js';
import type { IdentifyReply, IdentifyReply__Output } from './generated/brook/raft/v1/IdentifyReply.js';
import type { IdentifyRequest__Output } from './generated/brook/raft/v1/IdentifyRequest.js';
import type { MessageBatch, MessageBatch__Output } from './generated/brook/raft/v1/MessageBatch.js';
import type { ProposeReply } from './generated/brook/raft/v1/ProposeReply.js';
import type { ProposeRequest__Output } from './generated/brook/raft/v1/ProposeRequest.js';
import type { RaftTransportClient } from './generated/brook/raft/v1/RaftTransport.js';
import type { StreamSummary__Output } from './generated/brook/raft/v1/StreamSummary.js';
import { DecodeError, decodeU64, fromWireMessage, toWireMessage } from './codec.js';
import { raftProto } from './proto.js';

export interface TransportLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface PeerAddress {
  readonly id: NodeId;
  /** host:port of the peer's Raft (gRPC) listener. */
  readonly raftAddress: string;
}

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

/** What a node's data directory is, as Identify answers it (src/broker/node-disk.ts NodeIdentity). */
export interface PeerIdentity {
  readonly nodeId: NodeId;
  readonly diskId: string;
  /** '' while the node has not founded or joined a cluster. */
  readonly clusterId: string;
  readonly founders: readonly { readonly id: NodeId; readonly diskId: string }[];
}

/** What the node runtime does with what arrives. All callbacks run on the event loop, never concurrently. */
export interface TransportHandler {
  receive(m: Message): void;
  propose(p: ForwardedProposal): Promise<ForwardAnswer>;
  unreachable(id: NodeId): void;
  snapshotStatus(id: NodeId, delivered: boolean): void;
}

export interface TransportOptions {
  readonly self: NodeId;
  /** A fresh id per process start, sent with every batch (diagnosis of restarts). */
  readonly incarnation: string;
  /** host:port to listen on; port 0 picks a free one. */
  readonly listen: string;
  readonly peers: readonly PeerAddress[];
  readonly handler: TransportHandler;
  readonly logger: TransportLogger;
  /** This node's answer to Identify (its data directory's identity); without it Identify fails. */
  readonly identify?: () => PeerIdentity;
  /** Batches waiting for one peer's stream to drain before new ones are dropped. */
  readonly queueBatchesMax?: number;
  /** Largest gRPC message accepted or sent (snapshots travel in one message). */
  readonly messageBytesMax?: number;
}

/** Longest deadline a forwarded proposal may ask for. */
export const forwardDeadlineMsMax = 60_000;
const queueBatchesMaxDefault = 1024;
const messageBytesMaxDefault = 64 * 1024 * 1024;

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

class Peer {
  readonly id: NodeId;
  readonly address: string;
  readonly #client: RaftTransportClient;
  readonly #owner: GrpcTransport;
  #call: grpc.ClientWritableStream<MessageBatch> | undefined;
  /** Batches written while the stream was not draining, in order. */
  #queue: MessageBatch[] = [];
  #draining = true;
  dropped = 0;

  constructor(owner: GrpcTransport, id: NodeId, address: string, client: RaftTransportClient) {
    this.#owner = owner;
    this.id = id;
    this.address = address;
    this.#client = client;
  }

  /**
   * Whether the channel to the peer is connected. Asking also connects an idle channel (a follower
   * sends nothing to the other followers, so their channels would otherwise stay idle and look down).
   */
  reachable(): boolean {
    return this.#client.getChannel().getConnectivityState(true) === grpc.connectivityState.READY;
  }

  send(batch: MessageBatch): void {
    if (this.#call === undefined) this.#open();
    if (!this.#draining) {
      if (this.#queue.length >= this.#owner.queueBatchesMax) {
        this.#drop([batch], 'send queue full');
        return;
      }
      this.#queue.push(batch);
      return;
    }
    this.#write(batch);
  }

  #write(batch: MessageBatch): void {
    const call = this.#call!;
    const snaps = (batch.messages ?? []).filter((m) => m.type === 'MESSAGE_TYPE_SNAP').length;
    const ok = call.write(batch, (err: Error | null | undefined) => {
      if (snaps > 0) for (let i = 0; i < snaps; i++) this.#owner.handler.snapshotStatus(this.id, !err);
    });
    if (!ok) this.#draining = false;
  }

  #open(): void {
    const meta = new grpc.Metadata();
    meta.set('x-brook-from', String(this.#owner.self));
    const call = this.#client.Stream(meta, {}, (err: grpc.ServiceError | null, _summary?: StreamSummary__Output) => {
      if (this.#call !== call) return;
      this.#call = undefined;
      this.#draining = true;
      const lost = this.#queue;
      this.#queue = [];
      if (lost.length > 0) this.#drop(lost, 'stream closed');
      if (err) {
        this.#owner.logger.debug({ peer: this.id, code: err.code, detail: err.details }, 'raft stream to peer failed');
        this.#owner.handler.unreachable(this.id);
      }
    });
    call.on('drain', () => {
      if (this.#call !== call) return;
      this.#draining = true;
      while (this.#draining && this.#queue.length > 0) this.#write(this.#queue.shift()!);
    });
    call.on('error', () => {
      // Reported through the callback above; the listener keeps the stream from throwing.
    });
    this.#call = call;
    this.#draining = true;
  }

  #drop(batches: MessageBatch[], why: string): void {
    let snaps = 0;
    let n = 0;
    for (const b of batches) {
      for (const m of b.messages ?? []) {
        n++;
        if (m.type === 'MESSAGE_TYPE_SNAP') snaps++;
      }
    }
    this.dropped += n;
    this.#owner.logger.debug({ peer: this.id, messages: n, why }, 'raft messages dropped');
    this.#owner.handler.unreachable(this.id);
    for (let i = 0; i < snaps; i++) this.#owner.handler.snapshotStatus(this.id, false);
  }

  forward(req: { from: NodeId; command: Buffer; flowId: string; deadlineMs: number }): Promise<ForwardAnswer> {
    return new Promise((resolve) => {
      const meta = new grpc.Metadata();
      meta.set('x-flow-id', req.flowId);
      this.#client.Propose(
        { from: String(req.from), command: req.command, flow_id: req.flowId, deadline_ms: req.deadlineMs },
        meta,
        { deadline: Date.now() + req.deadlineMs },
        (err, reply) => {
          if (err || reply === undefined) {
            resolve({ status: 'unavailable', detail: `forwarding to node ${this.id} failed: ${err?.details ?? 'no reply'}` });
            return;
          }
          resolve(decodeProposeReply(reply));
        },
      );
    });
  }

  identify(from: NodeId, diskId: string, timeoutMs: number): Promise<PeerIdentity | undefined> {
    return new Promise((resolve) => {
      this.#client.Identify({ from: String(from), disk_id: diskId }, { deadline: Date.now() + timeoutMs }, (err, reply) => {
        if (err || reply === undefined) {
          resolve(undefined);
          return;
        }
        resolve(decodeIdentifyReply(reply, this.#owner.logger));
      });
    });
  }

  close(): void {
    this.#call?.end();
    this.#call = undefined;
    this.#client.close();
  }
}

function decodeIdentifyReply(reply: IdentifyReply__Output, logger: TransportLogger): PeerIdentity | undefined {
  try {
    return {
      nodeId: decodeU64(reply.node_id, 'identify.node_id'),
      diskId: String(reply.disk_id),
      clusterId: String(reply.cluster_id),
      founders: reply.founders.map((f, i) => ({ id: decodeU64(f.id, `identify.founders[${i}].id`), diskId: String(f.disk_id) })),
    };
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'dropped a malformed identify reply');
    return undefined;
  }
}

function decodeProposeReply(reply: { status: string; index: string; result: Buffer; leader_hint: string; detail: string }): ForwardAnswer {
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

export class GrpcTransport {
  readonly self: NodeId;
  readonly incarnation: string;
  readonly handler: TransportHandler;
  readonly logger: TransportLogger;
  readonly queueBatchesMax: number;
  readonly #identify: (() => PeerIdentity) | undefined;
  readonly #server: grpc.Server;
  readonly #peers = new Map<NodeId, Peer>();
  readonly #messageBytesMax: number;
  /** The port the server listens on (useful with port 0). */
  readonly port: number;
  #decodeFailures = 0;

  private constructor(opts: TransportOptions, server: grpc.Server, port: number) {
    this.self = opts.self;
    this.incarnation = opts.incarnation;
    this.handler = opts.handler;
    this.logger = opts.logger;
    this.queueBatchesMax = opts.queueBatchesMax ?? queueBatchesMaxDefault;
    this.#messageBytesMax = opts.messageBytesMax ?? messageBytesMaxDefault;
    this.#identify = opts.identify;
    this.#server = server;
    this.port = port;
    for (const p of opts.peers) this.addPeer(p);
  }

  static async start(opts: TransportOptions): Promise<GrpcTransport> {
    const proto = raftProto();
    const bytesMax = opts.messageBytesMax ?? messageBytesMaxDefault;
    const server = new grpc.Server({
      'grpc.max_receive_message_length': bytesMax,
      'grpc.max_send_message_length': bytesMax,
      'grpc.keepalive_permit_without_calls': 1,
    });
    // The handlers need the transport, which needs the bound port: bind through a late reference.
    let transport: GrpcTransport | undefined;
    server.addService(proto.RaftTransport.service, {
      Stream: (call: grpc.ServerReadableStream<MessageBatch__Output, unknown>, callback: grpc.sendUnaryData<{ batches: string }>) => {
        let batches = 0;
        call.on('data', (batch: MessageBatch__Output) => {
          batches++;
          transport?.onBatch(batch);
        });
        call.on('end', () => callback(null, { batches: String(batches) }));
        call.on('error', () => {
          // The peer went away; its next stream starts afresh.
        });
      },
      Propose: (call: grpc.ServerUnaryCall<ProposeRequest__Output, ProposeReply>, callback: grpc.sendUnaryData<ProposeReply>) => {
        if (transport === undefined) {
          callback(null, { status: 'PROPOSE_STATUS_UNAVAILABLE', detail: 'starting' });
          return;
        }
        transport.onPropose(call.request).then(
          (reply) => callback(null, reply),
          (err: unknown) => callback(null, { status: 'PROPOSE_STATUS_UNAVAILABLE', detail: String((err as Error).message ?? err) }),
        );
      },
      Identify: (_call: grpc.ServerUnaryCall<IdentifyRequest__Output, IdentifyReply>, callback: grpc.sendUnaryData<IdentifyReply>) => {
        const reply = transport?.onIdentify();
        if (reply === undefined) callback({ code: grpc.status.UNAVAILABLE, details: 'this node cannot tell its identity yet' });
        else callback(null, reply);
      },
    });
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(opts.listen, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
    });
    transport = new GrpcTransport(opts, server, port);
    return transport;
  }

  addPeer(p: PeerAddress): void {
    if (p.id === this.self || this.#peers.has(p.id)) return;
    const Client = raftProto().RaftTransport;
    const client = new Client(p.raftAddress, grpc.credentials.createInsecure(), channelOptions(this.#messageBytesMax));
    const peer = new Peer(this, p.id, p.raftAddress, client);
    this.#peers.set(p.id, peer);
    peer.reachable(); // connect now rather than on the first message
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

  /** Sends a Ready's messages: one batch per destination, in order. Never blocks. */
  send(msgs: readonly Message[]): void {
    const byPeer = new Map<NodeId, Message[]>();
    for (const m of msgs) {
      let list = byPeer.get(m.to);
      if (list === undefined) byPeer.set(m.to, (list = []));
      list.push(m);
    }
    for (const [to, list] of byPeer) {
      const peer = this.#peers.get(to);
      if (peer === undefined) {
        // A member we have no address for (joined without one): nothing to do but report it.
        this.handler.unreachable(to);
        continue;
      }
      peer.send({ from: String(this.self), incarnation: this.incarnation, messages: list.map(toWireMessage) });
    }
  }

  /** Asks peer `to` what its data directory is; undefined when it does not answer in time. Never rejects. */
  identify(to: NodeId, diskId: string, timeoutMs: number): Promise<PeerIdentity | undefined> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return Promise.resolve(undefined);
    return peer.identify(this.self, diskId, timeoutMs);
  }

  /** @internal the server's Identify handler. */
  onIdentify(): IdentifyReply | undefined {
    const id = this.#identify?.();
    if (id === undefined) return undefined;
    return { node_id: String(id.nodeId), disk_id: id.diskId, cluster_id: id.clusterId, founders: id.founders.map((f) => ({ id: String(f.id), disk_id: f.diskId })) };
  }

  /** Forwards a proposal to `to` (the leader as far as the caller knows). Never rejects. */
  forward(to: NodeId, req: { command: Buffer; flowId: string; deadlineMs: number }): Promise<ForwardAnswer> {
    const peer = this.#peers.get(to);
    if (peer === undefined) return Promise.resolve({ status: 'unavailable', detail: `no address for node ${to}` });
    return peer.forward({ from: this.self, ...req });
  }

  /** @internal the server's stream handler. */
  onBatch(batch: MessageBatch__Output): void {
    let from: NodeId;
    try {
      from = decodeU64(batch.from, 'batch.from');
    } catch (err) {
      this.#decodeFailed(err);
      return;
    }
    for (const w of batch.messages) {
      try {
        const m = fromWireMessage(w, this.self);
        if (m.from !== from) throw new DecodeError(`message.from ${m.from} differs from the batch's sender ${from}`);
        this.handler.receive(m);
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
        this.#decodeFailed(err);
      }
    }
  }

  #decodeFailed(err: unknown): void {
    this.#decodeFailures++;
    // Log the first few and then every thousandth, so a confused peer cannot flood the log.
    if (this.#decodeFailures <= 10 || this.#decodeFailures % 1000 === 0) {
      this.logger.warn({ err: (err as Error).message, failures: this.#decodeFailures }, 'dropped a malformed raft message');
    }
  }

  /** @internal the server's Propose handler. */
  async onPropose(req: ProposeRequest__Output): Promise<ProposeReply> {
    let from: NodeId;
    try {
      from = decodeU64(req.from, 'propose.from');
    } catch (err) {
      return { status: 'PROPOSE_STATUS_UNAVAILABLE', detail: (err as Error).message };
    }
    const deadlineMs = Math.min(Math.max(1, req.deadline_ms), forwardDeadlineMsMax);
    const flowId = typeof req.flow_id === 'string' ? req.flow_id.slice(0, 256) : '';
    const answer = await this.handler.propose({ from, command: req.command, flowId, deadlineMs });
    switch (answer.status) {
      case 'applied':
        return { status: 'PROPOSE_STATUS_APPLIED', index: String(answer.index), result: answer.result };
      case 'notLeader':
        return { status: 'PROPOSE_STATUS_NOT_LEADER', leader_hint: String(answer.leaderHint) };
      case 'unavailable':
        return { status: 'PROPOSE_STATUS_UNAVAILABLE', detail: answer.detail };
    }
  }

  droppedMessages(): number {
    let n = 0;
    for (const p of this.#peers.values()) n += p.dropped;
    return n;
  }

  async close(): Promise<void> {
    for (const p of this.#peers.values()) p.close();
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
