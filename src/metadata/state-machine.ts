/**
 * The replicated metadata state machine. PURE: apply() depends only on the current state and the
 * command, so every node that applies the same command sequence holds the same state (this is what
 * lets Raft replicate it). No I/O, no clock, no randomness; rejections are returned, not thrown.
 */
import { assert } from '../core/assert.js';
import type { MetadataCommand } from './commands.js';
import type { PartitionKey } from './assignment.js';
import { SubscriptionRuntime, type CommitOutcome, type SubscriptionRuntimeImage } from './subscription-runtime.js';
import { admitPlacement } from './placement-admission.js';
import { acceptGroupLoss, changePlacement, type PlacementCommand } from './placement-changes.js';
import type { PartitionPlacement, PlacementProposal } from './placement-types.js';
import { timelinesOf } from './timelines.js';
import { diskIdOfToken, formerMembersMax, registeredDisksMax, type DiskRegistration } from './disk-registry.js';
import { commandProblem, snapshotProblem } from './shapes.js';
import { cleanLoss, noAcceptedLosses, withLoss, type AcceptedLosses } from './accepted-losses.js';
import { defaultMetadataLimits, eventTypeLogs, eventTypeRecordBytes, isMetadataLimits, metadataLimitsOf, subscriptionBytes, utf8Bytes, type MetadataLimits } from './limits.js';
import { blacklistTypes, defaultStorageId, subscriptionKey, type BlacklistType, type EventTypeRecord, type PendingTimeline, type Storage, type Subscription, type SubscriptionAuthorization, type TimelineRecord } from './types.js';

export type ApplyResult =
  /**
   * droppedTopic: the storage topic whose logs the host may now remove (event type deleted).
   * subscription/created: after subscription.create, the stored subscription and whether this command
   * created it (false: one with the same key triple existed and is returned instead).
   */
  | {
      ok: true;
      droppedTopic?: number;
      subscription?: Subscription;
      created?: boolean;
      outcomes?: CommitOutcome[];
      /** After event_type.update: the readers (authorization or read_scopes) changed, so consumers must reconnect. */
      readersChanged?: boolean;
      /** After event_type.delete: every log of the event type, by storage (its timelines). */
      droppedLogs?: { storage_id: string; topic: number }[];
      /** After timeline.create or timeline.commit: the new timeline. */
      timeline?: TimelineRecord;
      /** After timeline.prepare: the switch now pending. */
      pending?: PendingTimeline;
      /** After partition.move, partition.leader or partition.loss: the partition's placement as it is now. */
      placement?: PartitionPlacement;
      /** After partition.loss: the loss was recorded already (a retried proposal); nothing changed. */
      repeated?: boolean;
    }
  | {
      ok: false;
      reason: 'exists' | 'not_found' | 'conflict' | 'in_use' | 'no_slots' | 'invalid' | 'limit';
      detail: string;
      /** The command was malformed (shapes.ts) and was not applied: a member wrote something it should not have. */
      malformed?: true;
    };

export interface MetadataSnapshot {
  eventTypes: EventTypeRecord[];
  nextTopic: number;
  /** Feature toggles set explicitly (absent in snapshots written before toggles existed). */
  features?: Record<string, boolean>;
  /** Subscriptions in creation order (absent in snapshots written before subscriptions existed). */
  subscriptions?: Subscription[];
  /** Stream sessions, assignments and committed cursors (absent in snapshots written before streaming existed). */
  runtimes?: SubscriptionRuntimeImage[];
  /** Blocked names per blacklist type (absent in snapshots written before the blacklist existed). */
  blacklist?: Partial<Record<BlacklistType, string[]>>;
  /** Storages created by operators (absent in snapshots written before storages existed). */
  storages?: Storage[];
  /** Metadata bounds in force (absent in snapshots written before they existed: the defaults). */
  limits?: MetadataLimits;
  /** The next partition group id to hand out (absent in snapshots written before placement existed: 1). */
  nextGroup?: number;
  /** Registered data directories, one per node (absent in snapshots written before they existed: none). */
  disks?: DiskRegistration[];
  /** Losses operators accepted, the newest kept (absent in snapshots written before they were recorded: none). */
  acceptedLosses?: AcceptedLosses;
}

