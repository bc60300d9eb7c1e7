/**
 * Subscriptions in the host simulation: the production subscription machinery on every node, and
 * subscription consumers and cursor-tool clients that use it as the HTTP handlers do.
 *
 * What is real: each node runs the production SubscriptionHub (streams, commits, cursor reads,
 * statistics; consumption/subscription-hub.ts) driving the production SubscriptionStream (assignment,
 * hand-over, flow control, commit timeout) over the node's PartitionReplicas as its PartitionReader
 * (local replicas, or remote reads through the transport's Read service), with the production
 * CursorResolver. Sessions, assignments and committed cursors are commands of the production metadata
 * state machine (metadata/subscription-runtime.ts) replicated by the production metadata group
 * (RaftMetadataGroup, group 0) that every simulated node runs: stream.open, cursor.commit,
 * stream.release, stream.close and stream.close_stale go through Raft like any metadata write,
 * forwarded by followers over the faulty network, and a restarted node closes the sessions of its
 * previous process (closeStaleSessions, retried as main.ts does). The event type and the subscription
 * are created through the metadata group too (the subscription by the production SubscriptionService).
 * The cursor tools are the functions the HTTP routes answer with (consumption/cursor-tools.ts).
 *
 * What is modelled: the simulated partitions are topic 7 of the Raft host, placed by the simulation
 * (host-moves.ts), not by the metadata; the event type record the metadata holds for the subscription's
 * event type is shown to the hub with its storage topic replaced by topic 7 (`stateOf`). HTTP itself
 * (routing, NDJSON over a socket, auth) is not run: a consumer calls the hub, and parses the lines its
 * stream writes. The session reaper (sessions of a node that stays down) does not run: nodes come back.
 *
 * The checks (this file; the events themselves are checked by the ledger, as for low-level consumers):
 *
 * - SubscriptionCursorBackwards: along the metadata log, a committed cursor never moves backwards.
 *   After every event each node's applied index and committed cursors are recorded; the cursor as a
 *   function of the applied index must not decrease (every node applies the same log).
 * - SubscriptionCommitLost: a commit acknowledged (committed or outdated) by a node that had applied
 *   index i leaves a cursor at least that far on every node that applied i or more.
 * - SubscriptionSkipped: a committed cursor never passes an event no subscription stream delivered
 *   (retention may remove events before anyone read them: then the ledger checks that nothing it had
 *   to keep lay between, RetainedLost); within a stream each partition's events continue its cursor
 *   exactly (keep-alives repeat it), and a stream starts no later than the first event not delivered yet.
 * - SubscriptionDuplicate: within one stream a partition's events never repeat or go back (a new
 *   stream may deliver again what was not committed: at-least-once).
 * - ConsumerReadLost, ConsumerPhantom, FailedBatchAppeared, Duplicate (partition-ledger.ts `consumed`):
 *   every event delivered is the event the partition's log holds at that offset.
 * - Liveness (in calm, host-cluster.ts): the subscription's committed cursors reach the newest offset
 *   of every partition on every node (every event delivered and committed).
 * - CursorToolUncommitted, CursorToolFailed: the cursor tools and the subscription's statistics, run on
 *   random nodes during chaos, never name an offset no replica applied (past the commit), their
 *   arithmetic matches the log (a distance is the number of events between two cursors, a shift lands
 *   where it says), and they fail only with a 422 (a cursor the node cannot place) or a 503.
 */
import pino from 'pino';
import { formatCursor, parseOffset } from '../core/offset.js';
import { isProblem } from '../core/problem.js';
import type { RaftMetadataGroup } from '../broker/metadata-group.js';
import type { PartitionReplicas } from '../broker/partition-replicas.js';
import { CursorResolver } from '../consumption/cursors.js';
import { cursorDistance, cursorLag, shiftCursor } from '../consumption/cursor-tools.js';
import { SubscriptionHub, type SubscriptionState } from '../consumption/subscription-hub.js';
import { partitionKeyOf } from '../metadata/assignment.js';
import { SubscriptionService } from '../subscriptions/subscription-service.js';
import type { NodeId } from '../raft/index.js';
import type { HostSimContext, SimPartition } from './host-context.js';
import { eventTypeFor } from './host-metadata.js';
import type { SimHostNode } from './host-node.js';
import { InvariantViolation } from './invariants.js';
import { Prng } from './prng.js';
import { SubscriptionLedger } from './subscription-ledger.js';
import { simLogger } from './sim-log.js';

