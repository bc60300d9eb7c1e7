/**
 * Drives one subscription stream on this node: streams the partitions the replicated assignment gives
 * it, with the pure batcher deciding what to send and when, and the flow control of the interface:
 *
 * - Window: events sent and not committed, plus events buffered, never exceed max_uncommitted_events;
 *   at the limit the stream sends only keep-alives (paused) until a commit moves a cursor. Buffers
 *   are flushed at once when the window is full, so the client always holds what it needs to commit.
 * - Commit timeout: with uncommitted events and no commit request on this stream for commit_timeout,
 *   the stream is closed (end 'commit_timeout').
 * - Hand-over: a partition the rebalance moved to another stream stops being sent at once; it is
 *   released (stream.release) as soon as everything sent on it is committed, or when the commit
 *   timeout has passed since the move; the new owner then starts after the committed cursor.
 *
 * Uncommitted counts rest on dense offsets: a partition's events after cursor c up to offset o number
 * o - c. The first event sent in a partition bounds the count from below (retention may have removed
 * events between the committed cursor and the first one read).
 *
 * The driver wakes on new events, the batcher's deadlines, the commit deadline, a kick (the hub calls
 * kick() whenever a metadata command about this subscription was applied), or the client leaving.
 */
import type { Offset } from '../core/offset.js';
import { toOffset } from '../core/offset.js';
import { streamReadAheadBytesMax, timerDelayMsMax } from '../core/limits.js';
import { partitionKeyOf, type PartitionKey } from '../metadata/assignment.js';
import { StreamBatcher, type OutBatch } from './batcher.js';
import type { StreamSink } from './low-level-stream.js';
import type { PartitionReader } from './ports.js';
import type { SubscriptionStreamParams } from './stream-params.js';

/** A partition this stream may read, with the event type's (first) topic that addresses its log. */
export interface StreamPartition extends PartitionKey {
  topic: number;
}

/** What the stream sees of the replicated state (the hub implements it over the metadata state machine). */
export interface StreamView {
  /** The session is still open in the replicated state (false after a reset, a delete, or a close by the service). */
  alive(): boolean;
  /** Partitions assigned to this stream and released by their previous owner: the ones to send. */
  assigned(): StreamPartition[];
  /** Partitions moved away from this stream that it has not released yet. */
  releasing(): PartitionKey[];
  /** The committed cursor of a partition, undefined before any. */
  committed(p: PartitionKey): number | undefined;
  /** Proposes the hand-over of partitions; failures are retried on the next round. */
  release(partitions: PartitionKey[]): Promise<void>;
}

export type SubscriptionStreamEnd = 'limit' | 'client_closed' | 'commit_timeout' | 'closed_by_service';

interface PartitionProgress {
  p: StreamPartition;
  /** Whether the batcher streams it now. */
  active: boolean;
  /** Exclusive position the next read starts after. */
  readAfter: Offset;
  /** Highest offset sent on this stream, undefined before the first event. */
  sentUpTo: number | undefined;
  /** Position before the first event this stream sent (lower bound of what it may count as uncommitted). */
  base: number | undefined;
  /** Monotonic time the partition was moved away (hand-over deadline), when it is releasing. */
  movedAtMs: number | undefined;
  releaseInFlight: boolean;
}

export interface SubscriptionStreamDeps {
  id: string;
  params: SubscriptionStreamParams;
  view: StreamView;
  reader: PartitionReader;
  /** Encodes a batch line; `first` marks the stream's first line (it carries the debug info). */
  encode(p: StreamPartition, batch: OutBatch, first: boolean): Buffer;
  monotonicMs(): number;
  /**
   * Calls `fn` after `ms` and returns what cancels it (defaults to setTimeout; the simulator passes
   * one on its node's virtual clock, so the stream's deadlines are events of its queue).
   */
  timer?(ms: number, fn: () => void): () => void;
  /** Events of partitions were sent (metrics hook). */
  onSent?(p: StreamPartition, events: number, bytes: number): void;
  /** A partition started or stopped being sent (for logs). */
  onPartitions?(change: { added: PartitionKey[]; removed: PartitionKey[] }): void;
}

function realTimer(ms: number, fn: () => void): () => void {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
}

export class SubscriptionStream {
  readonly id: string;
  readonly #d: SubscriptionStreamDeps;
  readonly #progress = new Map<string, PartitionProgress>();
  #batcher: StreamBatcher;
  #lastProgressMs: number;
  #linesSent = 0;
  #kick: (() => void) | undefined;
  #kicked = false;

  constructor(deps: SubscriptionStreamDeps) {
    this.id = deps.id;
    this.#d = deps;
    this.#lastProgressMs = deps.monotonicMs();
    this.#batcher = new StreamBatcher(deps.params, [], deps.monotonicMs());
  }

  /** Something changed in the replicated state: re-check assignment, commits and liveness. */
  kick(): void {
    this.#kicked = true;
    this.#kick?.();
  }

