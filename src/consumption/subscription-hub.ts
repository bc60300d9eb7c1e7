/**
 * The subscription streams of this node, and the operations that touch them (interface.md,
 * "Subscriptions"): opening a stream (a stream.open command: the rebalance runs at apply time on every
 * node), committing cursors, reading and resetting them, statistics. Sessions, assignment and committed
 * cursors live in the replicated metadata (metadata/subscription-runtime.ts); what only this node knows
 * is what each of its streams has sent, which bounds what a stream may commit and drives flow control.
 *
 * The metadata group calls applied() for every applied command: the streams of the subscription it
 * names are kicked and re-read the state (assignment, cursors, liveness).
 *
 * A stream's session is closed (stream.close) when the stream ends, for any reason. Sessions of an
 * earlier incarnation of this node (a crash) are closed at start (stream.close_stale).
 */
import { isProblem, problems } from '../core/problem.js';
import type { Clock } from '../core/ports.js';
import { parseOffset, type Offset } from '../core/offset.js';
import { partitionKeyOf, type PartitionKey } from '../metadata/assignment.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult } from '../metadata/state-machine.js';
import type { CommitOutcome, CommittedCursor, SubscriptionRuntime } from '../metadata/subscription-runtime.js';
import type { EventTypeRecord, Subscription } from '../metadata/types.js';
import { encodeBatchLine } from './batch-line.js';
import type { OutBatch } from './batcher.js';
import type { CursorResolver } from './cursors.js';
import type { StreamSink } from './low-level-stream.js';
import type { PartitionReader } from './ports.js';
import { parseSubscriptionStreamParams, type SubscriptionStreamParams } from './stream-params.js';
import { SubscriptionStream, type StreamPartition, type SubscriptionStreamEnd } from './subscription-stream.js';

export interface SubscriptionState {
  subscription(id: string): Subscription | undefined;
  eventType(name: string): EventTypeRecord | undefined;
  runtime(id: string): SubscriptionRuntime | undefined;
  /** Every runtime (for sessions of an earlier incarnation of this node). */
  runtimes(): Iterable<SubscriptionRuntime>;
}

export interface HubLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface SubscriptionCursor {
  event_type: string;
  partition: string;
  offset: string;
  cursor_token: string;
}

export interface HubObserver {
  streamed(eventType: string, events: number, bytes: number): void;
  streamOpened(): void;
  streamClosed(): void;
  committed(durationMs: number): void;
}

interface LocalStream {
  stream: SubscriptionStream;
  subscription: string;
  /** Resolves when the stream's run has ended. */
  ended: Promise<void>;
  closedAtMs?: number;
  commitTimeoutMs: number;
  /** The stream.close proposal, once the stream ended. */
  closing?: Promise<void>;
}

/** An opened stream, ready to run: the route writes the head (with the id) and then runs it. */
export interface OpenedStream {
  id: string;
  params: SubscriptionStreamParams;
  run(sink: StreamSink, signal: AbortSignal): Promise<SubscriptionStreamEnd>;
  /** Closes the session without running the stream (its head could not be sent); a no-op after run. */
  cancel(): void;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const startedInfo = '{"debug":"Stream started"}';
/** Stream requests of unknown outcome remembered at most (the oldest are forgotten first). */
const abandonedMax = 1000;

/** A timer that does not keep the process alive (a closed stream's bookkeeping, retried closes). */
function unrefTimer(ms: number, fn: () => void): () => void {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
}

export class SubscriptionHub {
  readonly #state: () => SubscriptionState;
  readonly #propose: (cmd: MetadataCommand) => Promise<ApplyResult>;
  readonly #reader: PartitionReader;
  readonly #cursors: CursorResolver;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #node: number;
  readonly #incarnation: string;
  readonly #log: HubLogger;
  readonly #observer: HubObserver | undefined;
  /** Streams of this node by id: open ones, and closed ones while they may still commit. */
  readonly #streams = new Map<string, LocalStream>();
  /** Subscriptions with a cursor reset running through this node. */
  readonly #resetting = new Set<string>();
  /** Sessions whose stream.open failed with an unknown outcome (session -> subscription): closed if applied. */
  readonly #abandoned = new Map<string, string>();
  readonly #timer: (ms: number, fn: () => void) => () => void;
  /** What streams wait with: the injected timer, else their own (a ref'd setTimeout). */
  readonly #streamTimer: ((ms: number, fn: () => void) => () => void) | undefined;

