/**
 * The partitions this node replicates: one Raft group per partition on the node's Raft host, and the
 * partition-log surface the storage router uses (append, read, bounds, wait, base, retention, drop).
 * A single node runs exactly this, with one-member groups (DESIGN.md, "One code path").
 *
 * This class is the facade: it owns the state its parts share (partition-replicas-context.ts) and
 * hands it to each, one concern per file: opening a replica (partition-replica-open.ts, with the
 * repair of a corrupt log in partition-log-repair.ts), what the transport delivers to a group
 * (partition-group-handler.ts), appends through each partition's leader (partition-appends.ts),
 * reads of partitions held elsewhere (partition-remote-reads.ts), log shipping and the history fetch
 * (partition-history-fetch.ts), the memory budget (partition-memory-budget.ts), retention
 * (partition-retention.ts), drops (partition-drops.ts), leader balancing (partition-leader-balance.ts)
 * and the facts for GET /cluster (partition-facts.ts). The rules they follow are pure, in files of
 * their own with their tests (replica-peers.ts, memory-compaction-rule.ts, leader-handoff-rule.ts,
 * snapshot-catch-up-rule.ts).
 *
 * Reads are local: every node holding a replica reads it up to what it applied (committed events
 * only). Data written before partition replication existed (the former partition store) stays
 * readable below the group's first offset (`legacy`).
 */
import type { DamageRecord } from './raft-records.js';
import type { Offset } from '../core/offset.js';
import { OffsetExpiredError, PartitionUnavailableError } from '../log/index.js';
import type { NodeId } from '../raft/index.js';
import type { GroupFacts } from '../metadata/cluster-partitions.js';
import type { PartitionReplica, StoredEventView } from './partition-replica.js';
import { ProposalFailedError } from './raft-host/raft-group.js';
import { proposeControl, type ControlCommand } from './partition-control.js';
import { replicaKey, ReplicasContext } from './partition-replicas-context.js';
import { placedOn, type AppendAnswer, type AppendForwarder, type ForwardedAppend, type PartitionReplicasOptions, type ReplicaAppend, type ReplicaAppendResult } from './partition-replicas-types.js';
import { PartitionReplicaOpener } from './partition-replica-open.js';
import { PartitionGroupHandlers } from './partition-group-handler.js';
import { PartitionHistoryFetch } from './partition-history-fetch.js';
import { PartitionMemoryBudget } from './partition-memory-budget.js';
import { PartitionRetention } from './partition-retention.js';
import { PartitionDrops } from './partition-drops.js';
import { PartitionLeaderBalance } from './partition-leader-balance.js';
import { noReplicaHere, PartitionRemoteReads } from './partition-remote-reads.js';
import { PartitionAppends } from './partition-appends.js';
import { groupFacts } from './partition-facts.js';

export * from './partition-replicas-types.js';

export class PartitionReplicas {
  /** The state the parts share (partition-replicas-context.ts). */
  readonly #c: ReplicasContext;
  readonly #o: PartitionReplicasOptions;
  readonly #retention: PartitionRetention;
  readonly #drops: PartitionDrops;
  readonly #leaders: PartitionLeaderBalance;
  readonly #remote: PartitionRemoteReads;
  readonly #appends: PartitionAppends;
  readonly #opener: PartitionReplicaOpener;

