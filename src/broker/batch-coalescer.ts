/**
 * The publish batches a partition's leader takes between two turns of its node go into ONE Raft
 * entry (kind 3 in src/log/partition-entry.ts): one proposal, one log record, one index write and one
 * apply for all of them, as the store before partitions were Raft groups merged the appends of one
 * commit. With many small publishes in flight (64 producers of 10 events over 8 partitions) an entry
 * per batch cost a proposal, a checksum, a record and two KV puts per 1-2 events.
 *
 * A batch waits here until the node host's next turn takes the group's Ready (the host calls
 * `flush` then, see RaftGroup.beforeReady): no timer, no added latency when the node is idle. Each
 * batch keeps its request id inside the entry, so a retried batch is still de-duplicated on its own;
 * each gets its own outcome, or the entry's failure.
 *
 * A group with other members proposes one entry at a time: while an entry it proposed is neither
 * committed nor failed, new batches wait for it, and go together in the next entry (self-clocked,
 * like Nagle's algorithm: no timer, and no wait when nothing is in flight). The acknowledgement that
 * commits it makes a turn of the group, and the next entry goes in that turn: in the same write and
 * the same appends as the new commit index. On three
 * nodes the cost of a publish was mostly per entry (its appends and acknowledgements, a turn and an
 * apply on each replica) and at a moderate rate (5,000 events/s in batches of 10, four partitions)
 * each entry carried about one batch; under such load the batches that arrive during one replication
 * round now share an entry. The wait is at most the entry in flight's own: it is applied, or fails at
 * its deadline or when leadership moves. A group of one applies its entry in the turn that wrote it,
 * so it has nothing to wait for and does not hold.
 */
import type { Clock } from '../core/ports.js';
import { encodeBatchesEntry, PartitionEntryError, requestIdBytesMax } from '../log/partition-entry.js';
import type { Term } from '../raft/index.js';
import type { BatchOutcome } from '../replication/partition-state.js';
import type { ReplicaOutcome } from './partition-replica.js';
import { ProposalFailedError, type Applied, type RaftGroup } from './raft-host/raft-group.js';

/** Event bytes merged into one entry at most (a batch larger than this is an entry of its own). */
export const entryEventBytesMax = 1024 * 1024;
/** Batches in one entry at most (the entry format counts them in 16 bits). */
const entryBatchesMax = 0xffff;

/**
 * The failure of a batch that waited past its deadline before it was proposed: definite (it was never
 * proposed, so it is not stored; a retry stores it once), unlike a proposal's 'timeout' (it may still
 * commit).
 */
function expired(group: number, w: Waiting): ProposalFailedError {
  return new ProposalFailedError('expired', `group ${group}: the batch waited past its deadline behind the entry in flight and was not stored (request ${w.requestId})`);
}

export interface Coalesced {
  /** The term of the leader that committed the entry. */
  readonly term: Term;
  readonly outcome: BatchOutcome;
}

/**
 * Told a queued batch's fate once: its outcome when its entry is applied here (`c`), or why it failed
 * (`c` undefined, `err` the reason, as RaftGroup.propose fails).
 */
export type CoalescedDone = (c: Coalesced | undefined, err?: unknown) => void;

interface Waiting {
  readonly requestId: string;
  readonly events: readonly Buffer[];
  readonly bytes: number;
  readonly expectedTerm: Term;
  readonly deadlineMs: number;
  readonly done: CoalescedDone;
}

export class BatchCoalescer {
  readonly #group: RaftGroup<ReplicaOutcome>;
  readonly #clock: Clock;
  readonly #kick: () => void;
  #queue: Waiting[] = [];
  /** Entries proposed and not yet settled (applied or failed). */
  #inFlight = 0;
  /** The group's last log index after our last proposal: committed, it no longer holds new batches. */
  #lastProposed = 0;

  /** `kick` asks the node host for a turn of the group (which calls flush). */
  constructor(group: RaftGroup<ReplicaOutcome>, clock: Clock, kick: () => void) {
    this.#group = group;
    this.#clock = clock;
    this.#kick = kick;
  }

  /**
   * Appends a batch if this node leads the group (at `expectedTerm`, 0: any) and resolves once its
   * entry is applied here, with the batch's own outcome. Fails as RaftGroup.propose does.
   */
  add(requestId: string, events: readonly Buffer[], deadlineMs: number, expectedTerm: Term = 0): Promise<Coalesced> {
    const answer = new CoalescedAnswer();
    const refused = this.enqueue(requestId, events, deadlineMs, expectedTerm, answer.done);
    if (refused !== undefined) answer.done(undefined, refused);
    return answer.promise;
  }

  /**
   * As `add`, with a callback instead of a promise (a publish of 10 events touches most partitions:
   * a promise and its async-hook record per part were a good share of what a request allocated).
   * Returns why the batch cannot be queued, if it cannot: then `done` is never called.
   */
  enqueue(requestId: string, events: readonly Buffer[], deadlineMs: number, expectedTerm: Term, done: CoalescedDone): Error | undefined {
    if (events.length === 0) return new PartitionEntryError('a batch holds at least one event');
    const idBytes = Buffer.byteLength(requestId, 'utf8');
    if (idBytes > requestIdBytesMax) return new PartitionEntryError(`request id of ${idBytes} bytes (at most ${requestIdBytesMax})`);
    const refused = this.#refuse(expectedTerm);
    if (refused !== undefined) return refused;
    let bytes = 0;
    for (const e of events) bytes += e.length;
    this.#queue.push({ requestId, events, bytes, expectedTerm, deadlineMs, done });
    if (this.#queue.length === 1) this.#kick();
    return undefined;
  }

  /** Why a batch for `expectedTerm` cannot be proposed now, if it cannot. */
  #refuse(expectedTerm: Term): ProposalFailedError | undefined {
    const g = this.#group;
    if (!g.isLeader()) return new ProposalFailedError('notLeader', `node ${g.self} does not lead group ${g.id}`, g.leader, g.term);
    const term = g.raw.term;
    if (expectedTerm !== 0 && expectedTerm !== term) return new ProposalFailedError('notLeader', `group ${g.id} is at term ${term}, not ${expectedTerm}`, g.self, term);
    return undefined;
  }

