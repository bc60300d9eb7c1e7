/**
 * The server side of the node-to-node port: the RaftTransport and Forward services. Every call names
 * its caller in the x-brook-from metadata, which auth.ts's interceptor has checked (proven, a member)
 * before any handler here runs; every request and message is decoded and checked before
 * the node's handler sees it. A malformed Raft message is dropped and logged (rate limited), a
 * malformed request is refused; neither is ever fatal.
 */
import * as grpc from '@grpc/grpc-js';
import type { NodeId } from '../raft/index.js';
import type { ForwardHandlers } from './generated/brook/forward/v1/Forward.js';
import type { AppendReply } from './generated/brook/forward/v1/AppendReply.js';
import type { AppendManyReply } from './generated/brook/forward/v1/AppendManyReply.js';
import type { AppendStreamRequest__Output } from './generated/brook/forward/v1/AppendStreamRequest.js';
import type { AppendStreamReply } from './generated/brook/forward/v1/AppendStreamReply.js';
import type { MessageBatch__Output } from './generated/brook/raft/v1/MessageBatch.js';
import type { ProposeReply } from './generated/brook/raft/v1/ProposeReply.js';
import type { ProposeRequest__Output } from './generated/brook/raft/v1/ProposeRequest.js';
import type { RaftTransportHandlers } from './generated/brook/raft/v1/RaftTransport.js';
import { fromKey } from './auth.js';
import { DecodeError, decodeU64 } from './codec.js';
import { decodeBatch } from './batch-codec.js';
import {
  fromWireAppendManyRequest,
  fromWireAppendRequest,
  fromWireBoundsRequest,
  fromWireControlRequest,
  fromWireReadRequest,
  toWireAppendManyReply,
  toWireAppendReply,
  toWireBoundsReply,
  toWireControlReply,
  toWireReadChunks,
} from './forward-codec.js';
import { fromWireFetchLogRequest, toWireLogChunks } from './log-codec.js';
import { flowIdLengthMax, forwardDeadlineMsMax } from './limits.js';
import { serveStream, statusOf } from './streams.js';
import type { IdentifyReply } from './generated/brook/raft/v1/IdentifyReply.js';
import type { AppendRequest, NodeHandler, PeerIdentity, TransportLogger } from './types.js';

export interface ServerOptions {
  readonly self: NodeId;
  readonly handler: NodeHandler;
  readonly logger: TransportLogger;
  /** This node's answer to Identify (its data directory's identity); without it Identify is refused. */
  readonly identify?: (() => PeerIdentity) | undefined;
}

export class TransportServer {
  readonly #o: ServerOptions;
  #decodeFailures = 0;
  #batches = 0;
  /** Append stream replies written, and the messages that carried them. */
  readonly appendStreamCounts = { replies: 0, replyMessages: 0 };

  constructor(o: ServerOptions) {
    this.#o = o;
  }

  decodeFailures(): number {
    return this.#decodeFailures;
  }

  /** Message batches received (one per sender per send). */
  batches(): number {
    return this.#batches;
  }

