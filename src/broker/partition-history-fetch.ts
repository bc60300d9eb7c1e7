/**
 * Log shipping and the fetch of a replica's history: a follower sent a snapshot fetches the entries
 * it lacks from its leader (or any replica) before the snapshot is stepped in, since a partition
 * group's snapshot is only its small state and the events are the log; a follower whose leader's
 * retention removed those entries takes the snapshot without them and fetches the retained log
 * before it afterwards (the history), reading those events from another replica meanwhile.
 */
import { type Message, type NodeId } from '../raft/index.js';
import { PartitionState } from '../replication/partition-state.js';
import { HistoryMissingError, decodeImage, type PartitionReplica } from './partition-replica.js';
import type { PartitionMemoryBudget } from './partition-memory-budget.js';
import { logChunkBytes, replicaKey, type ReplicasContext } from './partition-replicas-context.js';
import { historyRetryMs, snapshotPath } from './snapshot-catch-up-rule.js';

export class PartitionHistoryFetch {
  readonly #c: ReplicasContext;
  /** Groups applying fetched entries by themselves (their Raft messages wait: catchUp). */
  readonly #catchingUp = new Set<number>();
  /** Groups fetching their history (retention waits: it would remove what is being fetched). */
  readonly #historyFetching = new Set<number>();

  /** Takes a snapshot again whose image names a log start the replica no longer holds. */
  readonly #memory: PartitionMemoryBudget;

  constructor(c: ReplicasContext, memory: PartitionMemoryBudget) {
    this.#c = c;
    this.#memory = memory;
  }

  /** Whether the group applies entries it fetched by itself (nothing may move its log or commit index meanwhile). */
  catchingUp(group: number): boolean {
    return this.#catchingUp.has(group);
  }