export class MetadataStateMachine {
  #eventTypes = new Map<string, EventTypeRecord>();
  /** Topic ids are handed out at apply time so all nodes agree on them; never reused. */
  #nextTopic = 1;
  #appliedIndex = 0;
  /** Toggles set by an operator; names without an entry have their default. */
  #features = new Map<string, boolean>();
  /** Subscriptions by id, in creation (apply) order. */
  #subscriptions = new Map<string, Subscription>();
  /** subscriptionKey(...) -> id: the key triple is unique. */
  #subscriptionKeys = new Map<string, string>();
  /** Runtime of subscriptions that have been streamed from, by subscription id. */
  #runtimes = new Map<string, SubscriptionRuntime>();
  readonly #blacklist = new Map<BlacklistType, Set<string>>(blacklistTypes.map((t) => [t, new Set<string>()]));
  /** Operator-created storages by id, in creation order (the default storage is implicit). */
  readonly #storages = new Map<string, Storage>();
  /** Bounds in force (limits.ts); replicated, so every node applies a command against the same ones. */
  #limits: MetadataLimits = { ...defaultMetadataLimits };
  /** Bytes held per event type and per subscription, and their sum (the metadataBytesMax bound). */
  readonly #eventTypeBytes = new Map<string, number>();
  readonly #subscriptionBytes = new Map<string, number>();
  #metadataBytes = 0;

  get limits(): Readonly<MetadataLimits> {
    return this.#limits;
  }

  /** Bytes held by event types (all schema versions) and subscriptions together. */
  get metadataBytes(): number {
    return this.#metadataBytes;
  }
  /** Partition group ids are handed out at apply time, like topics, so all nodes agree; never reused. */
  #nextGroup = 1;
  /** The data directory registered per node (disk-registry.ts). */
  readonly #disks = new Map<number, DiskRegistration>();
  /** Losses operators accepted (accepted-losses.ts): the newest kept, and a count of older ones. */
  #acceptedLosses: AcceptedLosses = noAcceptedLosses;

  /** Losses operators accepted, oldest kept first, and how many older ones were let go. */
  get acceptedLosses(): AcceptedLosses {
    return this.#acceptedLosses;
  }

  /** The data directory registered for `node`, if any. */
  /** Every node's registered data directory (metadata/member-replacement.ts reads their members). */
  disks(): IterableIterator<DiskRegistration> {
    return this.#disks.values();
  }

  disk(node: number): DiskRegistration | undefined {
    return this.#disks.get(node);
  }

  get appliedIndex(): number {
    return this.#appliedIndex;
  }

