/**
 * The forwarded parts of one publish request, grouped by the node they go to. A client batch is split
 * by partition, and every part whose partition is led on another node used to be a call of its own; a
 * call (an HTTP/2 stream, headers, a proof, a reply) was the largest single CPU item of a small
 * publish on three nodes (docs/benchmarks.md). The parts a request sends at the same moment to the
 * same node now travel together (AppendForwarder.forwardAppendMany: one request on the peer's append
 * stream, or one unary call for large ones), each with its own answer; a lone part too, so that it
 * takes the stream.
 *
 * Nothing else changes for a part: it keeps its request id (so a retry is still de-duplicated by the
 * partition's state machine), its epoch and its deadline, and each part's sender handles its own
 * answer and its own retries (a "not leader" part goes on to the new leader alone, while the others
 * are done). "At the same moment" is one turn of the event loop: a part is queued, and the queue is
 * sent in a microtask, by which time every part of the request that could go at once has been queued
 * (retries after the same wait are grouped the same way).
 *
 * Only the parts of one request are grouped, never those of different requests: a call is answered
 * when all its parts are, so a part waiting for a partition that cannot commit would hold back
 * another request's parts that could be answered at once.
 */
import type { NodeId } from '../raft/index.js';
import type { AppendAnswer, AppendForwarder, ForwardedAppend } from './partition-replicas.js';

interface Queued {
  readonly req: ForwardedAppend;
  readonly resolve: (a: AppendAnswer) => void;
}

export class ForwardGrouper {
  readonly #forwarder: AppendForwarder;
  readonly #queued = new Map<NodeId, Queued[]>();
  #scheduled = false;

  constructor(forwarder: AppendForwarder) {
    this.#forwarder = forwarder;
  }

  /** Forwards one part to `to`, together with the other parts of the request sent to `to` now. Never rejects. */
  send(to: NodeId, req: ForwardedAppend): Promise<AppendAnswer> {
    return new Promise((resolve) => this.sendThen(to, req, resolve));
  }

  /** As `send`, with a callback called once with the part's answer (no promise per part). */
  sendThen(to: NodeId, req: ForwardedAppend, resolve: (a: AppendAnswer) => void): void {
    const list = this.#queued.get(to);
    if (list === undefined) this.#queued.set(to, [{ req, resolve }]);
    else list.push({ req, resolve });
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => this.#flush());
    }
  }

  #flush(): void {
    this.#scheduled = false;
    const queued = [...this.#queued];
    this.#queued.clear();
    for (const [to, list] of queued) {
      const sent: Promise<readonly AppendAnswer[]> =
        this.#forwarder.forwardAppendMany === undefined ? Promise.all(list.map((q) => this.#forwarder.forwardAppend(to, q.req).catch(unavailable))) : this.#forwarder.forwardAppendMany(to, list.map((q) => q.req));
      // One reaction for both outcomes (a call that fails is every part's `unavailable`), through bound
      // functions, not arrows made per call: V8 keeps a closure's optimized code only while some
      // closure of it lives, so those were compiled again after every full GC (docs/benchmarks.md,
      // "V8 on a warm cluster").
      sent.then(answerAll.bind(undefined, to, list), failAll.bind(undefined, list));
    }
  }
}

function answerAll(to: NodeId, list: readonly Queued[], answers: readonly AppendAnswer[]): void {
  for (let k = 0; k < list.length; k++) list[k]!.resolve(answers[k] ?? { status: 'unavailable', detail: `node ${to} gave no answer for this part` });
}

function failAll(list: readonly Queued[], err: unknown): void {
  for (const q of list) q.resolve(unavailable(err));
}

function unavailable(err: unknown): AppendAnswer {
  return { status: 'unavailable', detail: (err as Error)?.message ?? String(err) };
}
