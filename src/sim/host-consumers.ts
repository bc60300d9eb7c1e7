/**
 * Consumers of the host simulation: each follows one partition as a low-level stream client would,
 * through a node's PartitionReplicas driven by the production stream driver (runLowLevelStream,
 * consumption/low-level-stream.ts, on the node's virtual clock). Mostly the node holds no voter of the
 * partition, so its reads are remote: bounds from a replica's answer, reads and long-polls through the
 * transport's Read service to a replica over the faulty network (host-cluster.ts), as the HTTP layer
 * serves a stream on any node. A stream ends when a read fails (no replica could be read, the cursor
 * is ahead of what the node knows or behind its oldest offset), when its node crashes (the connection
 * goes with it) or when the consumer leaves on its own; the consumer then connects again, to a node
 * of its choice, from the cursor of the last batch it received.
 *
 * What each consumer sees is checked as it arrives (the ledger checks the events themselves):
 *
 * - ConsumerSkipped, ConsumerDuplicate: a stream's events continue its cursor exactly, across reads,
 *   leader changes, crashes of the replica read from and reconnections to other nodes; a keep-alive
 *   repeats the cursor. Retention (when on) may remove the events after a cursor: the consumer is
 *   told its cursor expired when it connects and starts again at the oldest offset, and the ledger
 *   checks that nothing retention had to keep lay in between (as for a replica's reader).
 * - ConsumerReadLost, ConsumerPhantom, FailedBatchAppeared (partition-ledger.ts `consumed`): every
 *   event read is the event the partition's log holds at that offset (committed: an acknowledged or
 *   in-flight batch, never one told failed, never one later lost or replaced).
 * - ConsumerExpired: with retention off nothing is ever removed, so no node may call a cursor it
 *   handed out expired.
 * - Liveness (host-cluster.ts, in calm): every consumer reaches the newest offset of its partition.
 */
import type { Offset } from '../core/offset.js';
import { runLowLevelStream } from '../consumption/low-level-stream.js';
import type { NodeId } from '../raft/index.js';
import type { HostSimContext, SimPartition } from './host-context.js';
import type { SimHostNode } from './host-node.js';
import { InvariantViolation } from './invariants.js';
import type { Prng } from './prng.js';

/** Errors a stream may end with that are not bugs: the client connects again. */
const retriable = new Set(['PartitionUnavailableError', 'OffsetExpiredError', 'OffsetNotYetAvailableError', 'TransportError', 'StoreClosedError']);

export interface ConsumerEnv {
  /** Whether `node`'s applied placement makes it a voter of `p` (its reads are local then). */
  voterOn(node: NodeId, p: SimPartition): boolean;
  /** Whether nodes apply retention (a cursor may expire). */
  readonly retention: boolean;
}

interface Stream {
  readonly node: SimHostNode;
  readonly inc: number;
  readonly ac: AbortController;
}

interface Consumer {
  readonly id: number;
  readonly p: SimPartition;
  /** The cursor: the offset of the last event received (-1: none yet). */
  after: number;
  stream: Stream | undefined;
  /** Connection attempts in a row that found the cursor ahead of the node's bounds. */
  ahead: number;
}

export class Consumers {
  readonly #ctx: HostSimContext;
  readonly #rng: Prng;
  readonly #env: ConsumerEnv;
  readonly #all: Consumer[] = [];
  #stopped = false;

  constructor(ctx: HostSimContext, rng: Prng, env: ConsumerEnv, count: number) {
    this.#ctx = ctx;
    this.#rng = rng;
    this.#env = env;
    for (let id = 0; id < count; id++) this.#all.push({ id, p: ctx.partitions[id % ctx.partitions.length]!, after: -1, stream: undefined, ahead: 0 });
  }