  apply(index: number, cmd: MetadataCommand): ApplyResult {
    assert(index === this.#appliedIndex + 1, `metadata apply out of order: ${index} after ${this.#appliedIndex}`);
    this.#appliedIndex = index;
    // Checked here, where every node applies it: a malformed command is refused alike everywhere.
    const malformed = commandProblem(cmd);
    if (malformed !== undefined) return { ok: false, reason: 'invalid', detail: `Malformed metadata command: ${malformed}`, malformed: true };
    switch (cmd.op) {
      case 'event_type.create':
        return this.#createEventType(cmd);
      case 'event_type.update':
        return this.#updateEventType(cmd);
      case 'event_type.delete':
        return this.#deleteEventType(cmd.name);
      case 'feature.set':
        this.#features.set(cmd.feature, cmd.enabled);
        return { ok: true };
      case 'subscription.create':
        return this.#createSubscription(cmd.subscription);
      case 'subscription.delete':
        return this.#deleteSubscription(cmd.id);
      case 'subscription.update':
        return this.#updateSubscription(cmd.id, cmd.authorization);
      case 'stream.open': {
        const rt = this.#runtimeFor(cmd.subscription);
        if (rt === undefined) return this.#noSubscription(cmd.subscription);
        return rt.open(cmd.session, cmd.starts);
      }
      case 'stream.close':
        this.#runtimes.get(cmd.subscription)?.close(cmd.session, cmd.atMs);
        return { ok: true };
      case 'stream.close_stale':
        for (const rt of this.#runtimes.values()) {
          for (const s of rt.sessions) if (s.node === cmd.node && s.incarnation !== cmd.incarnation) rt.close(s.id, cmd.atMs);
        }
        return { ok: true };
      case 'stream.release':
        this.#runtimes.get(cmd.subscription)?.release(cmd.session, cmd.partitions);
        return { ok: true };
      case 'cursor.commit': {
        const rt = this.#runtimes.get(cmd.subscription);
        if (rt === undefined) {
          if (!this.#subscriptions.has(cmd.subscription)) return this.#noSubscription(cmd.subscription);
          return { ok: false, reason: 'invalid', detail: `Stream ${cmd.session} of subscription ${cmd.subscription} is not open` };
        }
        const r = rt.commit(cmd.session, cmd.atMs, cmd.cursors);
        return r.ok ? { ok: true, outcomes: r.outcomes } : r;
      }
      case 'storage.create':
        if (cmd.storage.id === defaultStorageId || this.#storages.has(cmd.storage.id)) {
          return { ok: false, reason: 'exists', detail: `Storage "${cmd.storage.id}" already exists` };
        }
        this.#storages.set(cmd.storage.id, cmd.storage);
        return { ok: true };
      case 'storage.delete':
        return this.#deleteStorage(cmd.id);
      case 'timeline.create':
        return this.#createTimeline(cmd);
      case 'timeline.prepare':
        return this.#prepareTimeline(cmd);
      case 'timeline.commit':
        return this.#commitTimeline(cmd);
      case 'blacklist.set':
        if (cmd.blocked) this.#blacklist.get(cmd.type)?.add(cmd.name);
        else this.#blacklist.get(cmd.type)?.delete(cmd.name);
        return { ok: true };
      case 'cursor.reset': {
        const rt = this.#runtimeFor(cmd.subscription);
        if (rt === undefined) return this.#noSubscription(cmd.subscription);
        return rt.reset(cmd.cursors);
      }
      case 'partition.move':
      case 'partition.leader':
        return this.#changePlacement(cmd);
      case 'limits.set':
        if (!isMetadataLimits(cmd.limits)) return { ok: false, reason: 'invalid', detail: 'limits.set needs every bound as a positive integer' };
        this.#limits = metadataLimitsOf(cmd.limits);
        return { ok: true };
      case 'node.disk':
        return this.#registerDisk(cmd.node, cmd.disk, cmd.member);
      case 'loss.accepted':
        this.#acceptedLosses = withLoss(this.#acceptedLosses, cleanLoss(cmd.loss));
        return { ok: true };
      case 'partition.loss':
        return this.#acceptGroupLoss(cmd);
      default:
        // An op this version does not know (a newer member proposed it): refused on every node alike.
        return { ok: false, reason: 'invalid', detail: `Unknown metadata command ${JSON.stringify((cmd as { op?: unknown }).op)}` };
    }
  }

  #registerDisk(node: number, disk: string, member: number | undefined): ApplyResult {
    const had = this.#disks.get(node);
    // The same directory again (a retried proposal, a restart before the answer): its first group stays.
    if (had?.disk === disk && had.member === member) return { ok: true };
    if (had === undefined && this.#disks.size >= registeredDisksMax) return this.#limit(`${registeredDisksMax} nodes have registered data directories, the most the metadata holds`);
    const former = [...(had?.formerMembers ?? [])];
    if (member !== undefined) {
      // Two directories of a node must never be taken for one member: what the earlier one voted or
      // acknowledged would count as the new one's word (node-disk.ts draws the incarnation).
      const sameDirectory = had !== undefined && diskIdOfToken(had.disk) === diskIdOfToken(disk);
      if (former.includes(member) || (had?.member === member && !sameDirectory)) {
        return { ok: false, reason: 'conflict', detail: `metadata member id ${member} was used by an earlier data directory of node ${node}: move this data directory aside and start the node again (a new directory draws a new id)` };
      }
    }
    if (had?.member !== undefined && had.member !== member && !former.includes(had.member)) {
      if (former.length >= formerMembersMax) return this.#limit(`node ${node} had ${formerMembersMax} metadata member ids, the most the metadata keeps`);
      former.push(had.member);
    }
    this.#disks.set(node, { node, disk, firstGroup: had?.disk === disk ? had.firstGroup : this.#nextGroup, ...(member === undefined ? {} : { member }), ...(former.length === 0 ? {} : { formerMembers: former }) });
    return { ok: true };
  }

  #limit(detail: string): ApplyResult {
    return { ok: false, reason: 'limit', detail };
  }

  /** The bound on total bytes, for a change that adds `delta` bytes. */
  #fitsMetadataBytes(delta: number): boolean {
    return delta <= 0 || this.#metadataBytes + delta <= this.#limits.metadataBytesMax;
  }

