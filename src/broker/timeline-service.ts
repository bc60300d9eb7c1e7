/**
 * Storages and timelines (interface.md, "Administration": /storages and /event-types/{name}/timelines;
 * docs/decisions.md "Storages and timelines"): the rules of the requests, the replicated commands, and
 * the switch of an event type's writes to a new timeline through the storage router.
 */
import { randomUUID } from 'node:crypto';
import { formatCursor, toOffset } from '../core/offset.js';
import { problems } from '../core/problem.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult } from '../metadata/state-machine.js';
import type { MetadataLimits } from '../metadata/limits.js';
import { proposePlacement, type MembersSource } from '../metadata/placement.js';
import type { PlacementProposal } from '../metadata/placement-types.js';
import { timelinesOf } from '../metadata/timelines.js';
import { defaultStorageId, type EventTypeRecord, type Storage, type TimelineRecord } from '../metadata/types.js';
import type { TimelineSwitcher } from './timeline-switch.js';

export interface TimelineState {
  eventType(name: string): EventTypeRecord | undefined;
  /** Every event type, for the load a new timeline's partitions are balanced against. */
  eventTypes(): Iterable<EventTypeRecord>;
  storage(id: string): Storage | undefined;
  storages(): Iterable<Storage>;
  /** The metadata bounds in force (timelinesMax). */
  readonly limits: Readonly<MetadataLimits>;
}

/** A Timeline as listed (interface.md, "Timeline"). */
export interface TimelineView {
  id: string;
  event_type: string;
  order: number;
  storage_id: string;
  topic: string;
  created_at: string;
  switched_at: string;
  latest_position?: { offsets: { partition: string; offset: string }[] };
}

