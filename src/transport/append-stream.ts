/**
 * The client side of Forward.AppendStream: one long-lived bidirectional stream to a peer that carries
 * small forwarded publishes (AppendMany requests, each with an id, answered by id in any order).
 * A unary call costs an HTTP/2 stream, request and response headers, a proof of the cluster secret
 * and grpc-js's call machinery on both sides; over the stream a request is one message each way.
 *
 * Every request has its own deadline here (the stream has none): when it passes, the request's parts
 * are `unavailable` (outcome unknown; a retry with the same request ids is safe) and a late reply is
 * ignored. When the stream fails or ends, every request on it is `unavailable` the same way, and the
 * next request opens a new stream. A peer of a build without AppendStream fails the stream with
 * UNIMPLEMENTED before running anything: its requests are handed back to the caller (`fallback`), which
 * sends them as unary calls, and the stream is not tried again for a while.
 *
 * Several requests per message: once the peer's replies on the current stream say `batches` (its
 * build reads `more`), the requests made during one turn of the event loop go as one message (the
 * first, the others in `more`; flushed by setImmediate, or at once past coalescedBytesMax), and the
 * peer answers likewise. A request's gRPC message, HTTP/2 frame and socket write are then shared
 * by the requests that arrived together, which is when the cluster is busy. Until that reply, and to
 * an older build, which never says it, every request goes in its own message as before.
 */
import * as grpc from '@grpc/grpc-js';
import type { NodeId } from '../raft/index.js';
import type { ForwardClient } from './generated/brook/forward/v1/Forward.js';
import type { AppendStreamReply__Output } from './generated/brook/forward/v1/AppendStreamReply.js';
import type { AppendStreamRequest } from './generated/brook/forward/v1/AppendStreamRequest.js';
import { decodeU64 } from './codec.js';
import { fromWireAppendManyReply, toWireAppendManyRequest } from './forward-codec.js';
import type { AppendAnswer, AppendRequest, TransportLogger } from './types.js';

/** How long a peer whose build lacks AppendStream is sent unary calls before the stream is tried again. */
const unsupportedRetryMs = 60_000;

/** Requests queued for one message are written at once when their events reach this many bytes. */
export const coalescedBytesMax = 256 * 1024;

interface Pending {
  readonly parts: readonly AppendRequest[];
  readonly resolve: (answers: AppendAnswer[]) => void;
  readonly timer: NodeJS.Timeout;
}

type Call = grpc.ClientDuplexStream<AppendStreamRequest, AppendStreamReply__Output>;

export class AppendStreamClient {
  readonly #peer: NodeId;
  readonly #client: ForwardClient;
  readonly #logger: TransportLogger;
  /** Sends parts the peer's build cannot take over the stream as unary calls. */
  readonly #fallback: (parts: readonly AppendRequest[]) => Promise<AppendAnswer[]>;
  #call: Call | undefined;
  /** The requests sent on #call and not answered yet. */
  #pending = new Map<number, Pending>();
  #nextId = 1;
  /** Whether #call's peer reads `more` (a reply on it said `batches`). */
  #batches = false;
  /** Requests for #call's next message (only while #batches), their events' bytes, and whether a flush is scheduled. */
  #queue: AppendStreamRequest[] = [];
  #queuedBytes = 0;
  #flushScheduled = false;
  #unsupportedUntil = 0;
  #closed = false;
  /** Requests written on the stream, and the messages that carried them. */
  readonly counts = { requests: 0, messages: 0 };

  constructor(peer: NodeId, client: ForwardClient, logger: TransportLogger, fallback: (parts: readonly AppendRequest[]) => Promise<AppendAnswer[]>) {
    this.#peer = peer;
    this.#client = client;
    this.#logger = logger;
    this.#fallback = fallback;
  }

  /** Whether the stream may be used now (false for a while after the peer's build turned out not to know it). */
  usable(): boolean {
    return !this.#closed && Date.now() >= this.#unsupportedUntil;
  }