  start(): void {
    for (const c of this.#all) this.#ctx.at(this.#rng.between(20, 300), () => this.#connect(c));
  }

  /** The run is over: every stream ends (their timers and waits must not outlive it). */
  stop(): void {
    this.#stopped = true;
    for (const c of this.#all) this.#close(c);
  }

  /** The node crashed: the streams it served end with it; their consumers connect elsewhere. */
  nodeCrashed(node: SimHostNode): void {
    for (const c of this.#all) {
      if (c.stream?.node !== node) continue;
      this.#close(c);
      this.#ctx.log(`k${c.id} p${c.p.index}: stream on n${node.id} lost (node crashed) at ${c.after}`);
      this.#later(c);
    }
  }

  /** Every consumer has read its partition up to `newest(p)`. */
  caughtUp(newest: (p: SimPartition) => number): boolean {
    return this.#all.every((c) => c.after === newest(c.p));
  }

  describe(): string {
    return this.#all.map((c) => `k${c.id} p${c.p.index}@${c.after}${c.stream === undefined ? ' (not connected)' : ` on n${c.stream.node.id}`}`).join(' ');
  }

  #close(c: Consumer): void {
    const s = c.stream;
    c.stream = undefined;
    s?.ac.abort();
  }

  #later(c: Consumer, lo = 20, hi = 200): void {
    if (!this.#stopped) this.#ctx.at(this.#rng.between(lo, hi), () => this.#connect(c));
  }

  #connect(c: Consumer): void {
    const ctx = this.#ctx;
    const r = this.#rng;
    if (this.#stopped || c.stream !== undefined) return;
    const up = ctx.running().filter((n) => n.replicas !== undefined);
    if (up.length === 0) return this.#later(c);
    // Mostly a node that holds no voter of the partition (remote reads), else any.
    const remote = up.filter((n) => !this.#env.voterOn(n.id, c.p));
    const node = r.pick(remote.length > 0 && r.chance(0.85) ? remote : up);
    const replicas = node.replicas!;
    const { topic, partition } = c.p;
    const who = `k${c.id} via n${node.id}`;
    // The cursor against the node's bounds, as the stream request checks it (cursors.ts).
    const b = replicas.bounds(topic, partition);
    if (c.after > b.newest) {
      // Ahead of what the node knows yet (a remote node's bounds come from a replica's last answer):
      // the client is told to retry.
      c.ahead++;
      ctx.log(`${who} p${c.p.index}: cursor ${c.after} ahead of the node's newest ${b.newest}; retry`);
      return this.#later(c, 20, c.ahead > 3 ? 300 : 100);
    }
    c.ahead = 0;
    if (c.after < b.oldest - 1) {
      if (!this.#env.retention) {
        ctx.fail(new InvariantViolation('ConsumerExpired', `${who} p${c.p.index}: cursor ${c.after} refused as expired (the node's oldest offset is ${b.oldest}) with retention off`));
        return;
      }
      // Expired: the client starts again at the oldest offset; nothing retention had to keep lay between.
      ctx.ledger.skipped(`k${c.id}`, c.p.index, c.after, b.oldest, b.newest);
      ctx.stats.consumerExpired++;
      ctx.log(`${who} p${c.p.index}: cursor ${c.after} expired, starting again at ${b.oldest}`);
      c.after = b.oldest - 1;
    }
    const stream: Stream = { node, inc: node.incarnation, ac: new AbortController() };
    c.stream = stream;
    ctx.stats.consumerStreams++;
    const batchLimit = r.pick([1, 1, 4, 16]);
    const flushMs = r.pick([50, 200, 1000]);
    ctx.log(`${who} p${c.p.index}: stream from ${c.after} (${this.#env.voterOn(node.id, c.p) ? 'local' : 'remote'}, batch_limit ${batchLimit}, flush ${flushMs} ms)`);
    const current = () => c.stream === stream && node.incarnation === stream.inc;
    const sink = {
      write: (line: Buffer): boolean => {
        if (current()) this.#received(c, node, JSON.parse(line.toString()) as Line);
        return true;
      },
      drain: () => Promise.resolve(),
    };
    runLowLevelStream(
      replicas,
      sink,
      {
        topic,
        partitions: [{ partition: String(partition), after: c.after as Offset }],
        params: { batchLimit, batchFlushTimeoutMs: flushMs, streamLimit: 0, streamTimeoutMs: 0, streamKeepAliveLimit: 0 },
        encode: (b) => Buffer.from(JSON.stringify({ cursor: b.cursor, events: b.events.map((e) => ({ offset: e.offset, data: e.bytes.toString() })) })),
        monotonicMs: () => node.clock.monotonicMs(),
        timer: (ms, fn) => {
          let live = true;
          // As setTimeout: a delay under 1 ms is 1 ms (a flush due in 1e-13 ms would otherwise come
          // at the same virtual instant, again and again, before the node's clock got there).
          node.after(Math.max(1, ms), () => live && fn(), stream.inc);
          return () => (live = false);
        },
      },
      stream.ac.signal,
    ).then(
      () => {
        // Ended by its consumer (leaving) or by a crash: whoever ended it connects again.
      },
      (err: unknown) => {
        if (err instanceof InvariantViolation) return ctx.fail(err);
        if (!current()) return;
        const name = err instanceof Error ? err.name : '';
        if (!retriable.has(name)) {
          ctx.fail(name === 'InvariantError' ? err : new InvariantViolation('ConsumerReadFailed', `${who} p${c.p.index}: ${err instanceof Error ? `${name}: ${err.message}` : String(err)}`));
          return;
        }
        c.stream = undefined;
        ctx.stats.consumerErrors++;
        ctx.log(`${who} p${c.p.index}: stream ended at ${c.after}: ${(err as Error).message}`);
        this.#later(c);
      },
    );
    // Now and then the consumer leaves and resumes elsewhere from its cursor.
    ctx.at(r.between(300, 2000), () => {
      if (c.stream !== stream) return;
      this.#close(c);
      ctx.stats.consumerResumes++;
      ctx.log(`${who} p${c.p.index}: leaves at ${c.after}`);
      this.#later(c, 1, 50);
    });
  }

  #received(c: Consumer, node: SimHostNode, line: Line): void {
    const ctx = this.#ctx;
    const who = `k${c.id} via n${node.id}`;
    if (line.events.length === 0) {
      if (line.cursor !== c.after) throw new InvariantViolation('ConsumerSkipped', `${who} p${c.p.index}: a keep-alive names cursor ${line.cursor}, the last event received was ${c.after}`);
      return;
    }
    const remote = !this.#env.voterOn(node.id, c.p);
    for (const e of line.events) {
      if (e.offset <= c.after) throw new InvariantViolation('ConsumerDuplicate', `${who} p${c.p.index}: offset ${e.offset} (${e.data}) received after ${c.after}`);
      if (e.offset !== c.after + 1) throw new InvariantViolation('ConsumerSkipped', `${who} p${c.p.index}: offset ${e.offset} (${e.data}) received after ${c.after}: ${e.offset - c.after - 1} events skipped`);
      ctx.ledger.consumed(`k${c.id}`, c.p.index, e.offset, e.data);
      c.after = e.offset;
      ctx.stats.consumerEvents++;
      if (remote) ctx.stats.consumerRemoteEvents++;
    }
    if (line.cursor !== c.after) throw new InvariantViolation('ConsumerSkipped', `${who} p${c.p.index}: a batch ending at ${c.after} names cursor ${line.cursor}`);
  }
}

interface Line {
  cursor: number;
  events: { offset: number; data: string }[];
}