  #decodeFailed(err: unknown, from: NodeId | undefined): void {
    this.#decodeFailures++;
    // The first few and then every thousandth, so a confused peer cannot flood the log.
    if (this.#decodeFailures <= 10 || this.#decodeFailures % 1000 === 0) {
      this.#o.logger.warn({ err: (err as Error).message, from, failures: this.#decodeFailures }, 'dropped a malformed message from a peer');
    }
  }

  /** The node a call comes from; throws a DecodeError when the metadata names none or this node. */
  callerOf(metadata: grpc.Metadata): NodeId {
    const values = metadata.get(fromKey);
    if (values.length !== 1) throw new DecodeError(`${fromKey}: expected one value, got ${values.length}`);
    const id = decodeU64(values[0], fromKey);
    if (id === 0 || id === this.#o.self) throw new DecodeError(`${fromKey}: ${id} is not a peer`);
    return id;
  }

  /** @internal also called by tests with crafted batches */
  onBatch(w: MessageBatch__Output, caller: NodeId): void {
    this.#batches++;
    let decoded;
    try {
      decoded = decodeBatch(w, this.#o.self);
      if (decoded.from !== caller) throw new DecodeError(`batch.from ${decoded.from} differs from the caller ${caller}`);
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
      this.#decodeFailed(err, caller);
      return;
    }
    // Every batch, an empty one too (a ping), says the sending node is alive (quiesced groups rely on it).
    this.#o.handler.heard?.(caller, decoded.incarnation);
    for (const err of decoded.failures) this.#decodeFailed(err, caller);
    for (const { group, message } of decoded.messages) this.#o.handler.receive(group, message);
  }

  async #propose(req: ProposeRequest__Output, caller: NodeId): Promise<ProposeReply> {
    // The body's sender (kept for older peers) must agree with the call's.
    if (req.from !== '' && req.from !== '0' && req.from !== String(caller)) {
      return { status: 'PROPOSE_STATUS_UNAVAILABLE', detail: `propose.from ${req.from} differs from the caller ${caller}` };
    }
    const deadlineMs = Math.min(Math.max(1, req.deadline_ms), forwardDeadlineMsMax);
    const flowId = typeof req.flow_id === 'string' ? req.flow_id.slice(0, flowIdLengthMax) : '';
    const answer = await this.#o.handler.propose({ from: caller, command: req.command, flowId, deadlineMs });
    switch (answer.status) {
      case 'applied':
        return { status: 'PROPOSE_STATUS_APPLIED', index: String(answer.index), result: answer.result };
      case 'notLeader':
        return { status: 'PROPOSE_STATUS_NOT_LEADER', leader_hint: String(answer.leaderHint) };
      case 'unavailable':
        return { status: 'PROPOSE_STATUS_UNAVAILABLE', detail: answer.detail };
    }
  }

  async #append(w: Parameters<ForwardHandlers['Append']>[0]['request'], caller: NodeId): Promise<AppendReply> {
    return toWireAppendReply(await this.#withinDeadline(caller, () => fromWireAppendRequest(w), (req) => this.#o.handler.append(caller, req)));
  }

  /**
   * The parts of one client batch for partitions led here, each run as a single Append would be (its
   * own check, epoch, request id and deadline), all at once; answered when every part has its answer.
   * A call that fails the whole-call check (too many parts or bytes) fails with INVALID_ARGUMENT.
   */
  async #appendMany(w: Parameters<ForwardHandlers['AppendMany']>[0]['request'], caller: NodeId): Promise<AppendManyReply> {
    return this.#appendParts(fromWireAppendManyRequest(w), caller);
  }

  async #appendParts(parts: readonly (AppendRequest | DecodeError)[], caller: NodeId): Promise<AppendManyReply> {
    const answers = await Promise.all(
      parts.map((p) =>
        this.#withinDeadline(
          caller,
          () => {
            if (p instanceof DecodeError) throw p;
            return p;
          },
          (req) => this.#o.handler.append(caller, req),
        ),
      ),
    );
    return toWireAppendManyReply(answers);
  }

  /** A control command (seal, base) for a partition group led here; like an append, bounded by the caller's deadline. */
  async #control(w: Parameters<ForwardHandlers['Control']>[0]['request'], caller: NodeId): Promise<AppendReply> {
    return toWireControlReply(await this.#withinDeadline(caller, () => fromWireControlRequest(w), (req) => this.#o.handler.control(caller, req)));
  }

  /**
   * Decodes a forwarded request and runs it on the handler, answering at the caller's deadline at the
   * latest: the leader stops waiting then (the caller has given up, and a retry with the same request
   * id finds the outcome). A request that does not decode is refused; a handler that throws is unavailable.
   */
  async #withinDeadline<R extends { readonly deadlineMs: number }, A>(caller: NodeId, decode: () => R, run: (req: R) => Promise<A>): Promise<A | { status: 'unavailable' | 'refused'; detail: string }> {
    try {
      const req = decode();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<{ status: 'unavailable'; detail: string }>((resolve) => {
        timer = setTimeout(() => resolve({ status: 'unavailable', detail: `no outcome within ${req.deadlineMs} ms` }), req.deadlineMs);
      });
      try {
        return await Promise.race([run(req), late]);
      } finally {
        clearTimeout(timer);
      }
    } catch (err) {
      if (err instanceof DecodeError) {
        this.#decodeFailed(err, caller);
        return { status: 'refused', detail: err.message };
      }
      return { status: 'unavailable', detail: (err as Error)?.message ?? String(err) };
    }
  }

  /** Refuses a call whose caller is not named, with INVALID_ARGUMENT; undefined then. */
  #caller(metadata: grpc.Metadata, refuse: (s: { code: grpc.status; details: string }) => void): NodeId | undefined {
    try {
      return this.callerOf(metadata);
    } catch (err) {
      this.#decodeFailed(err, undefined);
      refuse(statusOf(err));
      return undefined;
    }
  }

  raftService(): RaftTransportHandlers {
    return {
      Stream: (call, callback) => {
        const caller = this.#caller(call.metadata, (s) => callback(s));
        if (caller === undefined) return;
        let batches = 0;
        call.on('data', (batch: MessageBatch__Output) => {
          batches++;
          this.onBatch(batch, caller);
        });
        call.on('end', () => callback(null, { batches: String(batches) }));
        call.on('error', () => {
          // The peer went away; its next stream starts afresh.
        });
      },
      Propose: (call, callback) => {
        const caller = this.#caller(call.metadata, (s) => callback(s));
        if (caller === undefined) return;
        this.#propose(call.request, caller).then(
          (reply) => callback(null, reply),
          (err: unknown) => callback(null, { status: 'PROPOSE_STATUS_UNAVAILABLE', detail: String((err as Error)?.message ?? err) }),
        );
      },
      Identify: (call, callback) => {
        if (this.#caller(call.metadata, (s) => callback(s)) === undefined) return;
        const id = this.#o.identify?.();
        if (id === undefined) {
          callback({ code: grpc.status.UNAVAILABLE, details: 'this node cannot tell its identity' });
          return;
        }
        const reply: IdentifyReply = { node_id: String(id.nodeId), disk_id: id.diskId, cluster_id: id.clusterId, founders: id.founders.map((f) => ({ id: String(f.id), disk_id: f.diskId })) };
        callback(null, reply);
      },
      FetchLog: (call) => {
        const caller = this.#caller(call.metadata, (s) => call.emit('error', s));
        if (caller === undefined) return;
        let req;
        try {
          req = fromWireFetchLogRequest(call.request);
        } catch (err) {
          this.#decodeFailed(err, caller);
          call.emit('error', statusOf(err));
          return;
        }
        let next = req.fromIndex;
        void serveStream(
          call,
          (signal) => this.#o.handler.fetchLog(caller, req, signal),
          (chunk) => {
            const out = toWireLogChunks(chunk, req, next);
            next += chunk.entries.length;
            return out;
          },
          this.#o.logger,
        );
      },
    };
  }

  forwardService(): ForwardHandlers {
    return {
      Append: (call, callback) => {
        const caller = this.#caller(call.metadata, (s) => callback(s));
        if (caller === undefined) return;
        this.#append(call.request, caller).then((reply) => callback(null, reply));
      },
      AppendMany: (call, callback) => {
        const caller = this.#caller(call.metadata, (s) => callback(s));
        if (caller === undefined) return;
        this.#appendMany(call.request, caller).then(
          (reply) => callback(null, reply),
          (err: unknown) => {
            if (err instanceof DecodeError) this.#decodeFailed(err, caller);
            callback(statusOf(err));
          },
        );
      },
      AppendStream: (call) => {
        const caller = this.#caller(call.metadata, (s) => call.emit('error', s));
        if (caller === undefined) return;
        let open = true;
        const close = () => {
          open = false;
        };
        call.on('cancelled', close);
        call.on('error', close);
        // The client ends its side when it closes: end ours (requests still running are answered to no one).
        call.on('end', () => {
          if (open) call.end();
          close();
        });
        // Whether the client reads replies carrying `more` (its requests said `batches`); replies
        // ready in one turn of the event loop then go as one message (docs/transport.md).
        let batches = false;
        let replies: AppendStreamReply[] = [];
        const flush = () => {
          const [first, ...more] = replies;
          replies = [];
          if (first === undefined || !open) return;
          try {
            this.appendStreamCounts.replies += 1 + more.length;
            this.appendStreamCounts.replyMessages++;
            call.write({ ...first, more, batches: true });
          } catch (err) {
            // The call went away in between: the caller's requests end at their deadlines.
            this.#o.logger.debug({ err: (err as Error)?.message, from: caller }, 'could not answer on an append stream');
          }
        };
        const answer = (reply: AppendStreamReply) => {
          if (!open) return;
          if (!batches) {
            this.appendStreamCounts.replies++;
            this.appendStreamCounts.replyMessages++;
            call.write({ ...reply, batches: true });
            return;
          }
          replies.push(reply);
          if (replies.length === 1) setImmediate(flush);
        };
        call.on('data', (m: AppendStreamRequest__Output) => {
          if (m.batches === true) batches = true;
          serve(m);
          // Further requests of the same message, each as if it had come alone (their own `more` is not read).
          for (const r of m.more ?? []) serve(r);
        });
        const serve = (m: AppendStreamRequest__Output) => {
          let id: number;
          try {
            id = decodeU64(m.id, 'append_stream.id');
          } catch (err) {
            // No id to answer to: the sender's request ends at its deadline.
            this.#decodeFailed(err, caller);
            return;
          }
          let parts: (AppendRequest | DecodeError)[];
          try {
            parts = fromWireAppendManyRequest(m.request ?? { parts: [], flow_id: '' });
          } catch (err) {
            if (!(err instanceof DecodeError)) throw err;
            // The request as a whole is refused: every part, as a refused AppendMany call would be.
            this.#decodeFailed(err, caller);
            parts = (m.request?.parts ?? []).map(() => err);
          }
          void this.#appendParts(parts, caller)
            .then((reply) => answer({ id, reply }))
            .catch((err: unknown) => {
              // The call went away in between: the caller's request ends at its deadline.
              this.#o.logger.debug({ err: (err as Error)?.message, from: caller }, 'could not answer on an append stream');
            });
        };
      },
      Control: (call, callback) => {
        const caller = this.#caller(call.metadata, (s) => callback(s));
        if (caller === undefined) return;
        this.#control(call.request, caller).then((reply) => callback(null, reply));
      },
      Bounds: (call, callback) => {
        const caller = this.#caller(call.metadata, (s) => callback(s));
        if (caller === undefined) return;
        let req;
        try {
          req = fromWireBoundsRequest(call.request);
        } catch (err) {
          this.#decodeFailed(err, caller);
          callback(statusOf(err));
          return;
        }
        this.#o.handler.bounds(caller, req).then(
          (answer) => callback(null, toWireBoundsReply(answer)),
          (err: unknown) => callback(statusOf(err)),
        );
      },
      Read: (call) => {
        const caller = this.#caller(call.metadata, (s) => call.emit('error', s));
        if (caller === undefined) return;
        let req;
        try {
          req = fromWireReadRequest(call.request);
        } catch (err) {
          this.#decodeFailed(err, caller);
          call.emit('error', statusOf(err));
          return;
        }
        let after = req.afterOffset;
        void serveStream(
          call,
          (signal) => this.#o.handler.read(caller, req, signal),
          (chunk) => {
            const out = toWireReadChunks(chunk, req, after);
            const last = chunk.events[chunk.events.length - 1];
            if (last !== undefined) after = last.offset;
            return out;
          },
          this.#o.logger,
        );
      },
    };
  }
}