  #setBytes(map: Map<string, number>, key: string, bytes: number | undefined): void {
    this.#metadataBytes += (bytes ?? 0) - (map.get(key) ?? 0);
    if (bytes === undefined) map.delete(key);
    else map.set(key, bytes);
  }

  /**
   * The placement of new partitions (placement-admission.ts): undefined (legacy layout) when the command
   * carries none; otherwise checked, with group ids allocated from the counter.
   */
  #admitPlacement(proposal: PlacementProposal | undefined, partitionCount: number): { ok: true; placement?: PartitionPlacement[] } | Extract<ApplyResult, { ok: false }> {
    if (proposal === undefined) return { ok: true };
    const admitted = admitPlacement(proposal, partitionCount, this.#nextGroup);
    if (!admitted.ok) return admitted;
    this.#nextGroup = admitted.nextGroup;
    return { ok: true, placement: admitted.placement };
  }

  #changePlacement(cmd: PlacementCommand): ApplyResult {
    const r = changePlacement(this.#eventTypes.values(), cmd);
    if (!r.ok) return r;
    this.#eventTypes.set(r.record.eventType.name, r.record);
    return { ok: true, placement: r.placement };
  }

  /**
   * The loss of a partition whose every replica is damaged, accepted: placed and recorded in one step.
   * A loss already recorded (a retried proposal) changes nothing and says so (`repeated`), so the
   * nodes do not act on it twice.
   */
  #acceptGroupLoss(cmd: Extract<MetadataCommand, { op: 'partition.loss' }>): ApplyResult {
    if (this.#acceptedLosses.records.some((r) => r.id === cmd.loss.id)) return { ok: true, repeated: true };
    const r = acceptGroupLoss(this.#eventTypes.values(), cmd);
    if (!r.ok) return r;
    this.#eventTypes.set(r.record.eventType.name, r.record);
    // With the floor and the nodes that rejoin: a node that gets it within a snapshot acts on it too.
    const rejoin = [...cmd.seen.replicas, ...cmd.seen.learners].filter((n) => n !== cmd.keep);
    this.#acceptedLosses = withLoss(this.#acceptedLosses, cleanLoss({ ...cmd.loss, floor: cmd.floor, rejoin }));
    return { ok: true, placement: r.placement };
  }

  #deleteStorage(id: string): ApplyResult {
    if (id === defaultStorageId) return { ok: false, reason: 'in_use', detail: 'The default storage is built in and cannot be deleted' };
    if (!this.#storages.has(id)) return { ok: false, reason: 'not_found', detail: `Storage "${id}" does not exist` };
    const users = [...this.#eventTypes.values()].filter((r) => timelinesOf(r).some((t) => t.storage_id === id));
    if (users.length > 0) {
      return { ok: false, reason: 'in_use', detail: `Storage "${id}" holds timelines of ${users.length} event type(s) (${users.slice(0, 10).map((r) => r.eventType.name).join(', ')})` };
    }
    this.#storages.delete(id);
    return { ok: true };
  }

  #createTimeline(cmd: Extract<MetadataCommand, { op: 'timeline.create' }>): ApplyResult {
    const rec = this.#eventTypes.get(cmd.eventType);
    if (rec === undefined) return { ok: false, reason: 'not_found', detail: `Event type "${cmd.eventType}" does not exist` };
    if (cmd.storage_id !== defaultStorageId && !this.#storages.has(cmd.storage_id)) {
      return { ok: false, reason: 'invalid', detail: `Storage "${cmd.storage_id}" does not exist` };
    }
    if (cmd.starts.length !== rec.storage.partitions.length) {
      return { ok: false, reason: 'invalid', detail: `A timeline needs a start for each of the ${rec.storage.partitions.length} partitions` };
    }
    if (rec.storage.pendingTimeline !== undefined) return this.#switchPending(cmd.eventType, rec.storage.pendingTimeline.id);
    const timelines = timelinesOf(rec);
    const last = timelines[timelines.length - 1]!;
    // Offsets never go back: a start below the previous timeline's means appends happened in between.
    if (cmd.starts.some((start, p) => start < (last.starts[p] ?? 0))) {
      return { ok: false, reason: 'conflict', detail: `The timelines of "${cmd.eventType}" changed concurrently; retry` };
    }
    const admitted = this.#admitPlacement(cmd.placement, rec.storage.partitions.length);
    if (!admitted.ok) return admitted;
    const timeline: TimelineRecord = { id: cmd.id, order: last.order + 1, storage_id: cmd.storage_id, topic: this.#nextTopic++, starts: cmd.starts, created_at: cmd.at, switched_at: cmd.at };
    if (admitted.placement !== undefined) timeline.placement = admitted.placement;
    this.#setEventType({ ...rec, storage: { ...rec.storage, timeline: timeline.order, timelines: [...timelines, timeline] } });
    return { ok: true, timeline };
  }

  /**
   * Stores an event type's record whose logs changed (a timeline, a pending switch) and counts its
   * bytes again. Never refuses: the checks came before (timeline.prepare), or the command is one an
   * earlier version proposed and applied as it is (timeline.create: this version never proposes it,
   * and its entries must replay to the state they made).
   */
  #setEventType(rec: EventTypeRecord): void {
    const name = rec.eventType.name;
    this.#eventTypes.set(name, rec);
    this.#setBytes(this.#eventTypeBytes, name, eventTypeRecordBytes(rec.eventType, rec.schemas, rec.storage.partitions.length, eventTypeLogs(rec)));
  }

  #switchPending(eventType: string, id: string): ApplyResult {
    return { ok: false, reason: 'conflict', detail: `A timeline switch of event type "${eventType}" (to timeline ${id}) is in progress; retry once it is done` };
  }

  #prepareTimeline(cmd: Extract<MetadataCommand, { op: 'timeline.prepare' }>): ApplyResult {
    const rec = this.#eventTypes.get(cmd.eventType);
    if (rec === undefined) return { ok: false, reason: 'not_found', detail: `Event type "${cmd.eventType}" does not exist` };
    const pending = rec.storage.pendingTimeline;
    // The same switch again (a retried proposal): already recorded.
    if (pending?.id === cmd.id) return { ok: true, pending };
    if (pending !== undefined) return this.#switchPending(cmd.eventType, pending.id);
    if (timelinesOf(rec).some((t) => t.id === cmd.id)) return { ok: false, reason: 'exists', detail: `Timeline ${cmd.id} of "${cmd.eventType}" exists` };
    if (cmd.storage_id !== defaultStorageId && !this.#storages.has(cmd.storage_id)) {
      return { ok: false, reason: 'invalid', detail: `Storage "${cmd.storage_id}" does not exist` };
    }
    // Bounded here, where every node applies the switch (the commit that ends it is never refused: its
    // seals closed the current logs already, so the bounds hold at the switch's start).
    const limits = this.#limits;
    const count = timelinesOf(rec).length;
    if (count >= limits.timelinesMax) {
      return this.#limit(`Event type "${cmd.eventType}" has ${count} timelines, the most one event type has (timelinesMax ${limits.timelinesMax}); it cannot switch to another`);
    }
    const n = rec.storage.partitions.length;
    const delta = eventTypeRecordBytes(rec.eventType, rec.schemas, n, eventTypeLogs(rec) + 1) - (this.#eventTypeBytes.get(cmd.eventType) ?? 0);
    if (!this.#fitsMetadataBytes(delta)) return this.#metadataFull(delta);
    // Last: admitting a placement hands out group ids, so nothing may refuse the command after it.
    const admitted = this.#admitPlacement(cmd.placement, n);
    if (!admitted.ok) return admitted;
    const next: PendingTimeline = { id: cmd.id, storage_id: cmd.storage_id, at: cmd.at };
    if (admitted.placement !== undefined) next.placement = admitted.placement;
    this.#setEventType({ ...rec, storage: { ...rec.storage, pendingTimeline: next } });
    return { ok: true, pending: next };
  }

  #commitTimeline(cmd: Extract<MetadataCommand, { op: 'timeline.commit' }>): ApplyResult {
    const rec = this.#eventTypes.get(cmd.eventType);
    if (rec === undefined) return { ok: false, reason: 'not_found', detail: `Event type "${cmd.eventType}" does not exist` };
    const timelines = timelinesOf(rec);
    const last = timelines[timelines.length - 1]!;
    // Committed already (a retry, or two nodes finishing the same switch): the same answer.
    if (last.id === cmd.id) return { ok: true, timeline: last };
    const pending = rec.storage.pendingTimeline;
    if (pending?.id !== cmd.id) return { ok: false, reason: 'conflict', detail: `No switch of "${cmd.eventType}" to timeline ${cmd.id} is pending` };
    if (cmd.starts.length !== rec.storage.partitions.length || cmd.starts.some((start, p) => !Number.isSafeInteger(start) || start < (last.starts[p] ?? 0))) {
      // The seals answer each log's next offset, never below its timeline's start: a bug, refused alike everywhere.
      return { ok: false, reason: 'invalid', detail: `The starts of timeline ${cmd.id} must be one per partition, none below the current timeline's` };
    }
    const timeline: TimelineRecord = { id: cmd.id, order: last.order + 1, storage_id: pending.storage_id, topic: this.#nextTopic++, starts: cmd.starts, created_at: pending.at, switched_at: cmd.at };
    if (pending.placement !== undefined) timeline.placement = pending.placement;
    const { pendingTimeline: _done, ...storage } = rec.storage;
    this.#setEventType({ ...rec, storage: { ...storage, timeline: timeline.order, timelines: [...timelines, timeline] } });
    return { ok: true, timeline };
  }

  /** Every partition of a subscription's event types (they exist: they cannot be deleted while it does). */
  #partitionsOf(sub: Subscription): PartitionKey[] {
    return sub.event_types.flatMap((name) => (this.#eventTypes.get(name)?.storage.partitions ?? []).map((partition) => ({ event_type: name, partition })));
  }

  #noSubscription(id: string): ApplyResult {
    return { ok: false, reason: 'not_found', detail: `Subscription "${id}" does not exist` };
  }

  /** The runtime of an existing subscription, created on first use over its event types' partitions. */
  #runtimeFor(id: string): SubscriptionRuntime | undefined {
    const existing = this.#runtimes.get(id);
    if (existing !== undefined) return existing;
    const sub = this.#subscriptions.get(id);
    if (sub === undefined) return undefined;
    // Event types of a subscription cannot be deleted, and partition counts never change.
    const partitions: PartitionKey[] = sub.event_types.flatMap((name) => {
      const rec = this.#eventTypes.get(name);
      assert(rec !== undefined, `subscription ${id} names the missing event type ${name}`);
      return rec.storage.partitions.map((partition) => ({ event_type: name, partition }));
    });
    const rt = new SubscriptionRuntime(id, partitions);
    this.#runtimes.set(id, rt);
    return rt;
  }

  #createSubscription(sub: Subscription): ApplyResult {
    const key = subscriptionKey(sub);
    const existingId = this.#subscriptionKeys.get(key);
    if (existingId !== undefined) return { ok: true, subscription: this.#subscriptions.get(existingId)!, created: false };
    if (this.#subscriptions.has(sub.id)) return { ok: false, reason: 'exists', detail: `Subscription id "${sub.id}" is taken` };
    // An event type deleted after the proposer checked it: refuse, or the subscription would dangle.
    const missing = sub.event_types.filter((name) => !this.#eventTypes.has(name));
    if (missing.length > 0) {
      return { ok: false, reason: 'not_found', detail: `Event type(s) ${missing.map((n) => `"${n}"`).join(', ')} do not exist` };
    }
    const limits = this.#limits;
    if (this.#subscriptions.size >= limits.subscriptionsMax) {
      return this.#limit(`There are ${this.#subscriptions.size} subscriptions, the most this cluster holds (subscriptionsMax ${limits.subscriptionsMax}); delete unused ones first`);
    }
    const partitions = sub.event_types.reduce((n, name) => n + this.#eventTypes.get(name)!.storage.partitions.length, 0);
    if (partitions > limits.subscriptionPartitionsMax) {
      return this.#limit(`The event types of a subscription may have at most ${limits.subscriptionPartitionsMax} partitions together; these have ${partitions}`);
    }
    const bytes = subscriptionBytes(sub, this.#partitionsOf(sub));
    if (!this.#fitsMetadataBytes(bytes)) return this.#metadataFull(bytes);
    this.#subscriptions.set(sub.id, sub);
    this.#subscriptionKeys.set(key, sub.id);
    this.#setBytes(this.#subscriptionBytes, sub.id, bytes);
    return { ok: true, subscription: sub, created: true };
  }

  #metadataFull(bytes: number): ApplyResult {
    return this.#limit(
      `The cluster's metadata holds ${this.#metadataBytes} bytes of event types and subscriptions; this change needs ${bytes} more and the bound is ${this.#limits.metadataBytesMax} (metadataBytesMax)`,
    );
  }

  #updateSubscription(id: string, authorization: SubscriptionAuthorization): ApplyResult {
    const sub = this.#subscriptions.get(id);
    if (sub === undefined) return this.#noSubscription(id);
    const updated: Subscription = { ...sub, authorization };
    const bytes = subscriptionBytes(updated, this.#partitionsOf(updated));
    const delta = bytes - (this.#subscriptionBytes.get(id) ?? 0);
    if (!this.#fitsMetadataBytes(delta)) return this.#metadataFull(delta);
    this.#subscriptions.set(id, updated);
    this.#setBytes(this.#subscriptionBytes, id, bytes);
    const readers = (s: Subscription) => JSON.stringify(s.authorization?.readers ?? null);
    return readers(sub) === readers(updated) ? { ok: true, subscription: updated } : { ok: true, subscription: updated, readersChanged: true };
  }

  #deleteSubscription(id: string): ApplyResult {
    const sub = this.#subscriptions.get(id);
    if (sub === undefined) return { ok: false, reason: 'not_found', detail: `Subscription "${id}" does not exist` };
    this.#subscriptions.delete(id);
    this.#subscriptionKeys.delete(subscriptionKey(sub));
    this.#runtimes.delete(id);
    this.#setBytes(this.#subscriptionBytes, id, undefined);
    return { ok: true };
  }

  #createEventType(cmd: Extract<MetadataCommand, { op: 'event_type.create' }>): ApplyResult {
    const name = cmd.eventType.name;
    if (this.#eventTypes.has(name)) {
      return { ok: false, reason: 'exists', detail: `Event type "${name}" already exists` };
    }
    const limits = this.#limits;
    const n = cmd.partitionCount;
    if (!Number.isSafeInteger(n) || n < 1) return { ok: false, reason: 'invalid', detail: `An event type has at least one partition, not ${String(n)}` };
    if (n > limits.partitionsMax) return this.#limit(`An event type has at most ${limits.partitionsMax} partitions (partitionsMax), not ${n}`);
    if (this.#eventTypes.size >= limits.eventTypesMax) {
      return this.#limit(`There are ${this.#eventTypes.size} event types, the most this cluster holds (eventTypesMax ${limits.eventTypesMax}); delete unused ones first`);
    }
    const schemaBytes = utf8Bytes(cmd.eventType.schema.schema);
    if (schemaBytes > limits.schemaBytesMax) return this.#limit(`Field "schema.schema" must be at most ${limits.schemaBytesMax} bytes`);
    const schemas = [cmd.eventType.schema];
    const bytes = eventTypeRecordBytes(cmd.eventType, schemas, n);
    if (!this.#fitsMetadataBytes(bytes)) return this.#metadataFull(bytes);
    // Last: admitting a placement hands out group ids, so nothing may refuse the command after it.
    const admitted = this.#admitPlacement(cmd.placement, n);
    if (!admitted.ok) return admitted;
    const partitions = Array.from({ length: n }, (_, i) => String(i));
    this.#eventTypes.set(name, {
      eventType: cmd.eventType,
      schemas,
      storage: { topic: this.#nextTopic++, partitions, timeline: 1, ...(admitted.placement === undefined ? {} : { placement: admitted.placement }) },
    });
    this.#setBytes(this.#eventTypeBytes, name, bytes);
    return { ok: true };
  }

  #updateEventType(cmd: Extract<MetadataCommand, { op: 'event_type.update' }>): ApplyResult {
    const name = cmd.eventType.name;
    const rec = this.#eventTypes.get(name);
    if (rec === undefined) return { ok: false, reason: 'not_found', detail: `Event type "${name}" does not exist` };
    if (rec.eventType.updated_at !== cmd.basedOnUpdatedAt) {
      return { ok: false, reason: 'conflict', detail: `Event type "${name}" was changed concurrently; retry` };
    }
    const limits = this.#limits;
    if (cmd.schemaChanged && rec.schemas.length >= limits.schemaVersionsMax) {
      return this.#limit(`Event type "${name}" has ${rec.schemas.length} schema versions, the most one event type keeps (schemaVersionsMax ${limits.schemaVersionsMax}); its schema cannot change any more`);
    }
    if (cmd.schemaChanged && utf8Bytes(cmd.eventType.schema.schema) > limits.schemaBytesMax) {
      return this.#limit(`Field "schema.schema" must be at most ${limits.schemaBytesMax} bytes`);
    }
    const schemas = cmd.schemaChanged ? [...rec.schemas, cmd.eventType.schema] : rec.schemas;
    const bytes = eventTypeRecordBytes(cmd.eventType, schemas, rec.storage.partitions.length, eventTypeLogs(rec));
    if (!this.#fitsMetadataBytes(bytes - (this.#eventTypeBytes.get(name) ?? 0))) return this.#metadataFull(bytes - (this.#eventTypeBytes.get(name) ?? 0));
    this.#eventTypes.set(name, { eventType: cmd.eventType, schemas, storage: rec.storage });
    this.#setBytes(this.#eventTypeBytes, name, bytes);
    const readers = (e: typeof cmd.eventType) => JSON.stringify([e.authorization?.readers ?? null, e.read_scopes ?? null]);
    return readers(rec.eventType) === readers(cmd.eventType) ? { ok: true } : { ok: true, readersChanged: true };
  }

  #deleteEventType(name: string): ApplyResult {
    const rec = this.#eventTypes.get(name);
    if (rec === undefined) return { ok: false, reason: 'not_found', detail: `Event type "${name}" does not exist` };
    const users = [...this.#subscriptions.values()].filter((s) => s.event_types.includes(name));
    if (users.length > 0) {
      const ids = users.slice(0, 10).map((s) => s.id).join(', ');
      return { ok: false, reason: 'in_use', detail: `Event type "${name}" is used by ${users.length} subscription(s) (${ids}${users.length > 10 ? ', ...' : ''}); delete them first` };
    }
    this.#eventTypes.delete(name);
    this.#setBytes(this.#eventTypeBytes, name, undefined);
    return { ok: true, droppedTopic: rec.storage.topic, droppedLogs: timelinesOf(rec).map((t) => ({ storage_id: t.storage_id, topic: t.topic })) };
  }

  eventType(name: string): EventTypeRecord | undefined {
    return this.#eventTypes.get(name);
  }

  /** Event types in creation order (Map iteration order is insertion order). */
  eventTypes(): IterableIterator<EventTypeRecord> {
    return this.#eventTypes.values();
  }

  /** The explicitly set value of a feature toggle, or undefined when it keeps its default. */
  feature(name: string): boolean | undefined {
    return this.#features.get(name);
  }

  subscription(id: string): Subscription | undefined {
    return this.#subscriptions.get(id);
  }

  subscriptionCount(): number {
    return this.#subscriptions.size;
  }

  eventTypeCount(): number {
    return this.#eventTypes.size;
  }

  /** The next topic id to hand out: every topic below it has been handed out (and may have been deleted). */
  get nextTopic(): number {
    return this.#nextTopic;
  }

  /** Subscriptions in creation order. */
  subscriptions(): IterableIterator<Subscription> {
    return this.#subscriptions.values();
  }

  /** Sessions, assignment and cursors of a subscription; undefined before its first stream or reset. */
  runtime(id: string): SubscriptionRuntime | undefined {
    return this.#runtimes.get(id);
  }

  runtimes(): IterableIterator<SubscriptionRuntime> {
    return this.#runtimes.values();
  }

  /** Operator-created storages, in creation order (the default storage is not listed here). */
  storages(): IterableIterator<Storage> {
    return this.#storages.values();
  }

  storage(id: string): Storage | undefined {
    return this.#storages.get(id);
  }

  /** Whether a name is on the blacklist of that type. */
  blacklisted(type: BlacklistType, name: string): boolean {
    return this.#blacklist.get(type)?.has(name) === true;
  }

  blacklist(): Record<BlacklistType, string[]> {
    return Object.fromEntries(blacklistTypes.map((t) => [t, [...this.#blacklist.get(t)!].sort()])) as Record<BlacklistType, string[]>;
  }

  snapshot(): MetadataSnapshot {
    return {
      blacklist: this.blacklist(),
      storages: [...this.#storages.values()],
      limits: { ...this.#limits },
      eventTypes: [...this.#eventTypes.values()],
      nextTopic: this.#nextTopic,
      features: Object.fromEntries(this.#features),
      subscriptions: [...this.#subscriptions.values()],
      runtimes: [...this.#runtimes.values()].map((rt) => rt.image()),
      nextGroup: this.#nextGroup,
      disks: [...this.#disks.values()],
      acceptedLosses: { records: [...this.#acceptedLosses.records], older: this.#acceptedLosses.older },
    };
  }

  /** Why a snapshot's state cannot be restored (shapes.ts), or undefined. */
  static snapshotProblem(snap: unknown): string | undefined {
    return snapshotProblem(snap);
  }

  /** Restores a snapshot's state; throws when it is malformed (check it with snapshotProblem first). */
  static restore(snap: MetadataSnapshot, appliedIndex: number): MetadataStateMachine {
    const problem = snapshotProblem(snap);
    if (problem !== undefined) throw new Error(`malformed metadata snapshot: ${problem}`);
    assert(Number.isSafeInteger(appliedIndex) && appliedIndex >= 0, `metadata snapshot at command ${appliedIndex}`);
    const sm = new MetadataStateMachine();
    for (const rec of snap.eventTypes) {
      sm.#eventTypes.set(rec.eventType.name, rec);
      sm.#setBytes(sm.#eventTypeBytes, rec.eventType.name, eventTypeRecordBytes(rec.eventType, rec.schemas, rec.storage.partitions.length, eventTypeLogs(rec)));
    }
    if (isMetadataLimits(snap.limits)) sm.#limits = metadataLimitsOf(snap.limits);
    sm.#nextTopic = snap.nextTopic;
    for (const [k, v] of Object.entries(snap.features ?? {})) sm.#features.set(k, v);
    for (const sub of snap.subscriptions ?? []) {
      sm.#subscriptions.set(sub.id, sub);
      sm.#setBytes(sm.#subscriptionBytes, sub.id, subscriptionBytes(sub, sm.#partitionsOf(sub)));
      sm.#subscriptionKeys.set(subscriptionKey(sub), sub.id);
    }
    for (const img of snap.runtimes ?? []) sm.#runtimes.set(img.id, SubscriptionRuntime.restore(img));
    for (const t of blacklistTypes) for (const name of snap.blacklist?.[t] ?? []) sm.#blacklist.get(t)!.add(name);
    for (const st of snap.storages ?? []) sm.#storages.set(st.id, st);
    sm.#nextGroup = snap.nextGroup ?? 1;
    for (const d of snap.disks ?? []) {
      sm.#disks.set(d.node, { node: d.node, disk: d.disk, firstGroup: d.firstGroup, ...(d.member === undefined ? {} : { member: d.member }), ...(d.formerMembers === undefined ? {} : { formerMembers: [...d.formerMembers] }) });
    }
    if (snap.acceptedLosses !== undefined) sm.#acceptedLosses = { records: snap.acceptedLosses.records.map(cleanLoss), older: snap.acceptedLosses.older };
    sm.#appliedIndex = appliedIndex;
    return sm;
  }
}