  /** Whether the group fetches the retained log before its snapshot (retention waits meanwhile). */
  fetching(group: number): boolean {
    return this.#historyFetching.has(group);
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
  async catchUp(r: PartitionReplica, m: Message): Promise<void> {
    const id = r.groupId;
    const snap = m.snapshot;
    if (snap === undefined || this.#catchingUp.has(id)) return;
    const target = snap.metadata.index;
    let leaderLogStart: number | undefined;
    try {
      leaderLogStart = decodeImage(snap.data).start?.[0];
    } catch {
      // a malformed image: the core refuses the snapshot (snapshotProblem)
    }
    // snapshot-catch-up-rule.ts says why each path.
    const path = snapshotPath({
      applied: r.applied,
      snapshotIndex: target,
      snapshotTerm: snap.metadata.term,
      termAtSnapshotIndex: r.group.raw.termAt(target),
      messageTerm: m.term,
      groupTerm: r.group.raw.status().term,
      canFetch: this.#c.forwarder?.fetchLog !== undefined,
      leaderLogStart,
    });
    if (path === 'group') {
      this.#c.o.host.receive(id, m);
      return;
    }
    if (path === 'withoutLog') {
      // It takes the snapshot without the entries it lacks (it then reads nothing before the
      // snapshot) and fetches the log the leader still holds, up to the snapshot, afterwards (fetch).
      this.#c.o.logger.info({ topic: r.topic, partition: r.partition, group: id, leader: m.from, applied: r.applied, leaderLogStart, snapshot: target }, 'partition replica behind its leader\'s retained log: installing the snapshot, then fetching the retained log before it');
      // Incomplete from the answer to this snapshot on (the leader sees it in its progress): until the
      // retained log is here, this replica is not promoted from learner (replica-move-plan.ts).
      r.group.raw.setIncomplete(true);
      this.#c.o.host.receive(id, m);
      // The group did not take the snapshot (it holds it only if the snapshot's last entry is now
      // its own): nothing will be fetched for it.
      if (r.group.raw.termAt(target) !== snap.metadata.term && r.pendingHistory === undefined) this.done(r);
      return;
    }
    this.#catchingUp.add(id);
    const log = this.#c.o.logger.child({ topic: r.topic, partition: r.partition, group: id });
    const started = this.#c.o.clock.monotonicMs();
    let fetched = 0;
    try {
      await this.#c.o.host.pause(id);
      const from = r.applied + 1;
      log.info({ leader: m.from, from, to: target }, 'partition replica behind its leader\'s log: fetching the entries it lacks');
      // The leader first; any other replica serves the same committed entries (a leader still
      // fetching the retained log before its own snapshot does not serve the entries before it).
      const peers = this.#c.otherNodes([m.from, ...(this.#c.o.placement(r.topic, r.partition)?.replicas ?? [])]);
      const failures: string[] = [];
      const hosted = () => this.#c.hosts(r);
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
      log.info({ entries: fetched, ms: Math.round(this.#c.o.clock.monotonicMs() - started) }, 'partition replica fetched the log it lacked; installing the snapshot');
      this.#c.o.host.receive(id, m);
    } catch (err) {
      log.warn({ err: (err as Error).message, fetched }, 'log shipping failed; the leader will send the snapshot again');
    } finally {
      this.#catchingUp.delete(id);
      this.#c.o.host.resume(id);
    }
  }

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
  fetch(r: PartitionReplica): void {
    const pending = r.pendingHistory;
    const log = this.#c.o.logger.child({ topic: r.topic, partition: r.partition, group: r.groupId });
    if (pending === undefined) {
      log.info({ oldest: r.bounds().oldest }, 'partition replica installed a snapshot without the log before it, and there is no retained log before it to fetch: it reads from the snapshot on');
      this.done(r);
      return;
    }
    const fetchLog = this.#c.forwarder?.fetchLog?.bind(this.#c.forwarder);
    const boundsOf = this.#c.forwarder?.bounds?.bind(this.#c.forwarder);
    const { index, next, fromIndex, fromOffset } = pending;
    const generation = r.historyGeneration;
    const current = () => !this.#c.closed && r.historyGeneration === generation && this.#c.byKey.get(replicaKey(r.topic, r.partition)) === r;
    r.historyFrom = fromOffset;
    this.#historyFetching.add(r.groupId);
    const started = this.#c.o.clock.monotonicMs();
    void (async () => {
      // The removal of what the replica held before the snapshot is queued for the node's next write:
      // it must be done before fetched entries are stored, or it would remove them.
      await this.#c.o.host.flushRows();
      let lastErr = fetchLog === undefined ? 'this node cannot fetch from others' : 'no replica to fetch from';
      // Replicas that answered without that log (retention removed it there), by node.
      const without = new Set<NodeId>();
      for (let attempt = 0; fetchLog !== undefined && current(); attempt++) {
        const former = this.#c.o.formerMember;
        const listed = this.#c.o.placement(r.topic, r.partition)?.replicas ?? [];
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
          log.info({ from, fromIndex: start.fromIndex, toIndex: index, oldest: start.fromOffset, retainedStart: fromOffset, chunks, ms: Math.round(this.#c.o.clock.monotonicMs() - started) }, 'partition replica fetched the retained log before its snapshot: it reads from the retained start');
          this.#historyFetching.delete(r.groupId);
          this.done(r);
          // Taken from a later start than the snapshot's image names: the image is taken again (below).
          void this.#memory.refreshStaleStart(r, log);
          return;
        } catch (err) {
          if (!current()) return;
          if (err instanceof HistoryMissingError) without.add(from);
          lastErr = `node ${from}: ${(err as Error).message}`;
          if (attempt < 10 || attempt % 100 === 0) log.warn({ from, err: (err as Error).message, chunks, attempt }, 'fetching the retained log before the snapshot failed; trying again');
          await r.dropHistory(fromOffset, next, fromIndex, index).catch(() => undefined);
          r.historyFrom = fromOffset;
          await this.#c.sleep(historyRetryMs(attempt, peers.length));
        }
      }
      if (!current()) return;
      r.historyFrom = undefined;
      this.#historyFetching.delete(r.groupId);
      await r.abandonHistory(pending).catch(() => undefined);
      if (current()) this.done(r);
      log.error({ err: lastErr, oldest: next }, 'partition replica could not fetch the retained log before its snapshot: it reads from the snapshot on');
      // Its snapshot's image still names the start of the log it gave up: as this replica's leader, a
      // follower sent that image would fetch the entries after it from replicas that no longer hold
      // them, for good (host simulation, seed 136). It is taken again, naming the log from the snapshot on.
      if (current()) void this.#memory.refreshStaleStart(r, log);
    })();
  }

  /**
   * The replica holds its whole retained log again (fetched, or nothing left anywhere to fetch): it
   * is complete, and tells its leader at once (raft RawNode.setIncomplete).
   */
  done(r: PartitionReplica): void {
    if (!r.group.raw.incomplete) return;
    r.group.raw.setIncomplete(false);
    this.#c.o.host.kick(r.groupId);
  }
}
