/**
 * The open of a partition's replica on this node: its log is opened (repaired from another replica
 * when committed entries are corrupt, or started over empty and damaged when its records cannot be
 * told), its group is founded or joined as the placement and the disk allow, what is known committed
 * is applied, and the group is put on the node's Raft host and the transport.
 */
import type { Logger } from 'pino';
import { PartitionUnavailableError } from '../log/index.js';
import { encodeBaseEntry } from '../log/partition-entry.js';
import { applyConfChangeToState, decodeConfChange, noNode, type NodeId } from '../raft/index.js';
import { BatchCoalescer } from './batch-coalescer.js';
import { dropReplicaRows, putGroupDirectory } from './partition-group-keys.js';
import type { PartitionGroupHandlers } from './partition-group-handler.js';
import type { PartitionHistoryFetch } from './partition-history-fetch.js';
import { repairEntries } from './partition-log-repair.js';
import type { PartitionMemoryBudget } from './partition-memory-budget.js';
import { PartitionReplica, decodeImage, type ReplicaOutcome } from './partition-replica.js';
import { replicaKey, retryMs, type ReplicasContext } from './partition-replicas-context.js';
import type { GroupPlacement } from './partition-replicas-types.js';
import { RaftGroupCorruptError, RaftLogStore } from './raft-log-store.js';
import { ProposalFailedError, RaftGroup } from './raft-host/raft-group.js';

/** Uncommitted bytes a partition's leader accepts before it refuses new batches (back-pressure). */
const uncommittedBytesMax = 16 * 1024 * 1024;
/** How long after a failed repair a partition whose log is corrupt is opened again. */
const retryOpenMs = 5000;

export class PartitionReplicaOpener {
  readonly #c: ReplicasContext;
  readonly #memory: PartitionMemoryBudget;
  readonly #history: PartitionHistoryFetch;
  readonly #handlers: PartitionGroupHandlers;
  /** Opens (or finds) the replica of a partition placed here (PartitionReplicas.ensure). */
  readonly #ensure: (topic: number, partition: number) => Promise<PartitionReplica | undefined>;

  constructor(c: ReplicasContext, memory: PartitionMemoryBudget, history: PartitionHistoryFetch, handlers: PartitionGroupHandlers, ensure: (topic: number, partition: number) => Promise<PartitionReplica | undefined>) {
    this.#c = c;
    this.#memory = memory;
    this.#history = history;
    this.#handlers = handlers;
    this.#ensure = ensure;
  }

