/**
 * Appends. A batch for a partition this node leads is proposed to its group and answered once it is
 * applied here, i.e. committed (durable on a majority; on one node, fsynced) — with the offsets apply
 * gave it. A batch for a partition led elsewhere is forwarded to its leader with the group's term (the
 * epoch) and a request id (the parts of one request for the same node in one call,
 * forward-grouper.ts); a "not leader" answer is retried on the new leader until the deadline, and a
 * retry reuses the request id, so a batch that did commit before the answer was lost is not appended
 * twice (the state machine de-duplicates, src/replication/partition-state.ts).
 */
import type { Offset } from '../core/offset.js';
import { assert } from '../core/assert.js';
import { nodeOfMember } from '../core/member-id.js';
import { PartitionSealedError, PartitionUnavailableError } from '../log/index.js';
import { PartitionEntryError } from '../log/partition-entry.js';
import { noNode, type NodeId } from '../raft/index.js';
import type { BatchCoalescer, Coalesced } from './batch-coalescer.js';
import { ForwardGrouper } from './forward-grouper.js';
import { ForwardRetries } from './forward-retries.js';
import type { PartitionReplica } from './partition-replica.js';
import { replicaKey, retryMs, type ReplicasContext } from './partition-replicas-context.js';
import type { AppendAnswer, ForwardedAppend, ReplicaAppend, ReplicaAppendResult } from './partition-replicas-types.js';
import type { PartitionRemoteReads } from './partition-remote-reads.js';
import { ProposalFailedError } from './raft-host/raft-group.js';
import { hintFirst } from './replica-peers.js';

export class PartitionAppends {
  readonly #c: ReplicasContext;
  readonly #remote: PartitionRemoteReads;
  /** Opens (or finds) the replica of a partition placed here (PartitionReplicas.ensure). */
  readonly #ensure: (topic: number, partition: number) => Promise<PartitionReplica | undefined>;
  /** The leader that last took a batch of a partition held elsewhere. */
  readonly #remoteLeaders = new Map<string, NodeId>();
  /** Parts that went round again, and why (logged per partition at most once a second). */
  readonly retries: ForwardRetries;

  constructor(c: ReplicasContext, remote: PartitionRemoteReads, ensure: (topic: number, partition: number) => Promise<PartitionReplica | undefined>) {
    this.#c = c;
    this.#remote = remote;
    this.#ensure = ensure;
    this.retries = new ForwardRetries(c.o.logger, () => c.o.clock.monotonicMs());
  }

  append(items: ReplicaAppend[]): Promise<ReplicaAppendResult[]> {
    this.retries.flush();
    const deadlineMs = this.#c.o.clock.monotonicMs() + this.#c.o.appendTimeoutMs;
    // One random id per publish request, told apart per item: an id only has to be unique among the
    // batches of one partition (that is where de-duplication looks), and a batch of 10 events touches
    // most partitions, so a fresh UUID per item was most of this path's random draws.
    const base = this.#c.o.random.uuid();
    // The parts this request forwards to one node at the same moment go in one call (forward-grouper.ts).
    const forward = this.#c.forwarder === undefined ? undefined : new ForwardGrouper(this.#c.forwarder);
    // One promise for the request, settled when the last item has its result (a countdown instead of
    // a promise per item and Promise.all over them).
    // Each item's callback is a method bound to its index, not an arrow made per item: V8 keeps a
    // closure's optimized code only while some closure of it lives, so that arrow was compiled again
    // after every full GC on every node (docs/benchmarks.md, "V8 on a warm cluster").
    const all = new AppendResults(items.length);
    for (let i = 0; i < items.length; i++) this.#appendLed(items[i]!, deadlineMs, '', i === 0 ? base : `${base}.${i}`, forward, all.doneAt(i));
    return all.promise;
  }

