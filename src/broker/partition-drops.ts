/**
 * Drops of partition replicas and their data: all of an event type's when it is deleted, one when a
 * move took it to another node. A drop takes the replica off the host first, then waits for the
 * writes still running beside its Raft turns and for the rows its last turns queued, and deletes its
 * keys last, so that nothing of it is written after the deletion.
 */
import { PartitionUnavailableError } from '../log/index.js';
import { decodeGroupDirectory, dropGroupKeys, dropReplicaRows, groupDirectoryKey, groupDirectoryRange, lossActedKey, putLossActed } from './partition-group-keys.js';
import type { PartitionMemoryBudget } from './partition-memory-budget.js';
import type { ReplicasContext } from './partition-replicas-context.js';
import { replicaKey } from './partition-replicas-context.js';
import { RaftLogStore } from './raft-log-store.js';
import type { DamageRecord } from './raft-records.js';

export class PartitionDrops {
  readonly #c: ReplicasContext;
  readonly #memory: PartitionMemoryBudget;
  /** Drops in flight, per partition: an open of the same partition waits for them (ensure). */
  readonly #dropping = new Map<string, Promise<void>>();

  constructor(c: ReplicasContext, memory: PartitionMemoryBudget) {
    this.#c = c;
    this.#memory = memory;
  }

  /** The drop of the partition's replica in flight (settled either way), if any. */
  inFlight(key: string): Promise<void> | undefined {
    return this.#dropping.get(key);
  }

