/**
 * Pending ReadIndex requests on the leader (Raft thesis §6.4).
 *
 * A read request records the commit index at the time it arrives, then the leader sends a heartbeat
 * round carrying the request's context. Once a majority of voters has answered a heartbeat carrying
 * that context, the leader knows it was still the leader when the request arrived, so no other
 * leader can have committed anything newer: the recorded index is a safe read index. Requests are
 * kept in arrival order, and confirming one confirms every earlier one too (the heartbeats carrying
 * the later context were sent after the earlier requests arrived).
 */
import type { Index, NodeId } from './types.js';

export interface ReadIndexStatus {
  readonly index: Index;
  readonly from: NodeId;
  readonly context: string;
  readonly acks: Set<NodeId>;
}

export class ReadOnly {
  readonly #pending = new Map<string, ReadIndexStatus>();
  #queue: string[] = [];
  readonly pendingMax: number;

  constructor(pendingMax: number) {
    this.pendingMax = pendingMax;
  }

  get size(): number {
    return this.#queue.length;
  }

  /** Registers a request; false if its context is already pending or the queue is full. */
  addRequest(index: Index, from: NodeId, context: string): boolean {
    if (this.#pending.has(context)) return false;
    if (this.#queue.length >= this.pendingMax) return false;
    this.#pending.set(context, { index, from, context, acks: new Set() });
    this.#queue.push(context);
    return true;
  }

  /** Records a heartbeat answer carrying `context`; returns the acknowledgers so far, if pending. */
  recvAck(from: NodeId, context: string): ReadonlySet<NodeId> | undefined {
    const rs = this.#pending.get(context);
    if (rs === undefined) return undefined;
    rs.acks.add(from);
    return rs.acks;
  }

  /** Removes and returns every request up to and including the one with `context`. */
  advance(context: string): ReadIndexStatus[] {
    const at = this.#queue.indexOf(context);
    if (at < 0) return [];
    const done = this.#queue.slice(0, at + 1);
    this.#queue = this.#queue.slice(at + 1);
    const out: ReadIndexStatus[] = [];
    for (const ctx of done) {
      const rs = this.#pending.get(ctx);
      if (rs !== undefined) out.push(rs);
      this.#pending.delete(ctx);
    }
    return out;
  }

  lastPendingContext(): string | undefined {
    return this.#queue[this.#queue.length - 1];
  }

  reset(): void {
    this.#pending.clear();
    this.#queue = [];
  }
}
