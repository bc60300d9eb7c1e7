/**
 * Linearizable reads of the metadata group on this node (Raft thesis §6.4, ReadIndex), and waits for
 * this node to have applied an index.
 *
 * readBarrier() resolves once a read of the local state machine reflects every write acknowledged
 * anywhere before the call: the leader confirms its leadership with a heartbeat round and names its
 * commit index; the read is served once this node has applied that far. Concurrent reads share one
 * round; reads that arrive during a round share the next, started as soon as that one is answered
 * (not at the next tick). A round whose request or answer was lost, or whose leader changed, is asked
 * again. The rounds go through the group's RawNode, so they travel with the node host's turns.
 */
import { problems, type Problem } from '../core/problem.js';
import type { Index, RawNode, ReadState } from '../raft/index.js';

interface Waiter {
  readonly index: Index;
  readonly deadlineMs: number;
  readonly resolve: () => void;
  readonly reject: (err: Problem) => void;
}

interface ReadWaiter {
  readonly deadlineMs: number;
  readonly resolve: () => void;
  readonly reject: (err: Problem) => void;
}

export interface MetadataReadsOptions {
  /** The group's RawNode now (the node host may replace it after a refused write). */
  readonly raw: () => RawNode;
  /** What this node has applied. */
  readonly applied: () => Index;
  /** The group has work for the node host (a readIndex request to send). */
  readonly kick: () => void;
  /** A prefix making read contexts unique cluster-wide (the process incarnation). */
  readonly incarnation: string;
  readonly nowMs: () => number;
  /** How long a round may go unanswered before it is asked again (an election timeout). */
  readonly roundTimeoutMs: number;
  /** How long a read or an apply wait may take before it fails with 503. */
  readonly timeoutMs: number;
}

export class MetadataReads {
  readonly #o: MetadataReadsOptions;
  #applyWaiters: Waiter[] = [];
  #queue: ReadWaiter[] = [];
  #round: { ctx: string; waiters: ReadWaiter[]; startedMs: number } | undefined;
  #seq = 0;
  #closed = false;

  constructor(o: MetadataReadsOptions) {
    this.#o = o;
  }

  /** Resolves once this node has applied `index` (fails with 503 at `deadlineMs`). */
  waitApplied(index: Index, deadlineMs: number): Promise<void> {
    if (this.#o.applied() >= index) return Promise.resolve();
    return new Promise((resolve, reject) => this.#applyWaiters.push({ index, deadlineMs, resolve, reject }));
  }

  /** Resolves once a local read reflects every write acknowledged before the call. */
  barrier(): Promise<void> {
    if (this.#closed) return Promise.reject(problems.unavailable('The node is shutting down; retry on another node.'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ deadlineMs: this.#o.nowMs() + this.#o.timeoutMs, resolve, reject });
      this.startRound();
    });
  }

  /** Whether reads or apply waits are under way (the group must keep ticking for them). */
  busy(): boolean {
    return this.#queue.length > 0 || this.#round !== undefined || this.#applyWaiters.length > 0;
  }

  /** Entries were applied: release the waits they satisfy. */
  applied(): void {
    if (this.#applyWaiters.length === 0) return;
    const applied = this.#o.applied();
    const keep: Waiter[] = [];
    for (const w of this.#applyWaiters) {
      if (w.index <= applied) w.resolve();
      else keep.push(w);
    }
    this.#applyWaiters = keep;
  }

  /** Answers of the leader to readIndex requests (a Ready's readStates, after it is applied). */
  answered(states: readonly ReadState[]): void {
    for (const rs of states) {
      const round = this.#round;
      if (round === undefined || rs.context !== round.ctx) continue; // an abandoned round's late answer
      this.#round = undefined;
      for (const w of round.waiters) this.#applyWaiters.push({ index: rs.index, deadlineMs: w.deadlineMs, resolve: w.resolve, reject: w.reject });
      this.applied();
      // Reads that arrived during this round were queued (they need an index confirmed after they
      // arrived, so they cannot share it): start their round now rather than at the next tick, which
      // would add up to a tick period to each of them.
      this.startRound();
    }
  }

  /** The leader changed: a round sent to the old one may never be answered; ask the new one. */
  leaderChanged(): void {
    this.#retryRound();
    // Not now: this runs while the node host handles the Ready that says so.
    queueMicrotask(() => this.startRound());
  }

  /** A tick: rounds unanswered for too long are asked again, late waits fail, queued reads start. */
  tick(nowMs: number): void {
    const round = this.#round;
    if (round !== undefined && nowMs - round.startedMs > this.#o.roundTimeoutMs) this.#retryRound();
    this.#expire(nowMs);
    this.startRound();
  }

  startRound(): void {
    if (this.#round !== undefined || this.#queue.length === 0 || this.#closed) return;
    const ctx = `${this.#o.incarnation}/${++this.#seq}`;
    // False when no leader is known (or too many reads wait on it): the next tick tries again.
    if (!this.#o.raw().readIndex(ctx)) return;
    this.#round = { ctx, waiters: this.#queue.splice(0), startedMs: this.#o.nowMs() };
    this.#o.kick();
  }

  #retryRound(): void {
    const round = this.#round;
    if (round === undefined) return;
    this.#round = undefined;
    this.#queue.unshift(...round.waiters);
  }

  #expire(now: number): void {
    const late = (w: { deadlineMs: number }) => w.deadlineMs <= now;
    if (this.#queue.some(late)) {
      for (const w of this.#queue.filter(late)) w.reject(problems.unavailable('No metadata leader confirmed the read in time (is a majority of the cluster reachable?); retry.'));
      this.#queue = this.#queue.filter((w) => !late(w));
    }
    if (this.#applyWaiters.some(late)) {
      for (const w of this.#applyWaiters.filter(late)) w.reject(problems.unavailable('This node has not caught up with the metadata leader in time; retry.'));
      this.#applyWaiters = this.#applyWaiters.filter((w) => !late(w));
    }
  }

  close(err: Problem): void {
    this.#closed = true;
    for (const w of [...this.#applyWaiters, ...this.#queue, ...(this.#round?.waiters ?? [])]) w.reject(err);
    this.#applyWaiters = [];
    this.#queue = [];
    this.#round = undefined;
  }
}
