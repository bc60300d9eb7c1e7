/**
 * The partitions this node replicates: one Raft group per partition on the node's Raft host, and the
 * partition-log surface the storage router uses (append, read, bounds, wait, base, retention, drop).
 * A single node runs exactly this, with one-member groups (DESIGN.md, "One code path").
 *
 * Appends go through each partition's leader (partition-appends.ts).
 *
 * Reads are local: every node holding a replica reads it up to what it applied (committed events
 * only). Data written before partition replication existed (the former partition store) stays
 * readable below the group's first offset (`legacy`).
 */
import type { Logger } from 'pino';
import type { Offset } from '../core/offset.js';
import { OffsetExpiredError, PartitionUnavailableError } from '../log/index.js';
import { checkArrived, decodeEntryHead, encodeBaseEntry } from '../log/partition-entry.js';
import { BatchCoalescer } from './batch-coalescer.js';
import type { Entry, Message, NodeId } from '../raft/index.js';
import { applyConfChangeToState, decodeConfChange, noNode } from '../raft/index.js';
import { nodeOfMember } from '../core/member-id.js';
import { memberOnNode } from '../metadata/placement-types.js';
import { PartitionState } from '../replication/partition-state.js';
import { HistoryMissingError, PartitionReplica, decodeImage, type ReplicaOutcome, type StoredEventView } from './partition-replica.js';
import { RaftGroupCorruptError, RaftLogStore } from './raft-log-store.js';
import { ProposalFailedError, RaftGroup } from './raft-host/raft-group.js';
import type { GroupHandler } from '../transport/index.js';
import type { GroupFacts, ReplicaFacts } from '../metadata/cluster-partitions.js';
import { proposeControl, serveControl, type ControlCommand } from './partition-control.js';
import { logChunkBytes, replicaKey, retryMs, ReplicasContext } from './partition-replicas-context.js';
import { placedOn, type AppendAnswer, type AppendForwarder, type ForwardedAppend, type GroupPlacement, type PartitionReplicasOptions, type ReplicaAppend, type ReplicaAppendResult } from './partition-replicas-types.js';
import { dropReplicaRows, putGroupDirectory } from './partition-group-keys.js';
import { PartitionMemoryBudget } from './partition-memory-budget.js';
import { PartitionRetention } from './partition-retention.js';
import { PartitionDrops } from './partition-drops.js';
import { PartitionLeaderBalance } from './partition-leader-balance.js';
import { noReplicaHere, PartitionRemoteReads } from './partition-remote-reads.js';
import { PartitionAppends } from './partition-appends.js';

export * from './partition-replicas-types.js';

/** Uncommitted bytes a partition's leader accepts before it refuses new batches (back-pressure). */
const uncommittedBytesMax = 16 * 1024 * 1024;
/** How long after a failed repair a partition whose log is corrupt is opened again. */
const retryOpenMs = 5000;
/** How long one replica may take to send the entries that repair a corrupt log. */
const repairFetchMs = 30_000;