  constructor(deps: {
    state: () => SubscriptionState;
    propose: (cmd: MetadataCommand) => Promise<ApplyResult>;
    reader: PartitionReader;
    cursors: CursorResolver;
    clock: Clock;
    newId: () => string;
    node: number;
    incarnation: string;
    logger: HubLogger;
    observer?: HubObserver;
    /**
     * Calls `fn` after `ms` and returns what cancels it; also what the streams wait with. Defaults to
     * an unref'd setTimeout; the simulator passes one on its node's virtual clock.
     */
    timer?: (ms: number, fn: () => void) => () => void;
  }) {
    this.#state = deps.state;
    this.#propose = deps.propose;
    this.#reader = deps.reader;
    this.#cursors = deps.cursors;
    this.#clock = deps.clock;
    this.#newId = deps.newId;
    this.#node = deps.node;
    this.#incarnation = deps.incarnation;
    this.#log = deps.logger;
    this.#observer = deps.observer;
    this.#timer = deps.timer ?? unrefTimer;
    this.#streamTimer = deps.timer;
  }

  /** Closes the sessions this node held before it restarted (their streams died with the process). */
  async closeStaleSessions(): Promise<number> {
    let stale = 0;
    for (const rt of this.#state().runtimes()) {
      for (const s of rt.sessions) if (s.node === this.#node && s.incarnation !== this.#incarnation) stale++;
    }
    if (stale === 0) return 0;
    const r = await this.#propose({ op: 'stream.close_stale', node: this.#node, incarnation: this.#incarnation, atMs: this.#clock.nowMs() });
    if (!r.ok) throw problems.internal(r.detail);
    this.#log.info({ sessions: stale }, 'closed the stream sessions of the previous run of this node');
    return stale;
  }

  /**
   * A stream.open of this process whose outcome its caller never learnt: closes the session if it is
   * open, else once it is applied (a proposal may commit long after its answer was given up).
   */
  #abandon(subscription: string, session: string): void {
    if (this.#state().runtime(subscription)?.session(session) !== undefined) return this.#closeOrphan(subscription, session);
    this.#abandoned.set(session, subscription);
    // Bounded: an entry is only needed while its proposal may still commit.
    if (this.#abandoned.size > abandonedMax) this.#abandoned.delete(this.#abandoned.keys().next().value!);
  }

  #closeOrphan(subscription: string, session: string): void {
    const close = () => this.#propose({ op: 'stream.close', subscription, session, atMs: this.#clock.nowMs() });
    close().then(
      () => this.#log.info({ subscription, stream: session }, 'closed the session of a stream request that failed'),
      () => void this.#retryClose(subscription, session, close),
    );
  }

  /** Called for every applied metadata command: wakes the streams it concerns. */
  applied(cmd: MetadataCommand): void {
    if (cmd.op === 'stream.open' && cmd.session.node === this.#node && cmd.session.incarnation === this.#incarnation && this.#abandoned.has(cmd.session.id)) {
      this.#abandoned.delete(cmd.session.id);
      // Not from inside the apply: the close is a proposal of its own.
      this.#timer(0, () => this.#closeOrphan(cmd.subscription, cmd.session.id));
    }
    const sub = 'subscription' in cmd && typeof cmd.subscription === 'string' ? cmd.subscription : cmd.op === 'subscription.delete' ? cmd.id : undefined;
    // A session of an earlier process of this node shows up only now (this node's metadata lagged at
    // start, or its directory was wiped): close it, as at start.
    if (cmd.op === 'stream.open' && cmd.session.node === this.#node && cmd.session.incarnation !== this.#incarnation) this.#closeStaleSoon();
    this.#wakeCloseRetries();
    if (cmd.op === 'stream.close_stale') return this.#kickStreams();
    if (sub === undefined) return;
    for (const s of this.#streams.values()) if (s.subscription === sub && s.closedAtMs === undefined) s.stream.kick();
  }

  /**
   * The state was replaced (a snapshot from the leader): every stream re-reads it, and stale sessions
   * it names are closed, as are the sessions of this process's stream requests of unknown outcome
   * that it holds: their stream.open was applied inside the snapshot, so `applied` never saw it.
   */
  kickAll(): void {
    this.#wakeCloseRetries();
    this.#kickStreams();
    this.#closeStaleSoon();
    for (const [session, subscription] of this.#abandoned) {
      if (this.#state().runtime(subscription)?.session(session) === undefined) continue;
      this.#abandoned.delete(session);
      // Not from inside the restore: the close is a proposal of its own.
      this.#timer(0, () => this.#closeOrphan(subscription, session));
    }
  }

  #kickStreams(): void {
    for (const s of this.#streams.values()) if (s.closedAtMs === undefined) s.stream.kick();
  }

  #staleCheck = false;

  /**
   * closeStaleSessions at start sees only what this node's metadata holds then: a node whose copy
   * lagged (or whose directory was wiped) learns of its previous process's sessions later, and without
   * this they would hold their partitions for as long as this node runs (the session reaper closes only
   * those of nodes that stay unreachable). Retried every 500 ms until it is applied.
   */
  #closeStaleSoon(): void {
    if (this.#staleCheck || this.#draining) return;
    this.#staleCheck = true;
    // Not from inside the apply: the close is a proposal of its own.
    this.#timer(0, () => {
      this.closeStaleSessions().then(
        () => (this.#staleCheck = false),
        () =>
          this.#timer(500, () => {
            this.#staleCheck = false;
            this.#closeStaleSoon();
          }),
      );
    });
  }

  #subscription(id: string): Subscription {
    const s = this.#state().subscription(id);
    if (s === undefined) throw problems.subscriptionNotFound(`Subscription with id "${id}" does not exist`);
    return s;
  }