const silent = pino({ level: 'silent' });
/** The event type the subscription reads: the simulated partitions, as the metadata knows them. */
export const subscriptionEventType = 'sim-sub';

export interface SubscriptionSimEnv {
  readonly seed: number;
  /** The simulated partitions' topic on every node's Raft host. */
  readonly topic: number;
  /** Whether nodes apply retention (events may be removed before a stream delivered them). */
  readonly retention: boolean;
  /** Whether `node`'s applied placement makes it a voter of `p`. */
  voterOn(node: NodeId, p: SimPartition): boolean;
}

/** Errors a stream or a call may end with that are not bugs (the client tries again). */
const retriable = new Set(['PartitionUnavailableError', 'OffsetExpiredError', 'OffsetNotYetAvailableError', 'TransportError', 'StoreClosedError']);

interface Stream {
  readonly node: SimHostNode;
  readonly inc: number;
  readonly ac: AbortController;
  id: string | undefined;
  /** Per partition: the cursor of the last batch with events this stream delivered. */
  readonly last: Map<number, number>;
}

interface SubConsumer {
  readonly id: number;
  stream: Stream | undefined;
  /** The stream whose cursors `pending` holds, and what it delivered and did not commit yet (per partition). */
  pendingOf: Stream | undefined;
  readonly pending: Map<number, number>;
  /** Cursors of acknowledged commits (a late or repeated commit sends one again). */
  readonly sent: number[][];
  /** A commit is due shortly. */
  commitSoon: boolean;
}

export class SubscriptionSim {
  readonly #ctx: HostSimContext;
  readonly #rng: Prng;
  readonly #env: SubscriptionSimEnv;
  readonly #consumers: SubConsumer[] = [];
  readonly #checks: SubscriptionLedger;
  /** Per partition: the newest offset any replica has applied (committed), over the whole run. */
  readonly #newestEver: number[];
  /** Per node: the metadata index applied when last recorded, and its incarnation. */
  readonly #seen = new Map<NodeId, { inc: number; applied: number }>();
  #subscription: string | undefined;
  /** The setup attempt in flight (its answer may never come: its node may crash). */
  #setupBusy: object | undefined;
  #stopped = false;

  constructor(ctx: HostSimContext, env: SubscriptionSimEnv, consumers: number) {
    this.#ctx = ctx;
    this.#env = env;
    // Its own stream of choices, so that the other parts' draws stay as they were.
    this.#rng = new Prng(env.seed * 43 + 17);
    for (let id = 0; id < consumers; id++) this.#consumers.push({ id, stream: undefined, pendingOf: undefined, pending: new Map(), sent: [], commitSoon: false });
    this.#checks = new SubscriptionLedger(ctx.partitions.length, ctx.ledger, env.retention);
    this.#newestEver = ctx.partitions.map(() => -1);
  }

  get enabled(): boolean {
    return this.#consumers.length > 0;
  }

