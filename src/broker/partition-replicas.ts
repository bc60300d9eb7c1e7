/**
 * The partitions this node replicates: one Raft group per partition on the node's Raft host, and the
 * partition-log surface the storage router uses (append, read, bounds, wait, base, retention, drop).
 * A single node runs exactly this, with one-member groups (DESIGN.md, "One code path").
 *
 * Appends. A batch for a partition this node leads is proposed to its group and answered once it is
 * applied here, i.e. committed (durable on a majority; on one node, fsynced) — with the offsets apply
 * gave it. A batch for a partition led elsewhere is forwarded to its leader with the group's term (the
 * epoch) and a request id; a "not leader" answer is retried on the new leader until the deadline, and
 * a retry reuses the request id, so a batch that did commit before the answer was lost is not
 * appended twice (the state machine de-duplicates, src/replication/partition-state.ts).
 *
 * Reads are local: every node holding a replica reads it up to what it applied (committed events
 * only). Data written before partition replication existed (the former partition store) stays
 * readable below the group's first offset (`legacy`).
 */
import type { Logger } from 'pino';
import { assert } from '../core/assert.js';
import type { Offset } from '../core/offset.js';
import type { Clock, Random } from '../core/ports.js';
import { OffsetExpiredError, PartitionUnavailableError, type KvBatch, type OrderedKv, type PartitionStore } from '../log/index.js';
import { encodeBaseEntry, encodeBatchEntry } from '../log/partition-entry.js';
import type { NodeId, Term } from '../raft/index.js';
import { applyConfChangeToState, decodeConfChange, noNode } from '../raft/index.js';
import { PartitionReplica, decodeImage, encodeImage, prefixApplied, prefixOffsetIndex, type ReplicaOutcome, type StoredEventView } from './partition-replica.js';
import { RaftLogStore } from './raft-log-store.js';
import { ProposalFailedError, RaftGroup } from './raft-host/raft-group.js';
import type { RaftNodeHost } from './raft-host/node-host.js';
import type { GroupHandler } from '../transport/index.js';

/** Where a partition's group lives: its id and its replicas (the first is the preferred leader). */
export interface GroupPlacement {
  readonly group: number;
  readonly replicas: readonly NodeId[];
}

export type PlacementLookup = (topic: number, partition: number) => GroupPlacement | undefined;

/** A publish forwarded to a partition's leader on another node. */
export interface ForwardedAppend {
  readonly group: number;
  readonly topic: number;
  readonly partition: number;
  readonly epoch: Term;
  readonly requestId: string;
  readonly flowId: string;
  readonly deadlineMs: number;
  readonly events: readonly Buffer[];
}

export type AppendAnswer =
  | { readonly status: 'committed'; readonly epoch: Term; readonly firstOffset: number; readonly lastOffset: number }
  | { readonly status: 'notLeader'; readonly leaderHint: NodeId; readonly epoch: Term }
  | { readonly status: 'unavailable'; readonly detail: string }
  | { readonly status: 'refused'; readonly detail: string };

/** How a node reaches a partition leader elsewhere (the gRPC transport). */
export interface AppendForwarder {
  forwardAppend(to: NodeId, req: ForwardedAppend): Promise<AppendAnswer>;
}

export interface ReplicaAppend {
  topic: number;
  partition: number;
  events: Buffer[];
}

export type ReplicaAppendResult = { ok: true; first: Offset; last: Offset } | { ok: false; error: Error };

/** [0x16][group u32] -> [topic u32][partition u32]: the groups this node holds, found again at start. */
const prefixGroupDirectory = 0x16;
/** Entries kept in memory behind the applied index; older ones are read from the KV. */
const memoryEntriesMax = 1024;
const memoryEntriesKeep = 256;
const retryMs = 25;

function directoryKey(group: number): Buffer {
  const k = Buffer.allocUnsafe(5);
  k[0] = prefixGroupDirectory;
  k.writeUInt32BE(group, 1);
  return k;
}