/** Why an entry sent to repair a corrupt one cannot be stored, or undefined. */
function committedEntryProblem(e: Entry): string | undefined {
  try {
    if (e.type === 'confChange') decodeConfChange(e.data);
    else if (e.data.byteLength > 0) decodeEntryHead(Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength), false);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export class PartitionReplicas {
  /** The state the parts share (partition-replicas-context.ts). */
  readonly #c: ReplicasContext;
  readonly #o: PartitionReplicasOptions;
  readonly #memory: PartitionMemoryBudget;
  readonly #retention: PartitionRetention;
  readonly #drops: PartitionDrops;
  readonly #leaders: PartitionLeaderBalance;
  readonly #remote: PartitionRemoteReads;
  readonly #appends: PartitionAppends;

  constructor(o: PartitionReplicasOptions) {
    this.#o = o;
    this.#c = new ReplicasContext(o);
    this.#memory = new PartitionMemoryBudget(this.#c);
    this.#retention = new PartitionRetention(this.#c, this.#memory, (group) => this.#historyFetching.has(group));
    this.#drops = new PartitionDrops(this.#c, this.#memory);
    this.#leaders = new PartitionLeaderBalance(this.#c);
    this.#remote = new PartitionRemoteReads(this.#c);
    this.#appends = new PartitionAppends(this.#c, this.#remote, (topic, partition) => this.ensure(topic, partition));
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
      p = this.#open(topic, partition, placement).finally(() => this.#c.opening.delete(key));
      this.#c.opening.set(key, p);
    }
    return p;
  }

  async #open(topic: number, partition: number, placement: GroupPlacement): Promise<PartitionReplica> {
    const o = this.#o;
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
    // Applied entries were committed even if the stored commit index (written without fsync) lags.
    if (hs.commit < replica.applied) storage.setHardState({ ...hs, commit: replica.applied });
    // The only voter: every entry of its durable log was written by itself as leader and is committed
    // (a majority of one), even if the stored commit index lags (it is written without fsync). Taking
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
    replica.onRestoredWithoutLog = () => this.#fetchHistory(replica);
    // A repair a read asked for writes nothing once the replica is dropped (see #repairEntries).
    const hosted = () => !this.#c.closed && this.#c.byKey.get(PartitionReplicas.key(topic, partition)) === replica;
    replica.repairEntries = (from, to) => this.#repairEntries(topic, partition, placement.group, from, to, hosted);
    const coalescer = new BatchCoalescer(group, o.clock, () => o.host.kick(group.id));
    group.beforeReady = () => coalescer.flush();
    this.#c.coalescers.set(placement.group, coalescer);
    const previousOnApplied = group.onApplied;
    group.onApplied = () => {
      previousOnApplied?.();
      this.#memory.afterApply(replica);
    };
    group.onLeaderChange = (lead, term) => log.info({ leader: lead === noNode ? null : lead, term }, 'partition leader changed');
    this.#c.byKey.set(PartitionReplicas.key(topic, partition), replica);
    o.host.add(group as RaftGroup<unknown>);
    o.groups?.register(placement.group, this.#handler(replica));
    // A stored image whose `start` names entries retention removed is taken again (seed 292).
    if (replica.pendingHistory === undefined) void this.#memory.refreshStaleStart(replica, log);
    if (replica.pendingHistory !== undefined) {
      // It stopped while fetching the log before its snapshot (or before it began): fetch it again.
      log.info({ ...replica.pendingHistory }, 'partition replica opens without the retained log before its snapshot: fetching it again');
      this.#fetchHistory(replica);
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
    const o = this.#o;
    let startedOver = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return { store: await RaftLogStore.open(o.kv, placement.group, { keepCompacted: true, disk: o.disk, applied: replica.applied }), replica };
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
          outcome = await this.#repairEntries(replica.topic, replica.partition, placement.group, from, to);
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
    const wait = this.#o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
    void wait(retryOpenMs).then(() => {
      if (!this.#c.closed) this.ensure(topic, partition).catch(() => undefined);
    });
  }

  /**
   * Replaces the stored entries [from, to] of a group with the same committed entries of another
   * replica (fetched with FetchLog, which serves applied entries only, in bounded chunks), each checked
   * before it is written (the partition entry's own CRC32C, a configuration change's encoding), in
   * one durable write per chunk. 'alone' when no other replica exists to ask.
   *
   * `live` is asked right before each chunk's write is issued: a replica dropped meanwhile (moved
   * away, event type deleted) writes nothing more, since a write issued after the drop's delete would
   * leave the entries behind (a fetch from another node takes long enough for a drop to come). A write
   * issued before it lands before it (the KV applies writes in call order). A repair before the
   * replica opens needs no check: a drop waits for the open.
   */
  async #repairEntries(topic: number, partition: number, group: number, from: number, to: number, live: () => boolean = () => !this.#c.closed): Promise<'repaired' | 'alone'> {
    const fetchLog = this.#c.forwarder?.fetchLog?.bind(this.#c.forwarder);
    const p = this.#o.placement(topic, partition);
    const leader = this.replica(topic, partition)?.group.leader;
    const peers = this.#c.otherNodes([leader ?? noNode, ...(p?.replicas ?? [])]);
    if (peers.length === 0 || fetchLog === undefined) return 'alone';
    let next = from;
    const failures: string[] = [];
    for (const peer of peers) {
      try {
        const signal = AbortSignal.timeout(repairFetchMs);
        for await (const chunk of fetchLog(peer, { group, fromIndex: next, toIndex: to, maxBytes: logChunkBytes }, signal)) {
          for (const e of chunk.entries) {
            const problem = committedEntryProblem(e);
            if (problem !== undefined) throw new Error(`its entry ${e.index} fails its check too: ${problem}`);
          }
          if (chunk.entries[0]?.index !== next) throw new Error(`it sent entry ${chunk.entries[0]?.index}, not ${next}`);
          if (!live()) throw new ReplicaDroppedError();
          await RaftLogStore.replaceEntries(this.#o.kv, group, chunk.entries, this.#o.disk);
          next = chunk.entries[chunk.entries.length - 1]!.index + 1;
        }
        if (next > to) return 'repaired';
        failures.push(`node ${peer} holds the entries up to ${next - 1} only`);
      } catch (err) {
        if (err instanceof ReplicaDroppedError) throw err;
        failures.push(`node ${peer}: ${(err as Error).message}`);
      }
    }
    throw new Error(failures.join('; '));
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
        await this.#c.sleep(retryMs);
      }
    }
  }

  /** What the transport delivers to a partition group hosted here. */
  #handler(r: PartitionReplica): GroupHandler {
    const id = r.groupId;
    return {
      receive: (m) => {
        if (m.type === 'snap') void this.#catchUp(r, m);
        // An entry whose checksum fails arrived damaged: the whole append is dropped (Raft takes it as
        // lost and the leader sends it again). Taken, it would commit with the intact copies of the
        // others and then get no offsets here (apply drops what does not decode): this replica's
        // offsets would differ from theirs from there on.
        else if (m.type === 'app' && !this.#arrivedIntact(r, m)) return;
        // While the replica applies fetched entries by itself, nothing may move the group's log or
        // commit index: an append that let the group commit those entries too would apply them twice
        // (a damaged member's leader probes it while its snapshot is pending). Raft resends.
        else if (!this.#catchingUp.has(id)) this.#o.host.receive(id, m);
      },
      unreachable: (peer) => r.group.raw.reportUnreachable(peer),
      snapshotStatus: (peer, delivered) => this.#o.host.snapshotStatus(id, peer, delivered),
      append: (_from, req) => this.appendForwarded(req),
      control: (_from, req) => serveControl(r, req, this.#o.clock),
      read: (_from, req, signal) => this.#remote.serve(r, req, signal),
      bounds: async () => {
        const b = r.bounds();
        return { oldest: b.oldest, newest: b.newest, epoch: r.group.term, leader: nodeOfMember(r.group.leader) };
      },
      fetchLog: (_from, req, signal) => {
        // Committed entries only (applied ones): those are the same on every replica that holds them,
        // so a replica may fetch them from any other, not only from its leader.
        // A replica still fetching the log before its snapshot holds a part of it at most: it serves
        // nothing below its snapshot, never a log with a hole, and says so with an answer that ends
        // without entries (the asker takes it for a replica without that log and asks another). A
        // refusal the asker took for a passing one kept two replicas fetching the same log, which the
        // third had removed meanwhile, asking each other for good (host simulation seed 277). One that
        // gave that fetch up holds its log from its snapshot on, as if its retention had gone that far:
        // it serves from there (the asker sees where its log starts).
        const floor = r.logFloor;
        const fetching = r.pendingHistory !== undefined;
        const chunks = r.readLog(Math.max(req.fromIndex, floor ?? 0), Math.min(req.toIndex, r.group.applied), Math.min(req.maxBytes, logChunkBytes), signal);
        return (async function* () {
          if (fetching && floor !== undefined && req.fromIndex < floor) return;
          for await (const entries of chunks) yield { entries };
        })();
      },
    };
  }

  #arrivedIntact(r: PartitionReplica, m: Message): boolean {
    for (const e of m.entries) {
      if (e.type !== 'normal') continue;
      try {
        checkArrived(e.data);
      } catch (err) {
        this.#damagedArrivals++;
        if (this.#damagedArrivals <= 10 || this.#damagedArrivals % 100 === 0) {
          this.#o.logger.warn({ topic: r.topic, partition: r.partition, group: r.groupId, from: m.from, index: e.index, err: (err as Error).message, dropped: this.#damagedArrivals }, 'dropped an append whose entry arrived damaged; its leader sends it again');
        }
        return false;
      }
    }
    return true;
  }

  #damagedArrivals = 0;

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
   * A follower told to install a snapshot lacks entries its leader no longer holds in memory. The
   * snapshot of a partition group is only its small state (offsets, de-duplication window): the
   * events are the log. So before the snapshot is stepped in, the follower fetches the entries after
   * what it applied up to the snapshot's index from the leader (log shipping, in bounded chunks),
   * stores and applies them; then the snapshot finds its state already there. Meanwhile the group's
   * Readies wait (nothing else applies to it), and a second snapshot message while fetching is
   * ignored (the leader sends it again).
   */
  async #catchUp(r: PartitionReplica, m: Message): Promise<void> {
    const id = r.groupId;
    const snap = m.snapshot;
    if (snap === undefined || this.#catchingUp.has(id)) return;
    const target = snap.metadata.index;
    // A log that already holds the snapshot's last entry holds everything before it (Log Matching):
    // the group fast-forwards its commit index and applies those entries itself; fetching and
    // applying them here too would apply them twice. A snapshot from a leader of an older term than
    // the group has seen is dropped by the group: applying what it covers here would put the replica
    // ahead of its group, which would then apply those entries again.
    if (r.applied >= target || r.group.raw.termAt(target) === snap.metadata.term || m.term < r.group.raw.status().term || this.#c.forwarder?.fetchLog === undefined) {
      this.#o.host.receive(id, m);
      return;
    }
    let start: readonly [number, number] | undefined;
    try {
      start = decodeImage(snap.data).start;
    } catch {
      // a malformed image: the core refuses the snapshot (snapshotProblem)
    }
    if (start !== undefined && r.applied + 1 < start[0]) {
      // Retention removed the entries this replica lacks from the leader's log: it takes the snapshot
      // without them (it then reads nothing before the snapshot) and fetches the log the leader still
      // holds, up to the snapshot, afterwards (#fetchHistory).
      this.#o.logger.info({ topic: r.topic, partition: r.partition, group: id, leader: m.from, applied: r.applied, leaderLogStart: start[0], snapshot: target }, 'partition replica behind its leader\'s retained log: installing the snapshot, then fetching the retained log before it');
      // Incomplete from the answer to this snapshot on (the leader sees it in its progress): until the
      // retained log is here, this replica is not promoted from learner (replica-move-plan.ts).
      r.group.raw.setIncomplete(true);
      this.#o.host.receive(id, m);
      // The group did not take the snapshot (it holds it only if the snapshot's last entry is now
      // its own): nothing will be fetched for it.
      if (r.group.raw.termAt(target) !== snap.metadata.term && r.pendingHistory === undefined) this.#historyDone(r);
      return;
    }
    this.#catchingUp.add(id);
    const log = this.#o.logger.child({ topic: r.topic, partition: r.partition, group: id });
    const started = this.#o.clock.monotonicMs();
    let fetched = 0;
    try {
      await this.#o.host.pause(id);
      const from = r.applied + 1;
      log.info({ leader: m.from, from, to: target }, 'partition replica behind its leader\'s log: fetching the entries it lacks');
      // The leader first; any other replica serves the same committed entries (a leader still
      // fetching the retained log before its own snapshot does not serve the entries before it).
      const peers = this.#c.otherNodes([m.from, ...(this.#o.placement(r.topic, r.partition)?.replicas ?? [])]);
      const failures: string[] = [];
      const hosted = () => !this.#c.closed && this.#c.byKey.get(PartitionReplicas.key(r.topic, r.partition)) === r;
      for (const peer of peers) {
        if (r.applied >= target) break;
        try {
          const signal = AbortSignal.timeout(60_000);
          for await (const chunk of this.#c.forwarder!.fetchLog!(peer, { group: id, fromIndex: r.applied + 1, toIndex: target, maxBytes: logChunkBytes }, signal)) {
            // Dropped meanwhile (moved away, event type deleted): it stores nothing more.
            if (!hosted()) return;
            const entries = chunk.entries.filter((e) => e.index > r.applied && e.index <= target);
            if (!(await r.storeFetched(entries, hosted))) throw new Error(`it no longer holds the entries after ${r.applied} (its log starts at ${entries[0]?.index})`);
            fetched += entries.length;
          }
          if (r.applied < target) failures.push(`node ${peer} holds the entries up to ${r.applied} only`);
        } catch (err) {
          failures.push(`node ${peer}: ${(err as Error).message}`);
        }
      }
      if (r.applied < target) {
        log.warn({ applied: r.applied, target, failures }, 'log shipping ended before the snapshot index; the leader will send the snapshot again');
        return;
      }
      log.info({ entries: fetched, ms: Math.round(this.#o.clock.monotonicMs() - started) }, 'partition replica fetched the log it lacked; installing the snapshot');
      this.#o.host.receive(id, m);
    } catch (err) {
      log.warn({ err: (err as Error).message, fetched }, 'log shipping failed; the leader will send the snapshot again');
    } finally {
      this.#catchingUp.delete(id);
      this.#o.host.resume(id);
    }
  }

  readonly #catchingUp = new Set<number>();

  /**
   * After a snapshot was installed without the log before it (the leader's retention had removed the
   * entries this replica lacked), fetches the log the leader still holds up to the snapshot, from
   * where the image says it starts (`pendingHistory`, recorded with the snapshot): in bounded chunks,
   * each stored with the index rows that applying it gives (the same offsets as the leader's: the same
   * entries applied by the same rules from the same offset), checked to be contiguous and at the end
   * to arrive exactly at the snapshot's next offset. Then those events are readable here; until then
   * reads of them go to another replica. A try that fails is removed before the next one, which may
   * ask another replica (the leader first, then the others: any replica serves committed entries).
   * A replica whose retention removed the start of that log since (or that gave up its own fetch, and
   * holds its log from its snapshot on) answers from where its log starts now: the fetch takes the log
   * from there, starting at the oldest offset that replica names, and this replica's retained start
   * moves there too, as its own retention would have moved it (the events before it were removed by
   * a retention cutoff; the rest is still served, so giving it up would lose retained events here).
   * Tries go on while no replica can be reached (a leader change, a cut); when the replicas that
   * answered hold none of that log (their retention went past the snapshot), or answer one whose
   * offsets do not add up to the snapshot's, the replica reads from its snapshot on (as after more
   * retention). A node that stops meanwhile starts the fetch again at its next start
   * (PartitionReplica.load). A later snapshot installed without its log replaces the fetch.
   */
  #fetchHistory(r: PartitionReplica): void {
    const pending = r.pendingHistory;
    const log = this.#o.logger.child({ topic: r.topic, partition: r.partition, group: r.groupId });
    if (pending === undefined) {
      log.info({ oldest: r.bounds().oldest }, 'partition replica installed a snapshot without the log before it, and there is no retained log before it to fetch: it reads from the snapshot on');
      this.#historyDone(r);
      return;
    }
    const fetchLog = this.#c.forwarder?.fetchLog?.bind(this.#c.forwarder);
    const boundsOf = this.#c.forwarder?.bounds?.bind(this.#c.forwarder);
    const { index, next, fromIndex, fromOffset } = pending;
    const generation = r.historyGeneration;
    const current = () => !this.#c.closed && r.historyGeneration === generation && this.#c.byKey.get(PartitionReplicas.key(r.topic, r.partition)) === r;
    r.historyFrom = fromOffset;
    this.#historyFetching.add(r.groupId);
    const started = this.#o.clock.monotonicMs();
    void (async () => {
      // The removal of what the replica held before the snapshot is queued for the node's next write:
      // it must be done before fetched entries are stored, or it would remove them.
      await this.#o.host.flushRows();
      let lastErr = fetchLog === undefined ? 'this node cannot fetch from others' : 'no replica to fetch from';
      // Replicas that answered without that log (retention removed it there), by node.
      const without = new Set<NodeId>();
      for (let attempt = 0; fetchLog !== undefined && current(); attempt++) {
        const former = this.#o.formerMember;
        const listed = this.#o.placement(r.topic, r.partition)?.replicas ?? [];
        const peers = this.#c.otherNodes([r.group.leader, ...(former === undefined ? listed : listed.filter((m) => !former(m)))]);
        if (peers.length === 0 || peers.every((n) => without.has(n))) break;
        const from = peers[attempt % peers.length]!;
        // Where the fetched log starts: the retained start, or later when `from` holds it from later.
        let start = { fromIndex, fromOffset };
        let scratch: PartitionState | undefined;
        let chunks = 0;
        try {
          const signal = AbortSignal.timeout(120_000);
          for await (const chunk of fetchLog(from, { group: r.groupId, fromIndex, toIndex: index, maxBytes: logChunkBytes }, signal)) {
            if (!current()) return;
            const first = chunk.entries[0];
            if (first === undefined) continue;
            if (scratch === undefined) {
              if (first.index > fromIndex) {
                // `from` no longer holds the start of that log (its retention removed it, or it holds
                // its log from a snapshot on): the log is taken from where `from` holds it, at the
                // oldest offset it names (a retention cut falls between batches: the entries from its
                // first on take the offsets from its oldest on). A start that does not fit shows at
                // the end: the offsets do not arrive at the snapshot's.
                const oldest = boundsOf === undefined ? undefined : (await boundsOf(from, { group: r.groupId, topic: r.topic, partition: r.partition })).oldest;
                if (!current()) return;
                if (oldest === undefined || oldest <= fromOffset || oldest >= next) throw new HistoryMissingError(`its log starts at entry ${first.index}, after ${fromIndex}, at offset ${oldest ?? 'unknown'}`);
                start = { fromIndex: first.index, fromOffset: oldest };
              }
              // The de-duplication window the log had where the fetch starts is not here; the ids
              // later windows remember tell which batches were retries of earlier ones.
              scratch = new PartitionState({ applied: start.fromIndex - 1, next: start.fromOffset, oldest: start.fromOffset, recent: [] }, r.requestsKnown());
            }
            const s = scratch;
            chunk.entries.forEach((e, i) => {
              if (e.index !== s.applied + 1 + i) throw new HistoryMissingError(`entry ${e.index} where ${s.applied + 1 + i} was expected`);
            });
            await r.storeHistory(chunk.entries, s, next);
            chunks++;
          }
          if (!current()) return;
          if (scratch === undefined || scratch.applied !== index || scratch.newest + 1 !== next) {
            throw new HistoryMissingError(`the fetched log ends at index ${scratch?.applied ?? fromIndex - 1} and offset ${scratch?.newest ?? fromOffset - 1}, the snapshot at index ${index} and offset ${next - 1}`);
          }
          r.extendBack({ ...pending, ...start });
          log.info({ from, fromIndex: start.fromIndex, toIndex: index, oldest: start.fromOffset, retainedStart: fromOffset, chunks, ms: Math.round(this.#o.clock.monotonicMs() - started) }, 'partition replica fetched the retained log before its snapshot: it reads from the retained start');
          this.#historyFetching.delete(r.groupId);
          this.#historyDone(r);
          return;
        } catch (err) {
          if (!current()) return;
          if (err instanceof HistoryMissingError) without.add(from);
          lastErr = `node ${from}: ${(err as Error).message}`;
          if (attempt < 10 || attempt % 100 === 0) log.warn({ from, err: (err as Error).message, chunks, attempt }, 'fetching the retained log before the snapshot failed; trying again');
          await r.dropHistory(fromOffset, next, fromIndex, index).catch(() => undefined);
          r.historyFrom = fromOffset;
          await this.#c.sleep(Math.min(5000, 200 * 2 ** Math.min(5, Math.floor(attempt / Math.max(1, peers.length)))));
        }
      }
      if (!current()) return;
      r.historyFrom = undefined;
      this.#historyFetching.delete(r.groupId);
      await r.abandonHistory(pending).catch(() => undefined);
      if (current()) this.#historyDone(r);
      log.error({ err: lastErr, oldest: next }, 'partition replica could not fetch the retained log before its snapshot: it reads from the snapshot on');
    })();
  }

  /**
   * The replica holds its whole retained log again (fetched, or nothing left anywhere to fetch): it
   * is complete, and tells its leader at once (raft RawNode.setIncomplete).
   */
  #historyDone(r: PartitionReplica): void {
    if (!r.group.raw.incomplete) return;
    r.group.raw.setIncomplete(false);
    this.#o.host.kick(r.groupId);
  }

  /** Groups fetching their history (retention waits: it would remove what is being fetched). */
  readonly #historyFetching = new Set<number>();

  /**
   * Leadership back to each partition's preferred leader once it is caught up, and away from a leader
   * still fetching the retained log before its snapshot (partition-leader-balance.ts). Called
   * periodically; returns the number of transfers started.
   */
  balanceLeaders(): number {
    return this.#leaders.balance();
  }

  /**
   * What this node knows of each group it hosts, for GET /cluster: its own commit and applied index,
   * the leader and term, and, where it leads, how far each follower has acknowledged (match; the
   * leader does not learn a follower's applied index, so match stands for both), and whether each is
   * incomplete (its own flag; a follower's from its latest append answer in the leader's progress).
   *
   * `reachable` is the transport's word on a peer. A follower it cannot reach reports nothing (and
   * so counts as not in sync): the leader's progress of a dead follower keeps the match it had, and a
   * new leader starts every follower at match 0; either way an idle group would call a follower
   * that was killed "in sync" for as long as it stays down.
   */
  facts(reachable: (node: NodeId) => boolean = () => true): Map<number, GroupFacts> {
    const out = new Map<number, GroupFacts>();
    for (const r of this.#c.byKey.values()) {
      const st = r.group.raw.status();
      // Keyed by member id, as the placement lists them; the transport is asked about their nodes.
      const replicas = new Map<number, ReplicaFacts>([[r.group.self, { commit: st.commit, applied: r.group.applied, incomplete: r.group.raw.incomplete }]]);
      if (st.progress !== undefined) for (const [peer, pr] of st.progress) if (peer !== r.group.self && reachable(nodeOfMember(peer))) replicas.set(peer, { commit: pr.match, applied: pr.match, incomplete: pr.incomplete });
      out.set(r.groupId, { leader: st.lead === noNode ? null : st.lead, term: st.term, replicas, partial: st.progress === undefined });
    }
    // Partitions held elsewhere: only the leader a replica named; their replicas are unknown here.
    for (const [key, b] of this.#remote.entries()) {
      const [topic, partition] = key.split(':').map(Number) as [number, number];
      const p = this.#o.placement(topic, partition);
      // A replica held here (a learner, or one promoted since it was remote) tells more than the cache.
      // The replica named the leader's node; the placement names its member.
      if (p !== undefined && !out.has(p.group)) out.set(p.group, { leader: b.leader === undefined ? null : (memberOnNode(p, b.leader.id) ?? b.leader.id), term: b.leader?.term ?? 0, replicas: new Map(), partial: true });
    }
    return out;
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

  /** The groups this node has data of on disk, with their partition (to drop those moved away at start). */
  storedGroups(): AsyncIterable<{ group: number; topic: number; partition: number }> {
    return this.#drops.storedGroups();
  }

  async close(): Promise<void> {
    this.#c.closed = true;
    for (const c of this.#c.coalescers.values()) c.fail(new ProposalFailedError('closed', 'the node is shutting down'));
    for (const r of this.#c.byKey.values()) r.release();
    await Promise.allSettled([...this.#c.opening.values()]);
  }
}

/** A repair of a replica dropped while it ran: it writes nothing more. */
class ReplicaDroppedError extends Error {
  constructor() {
    super('the replica was dropped (moved away, or its event type deleted) during the repair');
  }
}