  constructor(o: PartitionReplicasOptions) {
    this.#o = o;
    const c = (this.#c = new ReplicasContext(o));
    const ensure = (topic: number, partition: number): Promise<PartitionReplica | undefined> => this.ensure(topic, partition);
    const memory = new PartitionMemoryBudget(c);
    const history = new PartitionHistoryFetch(c, memory);
    this.#retention = new PartitionRetention(c, memory, (group) => history.fetching(group));
    this.#drops = new PartitionDrops(c, memory);
    this.#leaders = new PartitionLeaderBalance(c);
    this.#remote = new PartitionRemoteReads(c);
    this.#appends = new PartitionAppends(c, this.#remote, ensure);
    const handlers = new PartitionGroupHandlers(c, history, this.#remote, (req) => this.#appends.appendForwarded(req));
    this.#opener = new PartitionReplicaOpener(c, memory, history, handlers, ensure);
  }

  setForwarder(f: AppendForwarder): void {
    this.#c.forwarder = f;
  }

  static key(topic: number, partition: number): string {
    return replicaKey(topic, partition);
  }

  /** The replica of a partition on this node, opened (or created from its placement) on first use. */
  replica(topic: number, partition: number): PartitionReplica | undefined {
    return this.#c.byKey.get(PartitionReplicas.key(topic, partition));
  }

  /** Whether the placement puts a replica of the partition on this node that is not open (yet, or its open failed). */
  missingHere(topic: number, partition: number): boolean {
    const placement = this.#o.placement(topic, partition);
    return placement !== undefined && placedOn(placement, this.#c.me()) && !this.#c.byKey.has(PartitionReplicas.key(topic, partition)) && !this.#c.opening.has(PartitionReplicas.key(topic, partition));
  }

  async ensure(topic: number, partition: number): Promise<PartitionReplica | undefined> {
    const key = PartitionReplicas.key(topic, partition);
    const have = this.#c.byKey.get(key);
    if (have !== undefined) return have;
    // A drop of this partition's replica still in flight (a move took it away, and a later move
    // brings it back before the drop has deleted its data): opened now, the replica would read the
    // data the drop is about to delete and go on from it in memory, while its disk kept only what it
    // wrote after the deletion (host simulation seed 418: a log from entry 16 on, refused at the next
    // start). It opens once the drop is done, empty, as a moved-back replica must.
    const dropping = this.#drops.inFlight(key);
    if (dropping !== undefined) return dropping.then(() => this.ensure(topic, partition));
    const placement = this.#o.placement(topic, partition);
    if (placement === undefined) return undefined;
    if (!placedOn(placement, this.#c.me())) {
      // Held elsewhere (or it lists this node's former member: the replacement adds this one): learn its bounds now, so the first answers about it are not empty.
      if (!this.#remote.known(topic, partition)) this.#remote.refresh(topic, partition);
      return undefined;
    }
    let p = this.#c.opening.get(key);
    if (p === undefined) {
      p = this.#opener.open(topic, partition, placement).finally(() => this.#c.opening.delete(key));
      this.#c.opening.set(key, p);
    }
    return p;
  }

  /** Refreshes the bounds of every partition held elsewhere that this node has looked at (periodic). */
  refreshRemoteBounds(): void {
    this.#remote.refreshAll();
  }

  /**
   * What the partition's other replicas say is its newest applied offset, each asked at once and
   * given at most `timeoutMs`: the highest answer, and how many there were to ask.
   */
  newestElsewhere(topic: number, partition: number, timeoutMs = 1000): Promise<{ asked: number; newest: number | undefined }> {
    return this.#remote.newestElsewhere(topic, partition, timeoutMs);
  }

  /**
   * Bounds of a partition held elsewhere brought up to what its leader (else another replica) holds
   * now, waiting at most `waitMs`: after that bounds() answers from what a replica told last.
   * Nothing to do for a partition whose voter is here.
   */
  freshenBounds(topic: number, partition: number, waitMs?: number): Promise<void> {
    return this.#c.isRemote(topic, partition) ? this.#remote.freshen(topic, partition, waitMs) : Promise.resolve();
  }

  /**
   * Leadership back to each partition's preferred leader once it is caught up, and away from a leader
   * still fetching the retained log before its snapshot (partition-leader-balance.ts). Called
   * periodically; returns the number of transfers started.
   */
  balanceLeaders(): number {
    return this.#leaders.balance();
  }

  /**
   * What this node knows of each group it hosts, and the leader of each partition held elsewhere that
   * a replica named, for GET /cluster (partition-facts.ts). `reachable` is the transport's word on a peer.
   */
  facts(reachable: (node: NodeId) => boolean = () => true): Map<number, GroupFacts> {
    return groupFacts(this.#c, this.#remote, reachable);
  }

  /** This node's open replica of a group, or undefined (operator actions name groups: loss-service.ts). */
  hostedGroup(group: number): PartitionReplica | undefined {
    for (const r of this.#c.byKey.values()) if (r.groupId === group) return r;
    return undefined;
  }

  /** The highest term any group of this storage may have used (node-disk.ts; 0 without a disk, in unit tests). */
  termCeiling(): number {
    return this.#o.disk?.termCeiling ?? 0;
  }

  /**
   * The operator accepts the loss of this node's damaged sole replica of `group` (the rule is
   * loss-acceptance.ts, checked by the caller): it leads at a term above this storage's term ceiling
   * (node-disk.ts) and its damage term, keeping what it holds (src/raft Raft.acceptLoss). Returns why
   * the Raft core refused, or undefined.
   */
  acceptLoss(group: number): string | undefined {
    const r = this.hostedGroup(group);
    if (r === undefined) return 'this node holds no open replica of the group';
    const refused = r.group.raw.acceptLoss(this.#o.disk?.termCeiling ?? 0);
    if (refused === undefined) this.#o.host.kick(group);
    return refused;
  }

  /**
   * Appends a publish request's batches, one per partition, each through its partition's leader
   * (partition-appends.ts); one result per item, in order (a failure is a result).
   */
  append(items: ReplicaAppend[]): Promise<ReplicaAppendResult[]> {
    return this.#appends.append(items);
  }

  /** A batch forwarded by another node to this one as the partition's leader. */
  appendForwarded(req: ForwardedAppend): Promise<AppendAnswer> {
    return this.#appends.appendForwarded(req);
  }

  // ------------------------------------------------------------------ reads

  bounds(topic: number, partition: number): { oldest: Offset; newest: Offset } {
    const r = this.replica(topic, partition);
    const legacy = this.#o.legacy?.bounds(topic, partition);
    // A learner's replica here is still catching up: the bounds come from a voter, like reads.
    // Held elsewhere: the bounds a replica told last (partition-remote-reads.ts).
    if (this.#c.isRemote(topic, partition)) return this.#remote.cachedBounds(topic, partition);
    if (r === undefined) return legacy ?? { oldest: 0 as Offset, newest: -1 as Offset };
    const b = r.bounds();
    if (legacy !== undefined && legacy.newest >= legacy.oldest && legacy.newest + 1 >= b.oldest) return { oldest: legacy.oldest, newest: b.newest };
    return b;
  }

  async read(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number): Promise<StoredEventView[]> {
    if (this.#c.isRemote(topic, partition)) return this.#remote.read(topic, partition, after, maxEvents, maxBytes, 0);
    const r = (await this.ensure(topic, partition)) ?? noReplicaHere(topic, partition);
    const b = r.bounds();
    // The log before an installed snapshot is still being fetched: those events are read from another replica.
    if (r.historyFrom !== undefined && after >= r.historyFrom - 1 && after < r.localOldest - 1) return this.#remote.read(topic, partition, after, Math.min(maxEvents, r.localOldest - 1 - after), maxBytes, 0);
    if (after < b.oldest - 1 && this.#o.legacy !== undefined) {
      const lb = this.#o.legacy.bounds(topic, partition);
      if (lb.newest >= lb.oldest && after >= lb.oldest - 1) return this.#o.legacy.read(topic, partition, after, maxEvents, maxBytes);
      throw new OffsetExpiredError(topic, partition, after, lb.newest >= lb.oldest ? lb.oldest : b.oldest);
    }
    return r.read(after, maxEvents, maxBytes);
  }

  async waitForEvents(topic: number, partition: number, after: Offset, signal: AbortSignal): Promise<void> {
    // Long-polls a replica (partition-remote-reads.ts).
    if (this.#c.isRemote(topic, partition)) return this.#remote.waitForNews(topic, partition, after);
    const r = await this.ensure(topic, partition);
    if (r === undefined) return;
    return r.waitForEvents(after, signal);
  }

  // ------------------------------------------------------------------ maintenance

  /** Sets the first offset of a never-written partition (a new timeline continues the offsets), through its leader. */
  async setBase(topic: number, partition: number, base: number): Promise<void> {
    if (this.replica(topic, partition)?.bounds().oldest === base) return;
    await this.control(topic, partition, { kind: 'base', base });
  }

  /**
   * Applies a command of the partition's group (a seal, a base) through its leader, from any node
   * (partition-control.ts); resolves with the log's next offset after it.
   */
  async control(topic: number, partition: number, cmd: ControlCommand, deadlineMs = this.#o.clock.monotonicMs() + this.#o.appendTimeoutMs): Promise<number> {
    const p = this.#o.placement(topic, partition);
    if (p === undefined) throw new PartitionUnavailableError(topic, partition, new Error('no placement for this partition'));
    const self = this.#o.self;
    const local = p.replicas.includes(this.#c.me()) ? await this.ensure(topic, partition) : undefined;
    const send = this.#c.forwarder?.forwardControl;
    // The route names nodes (partition-control.ts maps a leader's member id to its node).
    const route = { self, group: p.group, topic, partition, local, others: this.#c.otherNodes(p.replicas) };
    return proposeControl(route, cmd, deadlineMs, '', { clock: this.#o.clock, send: send?.bind(this.#c.forwarder), sleep: (ms) => this.#c.sleep(ms) });
  }

  /**
   * Retention: removes batches appended before `cutoffMs` (partition-retention.ts). The snapshot is
   * taken again after it, so that a follower sent it learns where the log now starts.
   */
  applyRetention(topic: number, partition: number, cutoffMs: number): Promise<number> {
    return this.#retention.apply(topic, partition, cutoffMs);
  }

  /** Groups this node holds according to its own disk (to drop those of deleted event types). */
  storedTopics(): Promise<Map<number, number[]>> {
    return this.#drops.storedTopics();
  }

  topics(): number[] {
    const legacy = this.#o.legacy?.topics() ?? [];
    return [...new Set([...legacy, ...[...this.#c.byKey.values()].map((r) => r.topic)])];
  }

  /** Drops the replicas of an event type being deleted, and their data (partition-drops.ts). */
  dropTopic(topic: number): Promise<void> {
    return this.#drops.dropTopic(topic);
  }

  /** Tells the node host that a group has work (a configuration change or a transfer was just asked). */
  kick(group: number): void {
    this.#o.host.kick(group);
  }

  /** The replicas open on this node. */
  held(): IterableIterator<PartitionReplica> {
    return this.#c.byKey.values();
  }

  /**
   * Drops this node's replica of a partition and its data (a move took it elsewhere). The caller
   * checked that the group no longer counts this node (replica-mover.ts): what it held is on the others.
   */
  dropReplica(topic: number, partition: number, group: number): Promise<void> {
    return this.#drops.dropReplica(topic, partition, group);
  }

  /** Empties this node's replica of a group for an accepted loss, once per loss (PartitionDrops.emptyForLoss). */
  emptyForLoss(group: number, lossId: string, damage: (held: { term: number; lastIndex: number } | undefined) => DamageRecord): Promise<boolean> {
    return this.#drops.emptyForLoss(group, lossId, damage);
  }

  /** This node's id. */
  self(): number {
    return this.#c.me();
  }

  /** The groups this node has data of on disk, with their partition (to drop those moved away at start). */
  storedGroups(): AsyncIterable<{ group: number; topic: number; partition: number }> {
    return this.#drops.storedGroups();
  }

  /** Whether close() was called (work waiting for a replica of this set to open stops then). */
  get isClosed(): boolean {
    return this.#c.closed;
  }

  async close(): Promise<void> {
    this.#c.closed = true;
    for (const c of this.#c.coalescers.values()) c.fail(new ProposalFailedError('closed', 'the node is shutting down'));
    for (const r of this.#c.byKey.values()) r.release();
    await Promise.allSettled([...this.#c.opening.values()]);
  }
}