  /**
   * One item's append; `done` is called once with its result (a failure is a result). The common case
   * on a single node, and on the leader of a partition, takes no async frame and no promise: the batch
   * goes straight into the group's coalescer, whose callback maps its outcome; every other case, and a
   * proposal refused because leadership moved, goes through #appendOne exactly as before (the refused
   * one after the same pause as that loop's retry).
   */
  #appendLed(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined, done: (r: ReplicaAppendResult) => void): void {
    let coalescer: BatchCoalescer | undefined;
    let follower: PartitionReplica | undefined;
    try {
      const replica = this.#c.closed || this.#c.o.host.refusal !== undefined || this.#c.isRemote(item.topic, item.partition) ? undefined : this.#c.byKey.get(replicaKey(item.topic, item.partition));
      if (replica !== undefined && replica.group.isLeader()) coalescer = this.#coalescer(replica);
      else if (replica !== undefined && forward !== undefined && replica.group.leader !== noNode) follower = replica;
    } catch (err) {
      done({ ok: false, error: err as Error });
      return;
    }
    if (follower !== undefined) {
      this.#forwardLed(follower, item, deadlineMs, flowId, requestId, forward!, done);
      return;
    }
    if (coalescer === undefined) {
      this.#appendSlow(item, deadlineMs, flowId, requestId, forward, done);
      return;
    }
    // The one closure of the common case (the failure paths create theirs when they happen).
    const settled = (c: Coalesced | undefined, err?: unknown): void => {
      if (c !== undefined) return done(appliedResult(item, c));
      const failure = proposalFailure(item, err);
      if (failure !== undefined) return done({ ok: false, error: failure });
      this.#appendMoved(item, deadlineMs, flowId, requestId, forward, done);
    };
    const refused = coalescer.enqueue(requestId, item.events, deadlineMs, 0, settled);
    if (refused !== undefined) settled(undefined, refused);
  }

  /** A batch the leader's coalescer gave back because leadership moved: #appendOne after the retry pause. */
  #appendMoved(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined, done: (r: ReplicaAppendResult) => void): void {
    const failed = (error: unknown): void => done({ ok: false, error: error as Error });
    if (this.#c.o.clock.monotonicMs() >= deadlineMs) return failed(unavailable(item, 'no leader could take the batch in time'));
    const g = this.#c.byKey.get(replicaKey(item.topic, item.partition))?.group;
    if (g !== undefined) this.retries.note(g.id, item.topic, item.partition, 'moved', this.#c.o.self, 'leadership moved before the part was proposed');
    void this.#c.sleep(retryMs).then(() => this.#appendSlow(item, deadlineMs, flowId, requestId, forward, done), failed);
  }

  #appendSlow(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined, done: (r: ReplicaAppendResult) => void): void {
    void this.#appendOne(item, deadlineMs, flowId, requestId, forward).then(done, (error: unknown) => done({ ok: false, error: error as Error }));
  }

  /**
   * The first attempt of a part whose partition this node follows, with a leader known: sent to that
   * leader as #appendLoop's first round would, with a callback instead of an async frame and a promise
   * per part (two or three parts of a publish of 10 events on three nodes go this way). Any answer but
   * a final one goes on in #appendLoop after the retry pause, with what the answer said.
   */
  #forwardLed(replica: PartitionReplica, item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper, done: (r: ReplicaAppendResult) => void): void {
    const g = replica.group;
    const req: ForwardedAppend = { group: g.id, topic: item.topic, partition: item.partition, epoch: g.term, requestId, flowId, deadlineMs: Math.max(1, deadlineMs - this.#c.o.clock.monotonicMs()), events: item.events };
    // The node asked, named before the answer: by then this replica may know of another leader.
    const to = nodeOfMember(g.leader);
    forward.sendThen(to, req, (answer) => {
      if (answer.status === 'committed') return done({ ok: true, first: answer.firstOffset as Offset, last: answer.lastOffset as Offset });
      if (answer.status === 'sealed') return done({ ok: false, error: new PartitionSealedError(item.topic, item.partition, answer.timeline) });
      if (answer.status === 'refused') return done({ ok: false, error: unavailable(item, `leader ${g.leader}: ${answer.detail}`) });
      const inDoubt = answer.status === 'unavailable' ? `leader ${g.leader}: ${answer.detail}` : undefined;
      this.#noteAnswer(g.id, item, to, answer);
      if (this.#c.o.clock.monotonicMs() >= deadlineMs) return done({ ok: false, error: unavailable(item, stillUnplaced(inDoubt)) });
      const failed = (error: unknown): void => done({ ok: false, error: error as Error });
      void this.#c.sleep(retryMs).then(() => this.#appendLoop(replica, item, deadlineMs, flowId, requestId, forward, inDoubt)).then(done, failed);
    });
  }

  async #appendOne(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined): Promise<ReplicaAppendResult> {
    if (this.#c.closed) throw new PartitionUnavailableError(item.topic, item.partition, new Error('the node is shutting down'));
    if (this.#c.isRemote(item.topic, item.partition)) return this.#appendRemote(item, deadlineMs, flowId, requestId, forward);
    // An open replica without a round through ensure()'s promise (the case of every append but the first).
    const replica = this.#c.byKey.get(replicaKey(item.topic, item.partition)) ?? (await this.#ensure(item.topic, item.partition));
    if (replica === undefined) throw new PartitionUnavailableError(item.topic, item.partition, new Error('no placement for this partition'));
    // While the disk refuses writes, a new batch cannot be stored: say why at once, without waiting.
    if (this.#c.o.host.refusal !== undefined) throw this.#c.o.host.refusal;
    return this.#appendLoop(replica, item, deadlineMs, flowId, requestId, forward, undefined);
  }

  /**
   * Offers the part to the group's leader (this node's coalescer, or a forward) until it is taken or
   * the deadline passes. `inDoubt`: what an earlier attempt's unanswered forward said, if one was not
   * answered (the batch may be stored).
   */
  async #appendLoop(replica: PartitionReplica, item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined, inDoubt: string | undefined): Promise<ReplicaAppendResult> {
    for (;;) {
      const g = replica.group;
      if (g.isLeader()) {
        try {
          return appliedResult(item, await this.#coalescer(replica).add(requestId, item.events, deadlineMs));
        } catch (err) {
          // Dropped unproposed at its deadline: not stored by this attempt, but an earlier one that
          // went unanswered (a forward to a leader before this node led) may still be.
          if (inDoubt !== undefined && err instanceof ProposalFailedError && err.reason === 'expired') {
            throw unavailable(item, `the outcome is unknown, the batch may have been stored (${inDoubt}); resubmitting it may store it twice`);
          }
          const failure = proposalFailure(item, err);
          if (failure !== undefined) throw failure;
          this.retries.note(g.id, item.topic, item.partition, 'moved', this.#c.o.self, (err as Error).message);
        }
      } else if (g.leader !== noNode && forward !== undefined) {
        const to = nodeOfMember(g.leader);
        const answer = await forward.send(to, {
          group: g.id,
          topic: item.topic,
          partition: item.partition,
          epoch: g.term,
          requestId,
          flowId,
          deadlineMs: Math.max(1, deadlineMs - this.#c.o.clock.monotonicMs()),
          events: item.events,
        });
        if (answer.status === 'committed') return { ok: true, first: answer.firstOffset as Offset, last: answer.lastOffset as Offset };
        if (answer.status === 'sealed') throw new PartitionSealedError(item.topic, item.partition, answer.timeline);
        if (answer.status === 'refused') throw unavailable(item, `leader ${g.leader}: ${answer.detail}`);
        // Unavailable: the leader did not answer (a lost connection, its deadline); the batch may be
        // stored. Asking again with the same request id is safe (the state machine stores it once)
        // and turns an unknown outcome into a known one when the leader (or its successor) answers.
        if (answer.status === 'unavailable') inDoubt = `leader ${g.leader}: ${answer.detail}`;
        this.#noteAnswer(g.id, item, to, answer);
      } else {
        this.retries.note(g.id, item.topic, item.partition, 'noLeader', undefined, forward === undefined ? 'no forwarder' : 'no leader known');
      }
      if (this.#c.o.clock.monotonicMs() >= deadlineMs) throw unavailable(item, stillUnplaced(inDoubt));
      await this.#c.sleep(retryMs);
    }
  }

  /**
   * A batch for a partition this node holds no replica of: forwarded to its leader, found by asking
   * the replicas (each answers "not leader" with the leader it knows), with one request id for every
   * attempt so that a retry after a lost answer is stored once.
   */
  async #appendRemote(item: ReplicaAppend, deadlineMs: number, flowId: string, requestId: string, forward: ForwardGrouper | undefined): Promise<ReplicaAppendResult> {
    const where = this.#remote.targets(item.topic, item.partition);
    if (where === undefined || forward === undefined) throw unavailable(item, 'no placement for this partition');
    const key = replicaKey(item.topic, item.partition);
    let hint = this.#remoteLeaders.get(key) ?? noNode;
    let lastDetail = 'no replica answered';
    for (let round = 0; ; round++) {
      const order = hintFirst(where.targets, hint);
      for (const to of order) {
        const answer = await forward.send(to, { group: where.group, topic: item.topic, partition: item.partition, epoch: 0, requestId, flowId, deadlineMs: Math.max(1, deadlineMs - this.#c.o.clock.monotonicMs()), events: item.events });
        if (answer.status === 'committed') {
          this.#remoteLeaders.set(key, to);
          return { ok: true, first: answer.firstOffset as Offset, last: answer.lastOffset as Offset };
        }
        if (answer.status === 'sealed') throw new PartitionSealedError(item.topic, item.partition, answer.timeline);
        if (answer.status === 'refused') throw unavailable(item, `node ${to}: ${answer.detail}`);
        if (answer.status === 'notLeader' && answer.leaderHint !== noNode && answer.leaderHint !== to) {
          hint = answer.leaderHint;
          break;
        }
        lastDetail = answer.status === 'unavailable' ? `node ${to}: ${answer.detail}` : `node ${to} does not lead it`;
      }
      if (this.#c.o.clock.monotonicMs() >= deadlineMs) throw unavailable(item, `no leader could take the batch in time (${lastDetail})`);
      if (round > 0) await this.#c.sleep(retryMs);
    }
  }

  /** A forward's answer that sends the part round again (not leader, or no answer). */
  #noteAnswer(group: number, item: ReplicaAppend, to: NodeId, answer: AppendAnswer): void {
    if (answer.status === 'notLeader') this.retries.note(group, item.topic, item.partition, 'notLeader', to, `not leader (hint ${answer.leaderHint}, epoch ${answer.epoch})`);
    else if (answer.status === 'unavailable') this.retries.note(group, item.topic, item.partition, 'unavailable', to, answer.detail);
  }

  #coalescer(r: PartitionReplica): BatchCoalescer {
    const c = this.#c.coalescers.get(r.groupId);
    assert(c !== undefined, `group ${r.groupId} has no coalescer`);
    return c;
  }

  /**
   * A batch forwarded by another node to this one as the partition's leader. The common case, an open
   * replica, takes one promise: no async frame, no round through ensure()'s promise and no promise of
   * the coalescer's (every forwarded part of every publish on a cluster comes this way).
   */
  appendForwarded(req: ForwardedAppend): Promise<AppendAnswer> {
    const open = this.#c.byKey.get(replicaKey(req.topic, req.partition));
    if (open === undefined) return this.#appendForwardedOpening(req);
    return new Promise((resolve) => this.#appendForwardedTo(open, req, resolve));
  }

  /** appendForwarded for a replica that is not open here (yet): opened first, or not placed here. */
  async #appendForwardedOpening(req: ForwardedAppend): Promise<AppendAnswer> {
    const replica = await this.#ensure(req.topic, req.partition).catch(() => undefined);
    if (replica === undefined) return { status: 'notLeader', leaderHint: noNode, epoch: 0 };
    return new Promise((resolve) => this.#appendForwardedTo(replica, req, resolve));
  }

  #appendForwardedTo(replica: PartitionReplica, req: ForwardedAppend, answer: (a: AppendAnswer) => void): void {
    if (replica.groupId !== req.group) return answer({ status: 'notLeader', leaderHint: noNode, epoch: 0 });
    const g = replica.group;
    // Hints name nodes on the wire: the group's leader is a member id (core/member-id.ts).
    if (!g.isLeader()) return answer({ status: 'notLeader', leaderHint: nodeOfMember(g.leader), epoch: g.term });
    let refused: Error | undefined;
    try {
      refused = this.#coalescer(replica).enqueue(req.requestId, req.events, this.#c.o.clock.monotonicMs() + req.deadlineMs, req.epoch, answerCoalesced.bind(undefined, answer));
    } catch (err) {
      refused = err as Error;
    }
    if (refused !== undefined) answer(failedAnswer(refused));
  }
}

/** The answer to a forwarded batch its partition's leader applied. */
/**
 * A forwarded part's answer from its coalesced outcome. Bound per part instead of an arrow made per
 * part: V8 keeps a closure's optimized code only while some closure of it lives, so that arrow was
 * compiled again after every full GC (docs/benchmarks.md, "V8 on a warm cluster").
 */
function answerCoalesced(answer: (a: AppendAnswer) => void, applied: Coalesced | undefined, err?: unknown): void {
  answer(applied !== undefined ? committedAnswer(applied) : failedAnswer(err));
}

function committedAnswer(applied: Coalesced): AppendAnswer {
  const out = applied.outcome;
  if (out.kind === 'sealed') return { status: 'sealed', timeline: out.timeline };
  return { status: 'committed', epoch: applied.term, firstOffset: out.first, lastOffset: out.last };
}

/** The answer to a forwarded batch the leader could not take or apply. */
function failedAnswer(err: unknown): AppendAnswer {
  if (err instanceof PartitionEntryError) return { status: 'refused', detail: err.message };
  if (err instanceof ProposalFailedError && (err.reason === 'notLeader' || err.reason === 'overwritten')) return { status: 'notLeader', leaderHint: nodeOfMember(err.leader), epoch: err.term };
  return { status: 'unavailable', detail: (err as Error).message };
}

/** The result of a batch its partition's leader applied (a log sealed meanwhile took none of it). */
function appliedResult(item: ReplicaAppend, c: Coalesced): ReplicaAppendResult {
  const out = c.outcome;
  if (out.kind === 'sealed') return { ok: false, error: new PartitionSealedError(item.topic, item.partition, out.timeline) };
  return { ok: true, first: out.first as Offset, last: out.last as Offset };
}

/**
 * Why a batch the leader's coalescer failed fails for good; undefined when leadership moved (not
 * leader any more, or its entry overwritten) and it is to be offered again.
 */
function proposalFailure(item: ReplicaAppend, err: unknown): Error | undefined {
  if (!(err instanceof ProposalFailedError)) return err as Error;
  if (err.storageError !== undefined) return err.storageError;
  if (err.reason !== 'notLeader' && err.reason !== 'overwritten') return unavailable(item, err.message);
  return undefined;
}

/** Why a part no leader took by its deadline fails (`inDoubt`: an unanswered forward's detail). */
function stillUnplaced(inDoubt: string | undefined): string {
  return inDoubt === undefined ? 'no leader could take the batch in time' : `the outcome is unknown, the batch may have been stored (${inDoubt}); resubmitting it may store it twice`;
}

function unavailable(item: ReplicaAppend, why: string): PartitionUnavailableError {
  return new PartitionUnavailableError(item.topic, item.partition, new Error(why));
}

/** The results of one request's items, resolved when the last item has its result. */
class AppendResults {
  readonly promise: Promise<ReplicaAppendResult[]>;
  readonly #results: ReplicaAppendResult[];
  #left: number;
  #resolve!: (results: ReplicaAppendResult[]) => void;

  constructor(n: number) {
    this.#results = new Array<ReplicaAppendResult>(n);
    this.#left = n;
    this.promise = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    if (n === 0) this.#resolve(this.#results);
  }

  /** The callback of item i: called once with its result. */
  doneAt(i: number): (r: ReplicaAppendResult) => void {
    return this.#done.bind(this, i);
  }

  #done(i: number, r: ReplicaAppendResult): void {
    this.#results[i] = r;
    if (--this.#left === 0) this.#resolve(this.#results);
  }
}
