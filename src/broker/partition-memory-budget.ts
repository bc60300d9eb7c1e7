/**
 * The memory budget of the partitions' logs: each group keeps a tail of applied entries in memory
 * (it serves live consumers and lagging followers without reading the KV), bounded per partition and
 * for the node; past a bound the oldest applied entries leave memory (the KV keeps them: it is the
 * partition log) and the group's snapshot is taken at the applied index. The rule of when and how
 * far is memory-compaction-rule.ts; this part does the compaction and keeps the node's byte count.
 */
import type { Logger } from 'pino';
import { assert } from '../core/assert.js';
import { decodeImage, encodeImage, type PartitionReplica } from './partition-replica.js';
import type { ReplicasContext } from './partition-replicas-context.js';
import { RingStorage } from './ring-storage.js';
import { compactionTarget, memoryBytesTotalDefault, memoryEntriesDefault, shareOfBudget, tailBytesToKeep } from './memory-compaction-rule.js';

export class PartitionMemoryBudget {
  readonly #c: ReplicasContext;
  /** Groups whose memory compaction (or snapshot retake) runs: one at a time per group. */
  readonly #compacting = new Set<number>();
  /** Bytes of applied entries in the memory tails of all partitions (PartitionReplica.tailBytes summed). */
  #tailBytes = 0;
  /** The slabs' refusals counted at the last look (#overBudget). */
  #refusedSeen = 0;

  constructor(c: ReplicasContext) {
    this.#c = c;
  }

