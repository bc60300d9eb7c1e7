/**
 * This node's partition replicas over every open storage (the default one's first): which to open
 * when the metadata names them, which logs to drop when event types go, and the replicas a failed
 * open left closed. The composition root (main.ts) and the metadata reactions share it.
 */
import type { Logger } from 'pino';
import type { NodeId } from '../raft/index.js';
import type { MetadataStateMachine } from '../metadata/state-machine.js';
import { placedPartitions } from '../metadata/placement-of.js';
import { timelinesOf } from '../metadata/timelines.js';
import { defaultStorageId, type EventTypeRecord } from '../metadata/types.js';
import type { GroupFacts } from '../metadata/cluster-partitions.js';
import type { PartitionReplicas } from './partition-replicas.js';

/** What the set reads of this node's applied metadata (metadata/state-machine.ts). */
export type AppliedEventTypes = Pick<MetadataStateMachine, 'eventTypes' | 'eventType' | 'nextTopic'>;

export interface NodeReplicaSetOptions {
  /** This node's applied metadata; undefined until its group is open. */
  readonly state: () => AppliedEventTypes | undefined;
  /** Opens a storage (storage-router.ts), which adds its replicas here. */
  readonly ensureStorage: (id: string) => Promise<unknown>;
  /** Drops logs of deleted event types on their storages (storage-router.ts). */
  readonly dropLogs: (logs: readonly { storage_id: string; topic: number }[]) => Promise<void>;
  /** Where partitions created before placement existed live (metadata/placement-of.ts). */
  readonly legacyReplica: NodeId;
  readonly logger: Logger;
}

export class NodeReplicaSet {
  readonly #o: NodeReplicaSetOptions;
  readonly #default: PartitionReplicas;
  readonly #storages: Map<string, PartitionReplicas>;

  constructor(defaultReplicas: PartitionReplicas, options: NodeReplicaSetOptions) {
    this.#o = options;
    this.#default = defaultReplicas;
    this.#storages = new Map([[defaultStorageId, defaultReplicas]]);
  }

  /** An operator-created storage opened (or closed) its partition groups. */
  add(storageId: string, replicas: PartitionReplicas): void {
    this.#storages.set(storageId, replicas);
  }

  remove(storageId: string): void {
    this.#storages.delete(storageId);
  }

  all(): IterableIterator<PartitionReplicas> {
    return this.#storages.values();
  }

  /** Opens this node's replicas of every partition of an event type, on every storage of its timelines. */
  async open(r: EventTypeRecord): Promise<void> {
    for (const t of timelinesOf(r)) {
      await this.#o.ensureStorage(t.storage_id);
      const logs = this.#storages.get(t.storage_id);
      // One partition that cannot open (a corrupt log waiting for its repair) does not keep the others closed.
      for (let p = 0; p < r.storage.partitions.length; p++) {
        await logs?.ensure(t.topic, p).catch((err: unknown) => this.#o.logger.error({ err, eventType: r.eventType.name, partition: p }, 'opening a partition replica failed'));
      }
    }
  }

  /** `open` in the background, failures logged. */
  openSoon(r: EventTypeRecord, then?: () => void): void {
    this.open(r).then(then).catch((err: unknown) => this.#o.logger.error({ err, eventType: r.eventType.name }, 'opening partition replicas failed'));
  }

  openSoonByName(name: string): void {
    const r = this.#o.state()?.eventType(name);
    if (r !== undefined) this.openSoon(r);
  }

  /** After a partition.move: the node the move adds opens its (empty) replica, then `then` runs. */
  openMoved(group: number, then: () => void): void {
    const state = this.#o.state();
    const at = [...placedPartitions(state?.eventTypes() ?? [], this.#o.legacyReplica)].find((p) => p.placement.group === group);
    const r = at === undefined ? undefined : state?.eventType(at.event_type);
    if (r !== undefined) this.openSoon(r, then);
  }

  /** A replica placed here whose open failed (a full disk when a move added it or at the start) is opened again. */
  reopenMissing(): void {
    for (const r of this.#o.state()?.eventTypes() ?? []) {
      const missing = timelinesOf(r).some((t) => r.storage.partitions.some((_, p) => this.#storages.get(t.storage_id)?.missingHere(t.topic, p) === true));
      if (missing) this.openSoon(r);
    }
  }

  /**
   * Removal is asynchronous (interface.md); a re-created name gets a fresh topic, so it never sees
   * these logs.
   */
  dropSoon(logs: readonly { storage_id: string; topic: number }[]): void {
    this.#o.dropLogs(logs).catch((err: unknown) => this.#o.logger.error({ err, logs }, 'dropping the logs of a deleted event type failed'));
  }

  /**
   * Topics of the default storage this node holds open whose event type no longer exists in `state`.
   * Only topics the state machine has handed out (id below nextTopic) can have been deleted; a higher
   * id belongs to an event type this node has not applied yet (a follower behind its leader).
   */
  deletedTopics(state: AppliedEventTypes): number[] {
    return this.#deleted(state, this.#default.topics());
  }

  /** The same, also over every topic stored on disk (at start, for drops a crash interrupted). */
  async deletedTopicsStored(state: AppliedEventTypes): Promise<number[]> {
    return this.#deleted(state, [...this.#default.topics(), ...(await this.#default.storedTopics()).keys()]);
  }

  #deleted(state: AppliedEventTypes, held: Iterable<number>): number[] {
    const live = new Set([...state.eventTypes()].flatMap((r) => timelinesOf(r).filter((t) => t.storage_id === defaultStorageId).map((t) => t.topic)));
    const handedOut = state.nextTopic;
    return [...new Set(held)].filter((topic) => !live.has(topic) && topic < handedOut);
  }

  /** Leadership back to preferred leaders after failovers and restarts (partition-replicas.ts). */
  balanceLeaders(): void {
    for (const r of this.#storages.values()) r.balanceLeaders();
  }

  /** Bounds of partitions held on other nodes only (clusters larger than the replication factor). */
  refreshRemoteBounds(): void {
    for (const r of this.#storages.values()) r.refreshRemoteBounds();
  }

  /** What this node knows of every group it hosts, on every storage (GET /cluster). */
  facts(reachable: (node: NodeId) => boolean): Map<number, GroupFacts> {
    return new Map([...this.#storages.values()].flatMap((r) => [...r.facts(reachable)]));
  }
}