  start(): void {
    if (!this.enabled) return;
    this.#ctx.at(this.#rng.between(20, 200), () => this.#setup());
    for (const c of this.#consumers) this.#ctx.at(this.#rng.between(100, 600), () => this.#connect(c));
    const tools = (): void => {
      if (this.#stopped) return;
      if (this.#ctx.chaos) this.#tools();
      this.#ctx.at(this.#rng.between(100, 400), tools);
    };
    this.#ctx.at(this.#rng.between(100, 400), tools);
  }

  stop(): void {
    this.#stopped = true;
    for (const c of this.#consumers) {
      const s = c.stream;
      c.stream = undefined;
      s?.ac.abort();
    }
  }

  // -------------------------------------------------------------------------------------------
  // The nodes' side

  /** The subscription state a node's hub sees: its metadata state, with the event type on the simulated topic. */
  stateOf(md: RaftMetadataGroup): SubscriptionState {
    const topic = this.#env.topic;
    return {
      subscription: (id) => md.state.subscription(id),
      eventType: (name) => {
        const rec = md.state.eventType(name);
        return rec === undefined || name !== subscriptionEventType ? rec : { ...rec, storage: { ...rec.storage, topic } };
      },
      runtime: (id) => md.state.runtime(id),
      runtimes: () => md.state.runtimes(),
    };
  }

  /** The production hub of one node process, on its virtual clock. */
  hubFor(node: SimHostNode, inc: number, md: RaftMetadataGroup, replicas: PartitionReplicas): SubscriptionHub {
    const ctx = this.#ctx;
    const ids = new Prng(this.#env.seed * 1009 + node.id * 101 + inc);
    return new SubscriptionHub({
      state: () => this.stateOf(md),
      propose: (cmd) => md.propose(cmd),
      reader: replicas,
      cursors: new CursorResolver(replicas),
      clock: node.clock,
      newId: () => ids.uuid(),
      node: node.id,
      incarnation: `n${node.id}.${inc}`,
      logger: simLogger(node.id, () => ctx.nowMs()),
      timer: (ms, fn) => {
        let live = true;
        // As setTimeout: at least 1 ms (a deadline due in 1e-13 ms would come again and again at one instant).
        node.after(Math.max(1, ms), () => live && fn(), inc);
        return () => (live = false);
      },
    });
  }

  // -------------------------------------------------------------------------------------------
  // Setup: the event type and the subscription, through the metadata group

  #setup(): void {
    const ctx = this.#ctx;
    if (this.#stopped || this.#subscription !== undefined || this.#setupBusy) return;
    const again = (): void => ctx.at(this.#rng.between(50, 300), () => this.#setup());
    const up = ctx.running().filter((n) => n.metadata !== undefined);
    if (up.length === 0) return again();
    const node = this.#rng.pick(up);
    const md = node.metadata!;
    const inc = node.incarnation;
    const attempt = {};
    this.#setupBusy = attempt;
    // A client gives up waiting after a while (the node may have crashed: no answer ever comes).
    ctx.at(2500, () => {
      if (this.#setupBusy !== attempt) return;
      this.#setupBusy = undefined;
      this.#setup();
    });
    const step = async (): Promise<string> => {
      if (md.state.eventType(subscriptionEventType) === undefined) {
        const r = await md.propose({ op: 'event_type.create', eventType: eventTypeFor(subscriptionEventType, 'sim', '2026-01-01T00:00:00.000Z'), partitionCount: ctx.partitions.length });
        if (!r.ok && r.reason !== 'exists') throw new Error(`event type not created: ${r.reason}`);
      }
      const service = new SubscriptionService({
        reader: {
          eventType: (name) => md.state.eventType(name),
          subscription: (id) => md.state.subscription(id),
          subscriptions: () => md.state.subscriptions(),
          subscriptionCount: () => md.state.subscriptionCount(),
          subscriptionsMax: () => md.state.limits.subscriptionsMax,
        },
        proposer: md,
        clock: node.clock,
        newId: () => this.#rng.uuid(),
        checkCursor: () => undefined,
        options: { partitionsMax: 100 },
      });
      const { subscription } = await service.create({ owning_application: 'sim', event_types: [subscriptionEventType], consumer_group: 'sim', read_from: 'begin' });
      return subscription.id;
    };
    step().then(
      (id) => {
        if (this.#setupBusy !== attempt) return;
        this.#setupBusy = undefined;
        if (node.incarnation !== inc) return again();
        this.#subscription = id;
        ctx.log(`subscription ${id} created via n${node.id}`);
      },
      (err: unknown) => {
        if (this.#setupBusy !== attempt) return;
        this.#setupBusy = undefined;
        if (node.incarnation === inc && !isProblem(err) && !(err instanceof Error && err.message.startsWith('event type not created'))) return ctx.fail(err);
        ctx.log(`subscription setup via n${node.id} failed: ${err instanceof Error ? err.message : String(err)}`);
        again();
      },
    );
  }

  // -------------------------------------------------------------------------------------------
  // Consumers

  /** The node crashed: streams it served end with it; their consumers may commit elsewhere, and connect again elsewhere. */
  nodeCrashed(node: SimHostNode): void {
    for (const c of this.#consumers) {
      if (c.stream?.node !== node) continue;
      // The process is gone: no code of it runs any more (the stream is not aborted, it just stops).
      c.stream = undefined;
      this.#ctx.log(`s${c.id}: stream on n${node.id} lost (node crashed)`);
      if (c.pending.size > 0 && this.#rng.chance(0.5)) {
        this.#ctx.at(this.#rng.between(5, 300), () => this.#commit(c, c.pendingOf!, true));
      }
      this.#later(c);
    }
  }

  #later(c: SubConsumer, lo = 50, hi = 400): void {
    if (!this.#stopped) this.#ctx.at(this.#rng.between(lo, hi), () => this.#connect(c));
  }

  #connect(c: SubConsumer): void {
    const ctx = this.#ctx;
    const r = this.#rng;
    if (this.#stopped || c.stream !== undefined) return;
    const sub = this.#subscription;
    const up = ctx.running().filter((n) => n.hub !== undefined && n.replicas !== undefined);
    if (sub === undefined || up.length === 0) return this.#later(c);
    // Often a node that holds no voter of some partition (its reads of that partition are remote).
    const remote = up.filter((n) => ctx.partitions.some((p) => !this.#env.voterOn(n.id, p)));
    const node = r.pick(remote.length > 0 && r.chance(0.7) ? remote : up);
    const hub = node.hub!;
    const stream: Stream = { node, inc: node.incarnation, ac: new AbortController(), id: undefined, last: new Map() };
    c.stream = stream;
    // A window of one event sends one event per commit round trip (a metadata write, and on a node
    // holding no replica two remote reads): 20 to 35 virtual ms, so a backlog of a few hundred events
    // takes longer than the calm's liveness bound (seed 1126: the subscription was created at the end
    // of chaos, and its one consumer read the whole log in calm with a window of one). In calm, as it
    // commits at once, a consumer asks for a window the bound allows; streams opened in chaos keep
    // theirs until the consumer leaves (0.5 to 3 s).
    const query = {
      batch_limit: String(r.pick([1, 1, 4, 16])),
      batch_flush_timeout: '1',
      max_uncommitted_events: String(r.pick(ctx.chaos ? [1, 10, 50, 100] : [10, 50, 100])),
      commit_timeout: String(r.pick([1, 2, 3])),
    };
    const who = `s${c.id} via n${node.id}`;
    const current = () => c.stream === stream && node.incarnation === stream.inc;
    hub.open(sub, query).then(
      (opened) => {
        if (!current()) return;
        stream.id = opened.id;
        this.#ctx.stats.subStreams++;
        ctx.log(`${who}: stream ${opened.id} opened ${JSON.stringify(query)}`);
        const sink = {
          write: (line: Buffer): boolean => {
            if (!current()) return true;
            try {
              this.#received(c, stream, line.toString());
            } catch (err) {
              ctx.fail(err);
            }
            return true;
          },
          drain: () => Promise.resolve(),
        };
        opened.run(sink, stream.ac.signal).then(
          (end) => {
            if (!current()) return;
            c.stream = undefined;
            ctx.log(`${who}: stream ${opened.id} ended: ${end}`);
            this.#later(c);
          },
          (err: unknown) => {
            if (!current()) return;
            if (!this.#expected(err)) return ctx.fail(this.#asFailure('SubscriptionStreamFailed', who, err));
            c.stream = undefined;
            this.#ctx.stats.subStreamErrors++;
            ctx.log(`${who}: stream ${opened.id} failed: ${(err as Error).message}`);
            this.#later(c);
          },
        );
        // Now and then the consumer leaves (committing what it has, or not) and resumes elsewhere.
        ctx.at(r.between(500, 3000), () => {
          if (c.stream !== stream) return;
          if (r.chance(0.5)) this.#commit(c, stream, false);
          c.stream = undefined;
          stream.ac.abort();
          this.#ctx.stats.subResumes++;
          ctx.log(`${who}: leaves`);
          this.#later(c, 1, 100);
        });
      },
      (err: unknown) => {
        if (!current()) return;
        c.stream = undefined;
        if (!this.#expected(err)) return ctx.fail(this.#asFailure('SubscriptionStreamFailed', who, err));
        ctx.log(`${who}: open refused: ${(err as Error).message}`);
        this.#later(c);
      },
    );
  }

  #expected(err: unknown): boolean {
    return isProblem(err) || (err instanceof Error && retriable.has(err.name));
  }

  #asFailure(check: string, who: string, err: unknown): unknown {
    if (err instanceof InvariantViolation || (err instanceof Error && err.name === 'InvariantError')) return err;
    return new InvariantViolation(check, `${who}: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  }

  /** A line of a stream: `{"cursor":{...},"events":[...],"info":{...}}` whose events are the stored payloads. */
  #received(c: SubConsumer, stream: Stream, text: string): void {
    const head = '{"cursor":';
    const end = text.indexOf('}');
    const cursor = JSON.parse(text.slice(head.length, end + 1)) as { partition: string; offset: string; event_type: string };
    const pos = parseOffset(cursor.offset);
    if (pos === undefined || cursor.event_type !== subscriptionEventType) throw new InvariantViolation('SubscriptionSkipped', `s${c.id}: a line with cursor ${JSON.stringify(cursor)}`);
    const at = pos.kind === 'begin' ? -1 : pos.offset;
    const p = Number(cursor.partition);
    const open = text.indexOf(',"events":[', end);
    const events = open < 0 ? [] : text.slice(open + ',"events":['.length, text.indexOf(']', open)).split(',');
    const who = `s${c.id} stream ${stream.id} on n${stream.node.id} p${p}`;
    const last = stream.last.get(p);
    if (events.length === 0) {
      // A keep-alive repeats the cursor of the last line; before the first, or when the partition came
      // back to the stream after a rebalance (another stream may have committed further meanwhile), it
      // names where the stream (re)starts, as a batch that does not continue the last one does.
      if (last === undefined || at !== last) {
        this.#starts(who, stream.node, p, at);
        stream.last.set(p, at);
      }
      // A stream that only sends keep-alives may be paused (max_uncommitted_events): commit what it has.
      if (c.pendingOf === stream && c.pending.size > 0 && !c.commitSoon) this.#commitSoon(c, stream);
      return;
    }
    const first = at - events.length + 1;
    // A batch continues the last one, or the stream (re)starts the partition (its first batch, or the
    // partition came back to it after a rebalance).
    if (last === undefined || first !== last + 1) this.#starts(who, stream.node, p, first - 1);
    const remote = !this.#env.voterOn(stream.node.id, this.#ctx.partitions[p]!);
    events.forEach((payload, k) => {
      const offset = first + k;
      this.#ctx.ledger.consumed(`s${c.id}`, p, offset, payload);
      this.#checks.delivered(p, offset);
      this.#ctx.stats.subEvents++;
      if (remote) this.#ctx.stats.subRemoteEvents++;
    });
    stream.last.set(p, at);
    this.#ctx.log(`${who}: ${first}..${at}`);
    // What it received is committed: soon, late, or with a later batch.
    if (c.pendingOf !== stream) {
      c.pendingOf = stream;
      c.pending.clear();
    }
    c.pending.set(p, at);
    const r = this.#rng;
    const x = r.next();
    if (x < 0.6 || !this.#ctx.chaos) {
      if (!c.commitSoon) this.#commitSoon(c, stream);
    } else if (x < 0.85) this.#ctx.at(r.between(300, 2000), () => this.#commit(c, stream, false));
  }

  #commitSoon(c: SubConsumer, stream: Stream): void {
    c.commitSoon = true;
    // In calm the client commits at once (its backlog must drain within the liveness bound).
    this.#ctx.at(this.#ctx.chaos ? this.#rng.between(5, 150) : this.#rng.between(1, 10), () => {
      c.commitSoon = false;
      this.#commit(c, stream, false);
    });
  }

  /** Where a stream (re)starts partition `p` (SubscriptionLedger.starts), with what its node knew. */
  #starts(who: string, node: SimHostNode, p: number, after: number): void {
    this.#checks.starts(who, p, after, this.#newestEver[p]!, () => {
      const b = node.replicas?.bounds(this.#env.topic, p);
      return `; the node's bounds ${b?.oldest}..${b?.newest}`;
    });
  }

  /** The running nodes' applied metadata index and committed cursor of `p`. */
  #holders(p: number): { node: string; applied: number; cursor: number | undefined }[] {
    const sub = this.#subscription;
    const out: { node: string; applied: number; cursor: number | undefined }[] = [];
    for (const n of this.#ctx.running()) {
      const md = n.metadata;
      if (md === undefined || sub === undefined) continue;
      out.push({ node: `n${n.id}`, applied: md.raftGroup.applied, cursor: md.state.runtime(sub)?.committed.get(keyOf(p))?.offset });
    }
    return out;
  }

  /** Commits what the stream delivered and not committed yet, through its node or another, sometimes with an older cursor again. */
  #commit(c: SubConsumer, stream: Stream, afterCrash: boolean): void {
    const ctx = this.#ctx;
    const r = this.#rng;
    const sub = this.#subscription;
    if (sub === undefined || stream.id === undefined || c.pendingOf !== stream || c.pending.size === 0) return;
    const up = ctx.running().filter((n) => n.hub !== undefined);
    const here = stream.node.running && stream.node.incarnation === stream.inc && stream.node.hub !== undefined;
    const elsewhere = up.filter((n) => n !== stream.node);
    const node = here && (elsewhere.length === 0 || r.chance(0.8)) ? stream.node : elsewhere.length > 0 ? r.pick(elsewhere) : undefined;
    if (node === undefined) return;
    const cursors: number[][] = [...c.pending].map(([p, o]) => [p, o]);
    // A late or repeated commit: a cursor committed before goes again (it must come back outdated), of
    // a partition this commit carries a new cursor of: the repeat is allowed whenever that cursor is.
    // One of a partition the stream does not own (committed on an earlier stream of this consumer, or
    // moved away since) is refused with the whole commit (422), its own cursors with it: the stream
    // then waits for its commit timeout, and a few of those in one calm outlast the liveness bound
    // (seeds 437 and 993).
    const own = c.sent.filter(([p]) => c.pending.has(p!));
    const late = own.length > 0 && r.chance(0.15);
    if (late) cursors.push(r.pick(own));
    c.pending.clear();
    const items = cursors.map(([p, o]) => ({ event_type: subscriptionEventType, partition: String(p), offset: formatCursor(1, o as never), cursor_token: 't' }));
    const inc = node.incarnation;
    const who = `s${c.id} commit via n${node.id} for ${stream.id}`;
    this.#ctx.stats.subCommits++;
    if (late) this.#ctx.stats.subLateCommits++;
    if (node !== stream.node) this.#ctx.stats.subCommitsElsewhere++;
    if (afterCrash) this.#ctx.stats.subCommitsAfterCrash++;
    ctx.log(`${who}: ${cursors.map(([p, o]) => `p${p}@${o}`).join(' ')}`);
    node.hub!.commit(sub, stream.id, { items }).then(
      () => {
        // Only an acknowledged cursor is one committed before: a refused one (this stream unknown on
        // that node, say) may never have been, and sent again on a stream that did not send it, it
        // would be refused with the whole commit (seed 298: the stream, paused at
        // max_uncommitted_events, then waited for its commit timeout in calm).
        for (const cur of cursors) c.sent.push(cur);
        if (c.sent.length > 20) c.sent.splice(0, c.sent.length - 20);
        if (node.incarnation !== inc || node.metadata === undefined) return;
        this.#ctx.stats.subCommitsAcked++;
        // Committed or outdated: either way the cursor is at least there on every node that applied as far.
        const index = node.metadata.raftGroup.applied;
        ctx.log(`${who}: acknowledged at metadata index ${index}`);
        try {
          for (const [p, o] of cursors) this.#checks.acknowledged(p!, index, o!, who, this.#holders(p!));
        } catch (err) {
          ctx.fail(err);
        }
      },
      (err: unknown) => {
        if (node.incarnation !== inc) return;
        if (!this.#expected(err)) return ctx.fail(this.#asFailure('SubscriptionCommitFailed', who, err));
        this.#ctx.stats.subCommitsRefused++;
        ctx.log(`${who}: refused: ${(err as Error).message}`);
      },
    );
  }

  // -------------------------------------------------------------------------------------------
  // Cursor tools during chaos

  #tools(): void {
    const ctx = this.#ctx;
    const r = this.#rng;
    const up = ctx.running().filter((n) => n.replicas !== undefined && n.metadata !== undefined && n.hub !== undefined);
    if (up.length === 0) return;
    const node = r.pick(up);
    const md = node.metadata!;
    const rec = this.stateOf(md).eventType(subscriptionEventType);
    if (rec === undefined) return;
    const cursors = new CursorResolver(node.replicas!);
    const p = r.int(ctx.partitions.length);
    const part = String(p);
    const ever = this.#newestEver[p]!;
    const pickOffset = (): number => Math.min(ever + 2, Math.max(-1, ever - r.int(8) + r.int(3)));
    const wire = (o: number) => ({ partition: part, offset: formatCursor(1, o as never) });
    const who = `n${node.id} p${p}`;
    const beyond = (what: string, o: number): void => {
      // Read again now: an apply in this very event counts as committed.
      this.observe();
      if (o > this.#newestEver[p]!) throw new InvariantViolation('CursorToolUncommitted', `${who}: ${what} names offset ${o}, past the newest offset any replica applied (${this.#newestEver[p]})`);
    };
    // A cursor -1 goes as BEGIN, which means before the oldest event the node holds.
    const bounds = node.replicas!.bounds(this.#env.topic, p);
    const at = (o: number): number => (o < 0 ? bounds.oldest - 1 : o);
    const kind = r.pick(['partitions', 'distance', 'lag', 'shift', 'stats'] as const);
    this.#ctx.stats.cursorTools++;
    try {
      switch (kind) {
        case 'partitions': {
          const v = cursors.partitionView(rec, part);
          beyond('the partition view', offsetOf(v.newest_available_offset));
          break;
        }
        case 'distance': {
          const a = pickOffset();
          const b = pickOffset();
          const d = cursorDistance(cursors, rec, wire(a), wire(b), who);
          beyond('a distance', Math.max(at(a), at(b)));
          if (d !== at(b) - at(a)) throw new InvariantViolation('CursorToolFailed', `${who}: distance from ${a} to ${b} is ${d}`);
          break;
        }
        case 'lag': {
          const a = pickOffset();
          const v = cursorLag(cursors, rec, wire(a));
          const newest = offsetOf(v.newest_available_offset);
          beyond('a lag', Math.max(at(a), newest));
          if (v.unconsumed_events !== newest - at(a)) throw new InvariantViolation('CursorToolFailed', `${who}: lag of ${a} is ${v.unconsumed_events} with newest ${newest}`);
          break;
        }
        case 'shift': {
          const a = pickOffset();
          const shift = r.between(-4, 4);
          const to = offsetOf(shiftCursor(cursors, rec, wire(a), shift, who).offset);
          beyond(`a shift of ${a} by ${shift}`, Math.max(at(a), to));
          if (to !== Math.max(-1, at(a) + shift)) throw new InvariantViolation('CursorToolFailed', `${who}: ${a} shifted by ${shift} is ${to}`);
          break;
        }
        case 'stats': {
          if (this.#subscription === undefined) break;
          for (const et of node.hub!.stats(this.#subscription)) {
            for (const s of et.partitions) {
              if (s.unconsumed_events !== undefined && s.unconsumed_events < 0) throw new InvariantViolation('CursorToolFailed', `${who}: ${s.partition} has ${s.unconsumed_events} unconsumed events`);
            }
          }
          break;
        }
      }
      ctx.log(`${who}: cursor tool ${kind} answered`);
    } catch (err) {
      if (err instanceof InvariantViolation) throw err;
      // 404: the statistics of a subscription this node has not applied yet (its metadata copy lags).
      if (isProblem(err) && (err.status === 422 || err.status === 503 || (kind === 'stats' && err.status === 404))) {
        this.#ctx.stats.cursorToolsRefused++;
        ctx.log(`${who}: cursor tool ${kind} refused: ${err.detail ?? err.title}`);
        return;
      }
      throw this.#asFailure('CursorToolFailed', `${who} ${kind}`, err);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Checks after every event

  /** A node applied a metadata command: the committed cursors it now holds are places a stream may start. */
  applied(md: RaftMetadataGroup): void {
    const sub = this.#subscription;
    const rt = sub === undefined ? undefined : md.state.runtime(sub);
    if (rt === undefined) return;
    for (const p of this.#ctx.partitions) {
      const c = rt.committed.get(keyOf(p.partition))?.offset;
      if (c !== undefined) this.#checks.committedValue(p.index, c);
    }
  }

  /** Records what every node's metadata and replicas hold now, and checks the cursors against it. */
  observe(): void {
    const ctx = this.#ctx;
    for (const n of ctx.running()) {
      for (const p of ctx.partitions) {
        const b = n.replicas?.replica(this.#env.topic, p.partition)?.bounds();
        if (b !== undefined && b.newest > this.#newestEver[p.index]!) this.#newestEver[p.index] = b.newest;
      }
    }
    const sub = this.#subscription;
    if (sub === undefined) return;
    for (const n of ctx.running()) {
      const md = n.metadata;
      if (md === undefined) continue;
      const applied = md.raftGroup.applied;
      const seen = this.#seen.get(n.id);
      if (seen !== undefined && seen.inc === n.incarnation && seen.applied === applied) continue;
      this.#seen.set(n.id, { inc: n.incarnation, applied });
      const rt = md.state.runtime(sub);
      if (rt === undefined) continue;
      for (const p of ctx.partitions) {
        const c = rt.committed.get(keyOf(p.partition))?.offset;
        if (c !== undefined) this.#checks.observed(`n${n.id}`, p.index, applied, c, this.#newestEver[p.index]!);
      }
    }
  }

  /** In calm: every node's committed cursors are at the newest offset of every partition. */
  caughtUp(newest: (p: SimPartition) => number): boolean {
    const sub = this.#subscription;
    if (!this.enabled) return true;
    if (sub === undefined) return false;
    return this.#ctx.running().every((n) => {
      const rt = n.metadata?.state.runtime(sub);
      return rt !== undefined && this.#ctx.partitions.every((p) => (rt.committed.get(keyOf(p.partition))?.offset ?? -2) >= newest(p));
    });
  }

  describe(): string {
    const sub = this.#subscription;
    if (sub === undefined) return 'no subscription yet';
    const md = this.#ctx.running().find((n) => n.metadata !== undefined)?.metadata;
    const rt = md?.state.runtime(sub);
    const cursors = this.#ctx.partitions.map((p) => `p${p.index}@${rt?.committed.get(keyOf(p.partition))?.offset ?? '-'}`).join(' ');
    const slots = rt?.slots.map((s) => `${s.partition}:${s.session?.slice(0, 8) ?? '-'}${s.releasingFrom === undefined ? '' : `<${s.releasingFrom.slice(0, 8)}`}`).join(' ') ?? '-';
    const sessions = rt?.sessions.map((s) => `${s.id.slice(0, 8)}@n${s.node}.${s.incarnation}`).join(' ') ?? '-';
    const consumers = this.#consumers.map((c) => `s${c.id}${c.stream === undefined ? ' (not connected)' : ` on n${c.stream.node.id} ${c.stream.id?.slice(0, 8) ?? '(opening)'}`}`).join(' ');
    return `subscription cursors ${cursors}; slots ${slots}; sessions ${sessions}; ${consumers}; delivered up to ${this.#ctx.partitions.map((p) => `p${p.index}@${this.#checks.coveredTo(p.index)}`).join(' ')}`;
  }
}

function keyOf(partition: number): string {
  return partitionKeyOf({ event_type: subscriptionEventType, partition: String(partition) });
}

function offsetOf(wire: string): number {
  const pos = parseOffset(wire);
  if (pos === undefined) throw new InvariantViolation('CursorToolFailed', `an answer names offset ${wire}`);
  return pos.kind === 'begin' ? -1 : pos.offset;
}