export interface PartitionReplicasOptions {
  readonly self: NodeId;
  readonly kv: OrderedKv;
  readonly host: RaftNodeHost;
  readonly placement: PlacementLookup;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  /** How long an append may wait for its partition's group (then it fails, retriable). */
  readonly appendTimeoutMs: number;
  /** The store of the version before partition replication, read below each group's first offset. */
  readonly legacy?: PartitionStore;
  /** Waits between retries (defaults to a timer; the simulator passes its virtual one). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Where the transport finds each group's handler (absent on a single node: no transport). */
  readonly groups?: { register(group: number, handler: GroupHandler): void; unregister(group: number): void };
}

export class PartitionReplicas {
  readonly #o: PartitionReplicasOptions;
  readonly #byKey = new Map<string, PartitionReplica>();
  readonly #opening = new Map<string, Promise<PartitionReplica>>();
  #forwarder: AppendForwarder | undefined;
  #closed = false;

  constructor(o: PartitionReplicasOptions) {
    this.#o = o;
  }

  setForwarder(f: AppendForwarder): void {
    this.#forwarder = f;
  }

  static key(topic: number, partition: number): string {
    return `${topic}:${partition}`;
  }

  /** The replica of a partition on this node, opened (or created from its placement) on first use. */
  replica(topic: number, partition: number): PartitionReplica | undefined {
    return this.#byKey.get(PartitionReplicas.key(topic, partition));
  }