  /** Proposes what waits, as few entries as the bounds allow (the node host calls this at a turn). */
  flush(): void {
    if (this.#queue.length === 0) return;
    // One entry in flight at a time in a replicated group: the turn after its commit takes the next
    // (the acknowledgement's), or its failure kicks one (#settled).
    const g = this.#group;
    const nowMs = this.#clock.monotonicMs();
    if (this.#inFlight > 0 && g.raw.commitIndex < this.#lastProposed && !g.isSingleton()) {
      // Held: a batch whose deadline passed meanwhile is answered now, not when the entry in flight
      // settles (this runs at every turn of the group, and a leader with an entry in flight turns
      // at least once a tick for its heartbeats).
      this.#dropExpired(nowMs);
      return;
    }
    const queue = this.#queue;
    this.#queue = [];
    const ready: Waiting[] = [];
    for (const w of queue) {
      // A batch that waited past its deadline is never proposed: its producer has been (or is being)
      // told it failed, and would send it again; stored after that, it would be stored twice.
      if (w.deadlineMs <= nowMs) {
        w.done(undefined, expired(g.id, w));
        continue;
      }
      // Leadership or the term may have changed since the batch was queued.
      const refused = this.#refuse(w.expectedTerm);
      if (refused === undefined) ready.push(w);
      else w.done(undefined, refused);
    }
    let from = 0;
    while (from < ready.length) {
      let to = from + 1;
      let bytes = ready[from]!.bytes;
      while (to < ready.length && to - from < entryBatchesMax && bytes + ready[to]!.bytes <= entryEventBytesMax) bytes += ready[to++]!.bytes;
      this.#propose(ready.slice(from, to));
      from = to;
    }
  }

  #propose(batch: Waiting[]): void {
    let deadlineMs = Infinity;
    for (const w of batch) deadlineMs = Math.min(deadlineMs, w.deadlineMs);
    let data: Buffer;
    try {
      data = encodeBatchesEntry(this.#clock.nowMs(), batch);
    } catch (err) {
      for (const w of batch) w.done(undefined, err);
      return;
    }
    this.#inFlight++;
    const proposed = this.#group.propose(data, deadlineMs);
    this.#lastProposed = this.#group.raw.lastIndex;
    // Bound methods, not arrows: V8 keeps a closure's optimized code only while some closure of it
    // lives, so arrows made per entry were compiled again after every full GC (docs/benchmarks.md,
    // "V8 on a warm cluster"); a bound method runs the method's own code, which stays.
    proposed.then(this.#applied.bind(this, batch), this.#failed.bind(this, batch));
  }

  #applied(batch: Waiting[], applied: Applied<ReplicaOutcome>): void {
    this.#settled();
    // A batches entry's outcome is one per batch (a seal is never proposed through here).
    const outcomes = applied.outcome === undefined || 'kind' in applied.outcome ? undefined : applied.outcome;
    for (let i = 0; i < batch.length; i++) {
      const w = batch[i]!;
      const outcome = outcomes?.[i];
      if (outcome === undefined) w.done(undefined, new ProposalFailedError('overwritten', `group ${this.#group.id}: entry ${applied.index} holds no batch ${i}`));
      else w.done({ term: applied.term, outcome });
    }
  }

  #failed(batch: Waiting[], err: unknown): void {
    this.#settled();
    for (const w of batch) w.done(undefined, err);
  }

  /** Fails the waiting batches whose deadline passed (never proposed, so certainly not stored). */
  #dropExpired(nowMs: number): void {
    let i = 0;
    while (i < this.#queue.length && this.#queue[i]!.deadlineMs > nowMs) i++;
    if (i === this.#queue.length) return;
    const keep: Waiting[] = [];
    const gone: Waiting[] = [];
    for (const w of this.#queue) (w.deadlineMs <= nowMs ? gone : keep).push(w);
    this.#queue = keep;
    for (const w of gone) w.done(undefined, expired(this.#group.id, w));
  }

  /** An entry in flight was applied or failed: what waits goes in the next turn (if still held). */
  #settled(): void {
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#queue.length > 0) this.#kick();
  }

  /** Entries proposed and not yet settled (tests). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Fails what waits (the replica is closing or leaving this node). */
  fail(err: Error): void {
    const queue = this.#queue;
    this.#queue = [];
    for (const w of queue) w.done(undefined, err);
  }
}

/**
 * The promise of one `add`: its `done` is a method bound once per batch, not an arrow made per batch
 * inside a promise executor (arrows made per call lose their optimized code at every full GC).
 */
class CoalescedAnswer {
  readonly promise: Promise<Coalesced>;
  readonly done: CoalescedDone;
  #resolve!: (c: Coalesced) => void;
  #reject!: (err: unknown) => void;

  constructor() {
    this.promise = new Promise<Coalesced>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.done = this.#done.bind(this);
  }

  #done(c: Coalesced | undefined, err?: unknown): void {
    if (c !== undefined) this.#resolve(c);
    else this.#reject(err);
  }
}