  /** A commit request on this stream was accepted: the commit timeout restarts. */
  noteCommit(): void {
    this.#lastProgressMs = this.#d.monotonicMs();
    this.kick();
  }

  /** Highest offset sent on this stream for the partition, undefined if none was. */
  sentUpTo(p: PartitionKey): number | undefined {
    return this.#progress.get(partitionKeyOf(p))?.sentUpTo;
  }

  /** Events sent on this stream and not committed, over every partition (assigned or being handed over). */
  uncommitted(): number {
    let n = 0;
    for (const pr of this.#progress.values()) n += this.#uncommittedOf(pr);
    return n;
  }

  #uncommittedOf(pr: PartitionProgress): number {
    // A partition handed over (neither streamed nor being released) is no longer this stream's to commit.
    if (pr.sentUpTo === undefined || (!pr.active && pr.movedAtMs === undefined && !pr.releaseInFlight)) return 0;
    const committed = this.#d.view.committed(pr.p) ?? -1;
    return Math.max(0, pr.sentUpTo - Math.max(committed, pr.base ?? -1));
  }

  async run(sink: StreamSink, signal: AbortSignal): Promise<SubscriptionStreamEnd> {
    return this.#loop(sink, signal);
  }

  async #loop(sink: StreamSink, signal: AbortSignal): Promise<SubscriptionStreamEnd> {
    const { params, view } = this.#d;
    while (!signal.aborted) {
      this.#kicked = false;
      if (!view.alive()) return 'closed_by_service';
      const now = this.#d.monotonicMs();
      this.#syncAssignment(now);
      const uncommitted = this.uncommitted();
      if (uncommitted > 0 && now >= this.#lastProgressMs + params.commitTimeoutMs) return 'commit_timeout';
      this.#handOver(now);

      let window = params.maxUncommittedEvents - uncommitted - this.#batcher.buffered;
      let readSomething = false;
      const active = [...this.#progress.values()].filter((pr) => pr.active);
      // Whole bytes: a remote read carries the bound as a u32 on the wire (transport/forward-codec.ts).
      const bytesPerPartition = Math.max(Math.floor(streamReadAheadBytesMax / Math.max(1, active.length)), 1_000_000);
      for (const pr of active) {
        const key = partitionKeyOf(pr.p);
        const room = Math.min(this.#batcher.capacity(key), window);
        if (room <= 0) continue;
        const events = await this.#d.reader.read(pr.p.topic, Number(pr.p.partition), pr.readAfter, room, bytesPerPartition);
        if (signal.aborted) return 'client_closed';
        // The assignment may have changed while reading: a partition no longer ours is not offered.
        if (events.length === 0 || !pr.active) continue;
        this.#batcher.offer(key, events);
        pr.readAfter = events[events.length - 1]!.offset;
        window -= events.length;
        readSomething = true;
      }

      const nowAfterRead = this.#d.monotonicMs();
      const { batches, done, wakeAtMs } = this.#batcher.poll(nowAfterRead, window <= 0 && this.#batcher.buffered > 0);
      for (const b of batches) {
        const pr = this.#progress.get(b.partition)!;
        if (b.events.length > 0) {
          if (this.uncommitted() === 0) this.#lastProgressMs = nowAfterRead; // the commit clock starts with the first uncommitted event
          pr.base = Math.min(pr.base ?? Infinity, b.events[0]!.offset - 1);
          pr.sentUpTo = Math.max(pr.sentUpTo ?? -1, b.cursor);
        }
        const line = this.#d.encode(pr.p, b, this.#linesSent === 0);
        this.#linesSent++;
        this.#d.onSent?.(pr.p, b.events.length, line.length);
        if (!sink.write(line)) {
          const end = await this.#drain(sink, signal);
          if (end !== undefined) return end;
        }
        if (signal.aborted) return 'client_closed';
      }
      if (done) return 'limit';
      if (readSomething || batches.length > 0 || this.#kicked) continue;

      const commitDeadline = this.uncommitted() > 0 ? this.#lastProgressMs + params.commitTimeoutMs : Infinity;
      const handOverDeadline = Math.min(
        Infinity,
        ...[...this.#progress.values()].filter((pr) => pr.movedAtMs !== undefined).map((pr) => pr.movedAtMs! + params.commitTimeoutMs),
      );
      const wakeAt = Math.min(wakeAtMs, commitDeadline, handOverDeadline);
      await this.#wait(window > 0 ? active : [], wakeAt - this.#d.monotonicMs(), signal);
    }
    return 'client_closed';
  }

  /** Brings the batcher's partitions in line with the replicated assignment. */
  #syncAssignment(now: number): void {
    const want = new Map(this.#d.view.assigned().map((p) => [partitionKeyOf(p), p]));
    const added: PartitionKey[] = [];
    const removed: PartitionKey[] = [];
    for (const [key, pr] of this.#progress) {
      if (pr.active && !want.has(key)) {
        // Moved away: unsent buffered events are dropped (the next owner reads them after the commit).
        this.#batcher.removePartition(key);
        pr.active = false;
        pr.movedAtMs = now;
        removed.push(pr.p);
      }
    }
    for (const [key, p] of want) {
      const pr = this.#progress.get(key);
      if (pr?.active === true) continue;
      const committed = this.#d.view.committed(p) ?? -1;
      const oldest = this.#d.reader.bounds(p.topic, Number(p.partition)).oldest;
      // Resume after the committed cursor (or the oldest event, when retention removed the ones after it).
      const readAfter = toOffset(Math.max(committed, oldest - 1));
      if (pr === undefined) {
        this.#progress.set(key, { p, active: true, readAfter, sentUpTo: undefined, base: undefined, movedAtMs: undefined, releaseInFlight: false });
      } else {
        pr.active = true;
        pr.readAfter = readAfter;
        pr.movedAtMs = undefined;
      }
      this.#batcher.addPartition(key, readAfter, now);
      added.push(p);
    }
    if (added.length > 0 || removed.length > 0) this.#d.onPartitions?.({ added, removed });
  }

  /** Releases partitions moved away once nothing sent on them is uncommitted, or their hand-over time is up. */
  #handOver(now: number): void {
    const releasing = this.#d.view.releasing();
    if (releasing.length === 0) return;
    const ready: PartitionProgress[] = [];
    const unknown: PartitionKey[] = [];
    for (const p of releasing) {
      const pr = this.#progress.get(partitionKeyOf(p));
      if (pr === undefined) {
        unknown.push(p); // assigned to us and moved on before we ever streamed it: nothing to hand over
        continue;
      }
      if (pr.active || pr.releaseInFlight) continue;
      if (this.#uncommittedOf(pr) === 0 || now >= (pr.movedAtMs ?? now) + this.#d.params.commitTimeoutMs) ready.push(pr);
    }
    if (ready.length === 0 && unknown.length === 0) return;
    for (const pr of ready) pr.releaseInFlight = true;
    this.#d.view.release([...unknown, ...ready.map((pr) => pr.p)]).then(
      () => {
        for (const pr of ready) {
          pr.releaseInFlight = false;
          pr.movedAtMs = undefined;
        }
      },
      () => {
        for (const pr of ready) pr.releaseInFlight = false;
        this.kick();
      },
    );
  }

  /**
   * Waits until the client has taken what was written. A client that stopped reading must not keep its
   * session, and so its partitions, forever: meanwhile a reset, a delete or a close by the service
   * (kick, abort) and the commit timeout still end the stream. Undefined once drained.
   */
  async #drain(sink: StreamSink, signal: AbortSignal): Promise<SubscriptionStreamEnd | undefined> {
    const timeoutMs = this.#d.params.commitTimeoutMs;
    let drained = false;
    const done = sink.drain().then(() => {
      drained = true;
    });
    for (;;) {
      // The main loop re-reads the state after every written batch: a kick seen here is not lost.
      this.#kicked = false;
      const deadline = this.uncommitted() > 0 ? this.#lastProgressMs + timeoutMs : Infinity;
      await this.#wait([], deadline - this.#d.monotonicMs(), signal, done);
      if (signal.aborted) return 'client_closed';
      if (drained) return undefined;
      if (!this.#d.view.alive()) return 'closed_by_service';
      if (this.uncommitted() > 0 && this.#d.monotonicMs() >= this.#lastProgressMs + timeoutMs) return 'commit_timeout';
    }
  }

  /** Sleeps until events arrive on a readable partition, the deadline passes, a kick, abort, or `also` settles. */
  async #wait(partitions: PartitionProgress[], delayMs: number, signal: AbortSignal, also?: Promise<unknown>): Promise<void> {
    const round = new AbortController();
    const onAbort = () => round.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    this.#kick = () => round.abort();
    if (this.#kicked) round.abort();
    const waits: Promise<unknown>[] = [];
    for (const pr of partitions) {
      if (this.#batcher.capacity(partitionKeyOf(pr.p)) === 0) continue;
      // A waiter that rejects after the race is decided must not become an unhandled rejection.
      waits.push(this.#d.reader.waitForEvents(pr.p.topic, Number(pr.p.partition), pr.readAfter, round.signal).catch(() => undefined));
    }
    let cancel: (() => void) | undefined;
    if (Number.isFinite(delayMs)) {
      const timer = this.#d.timer?.bind(this.#d) ?? realTimer;
      waits.push(new Promise<void>((resolve) => (cancel = timer(Math.min(timerDelayMsMax, Math.max(0, delayMs)), resolve))));
    }
    waits.push(new Promise<void>((resolve) => round.signal.addEventListener('abort', () => resolve(), { once: true })));
    if (also !== undefined) waits.push(also);
    try {
      await Promise.race(waits);
    } finally {
      this.#kick = undefined;
      cancel?.();
      round.abort();
      signal.removeEventListener('abort', onAbort);
    }
  }
}