  /** Sends the parts as one request on the stream; one answer per part, in order. Never rejects. */
  send(parts: readonly AppendRequest[]): Promise<AppendAnswer[]> {
    if (!this.usable()) return this.#fallback(parts);
    const call = this.#call ?? this.#open();
    const id = this.#nextId++;
    let deadlineMs = 0;
    for (const p of parts) deadlineMs = Math.max(deadlineMs, p.deadlineMs);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.#pending.delete(id)) resolve(parts.map(() => ({ status: 'unavailable', detail: `no answer from node ${this.#peer} within ${deadlineMs} ms` })));
      }, deadlineMs);
      this.#pending.set(id, { parts, resolve, timer });
      const item: AppendStreamRequest = { id, request: toWireAppendManyRequest(parts, parts[0]?.flowId ?? '') };
      if (!this.#batches) {
        this.counts.requests++;
        this.counts.messages++;
        call.write({ ...item, batches: true });
        return;
      }
      this.#queue.push(item);
      for (const p of parts) for (const e of p.events) this.#queuedBytes += e.byteLength;
      if (this.#queuedBytes >= coalescedBytesMax) this.#flush();
      else if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(() => {
          this.#flushScheduled = false;
          this.#flush();
        });
      }
    });
  }

  /** Writes the queued requests as one message on the current stream. */
  #flush(): void {
    const queue = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    const [first, ...more] = queue;
    if (first === undefined || this.#call === undefined) return; // a stream that ended failed its requests already
    this.counts.requests += 1 + more.length;
    this.counts.messages++;
    try {
      this.#call.write({ ...first, more, batches: true });
    } catch {
      // The stream is going away: its 'error' or 'end' fails these requests (or their deadlines do).
    }
  }

  #open(): Call {
    const call: Call = this.#client.AppendStream(new grpc.Metadata());
    this.#call = call;
    this.#batches = false;
    const pending = this.#pending;
    const answer = (m: AppendStreamReply__Output) => {
      let id: number;
      try {
        id = decodeU64(m.id, 'append_stream.id');
      } catch {
        return; // an answer to nothing sent: its request ends at its deadline
      }
      const p = pending.get(id);
      if (p === undefined) return; // past its deadline, or never sent
      pending.delete(id);
      clearTimeout(p.timer);
      p.resolve(fromWireAppendManyReply(m.reply ?? { replies: [] }, p.parts, this.#peer));
    };
    call.on('data', (m: AppendStreamReply__Output) => {
      if (m.batches === true && this.#call === call) this.#batches = true;
      answer(m);
      for (const r of m.more ?? []) answer(r);
    });
    const ended = (err: grpc.ServiceError | undefined) => {
      if (this.#call === call) {
        this.#call = undefined;
        this.#pending = new Map();
        this.#batches = false;
        this.#queue = [];
        this.#queuedBytes = 0;
      }
      if (err?.code === grpc.status.UNIMPLEMENTED) {
        // An older build: nothing ran, so the requests go again as unary calls.
        this.#unsupportedUntil = Date.now() + unsupportedRetryMs;
        this.#logger.info({ peer: this.#peer }, 'peer does not know AppendStream (an older build): forwarding unary appends to it for a while');
        for (const p of pending.values()) {
          clearTimeout(p.timer);
          void this.#fallback(p.parts).then(p.resolve);
        }
      } else {
        const detail = `the append stream to node ${this.#peer} ended${err === undefined ? '' : `: ${err.details || err.message}`}`;
        for (const p of pending.values()) {
          clearTimeout(p.timer);
          p.resolve(p.parts.map(() => ({ status: 'unavailable', detail })));
        }
      }
      pending.clear();
    };
    call.on('error', (err: grpc.ServiceError) => ended(err));
    call.on('end', () => ended(undefined));
    return call;
  }

  /** Ends the stream; requests still waiting are `unavailable`. */
  close(): void {
    this.#closed = true;
    const call = this.#call;
    this.#call = undefined;
    this.#queue = [];
    this.#queuedBytes = 0;
    call?.cancel();
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer);
      p.resolve(p.parts.map(() => ({ status: 'unavailable', detail: 'the transport is closing' })));
    }
    this.#pending.clear();
  }
}