  /** Groups this node holds according to its own disk (to drop those of deleted event types). */
  async storedTopics(): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    for await (const { group, topic } of this.storedGroups()) {
      const list = out.get(topic) ?? [];
      list.push(group);
      out.set(topic, list);
    }
    return out;
  }

  /** The groups this node has data of on disk, with their partition (to drop those moved away at start). */
  async *storedGroups(): AsyncIterable<{ group: number; topic: number; partition: number }> {
    for await (const [k, v] of this.#c.o.kv.iterate(groupDirectoryRange())) yield decodeGroupDirectory(k, v);
  }

  async dropTopic(topic: number): Promise<void> {
    const c = this.#c;
    // A replica of the topic being opened is dropped once open (as dropReplica waits for its open):
    // an open that ended after the deletion would host the replica again and write its keys.
    await Promise.allSettled([...c.opening].filter(([key]) => key.startsWith(`${topic}:`)).map(([, p]) => p));
    await c.o.legacy?.dropTopic(topic);
    const groups = (await this.storedTopics()).get(topic) ?? [];
    for (const r of [...c.byKey.values()].filter((x) => x.topic === topic)) {
      c.byKey.delete(replicaKey(r.topic, r.partition));
      c.o.groups?.unregister(r.groupId);
      c.coalescers.get(r.groupId)?.fail(new PartitionUnavailableError(r.topic, r.partition, new Error('the event type is being deleted')));
      c.coalescers.delete(r.groupId);
      await c.o.host.remove(r.groupId);
      r.release();
      // Its memory tail no longer counts in the node's budget (else the node took itself for over it
      // and dropped the tails of the partitions left).
      this.#memory.forget(r);
      if (!groups.includes(r.groupId)) groups.push(r.groupId);
    }
    if (groups.length === 0) return;
    for (const g of groups) await c.writes.settled(g);
    // Rows the groups queued before they left the host go first, so the deletion below removes them.
    await c.o.host.flushRows();
    await c.o.kv.write((b) => {
      for (const g of groups) dropGroupKeys(b, g);
    }, { durable: false });
  }

  /**
   * Drops this node's replica of a partition and its data (a move took it elsewhere). The caller
   * checked that the group no longer counts this node (replica-mover.ts): what it held is on the others.
   */
  async dropReplica(topic: number, partition: number, group: number): Promise<void> {
    const key = replicaKey(topic, partition);
    const earlier = this.#dropping.get(key);
    const drop = (async () => {
      await earlier;
      await this.#drop(key, topic, partition, group);
    })();
    // Opens of this partition wait for it (ensure); it settles either way, and a failed drop is
    // answered to its caller, who retries it.
    const settled = drop.catch(() => undefined);
    this.#dropping.set(key, settled);
    try {
      await drop;
    } finally {
      if (this.#dropping.get(key) === settled) this.#dropping.delete(key);
    }
  }

  /**
   * Empties this node's replica of `group` for the accepted loss `lossId` (group-loss-apply.ts), once:
   * the replica, open or not, is taken off the host, and its records and rows are removed, the member
   * marked damaged (`damage`, given what it held) and the loss recorded as acted on (lossActedKey), in
   * one durable write. Returns false, doing nothing, when this node already did it for that loss.
   * Opens of the partition wait for it, as for a drop; the caller opens it again.
   */
  async emptyForLoss(group: number, lossId: string, damage: (held: { term: number; lastIndex: number } | undefined) => DamageRecord): Promise<boolean> {
    const c = this.#c;
    const acted = await c.o.kv.get(lossActedKey(group));
    if (acted !== null && acted.toString('utf8') === lossId) return false;
    const open = [...c.byKey.values()].find((x) => x.groupId === group);
    const dir = open === undefined ? await c.o.kv.get(groupDirectoryKey(group)) : null;
    const where = open !== undefined ? { topic: open.topic, partition: open.partition } : dir !== null ? decodeGroupDirectory(groupDirectoryKey(group), dir) : undefined;
    if (where === undefined) {
      // Nothing of the group on this storage: only the record that this node acted on the loss, so a
      // replay of the metadata log does not empty what it later holds as a voter again.
      await c.o.kv.write((b) => putLossActed(b, group, lossId), { durable: true });
      return true;
    }
    const key = replicaKey(where.topic, where.partition);
    const earlier = this.#dropping.get(key);
    const run = (async () => {
      await earlier;
      await c.opening.get(key)?.catch(() => undefined);
      const again = await c.o.kv.get(lossActedKey(group));
      if (again !== null && again.toString('utf8') === lossId) return false;
      // What it held: an open replica's Raft state, else its stored one (none on a node that never held it).
      const r = c.byKey.get(key);
      let held: { term: number; lastIndex: number } | undefined;
      if (r !== undefined && r.groupId === group) {
        const st = r.group.raw.status();
        held = { term: st.term, lastIndex: st.lastIndex };
      } else {
        try {
          const stored = await RaftLogStore.open(c.o.kv, group, { keepCompacted: true });
          held = { term: Math.max(stored.storage.hardState().term, stored.damage?.term ?? 0), lastIndex: stored.storage.lastIndex() };
        } catch {
          held = undefined;
        }
      }
      const d = damage(held);
      await this.#drop(key, where.topic, where.partition, group, false);
      await RaftLogStore.startOver(c.o.kv, group, c.o.disk, d, (b) => {
        dropReplicaRows(b, group);
        putLossActed(b, group, lossId);
      });
      return true;
    })();
    const settled = run.then(() => undefined, () => undefined);
    this.#dropping.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.#dropping.get(key) === settled) this.#dropping.delete(key);
    }
  }

  async #drop(key: string, topic: number, partition: number, group: number, deleteKeys = true): Promise<void> {
    const c = this.#c;
    await c.opening.get(key)?.catch(() => undefined);
    const r = c.byKey.get(key);
    if (r !== undefined && r.groupId === group) {
      c.byKey.delete(key);
      c.o.groups?.unregister(group);
      c.coalescers.get(group)?.fail(new PartitionUnavailableError(topic, partition, new Error('the replica moved to another node')));
      c.coalescers.delete(group);
      await c.o.host.remove(group);
      r.release();
      this.#memory.forget(r);
    }
    await c.writes.settled(group);
    // Rows the group queued before it left the host (its last applied state and index rows, a deferred
    // hard state, the record of a fetch of the retained log) are written by a later turn: they go
    // first, so the deletion below removes them. Written after it, they outlived the replica (a
    // replica placed here again would start from the dropped one's applied index, without its log).
    await c.o.host.flushRows();
    if (deleteKeys) await c.o.kv.write((b) => dropGroupKeys(b, group), { durable: false });
  }
}