  async ensure(topic: number, partition: number): Promise<PartitionReplica | undefined> {
    const key = PartitionReplicas.key(topic, partition);
    const have = this.#byKey.get(key);
    if (have !== undefined) return have;
    const placement = this.#o.placement(topic, partition);
    if (placement === undefined || !placement.replicas.includes(this.#o.self)) return undefined;
    let p = this.#opening.get(key);
    if (p === undefined) {
      p = this.#open(topic, partition, placement).finally(() => this.#opening.delete(key));
      this.#opening.set(key, p);
    }
    return p;
  }

  async #open(topic: number, partition: number, placement: GroupPlacement): Promise<PartitionReplica> {
    const o = this.#o;
    const log = o.logger.child({ topic, partition, group: placement.group });
    const store = await RaftLogStore.open(o.kv, placement.group, { keepCompacted: true });
    const fresh = store.isEmpty;
    if (fresh) {
      await store.bootstrap([...placement.replicas].sort((a, b) => a - b));
      await o.kv.write((b) => {
        const v = Buffer.allocUnsafe(8);
        v.writeUInt32BE(topic, 0);
        v.writeUInt32BE(partition, 4);
        b.put(directoryKey(placement.group), v);
      }, { durable: false });
    }
    const replica = await PartitionReplica.load(topic, partition, placement.group, o.kv, o.host, log);
    const storage = store.storage;
    const snap = storage.snapshot();
    if (snap.metadata.index > replica.applied) {
      // The applied rows were lost with an unsynced write but a snapshot is newer: start from it.
      replica.restoreImage(decodeImage(snap.data));
    }
    // Entries known committed (the founding configuration; what was committed before a restart) are
    // applied now, so the group starts as a member of its configuration and a group of one can elect
    // itself at once instead of after an election timeout.
    const hs = storage.hardState();
    // Applied entries were committed even if the stored commit index (written without fsync) lags.
    if (hs.commit < replica.applied) storage.setHardState({ ...hs, commit: replica.applied });
    const commit = Math.min(storage.hardState().commit, storage.lastIndex());
    let conf = storage.confStateAt(replica.applied);
    for (const e of commit > replica.applied ? storage.entries(replica.applied + 1, commit + 1, Number.MAX_SAFE_INTEGER) : []) {
      if (e.type === 'confChange') conf = applyConfChangeToState(conf, decodeConfChange(e.data));
      replica.replay(e);
    }
    const applied = replica.applied;
    const group = new RaftGroup<ReplicaOutcome>({
      id: placement.group,
      self: o.self,
      store,
      conf,
      applied,
      electionTicks: o.electionTicks,
      heartbeatTicks: o.heartbeatTicks,
      random: o.random,
    });
    replica.attach(group);
    const previousOnApplied = group.onApplied;
    group.onApplied = () => {
      previousOnApplied?.();
      this.#maybeCompact(replica);
    };
    group.onLeaderChange = (lead, term) => log.info({ leader: lead === noNode ? null : lead, term }, 'partition leader changed');
    this.#byKey.set(PartitionReplicas.key(topic, partition), replica);
    o.host.add(group as RaftGroup<unknown>);
    o.groups?.register(placement.group, this.#handler(replica));
    // A one-member group elects itself at once; a new group's preferred leader campaigns at once, so
    // a fresh partition does not wait an election timeout for its first leader.
    if (group.isSingleton() || (fresh && placement.replicas[0] === o.self)) {
      group.raw.campaign();
      o.host.kick(placement.group);
    }
    if (o.legacy !== undefined && fresh) await this.#continueLegacy(replica);
    log.debug({ applied, fresh }, 'partition replica opened');
    return replica;
  }

  /** A partition with data in the former store continues its offsets after it. */
  async #continueLegacy(replica: PartitionReplica): Promise<void> {
    const b = this.#o.legacy!.bounds(replica.topic, replica.partition);
    if (b.newest < 0 && b.oldest === 0) return;
    const base = b.newest + 1;
    await this.#proposeUntil(replica, encodeBaseEntry(base), this.#o.clock.monotonicMs() + this.#o.appendTimeoutMs);
    this.#o.logger.info({ topic: replica.topic, partition: replica.partition, base }, 'partition continues the offsets of the former store');
  }

  async #proposeUntil(replica: PartitionReplica, data: Buffer, deadlineMs: number): Promise<ReplicaOutcome> {
    for (;;) {
      try {
        return (await replica.group.propose(data, deadlineMs)).outcome;
      } catch (err) {
        if (!(err instanceof ProposalFailedError) || err.reason !== 'notLeader' || this.#o.clock.monotonicMs() >= deadlineMs) throw err;
        await (this.#o.sleep ?? sleep)(retryMs);
      }
    }
  }

  /** What the transport delivers to a partition group hosted here. */
  #handler(r: PartitionReplica): GroupHandler {
    const id = r.groupId;
    return {
      receive: (m) => void this.#o.host.receive(id, m),
      unreachable: (peer) => r.group.raw.reportUnreachable(peer),
      snapshotStatus: (peer, delivered) => this.#o.host.snapshotStatus(id, peer, delivered),
      append: (_from, req) => this.appendForwarded(req),
    };
  }

  // ------------------------------------------------------------------ appends

  async append(items: ReplicaAppend[]): Promise<ReplicaAppendResult[]> {
    const deadlineMs = this.#o.clock.monotonicMs() + this.#o.appendTimeoutMs;
    return Promise.all(items.map((it) => this.#appendOne(it, deadlineMs, '').catch((error: Error): ReplicaAppendResult => ({ ok: false, error }))));
  }

  async #appendOne(item: ReplicaAppend, deadlineMs: number, flowId: string): Promise<ReplicaAppendResult> {
    if (this.#closed) throw new PartitionUnavailableError(item.topic, item.partition, new Error('the node is shutting down'));
    const replica = await this.ensure(item.topic, item.partition);
    if (replica === undefined) throw new PartitionUnavailableError(item.topic, item.partition, new Error('no placement for this partition'));
    // While the disk refuses writes, a new batch cannot be stored: say why at once, without waiting.
    if (this.#o.host.refusal !== undefined) throw this.#o.host.refusal;
    const requestId = this.#o.random.uuid();
    const data = encodeBatchEntry(this.#o.clock.nowMs(), requestId, item.events);
    for (;;) {
      const g = replica.group;
      if (g.isLeader()) {
        try {
          const out = (await g.propose(data, deadlineMs)).outcome;
          assert(out !== undefined, 'a batch entry applied without an outcome');
          return { ok: true, first: out.first as Offset, last: out.last as Offset };
        } catch (err) {
          if (!(err instanceof ProposalFailedError)) throw err;
          if (err.storageError !== undefined) throw err.storageError;
          if (err.reason !== 'notLeader' && err.reason !== 'overwritten') throw unavailable(item, err.message);
        }
      } else if (g.leader !== noNode && this.#forwarder !== undefined) {
        const answer = await this.#forwarder.forwardAppend(g.leader, {
          group: g.id,
          topic: item.topic,
          partition: item.partition,
          epoch: g.term,
          requestId,
          flowId,
          deadlineMs: Math.max(1, deadlineMs - this.#o.clock.monotonicMs()),
          events: item.events,
        });
        if (answer.status === 'committed') return { ok: true, first: answer.firstOffset as Offset, last: answer.lastOffset as Offset };
        if (answer.status === 'unavailable' || answer.status === 'refused') throw unavailable(item, `leader ${g.leader}: ${answer.detail}`);
      }
      if (this.#o.clock.monotonicMs() >= deadlineMs) throw unavailable(item, 'no leader could take the batch in time');
      await (this.#o.sleep ?? sleep)(retryMs);
    }
  }

  /** A batch forwarded by another node to this one as the partition's leader. */
  async appendForwarded(req: ForwardedAppend): Promise<AppendAnswer> {
    const replica = await this.ensure(req.topic, req.partition).catch(() => undefined);
    if (replica === undefined || replica.groupId !== req.group) return { status: 'notLeader', leaderHint: noNode, epoch: 0 };
    const g = replica.group;
    if (!g.isLeader()) return { status: 'notLeader', leaderHint: g.leader, epoch: g.term };
    let data: Buffer;
    try {
      data = encodeBatchEntry(this.#o.clock.nowMs(), req.requestId, req.events);
    } catch (err) {
      return { status: 'refused', detail: (err as Error).message };
    }
    try {
      const applied = await g.propose(data, this.#o.clock.monotonicMs() + req.deadlineMs, req.epoch);
      const out = applied.outcome;
      if (out === undefined) return { status: 'unavailable', detail: 'the entry held no batch' };
      return { status: 'committed', epoch: applied.term, firstOffset: out.first, lastOffset: out.last };
    } catch (err) {
      if (err instanceof ProposalFailedError && (err.reason === 'notLeader' || err.reason === 'overwritten')) return { status: 'notLeader', leaderHint: err.leader, epoch: err.term };
      return { status: 'unavailable', detail: (err as Error).message };
    }
  }

  // ------------------------------------------------------------------ reads

  bounds(topic: number, partition: number): { oldest: Offset; newest: Offset } {
    const r = this.replica(topic, partition);
    const legacy = this.#o.legacy?.bounds(topic, partition);
    if (r === undefined) return legacy ?? { oldest: 0 as Offset, newest: -1 as Offset };
    const b = r.bounds();
    if (legacy !== undefined && legacy.newest >= legacy.oldest && legacy.newest + 1 >= b.oldest) return { oldest: legacy.oldest, newest: b.newest };
    return b;
  }

  async read(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number): Promise<StoredEventView[]> {
    const r = (await this.ensure(topic, partition)) ?? this.#missing(topic, partition);
    const b = r.bounds();
    if (after < b.oldest - 1 && this.#o.legacy !== undefined) {
      const lb = this.#o.legacy.bounds(topic, partition);
      if (lb.newest >= lb.oldest && after >= lb.oldest - 1) return this.#o.legacy.read(topic, partition, after, maxEvents, maxBytes);
      throw new OffsetExpiredError(topic, partition, after, lb.newest >= lb.oldest ? lb.oldest : b.oldest);
    }
    return r.read(after, maxEvents, maxBytes);
  }

  async waitForEvents(topic: number, partition: number, after: Offset, signal: AbortSignal): Promise<void> {
    const r = await this.ensure(topic, partition);
    if (r === undefined) return;
    return r.waitForEvents(after, signal);
  }

  #missing(topic: number, partition: number): never {
    throw new PartitionUnavailableError(topic, partition, new Error('this node holds no replica of the partition'));
  }

  // ------------------------------------------------------------------ maintenance

  /** Sets the first offset of a never-written partition (a new timeline continues the offsets). */
  async setBase(topic: number, partition: number, base: number): Promise<void> {
    const r = (await this.ensure(topic, partition)) ?? this.#missing(topic, partition);
    if (r.bounds().oldest === base) return;
    await this.#proposeUntil(r, encodeBaseEntry(base), this.#o.clock.monotonicMs() + this.#o.appendTimeoutMs);
  }

  /**
   * Drops the in-memory copy of entries applied long enough ago (they stay in the KV, which is the
   * partition log), keeping enough behind for followers that lag a little. A follower behind what the
   * leader keeps in memory is sent a snapshot and fetches the entries it lacks (log shipping).
   */
  #maybeCompact(r: PartitionReplica): void {
    const g = r.group;
    const mem = g.store.storage;
    if (mem.lastIndex() - mem.firstIndex() < memoryEntriesMax) return;
    const compactTo = g.applied - memoryEntriesKeep;
    if (compactTo < mem.firstIndex()) return;
    this.#compactMemory(r, compactTo).catch((err: unknown) => this.#o.logger.warn({ err, group: g.id }, 'partition log memory compaction failed; retried later'));
  }

  /** Drops entries up to `compactTo` (applied) from the group's memory; the KV keeps them. */
  async #compactMemory(r: PartitionReplica, compactTo: number): Promise<void> {
    const g = r.group;
    if (compactTo < g.store.storage.firstIndex()) return;
    const image = encodeImage(r.image());
    const applied = g.applied;
    const conf = g.conf;
    assert(compactTo <= applied, `compacting to ${compactTo} beyond applied ${applied}`);
    // The index rows of everything applied must be in the KV before memory forgets those batches.
    await this.#o.host.flushRows();
    await g.store.compact(applied, conf, image, compactTo);
    r.forgetBefore(compactTo + 1);
  }

  /** Retention: removes batches appended before `cutoffMs` (never the in-memory tail). */
  async applyRetention(topic: number, partition: number, cutoffMs: number): Promise<number> {
    let removed = (await this.#o.legacy?.applyRetention(topic, partition, cutoffMs)) ?? 0;
    const r = this.replica(topic, partition);
    if (r !== undefined) removed += await r.applyRetention(cutoffMs, (raftIndex) => this.#compactMemory(r, raftIndex));
    return removed;
  }

  /** Groups this node holds according to its own disk (to drop those of deleted event types). */
  async storedTopics(): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    for await (const [k, v] of this.#o.kv.iterate({ gte: directoryKey(0), lt: Buffer.from([prefixGroupDirectory + 1]) })) {
      const topic = v.readUInt32BE(0);
      const list = out.get(topic) ?? [];
      list.push(k.readUInt32BE(1));
      out.set(topic, list);
    }
    return out;
  }

  topics(): number[] {
    const legacy = this.#o.legacy?.topics() ?? [];
    return [...new Set([...legacy, ...[...this.#byKey.values()].map((r) => r.topic)])];
  }

  async dropTopic(topic: number): Promise<void> {
    await this.#o.legacy?.dropTopic(topic);
    const groups = (await this.storedTopics()).get(topic) ?? [];
    for (const r of [...this.#byKey.values()].filter((x) => x.topic === topic)) {
      this.#byKey.delete(PartitionReplicas.key(r.topic, r.partition));
      this.#o.groups?.unregister(r.groupId);
      await this.#o.host.remove(r.groupId);
      r.release();
      if (!groups.includes(r.groupId)) groups.push(r.groupId);
    }
    if (groups.length === 0) return;
    await this.#o.kv.write((b) => {
      for (const g of groups) dropGroupKeys(b, g);
    }, { durable: false });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const r of this.#byKey.values()) r.release();
    await Promise.allSettled([...this.#opening.values()]);
  }
}

function dropGroupKeys(b: KvBatch, g: number): void {
  RaftLogStore.drop(b, g);
  const k = (prefix: number, n: number) => {
    const key = Buffer.allocUnsafe(5);
    key[0] = prefix;
    key.writeUInt32BE(n, 1);
    return key;
  };
  b.delRange(k(prefixOffsetIndex, g), k(prefixOffsetIndex, g + 1));
  b.del(k(prefixApplied, g));
  b.del(directoryKey(g));
}

function unavailable(item: ReplicaAppend, why: string): PartitionUnavailableError {
  return new PartitionUnavailableError(item.topic, item.partition, new Error(why));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