  /** Counts a replica's memory tail in the node's from now on (at open: what it restored from the KV too). */
  track(r: PartitionReplica): void {
    r.onTailBytes = (delta) => (this.#tailBytes += delta);
    this.#tailBytes += r.tailBytes;
    r.syncTailBytes();
  }

  /** A dropped replica's tail no longer counts. */
  forget(r: PartitionReplica): void {
    this.#tailBytes -= r.tailBytes;
    // Its entries leave the node's slabs (a read still in flight gets copies).
    const s = r.group.store.storage;
    if (s instanceof RingStorage) s.release();
  }

  /** After a group applied: its own bounds, then the node's. */
  afterApply(r: PartitionReplica): void {
    this.maybeCompact(r);
    this.#overBudget();
  }

  /**
   * Drops the in-memory copy of entries applied long enough ago (they stay in the KV, which is the
   * partition log), keeping enough behind for followers that lag a little. A follower behind what the
   * leader keeps in memory is sent a snapshot and fetches the entries it lacks (log shipping).
   */
  maybeCompact(r: PartitionReplica, nodeShareBytes?: number): void {
    const g = r.group;
    const mem = g.store.storage;
    const max = this.#c.o.memoryEntries ?? memoryEntriesDefault;
    r.syncTailBytes();
    const keepBytes = tailBytesToKeep(r.tailBytes, nodeShareBytes);
    // The common case (within every bound) computes nothing more: this runs after every apply.
    if (mem.lastIndex() - mem.firstIndex() < max && keepBytes === undefined) return;
    const progress = g.raw.status().progress;
    const compactTo = compactionTarget({
      firstIndex: mem.firstIndex(),
      lastIndex: mem.lastIndex(),
      applied: g.applied,
      maxEntries: max,
      keepBytes,
      tailBytes: r.tailBytes,
      indexKeeping: (bytes) => mem.compactIndexKeeping(bytes, g.applied),
      followerMatches: progress === undefined ? undefined : [...progress].filter(([peer]) => peer !== g.self).map(([, pr]) => pr.match),
    });
    if (compactTo === undefined || this.#compacting.has(g.id)) return;
    this.#compacting.add(g.id);
    this.#c.writes.track(g.id, this.compactMemory(r, compactTo)).then(
      () => {
        this.#compacting.delete(g.id);
        // Applies that came while this compaction ran skipped theirs; without a look now, a group that
        // then went idle would keep them in memory until its next apply.
        if (this.#c.hosts(r)) this.maybeCompact(r);
      },
      (err: unknown) => {
        this.#compacting.delete(g.id);
        this.#c.o.logger.warn({ err, group: g.id }, 'partition log memory compaction failed; retried later');
      },
    );
  }

  /**
   * Over the node's budget: partitions holding more than their share drop their tail (idle ones too).
   * The same when the tails' slabs refused an entry since the last look (byte-slabs.ts): every slab is
   * partly live, each kept by the oldest entries of some tails (a partition that went quiet after a
   * burst keeps its burst), and the new entries keep buffers of their own again, the growth the slabs
   * exist to avoid. Tails holding more than half their share of the slabs then drop their oldest
   * entries down to it, which empties the oldest slabs.
   */
  #overBudget(): void {
    const budget = this.#c.o.memoryBytesTotal ?? memoryBytesTotalDefault;
    const slabs = this.#c.slabs;
    const slabsFull = slabs.refused !== this.#refusedSeen;
    this.#refusedSeen = slabs.refused;
    if (this.#tailBytes > budget) {
      const share = this.#shareBytes();
      for (const r of this.#c.byKey.values()) if (r.tailBytes > share) this.maybeCompact(r, share);
    }
    if (slabsFull) {
      const share = shareOfBudget(slabs.totalBytes, this.#c.byKey.size);
      for (const r of this.#c.byKey.values()) if (r.tailBytes > share / 2) this.maybeCompact(r, share);
    }
  }

  #shareBytes(): number {
    return shareOfBudget(this.#c.o.memoryBytesTotal ?? memoryBytesTotalDefault, this.#c.byKey.size);
  }

  /** Drops entries up to `compactTo` (applied) from the group's memory; the KV keeps them. */
  async compactMemory(r: PartitionReplica, compactTo: number, refresh = false): Promise<void> {
    const g = r.group;
    if (compactTo < g.store.storage.firstIndex() && !refresh) return;
    const start = await r.logStart();
    const state = r.image();
    const image = encodeImage({ ...state, start });
    const applied = g.applied;
    const conf = g.conf;
    // Log shipping applied entries here that the group has not (their snapshot's install is still to
    // come, or a full disk refused it): the image is the state at the replica's index, not at the
    // group's, and stored at the group's it would give those entries their offsets again wherever
    // it is installed or restarted from. Nothing is taken until the group is there.
    if (state.applied !== applied) return;
    assert(compactTo <= applied, `compacting to ${compactTo} beyond applied ${applied}`);
    // The index rows of everything applied must be in the KV before memory forgets those batches.
    await this.#c.o.host.flushRows();
    // Dropped meanwhile (moved away, event type deleted): its keys are being deleted; write none.
    if (!this.#c.holds(r)) return;
    // A snapshot from the leader installed meanwhile covers more than this one would: nothing to do
    // (its index is past what was applied when this one was taken, whose term memory no longer has).
    if (applied < g.store.storage.firstIndex() - 1) return;
    const firstBefore = g.store.storage.firstIndex();
    await g.store.compact(applied, conf, image, compactTo);
    // A refresh that dropped nothing from memory leaves the tail (and its byte count) as it was.
    if (compactTo >= firstBefore) r.forgetBefore(compactTo + 1);
  }

  /**
   * After retention removed entries: the snapshot is taken again, so that a follower sent it learns
   * where the log now starts (the image's `start`). A compaction running now may have taken its image
   * before this removal (its `start` naming removed entries): the snapshot is taken again after it,
   * not skipped (host simulation, seed 292).
   */
  async retakeAfterRemoval(r: PartitionReplica): Promise<void> {
    const id = r.groupId;
    for (let i = 0; i < 100 && this.#compacting.has(id) && this.#c.writes.has(id); i++) await this.#c.writes.settled(id);
    if (this.#compacting.has(id)) return;
    // One compaction of a group at a time (a later one taken first would make this one's older).
    this.#compacting.add(id);
    try {
      await this.#c.writes.track(id, this.compactMemory(r, r.group.store.storage.firstIndex() - 1, true));
    } finally {
      this.#compacting.delete(id);
    }
  }

  /**
   * Takes the snapshot again when its image says the log starts at an entry this replica no longer
   * holds: one retention removed (a crash after retention removed entries but before the snapshot
   * saying where the log now starts was written leaves such an image, and a follower sent it would ask
   * this replica for those entries again and again: host simulation, seed 292), or one before where a
   * fetch of the log before the snapshot ended (taken from a later start, or given up: seed 136).
   */
  async refreshStaleStart(r: PartitionReplica, log: Logger): Promise<void> {
    const id = r.groupId;
    const data = r.group.store.storage.snapshot().data;
    let start: readonly [number, number] | undefined;
    try {
      start = data.byteLength === 0 ? undefined : decodeImage(data).start;
    } catch {
      return;
    }
    if (start === undefined) return;
    const actual = await r.logStart();
    if (actual[0] <= start[0] || !this.#c.holds(r)) return;
    // A compaction running now may have taken its image before the log start moved: this one comes after it.
    for (let i = 0; i < 100 && this.#compacting.has(id) && this.#c.writes.has(id); i++) await this.#c.writes.settled(id);
    if (this.#compacting.has(id)) return;
    log.info({ stored: start, actual }, 'partition snapshot names a log start this replica no longer holds: taking it again');
    this.#compacting.add(id);
    try {
      await this.#c.writes.track(id, this.compactMemory(r, r.group.store.storage.firstIndex() - 1, true));
    } catch (err) {
      log.warn({ err }, 'taking the partition snapshot again failed; the next retention pass takes it');
    } finally {
      this.#compacting.delete(id);
    }
  }
}