  async open(topic: number, partition: number, placement: GroupPlacement): Promise<PartitionReplica> {
    const o = this.#c.o;
    const me = this.#c.me();
    const log = o.logger.child({ topic, partition, group: placement.group });
    const load = () => PartitionReplica.load(topic, partition, placement.group, o.kv, o.host, log, placement.start ?? 0);
    const opened = await this.#openStore(await load(), placement, log, load);
    const { store, replica } = opened;
    if (store.damage !== undefined) log.error({ damage: store.damage.reason }, 'partition raft log damaged: this replica will not vote or lead until its leader has repaired it');
    const fresh = store.isEmpty;
    if (fresh) {
      // A node that lost raft state cannot tell a group whose every record it lost from a new one
      // (node-disk.ts): founding afresh could vote twice in a term. It starts the member empty and
      // damaged instead; the leader of the other members repairs it. A group of one has nobody to
      // repair it and founds (a single node that lost its data has lost it).
      // The same holds for a wiped directory that joined its cluster as a new disk: a former
      // directory of this node may have been a member. Only a directory that founded the cluster, or
      // registered in the metadata before the group was created, founds it (metadata/disk-registry.ts).
      const lost = o.disk?.identity.lostRaftState;
      const mayFound = o.mayFound?.(placement.group) ?? lost === undefined;
      // Only a founder writes the founding configuration, and only the founders' one: a node that
      // joins a moved group (a learner, or a voter whose state is gone) starts empty and damaged, so it
      // neither votes nor counts as holding what a former self acknowledged (the leader's progress for
      // it may be stale: a damaged member's rejection voids it) until the leader has brought it up to date.
      // A founder placed as a learner is such a node too: it was moved away (its replica dropped) and
      // is being moved back; founding again would give it the founding log under the leader's state.
      const founders = placement.founders ?? placement.replicas;
      const startedOver = store.damage;
      if (startedOver !== undefined) {
        // Started over empty and damaged (its records were corrupt): its leader brings it up to date.
      } else if (!mayFound && placement.replicas.length > 1 && (me === o.self || lost !== undefined)) {
        // (A directory running a new member id, one no former state of this node ever used, never
        // held the group under it: it joins as a new replica below, undamaged.)
        const why = lost !== undefined ? `this node lost raft state (${lost})` : 'this data directory joined the cluster after the group was created (it was wiped or is new)';
        // Nothing here bounds the terms that former state used in the group (a wiped directory has no
        // term ceiling for it): a voter learns a term floor from the other replicas before it
        // acknowledges anything (src/raft Damage.termUnknown). Not a move's new replica (a learner):
        // its acknowledgements count in no commit until the leader that promotes it has given it that
        // leader's term, and it must answer the probes of a voter wiped meanwhile (two members asking
        // each other would wait for good).
        await store.startEmpty([], `${why}; it holds no state for this group, which a former state of this node may have been a member of`, placement.replicas.includes(me));
        log.error({ damage: store.damage?.reason }, 'partition raft log damaged: this replica will not vote or lead until its leader has repaired it');
      } else if (!founders.includes(me) || (placement.learners?.includes(me) ?? false)) {
        await store.startEmpty([], 'a new replica of a moved group: it holds nothing until its leader has brought it up to date');
        log.info({ founders }, 'partition replica joins its group empty; its leader brings it up to date');
      } else await store.bootstrap([...founders].sort((a, b) => a - b));
      await o.kv.write((b) => putGroupDirectory(b, placement.group, topic, partition), { durable: false });
    }
    const storage = store.storage;
    const snap = storage.snapshot();
    if (snap.metadata.index > replica.applied) {
      // The applied rows were lost with an unsynced write but a snapshot is newer: start from it.
      replica.restoreImage(decodeImage(snap.data));
    } else if (snap.metadata.index > 0) replica.withSnapshotWindow(decodeImage(snap.data));
    // Entries known committed (the founding configuration; what was committed before a restart) are
    // applied now, so the group starts as a member of its configuration and a group of one can elect
    // itself at once instead of after an election timeout.
    const hs = storage.hardState();
    // Applied entries were committed even if the stored commit index lags (it is written only with a
    // term or vote change: raft-log-store.ts).
    if (hs.commit < replica.applied) storage.setHardState({ ...hs, commit: replica.applied });
    // The only voter: every entry of its durable log was written by itself as leader and is committed
    // (a majority of one), even if the stored commit index lags (written only with a term or vote). Taking
    // the whole log now makes everything durable visible at start, as the store before replication
    // did: a client that resends what it could not see would otherwise store it twice.
    const last = storage.lastIndex();
    const alone = (c: { voters: readonly NodeId[]; learners: readonly NodeId[] }) => c.voters.length === 1 && c.voters[0] === me && c.learners.length === 0;
    if (storage.hardState().commit < last && alone(storage.confStateAt(storage.hardState().commit)) && alone(storage.confStateAt(last))) {
      storage.setHardState({ ...storage.hardState(), commit: last });
    }
    const commit = Math.min(storage.hardState().commit, last);
    let conf = storage.confStateAt(replica.applied);
    for (const e of commit > replica.applied ? storage.entries(replica.applied + 1, commit + 1, Number.MAX_SAFE_INTEGER) : []) {
      if (e.type === 'confChange') conf = applyConfChangeToState(conf, decodeConfChange(e.data));
      replica.replay(e);
    }
    const applied = replica.applied;
    const group = new RaftGroup<ReplicaOutcome>({
      id: placement.group,
      self: me,
      store,
      conf,
      applied,
      electionTicks: o.electionTicks,
      heartbeatTicks: o.heartbeatTicks,
      random: o.random,
      // A group whose followers lag refuses new batches past this many uncommitted bytes: publishers
      // get a failed item at once (retriable) instead of the leader buffering without bound.
      uncommittedBytesMax: uncommittedBytesMax,
      // No heartbeat to a follower that appends reach anyway (src/raft config): nothing here reads
      // more into a heartbeat than Raft does.
      heartbeatWhileReplicating: false,
      // The voters a member whose past term is unknown asks for theirs: the placement's, and a move's
      // new replica, so that the raft configuration is this set or one member fewer at every step of
      // a move (the core's count of answers covers one member more or less than it is told). Read
      // from the placement now, not at open: a move that ends or is cancelled while the member
      // probes leaves a node that dropped its replica and never answers (the count would wait for it).
      termProbePeers: () => {
        const now = o.placement(topic, partition);
        const p = now !== undefined && now.group === placement.group ? now : placement;
        return [...new Set([me, ...p.replicas, ...(p.learners ?? [])])];
      },
    });
    replica.attach(group);
    // Stopped while fetching the log before its snapshot: it says so to its leaders from its first answer on.
    if (replica.pendingHistory !== undefined) group.raw.setIncomplete(true);
    // What the log holds in memory already (entries restored from the KV at open) counts from now on.
    this.#memory.track(replica);
    replica.onRestoredWithoutLog = () => this.#history.fetch(replica);
    // A repair a read asked for writes nothing once the replica is dropped (see repairEntries).
    const hosted = () => this.#c.hosts(replica);
    replica.repairEntries = (from, to) => repairEntries(this.#c, topic, partition, placement.group, from, to, hosted);
    const coalescer = new BatchCoalescer(group, o.clock, () => o.host.kick(group.id));
    group.beforeReady = () => coalescer.flush();
    this.#c.coalescers.set(placement.group, coalescer);
    const previousOnApplied = group.onApplied;
    group.onApplied = () => {
      previousOnApplied?.();
      this.#memory.afterApply(replica);
    };
    group.onLeaderChange = (lead, term) => log.info({ leader: lead === noNode ? null : lead, term }, 'partition leader changed');
    this.#c.byKey.set(replicaKey(topic, partition), replica);
    o.host.add(group as RaftGroup<unknown>);
    o.groups?.register(placement.group, this.#handlers.for(replica));
    // A stored image whose `start` names entries retention removed is taken again (seed 292).
    if (replica.pendingHistory === undefined) void this.#memory.refreshStaleStart(replica, log);
    if (replica.pendingHistory !== undefined) {
      // It stopped while fetching the log before its snapshot (or before it began): fetch it again.
      log.info({ ...replica.pendingHistory }, 'partition replica opens without the retained log before its snapshot: fetching it again');
      this.#history.fetch(replica);
    }
    // A one-member group elects itself at once; a new group's preferred leader campaigns at once, so
    // a fresh partition does not wait an election timeout for its first leader.
    if (group.isSingleton() || (fresh && placement.replicas[0] === me)) {
      group.raw.campaign();
      o.host.kick(placement.group);
    }
    if (o.legacy !== undefined && fresh) await this.#continueLegacy(replica);
    log.debug({ applied, fresh }, 'partition replica opened');
    return replica;
  }

  /**
   * Opens the group's log. Committed entries that fail their checks (entries the replica applied:
   * its offset index points into them) are replaced by the same entries of a healthy replica, then
   * the log is opened again; corrupt entries past the applied index are cut and the member is marked
   * damaged (raft-log-store.ts): it neither votes nor leads until its leader has sent them again.
   * With no other replica (a single node), or none that answers, the partition stays closed with a
   * message saying why; a replica that is not repaired yet is tried again every few seconds.
   */
  async #openStore(replica: PartitionReplica, placement: GroupPlacement, log: Logger, reload: () => Promise<PartitionReplica>): Promise<{ store: RaftLogStore; replica: PartitionReplica }> {
    const o = this.#c.o;
    let startedOver = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return { store: await RaftLogStore.open(o.kv, placement.group, { keepCompacted: true, disk: o.disk, applied: replica.applied, slabs: this.#c.slabs }), replica };
      } catch (err) {
        if (!(err instanceof RaftGroupCorruptError)) throw err;
        if (err.startOver !== undefined && !startedOver) {
          // A corrupt snapshot or damage mark: what this replica held and acknowledged cannot be
          // told. With other replicas to bring it up to date, it starts over as a wiped member does:
          // its records and rows removed, empty and marked damaged (no vote, no campaign) until its
          // leader has brought it past everything it may have held. Alone, nothing can.
          const others = this.#c.otherNodes([...placement.replicas, ...(placement.learners ?? [])]);
          if (others.length === 0) throw new PartitionUnavailableError(replica.topic, replica.partition, new RaftGroupCorruptError(placement.group, err.found, undefined, 'stays closed: this node holds the only replica of the partition, there is none to repair it from'));
          log.error({ found: err.found, damage: err.startOver }, 'partition raft state corrupt (its snapshot or damage mark): starting over empty and damaged; its leader brings it up to date');
          const group = placement.group;
          await RaftLogStore.startOver(o.kv, group, o.disk, { ...err.startOver, reason: `started over: ${err.found.join('; ')}` }, (b) => dropReplicaRows(b, group));
          startedOver = true;
          replica = await reload();
          attempt = -1;
          continue;
        }
        // Answered to clients as the partition being unavailable here (503, with what was found).
        if (err.committed === undefined || attempt > 0) throw new PartitionUnavailableError(replica.topic, replica.partition, err);
        const { from, to } = err.committed;
        log.error({ found: err.found, from, to }, 'partition raft log corrupt: replacing its committed entries from another replica before it opens');
        let outcome: 'repaired' | 'alone' | Error;
        try {
          outcome = await repairEntries(this.#c, replica.topic, replica.partition, placement.group, from, to);
        } catch (e) {
          outcome = e as Error;
        }
        if (outcome === 'alone') throw new PartitionUnavailableError(replica.topic, replica.partition, new RaftGroupCorruptError(placement.group, err.found, undefined, 'stays closed: this node holds the only replica of the partition, there is none to repair it from'));
        if (outcome !== 'repaired') {
          this.#retryOpen(replica.topic, replica.partition);
          throw new PartitionUnavailableError(replica.topic, replica.partition, new Error(`its raft log is corrupt (${err.found.join('; ')}) and no other replica could replace the entries ${from}..${to} yet (${outcome.message}); tried again in ${retryOpenMs / 1000} s`));
        }
        log.warn({ from, to }, 'partition raft log repaired from another replica');
      }
    }
  }

  /**
   * Opens the replica again once its repair could work. Through the injected sleep when there is one
   * (the host simulation's virtual timers: a real timer there fired outside the simulated time and
   * made a seed's run depend on the machine); the process's own timer is unref'd so a pending retry
   * does not hold a closing process open.
   */
  #retryOpen(topic: number, partition: number): void {
    if (this.#c.closed) return;
    const wait = this.#c.o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
    void wait(retryOpenMs).then(() => {
      if (!this.#c.closed) this.#ensure(topic, partition).catch(() => undefined);
    });
  }

  /** A partition with data in the former store continues its offsets after it. */
  async #continueLegacy(replica: PartitionReplica): Promise<void> {
    const b = this.#c.o.legacy!.bounds(replica.topic, replica.partition);
    if (b.newest < 0 && b.oldest === 0) return;
    const base = b.newest + 1;
    await this.#proposeUntil(replica, encodeBaseEntry(base), this.#c.o.clock.monotonicMs() + this.#c.o.appendTimeoutMs);
    this.#c.o.logger.info({ topic: replica.topic, partition: replica.partition, base }, 'partition continues the offsets of the former store');
  }

  async #proposeUntil(replica: PartitionReplica, data: Buffer, deadlineMs: number): Promise<ReplicaOutcome> {
    for (;;) {
      try {
        return (await replica.group.propose(data, deadlineMs)).outcome;
      } catch (err) {
        if (!(err instanceof ProposalFailedError) || err.reason !== 'notLeader' || this.#c.o.clock.monotonicMs() >= deadlineMs) throw err;
        await this.#c.sleep(retryMs);
      }
    }
  }
}