  #record(name: string): EventTypeRecord {
    const rec = this.#state().eventType(name);
    if (rec === undefined) throw problems.internal(`event type ${name} of a subscription is missing`);
    return rec;
  }

  // ------------------------------------------------------------------ streams

  async open(subscriptionId: string, query: Record<string, unknown>): Promise<OpenedStream> {
    const sub = this.#subscription(subscriptionId);
    const params = parseSubscriptionStreamParams(query);
    if (this.#resetting.has(subscriptionId)) throw problems.conflict(`A cursor reset of subscription ${subscriptionId} is in progress; retry when it is done`);
    const starts = this.#starts(sub);
    const id = this.#newId();
    let r: ApplyResult;
    try {
      r = await this.#propose({
        op: 'stream.open',
        subscription: subscriptionId,
        session: { id, node: this.#node, incarnation: this.#incarnation, openedAtMs: this.#clock.nowMs(), commitTimeoutMs: params.commitTimeoutMs },
        starts,
      });
    } catch (err) {
      // The outcome is unknown (a forwarded proposal's answer lost, a deadline passed): the session may
      // be opened now or later, and no stream will ever run for it or close it, while it holds its
      // partitions. It is closed once it shows up.
      this.#abandon(subscriptionId, id);
      throw err;
    }
    if (!r.ok) {
      if (r.reason === 'not_found') throw problems.subscriptionNotFound(`Subscription with id "${subscriptionId}" does not exist`);
      if (r.reason === 'no_slots') throw problems.conflict(r.detail);
      throw problems.conflict(r.detail);
    }
    const stream = this.#newStream(subscriptionId, id, params);
    let endedResolve!: () => void;
    const local: LocalStream = { stream, subscription: subscriptionId, ended: new Promise<void>((r) => (endedResolve = r)), commitTimeoutMs: params.commitTimeoutMs };
    this.#streams.set(id, local);
    this.#observer?.streamOpened();
    let finished = false;
    const finish = (end: SubscriptionStreamEnd): void => {
      if (finished) return;
      finished = true;
      local.closedAtMs = this.#clock.nowMs();
      this.#observer?.streamClosed();
      endedResolve();
      this.#closeSession(local, end);
    };
    return {
      id,
      params,
      run: async (sink, signal) => {
        let end: SubscriptionStreamEnd = 'client_closed';
        try {
          end = await stream.run(sink, signal);
          return end;
        } finally {
          finish(end);
        }
      },
      cancel: () => finish('client_closed'),
    };
  }