/** The built-in storage as listed: this node's RocksDB. */
const defaultStorage: Storage = { id: defaultStorageId, storage_type: 'broker', broker_configuration: {} };
const storageIdRe = /^[A-Za-z0-9][A-Za-z0-9_-]{0,35}$/;
const brokerConfigurationFields = ['ensemble_address', 'ensemble_port', 'coord_address', 'coord_path'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class TimelineService {
  readonly #state: () => TimelineState;
  readonly #propose: (cmd: MetadataCommand) => Promise<ApplyResult>;
  readonly #switcher: Pick<TimelineSwitcher, 'switchTo'>;
  /** The cluster's members, to place the new timeline's partitions over; absent: no placement (legacy layout). */
  readonly #members: MembersSource | undefined;

  constructor(deps: { state: () => TimelineState; propose: (cmd: MetadataCommand) => Promise<ApplyResult>; switcher: Pick<TimelineSwitcher, 'switchTo'>; members?: MembersSource }) {
    this.#members = deps.members;
    this.#state = deps.state;
    this.#propose = deps.propose;
    this.#switcher = deps.switcher;
  }

  // ---------------------------------------------------------------- storages

  async createStorage(body: unknown): Promise<Storage> {
    if (!isObject(body)) throw problems.unprocessable('The body must be a Storage object');
    const id = body['id'];
    if (typeof id !== 'string' || !storageIdRe.test(id)) {
      throw problems.unprocessable('Field "id" must be 1 to 36 characters: letters, digits, "-" and "_", starting with a letter or digit (it names a directory)');
    }
    if (body['storage_type'] !== 'broker') throw problems.unprocessable('Field "storage_type" must be "broker"');
    const cfg = body['broker_configuration'];
    if (!isObject(cfg)) throw problems.unprocessable('Field "broker_configuration" is required for storage_type broker and must be an object');
    const broker_configuration: Record<string, string> = {};
    for (const [k, v] of Object.entries(cfg)) {
      if (!brokerConfigurationFields.includes(k)) throw problems.unprocessable(`Field "broker_configuration.${k}" is not known; known: ${brokerConfigurationFields.join(', ')}`);
      if (typeof v !== 'string') throw problems.unprocessable(`Field "broker_configuration.${k}" must be a string`);
      broker_configuration[k] = v;
    }
    const storage: Storage = { id, storage_type: 'broker', broker_configuration };
    const r = await this.#propose({ op: 'storage.create', storage });
    if (!r.ok) throw r.reason === 'exists' ? problems.conflict(r.detail) : problems.unprocessable(r.detail);
    return storage;
  }

  listStorages(): Storage[] {
    return [defaultStorage, ...this.#state().storages()];
  }

  getStorage(id: string): Storage {
    const s = id === defaultStorageId ? defaultStorage : this.#state().storage(id);
    if (s === undefined) throw problems.notFound(`Storage "${id}" does not exist`);
    return s;
  }

  async deleteStorage(id: string): Promise<void> {
    this.getStorage(id);
    const r = await this.#propose({ op: 'storage.delete', id });
    if (!r.ok) throw r.reason === 'not_found' ? problems.notFound(r.detail) : problems.storageInUse(r.detail);
  }

  // ---------------------------------------------------------------- timelines

  #record(name: string): EventTypeRecord {
    const rec = this.#state().eventType(name);
    if (rec === undefined) throw problems.eventTypeNotFound(`EventType "${name}" does not exist.`);
    return rec;
  }

  /** POST timelines: switches the event type's new writes to a new timeline on the storage. */
  async createTimeline(name: string, body: unknown): Promise<TimelineRecord> {
    const rec = this.#record(name);
    if (!isObject(body) || typeof body['storage_id'] !== 'string' || body['storage_id'] === '') {
      throw problems.unprocessable('The body must be {"storage_id": "<storage>"}');
    }
    const storageId = body['storage_id'];
    if (storageId !== defaultStorageId && this.#state().storage(storageId) === undefined) {
      throw problems.unprocessable(`Storage "${storageId}" does not exist`);
    }
    // Checked again where timeline.prepare is applied; here it is answered before any group is placed.
    const count = timelinesOf(rec).length;
    const max = this.#state().limits.timelinesMax;
    if (count >= max) {
      throw problems.unprocessable(`Event type "${name}" has ${count} timelines, the most one event type has (timelinesMax ${max}); it cannot switch to another`);
    }
    // The new log's partitions are new groups, placed like an event type's (checked again at apply).
    let placement: PlacementProposal | undefined;
    if (this.#members !== undefined) {
      placement = proposePlacement(this.#state().eventTypes(), this.#members, rec.storage.partitions.length);
      if (placement === undefined) throw problems.unavailable('The cluster members are not known on this node yet; retry');
    }
    return this.#switcher.switchTo(name, randomUUID(), storageId, placement);
  }

  /** GET timelines: the recorded timelines, oldest first; none before the first switch. */
  listTimelines(name: string): TimelineView[] {
    const rec = this.#record(name);
    const tls = rec.storage.timelines ?? [];
    return tls.map((t, k) => {
      const view: TimelineView = { id: t.id, event_type: name, order: t.order, storage_id: t.storage_id, topic: String(t.topic), created_at: t.created_at, switched_at: t.switched_at };
      const next = tls[k + 1];
      if (next !== undefined) {
        // A closed timeline: the last offset it holds per partition.
        view.latest_position = { offsets: rec.storage.partitions.map((p, i) => ({ partition: p, offset: formatCursor(t.order, toOffset((next.starts[i] ?? 0) - 1)) })) };
      }
      return view;
    });
  }

  /**
   * DELETE a timeline: 404 for an unknown event type or timeline; 422 when more than one timeline
   * exists. Brook records timelines only from the first switch on, and a switch always leaves two
   * (the first and the new one), both holding offsets consumers may still read, so a recorded
   * timeline is never removed (the interface's "only one timeline exists" case cannot arise).
   */
  deleteTimeline(name: string, id: string): never {
    const rec = this.#record(name);
    const tls = rec.storage.timelines ?? [];
    if (!tls.some((t) => t.id === id)) throw problems.notFound(`Timeline "${id}" of event type "${name}" does not exist`);
    throw problems.unprocessable(`Event type "${name}" has ${tls.length} timelines; a timeline can be deleted only when it is the only one`);
  }
}