  /** Where each partition starts for this subscription's first stream (read_from, fixed by the first stream.open applied). */
  #starts(sub: Subscription): CommittedCursor[] {
    const rt = this.#state().runtime(sub.id);
    const starts: CommittedCursor[] = [];
    for (const name of sub.event_types) {
      const rec = this.#record(name);
      for (const partition of rec.storage.partitions) {
        if (rt?.committed.has(partitionKeyOf({ event_type: name, partition })) === true) continue;
        const b = this.#cursors.bounds(rec, partition);
        let offset: number;
        if (sub.read_from === 'end') offset = b.newest;
        else if (sub.read_from === 'begin') offset = b.oldest - 1;
        else {
          const initial = sub.initial_cursors?.find((c) => c.event_type === name && c.partition === partition);
          const pos = initial === undefined ? undefined : parseOffset(initial.offset);
          // BEGIN, or an initial cursor retention has since passed: the oldest event available.
          offset = pos === undefined || pos.kind === 'begin' ? b.oldest - 1 : Math.max(pos.offset, b.oldest - 1);
        }
        starts.push({ event_type: name, partition, offset });
      }
    }
    return starts;
  }

  #newStream(subscriptionId: string, id: string, params: SubscriptionStreamParams): SubscriptionStream {
    const runtime = () => this.#state().runtime(subscriptionId);
    const withStorage = (p: PartitionKey): StreamPartition => {
      const rec = this.#record(p.event_type);
      return { event_type: p.event_type, partition: p.partition, topic: rec.storage.topic };
    };
    const log = this.#log;
    return new SubscriptionStream({
      id,
      params,
      reader: this.#reader,
      monotonicMs: () => this.#clock.monotonicMs(),
      ...(this.#streamTimer === undefined ? {} : { timer: this.#streamTimer }),
      view: {
        alive: () => runtime()?.session(id) !== undefined,
        assigned: () => (runtime()?.slots ?? []).filter((s) => s.session === id && s.releasingFrom === undefined).map(withStorage),
        releasing: () => (runtime()?.slots ?? []).filter((s) => s.releasingFrom === id).map((s) => ({ event_type: s.event_type, partition: s.partition })),
        committed: (p) => runtime()?.committed.get(partitionKeyOf(p))?.offset,
        release: async (partitions) => {
          const r = await this.#propose({ op: 'stream.release', subscription: subscriptionId, session: id, partitions });
          if (!r.ok) throw problems.internal(r.detail);
          log.info({ subscription: subscriptionId, stream: id, partitions }, 'partitions handed over');
        },
      },
      encode: (p, b, first) => encodeBatchLine(this.#cursorJson(p, b), b.events, first ? startedInfo : undefined),
      onSent: (p, events, bytes) => this.#observer?.streamed(p.event_type, events, bytes),
      onPartitions: (change) => log.info({ subscription: subscriptionId, stream: id, ...change }, 'stream partitions changed'),
    });
  }

  #cursorJson(p: StreamPartition, b: OutBatch): string {
    const offset = b.cursor < 0 ? 'BEGIN' : this.#cursors.formatCursor(this.#record(p.event_type), p.partition, b.cursor);
    return `{"partition":${JSON.stringify(p.partition)},"offset":${JSON.stringify(offset)},"event_type":${JSON.stringify(p.event_type)},"cursor_token":"${this.#newId()}"}`;
  }

  #closeSession(local: LocalStream, end: SubscriptionStreamEnd): void {
    const { stream, subscription } = local;
    this.#log.info({ subscription, stream: stream.id, end, uncommitted: stream.uncommitted() }, 'subscription stream closed');
    // Keep it for commits within the window after closing; forget it afterwards.
    this.#timer(local.commitTimeoutMs + 1000, () => this.#streams.delete(stream.id));
    if (end === 'closed_by_service') return; // the session is already gone from the replicated state
    const atMs = local.closedAtMs ?? this.#clock.nowMs();
    const close = () => this.#propose({ op: 'stream.close', subscription, session: stream.id, atMs });
    local.closing = close().then(
      () => undefined,
      (err: unknown) => {
        // Without this close the session would keep its partitions for as long as this node runs (a
        // metadata group without quorum at that moment, say): it is asked again until it is applied or
        // the session is gone. The shutdown does not wait for the retries (a restart closes stale sessions).
        this.#log.warn({ err, subscription, stream: stream.id }, 'closing the stream session failed; retrying');
        void this.#retryClose(subscription, stream.id, close);
      },
    );
  }

  /** Retries a stream.close with backoff while the session still holds a place in the replicated state. */
  async #retryClose(subscription: string, session: string, close: () => Promise<unknown>): Promise<void> {
    for (let attempt = 0; !this.#draining; attempt++) {
      await this.#closeRetryWait(Math.min(5000, 250 * 2 ** Math.min(attempt, 5)));
      const rt = this.#state().runtime(subscription);
      if (this.#draining || rt === undefined || !rt.sessions.some((x) => x.id === session)) return;
      try {
        await close();
        this.#log.info({ subscription, stream: session, attempts: attempt + 2 }, 'stream session closed after retrying');
        return;
      } catch {
        // asked again after the next wait
      }
    }
  }

  /**
   * The wait before a stream.close is tried again: `ms`, or less once this node applies a metadata
   * command (the group has a leader that reaches this node again), but not under 250 ms after the
   * failure. Until the close is taken the session holds its partitions, and after an outage of the
   * metadata group the backoff alone kept them from the next stream for up to 5 s more (host
   * simulation seed 265: a close that failed just after the group came back waited 4 s).
   */
  #closeRetryWait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let floorPassed = false;
      let woken = false;
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        this.#closeRetries.delete(wake);
        cancel();
        resolve();
      };
      const wake = (): void => {
        woken = true;
        if (floorPassed) finish();
      };
      const cancel = this.#timer(ms, finish);
      this.#timer(Math.min(ms, 250), () => {
        floorPassed = true;
        if (woken) finish();
      });
      this.#closeRetries.add(wake);
    });
  }

  /** Retried closes waiting for their next try (#closeRetryWait). */
  readonly #closeRetries = new Set<() => void>();

  #wakeCloseRetries(): void {
    if (this.#closeRetries.size === 0) return;
    // Not from inside the apply: a retried close is a proposal of its own.
    this.#timer(0, () => {
      for (const wake of [...this.#closeRetries]) wake();
    });
  }

  #draining = false;

  // ------------------------------------------------------------------ cursors

  /** POST cursors: undefined when every cursor advanced (204), else the per-cursor results (200). */
  async commit(subscriptionId: string, streamId: string, body: unknown): Promise<{ cursor: SubscriptionCursor; result: CommitOutcome }[] | undefined> {
    const started = this.#clock.monotonicMs();
    const sub = this.#subscription(subscriptionId);
    const items = this.#items(body, true) as SubscriptionCursor[];
    const local = this.#streams.get(streamId);
    if (local !== undefined && local.subscription !== subscriptionId) {
      throw problems.unprocessable(`Stream ${streamId} belongs to another subscription`);
    }
    if (local === undefined) {
      // What a stream was sent is known only to the process that served it. A stream of this node that
      // is not in memory (closed before a restart) cannot show what it was sent, and committing past it
      // would skip events nobody received: refuse; its uncommitted events go to the next stream.
      const session = this.#state().runtime(subscriptionId)?.session(streamId);
      if (session === undefined || session.node === this.#node) {
        throw problems.unprocessable(`Stream ${streamId} is not open on this node (closed before a restart of the node, or unknown): it cannot commit; what it did not commit is sent again to the next stream`);
      }
    }
    const cursors = items.map((c, i): CommittedCursor => {
      const where = `items[${i}]`;
      const rec = this.#eventTypeOf(sub, c.event_type, where);
      const offset = this.#decode(rec, c.partition, c.offset, where);
      const b = this.#cursors.bounds(rec, c.partition);
      if (offset > b.newest) throw problems.unprocessable(`${where}: offset "${c.offset}" does not exist in partition "${c.partition}"`);
      if (local !== undefined) {
        // A keep-alive's cursor (at or before the committed one) is harmless: it comes back as outdated.
        const sent = local.stream.sentUpTo(c) ?? -Infinity;
        const committed = this.#state().runtime(subscriptionId)?.committed.get(partitionKeyOf(c))?.offset ?? -1;
        if (offset > sent && offset > committed) {
          throw problems.unprocessable(`${where}: offset "${c.offset}" of partition "${c.partition}" of event type "${c.event_type}" was not sent on stream ${streamId}`);
        }
      }
      return { event_type: c.event_type, partition: c.partition, offset };
    });
    const r = await this.#propose({ op: 'cursor.commit', subscription: subscriptionId, session: streamId, atMs: this.#clock.nowMs(), cursors });
    if (!r.ok) {
      if (r.reason === 'not_found') throw problems.subscriptionNotFound(`Subscription with id "${subscriptionId}" does not exist`);
      throw problems.unprocessable(r.detail);
    }
    if (local?.closedAtMs === undefined) local?.stream.noteCommit();
    this.#observer?.committed(this.#clock.monotonicMs() - started);
    const outcomes = r.outcomes ?? [];
    if (outcomes.every((o) => o === 'committed')) return undefined;
    return items.map((c, i) => ({ cursor: c, result: outcomes[i]! }));
  }

  /** GET cursors: the committed cursor of every partition that has one. */
  committed(subscriptionId: string): SubscriptionCursor[] {
    this.#subscription(subscriptionId);
    const rt = this.#state().runtime(subscriptionId);
    if (rt === undefined) return [];
    const out: SubscriptionCursor[] = [];
    for (const slot of rt.slots) {
      const c = rt.committed.get(partitionKeyOf(slot));
      if (c === undefined) continue;
      const rec = this.#record(c.event_type);
      out.push({ event_type: c.event_type, partition: c.partition, offset: this.#cursors.formatCursor(rec, c.partition, c.offset as Offset), cursor_token: this.#newId() });
    }
    return out;
  }

  /**
   * PATCH cursors: sets the cursors and disconnects every stream of the subscription; answers once the
   * streams this node served have ended (at most the commit timeout). 409 while a reset runs here.
   */
  async reset(subscriptionId: string, body: unknown): Promise<void> {
    const sub = this.#subscription(subscriptionId);
    const items = this.#items(body, false);
    const cursors = items.map((c, i): CommittedCursor => {
      const where = `items[${i}]`;
      const rec = this.#eventTypeOf(sub, c.event_type, where);
      return { event_type: c.event_type, partition: c.partition, offset: this.#cursors.resolve(rec, c.partition, c.offset) };
    });
    const seen = new Set(cursors.map((c) => partitionKeyOf(c)));
    if (seen.size !== cursors.length) throw problems.unprocessable('A partition appears twice in items');
    if (this.#resetting.has(subscriptionId)) throw problems.conflict(`A cursor reset of subscription ${subscriptionId} is already in progress`);
    this.#resetting.add(subscriptionId);
    try {
      const r = await this.#propose({ op: 'cursor.reset', subscription: subscriptionId, cursors });
      if (!r.ok) {
        if (r.reason === 'not_found') throw problems.subscriptionNotFound(`Subscription with id "${subscriptionId}" does not exist`);
        throw problems.unprocessable(r.detail);
      }
      const running = [...this.#streams.values()].filter((s) => s.subscription === subscriptionId && s.closedAtMs === undefined);
      for (const s of running) s.stream.kick();
      await Promise.all(running.map((s) => s.ended));
      this.#log.info({ subscription: subscriptionId, cursors: cursors.length, streamsClosed: running.length }, 'subscription cursors reset');
    } finally {
      this.#resetting.delete(subscriptionId);
    }
  }

  #items(body: unknown, withToken: boolean): { event_type: string; partition: string; offset: string }[] {
    if (!isObject(body) || !Array.isArray(body['items'])) throw problems.unprocessable('The body must be an object with "items", an array of cursors');
    const items = body['items'] as unknown[];
    if (items.length === 0) throw problems.unprocessable('"items" must not be empty');
    items.forEach((c, i) => {
      const where = `items[${i}]`;
      if (!isObject(c)) throw problems.unprocessable(`${where} must be an object`);
      for (const f of withToken ? ['event_type', 'partition', 'offset', 'cursor_token'] : ['event_type', 'partition', 'offset']) {
        if (typeof c[f] !== 'string') throw problems.unprocessable(`${where}.${f} must be a string`);
      }
    });
    return items as { event_type: string; partition: string; offset: string }[];
  }

  #eventTypeOf(sub: Subscription, name: string, where: string): EventTypeRecord {
    if (!sub.event_types.includes(name)) throw problems.unprocessable(`${where}: event type "${name}" is not part of subscription ${sub.id}`);
    return this.#record(name);
  }

  /** The cursor rules of the cursor tools (cursors.ts), each failure named by its item. */
  #decode(rec: EventTypeRecord, partition: string, offset: string, where: string): number {
    try {
      return this.#cursors.decode(rec, partition, offset);
    } catch (err) {
      if (isProblem(err)) throw problems.unprocessable(`${where}: ${err.detail ?? err.title}`);
      throw err;
    }
  }

  // ------------------------------------------------------------------ stats

  stats(subscriptionId: string): { event_type: string; partitions: { partition: string; state: string; stream_id?: string; unconsumed_events?: number }[] }[] {
    const sub = this.#subscription(subscriptionId);
    const rt = this.#state().runtime(subscriptionId);
    return sub.event_types.map((name) => {
      const rec = this.#record(name);
      return {
        event_type: name,
        partitions: rec.storage.partitions.map((partition) => {
          const key: PartitionKey = { event_type: name, partition };
          const slot = rt?.slot(key);
          const state = slot?.session === undefined ? 'unassigned' : slot.releasingFrom !== undefined ? 'reassigning' : 'assigned';
          const out: { partition: string; state: string; stream_id?: string; unconsumed_events?: number } = { partition, state };
          if (slot?.session !== undefined) out.stream_id = slot.session;
          const committed = rt?.committed.get(partitionKeyOf(key));
          if (committed !== undefined) {
            const b = this.#cursors.bounds(rec, partition);
            out.unconsumed_events = Math.max(0, b.newest - Math.max(committed.offset, b.oldest - 1));
          }
          return out;
        }),
      };
    });
  }

  /** Waits for the streams of this node to end (the HTTP layer aborts them) and their sessions to close (shutdown). */
  async drain(): Promise<void> {
    this.#draining = true;
    const all = [...this.#streams.values()];
    await Promise.all(all.map((s) => s.ended));
    await Promise.all(all.map((s) => s.closing));
  }
}
