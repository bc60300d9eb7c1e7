/**
 * The partition logs of every event type over its timelines and storages (docs/decisions.md,
 * "Storages and timelines"). Consumption and publishing address a log by the event type's first topic
 * (its "logical" topic, EventTypeStorage.topic); the router maps that to the timeline holding the
 * offsets asked for, and to the PartitionLogs of the storage holding that timeline:
 *
 * - reads cross timelines: reading after the last offset of timeline k continues at the first offset
 *   of timeline k+1 (one dense offset sequence per partition over all timelines);
 * - bounds span all timelines (oldest of the first one still holding events, newest of the current);
 * - appends go to the current timeline as this node's metadata knows it. A timeline switch seals the
 *   current timeline's partition logs (commands of their Raft groups, timeline-switch.ts): a batch
 *   that reaches a sealed log is not stored and comes back `sealed`; the router then waits until this
 *   node has applied the switch's commit (the next timeline is current) and sends the batch there,
 *   within the append deadline. Publishers only wait: nothing is lost, repeated or reordered at the
 *   boundary, on one node as on many;
 * - streams waiting for events on a timeline that is switched away are woken (timelineChanged).
 *
 * An event type that never switched (no timelines recorded) takes the direct path to the default store.
 */
import type { Offset } from '../core/offset.js';
import type { PartitionBounds, PartitionReader, StoredEvent } from '../consumption/ports.js';
import { timelineAt, timelinesOf } from '../metadata/timelines.js';
import { defaultStorageId, type EventTypeRecord, type TimelineRecord } from '../metadata/types.js';
import type { PartitionAppend, PartitionAppendResult } from '../publishing/ports.js';
import { PartitionSealedError, PartitionUnavailableError } from '../log/index.js';
import type { ControlCommand } from './partition-control.js';

/** An item a sealed log took nothing of: sent on to the new timeline once its switch is committed here. */
type Sealed = { index: number; item: PartitionAppend; from: string | undefined; timeline: string };

/**
 * What the router needs of the partition logs of one storage: the replicated partitions of the
 * default storage (partition-replicas.ts) and the PartitionLogs of an extra storage both are one.
 */
export interface PartitionLogs {
  bounds(topic: number, partition: number): PartitionBounds;
  read(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number): Promise<StoredEvent[]>;
  waitForEvents(topic: number, partition: number, after: Offset, signal: AbortSignal): Promise<void>;
  /** What the other replicas of a partition say is its newest offset (consumption/ports.ts). */
  newestElsewhere?(topic: number, partition: number): Promise<{ asked: number; newest: number | undefined }>;
  /** Bounds of a partition held elsewhere brought up to a replica's (consumption/ports.ts). */
  freshenBounds?(topic: number, partition: number): Promise<void>;
  append(items: PartitionAppend[]): Promise<PartitionAppendResult[]>;
  setBase(topic: number, partition: number, base: number): Promise<void>;
  /** A command of the partition's group (seal, base) through its leader; resolves with the log's next offset. */
  control(topic: number, partition: number, cmd: ControlCommand, deadlineMs?: number): Promise<number>;
  applyRetention(topic: number, partition: number, cutoffMs: number): Promise<number>;
  dropTopic(topic: number): Promise<void>;
  /** Topics with stored partitions (to drop logs of event types deleted before a crash). */
  topics(): number[];
}

/** The event type whose logical topic this is, from the applied metadata. */
export type TopicLookup = (topic: number) => EventTypeRecord | undefined;

/** Opens the PartitionLogs of a storage (its own RocksDB directory); close() closes both. */
export type StorageOpener = (storageId: string) => Promise<{ store: PartitionLogs; close(): Promise<void> }>;

export interface RouterOptions {
  /** How long a batch turned away by a sealed log waits for the switch's commit here (the append deadline). */
  readonly switchWaitMs: number;
  /** After this long waiting for a switch, `onSwitchStuck` is told (once per wait): its switcher may have died. */
  readonly stuckAfterMs: number;
  /** A batch waited `stuckAfterMs` for the switch to `timeline` of the logical topic: finish that switch (timeline-switch.ts). */
  readonly onSwitchStuck?: (topic: number, timeline: string) => void;
  readonly monotonicMs: () => number;
}

const defaultOptions: RouterOptions = { switchWaitMs: 5000, stuckAfterMs: 2000, monotonicMs: () => performance.now() };
/** How often a batch waiting for a switch looks at the metadata again (it is also woken by timelineChanged). */
const switchPollMs = 20;

export class StorageRouter implements PartitionReader {
  readonly #stores = new Map<string, PartitionLogs>();
  readonly #closers = new Map<string, () => Promise<void>>();
  readonly #opening = new Map<string, Promise<PartitionLogs>>();
  readonly #lookup: TopicLookup;
  readonly #openStorage: StorageOpener;
  readonly #o: RouterOptions;
  /** Wakes streams waiting on a timeline that was switched away, per logical topic. */
  readonly #switchWaiters = new Map<number, Set<() => void>>();
  /** Wakes batches waiting for a switch's commit, per logical topic. */
  readonly #appendWaiters = new Map<number, Set<() => void>>();
  /** Partitions of timelines whose first offset this node has checked (see #baseOnce). */
  readonly #based = new Set<string>();

  constructor(defaultStore: PartitionLogs, lookup: TopicLookup, openStorage: StorageOpener, options: Partial<RouterOptions> = {}) {
    this.#stores.set(defaultStorageId, defaultStore);
    this.#lookup = lookup;
    this.#openStorage = openStorage;
    this.#o = { ...defaultOptions, ...options };
  }

  /** Opens a storage's store (once); the default one is always open. */
  ensureStorage(id: string): Promise<PartitionLogs> {
    const open = this.#stores.get(id);
    if (open !== undefined) return Promise.resolve(open);
    let p = this.#opening.get(id);
    if (p === undefined) {
      p = this.#openStorage(id).then(({ store, close }) => {
        this.#stores.set(id, store);
        this.#closers.set(id, close);
        this.#opening.delete(id);
        return store;
      });
      p.catch(() => this.#opening.delete(id));
      this.#opening.set(id, p);
    }
    return p;
  }

  /**
   * The bounds of timeline t's log of a partition. A storage first used by a timeline this node has
   * just applied may still be opening (main.ts opens it when the switch is prepared): its log is then
   * taken as empty at the timeline's start, as a replica that has not caught up yet would be.
   */
  #boundsOf(t: TimelineRecord, partition: number): PartitionBounds {
    const s = this.#stores.get(t.storage_id);
    if (s !== undefined) return s.bounds(t.topic, partition);
    this.ensureStorage(t.storage_id).catch(() => undefined);
    const start = t.starts[partition] ?? 0;
    return { oldest: start as Offset, newest: (start - 1) as Offset };
  }

  /** The timelines of a logical topic, or undefined for the direct path (never switched). */
  #timelines(topic: number): TimelineRecord[] | undefined {
    const rec = this.#lookup(topic);
    if (rec?.storage.timelines === undefined || rec.storage.timelines.length === 0) return undefined;
    return rec.storage.timelines;
  }

  // ---------------------------------------------------------------- reads

  bounds(topic: number, partition: number): PartitionBounds {
    const tls = this.#timelines(topic);
    const direct = this.#stores.get(defaultStorageId)!;
    if (tls === undefined) return direct.bounds(topic, partition);
    const cur = tls[tls.length - 1]!;
    const newest = Math.max(this.#boundsOf(cur, partition).newest, (cur.starts[partition] ?? 0) - 1);
    for (let k = 0; k < tls.length; k++) {
      const t = tls[k]!;
      const b = this.#boundsOf(t, partition);
      const lo = Math.max(b.oldest, t.starts[partition] ?? 0);
      const hi = k + 1 < tls.length ? (tls[k + 1]!.starts[partition] ?? 0) - 1 : newest;
      if (b.newest >= lo && lo <= hi) return { oldest: lo as Offset, newest: newest as Offset };
    }
    return { oldest: (newest + 1) as Offset, newest: newest as Offset };
  }

  async read(topic: number, partition: number, after: Offset, maxEvents: number, maxBytes: number): Promise<StoredEvent[]> {
    const tls = this.#timelines(topic);
    if (tls === undefined) return this.#stores.get(defaultStorageId)!.read(topic, partition, after, maxEvents, maxBytes);
    // Nothing after the newest event. This also covers the moment between a switch's commit and this
    // node's replica of the new log opening, when that log would not know the offset yet.
    if (after === this.bounds(topic, partition).newest) return [];
    const t = this.#timelineAfter(tls, partition, after);
    return (await this.ensureStorage(t.storage_id)).read(t.topic, partition, after, maxEvents, maxBytes);
  }

  /** The timeline holding the event after `after`: past the last offset of a timeline, the next one. */
  #timelineAfter(tls: TimelineRecord[], partition: number, after: number): TimelineRecord {
    let k = tls.indexOf(timelineAt(tls, partition, after + 1));
    while (k + 1 < tls.length && after >= (tls[k + 1]!.starts[partition] ?? 0) - 1) k++;
    return tls[k]!;
  }

  /** The newest offset the other replicas of the log holding the partition's newest events know. */
  async newestElsewhere(topic: number, partition: number): Promise<{ asked: number; newest: number | undefined }> {
    const tls = this.#timelines(topic);
    if (tls === undefined) return (await this.#stores.get(defaultStorageId)!.newestElsewhere?.(topic, partition)) ?? { asked: 0, newest: undefined };
    const cur = tls[tls.length - 1]!;
    const r = (await (await this.ensureStorage(cur.storage_id)).newestElsewhere?.(cur.topic, partition)) ?? { asked: 0, newest: undefined };
    // A new timeline continues the offsets from its start.
    return r.newest === undefined ? r : { asked: r.asked, newest: Math.max(r.newest, (cur.starts[partition] ?? 0) - 1) };
  }

  /** Freshens the bounds of the partition's log in every timeline (bounds() spans them all). */
  async freshenBounds(topic: number, partition: number): Promise<void> {
    const tls = this.#timelines(topic);
    if (tls === undefined) return this.#stores.get(defaultStorageId)!.freshenBounds?.(topic, partition);
    await Promise.all(tls.map(async (t) => (await this.ensureStorage(t.storage_id).catch(() => undefined))?.freshenBounds?.(t.topic, partition)));
  }

  waitForEvents(topic: number, partition: number, after: Offset, signal: AbortSignal): Promise<void> {
    const tls = this.#timelines(topic);
    const direct = this.#stores.get(defaultStorageId)!;
    const waiters = this.#switchWaiters.get(topic) ?? new Set<() => void>();
    this.#switchWaiters.set(topic, waiters);
    if (tls === undefined) return this.#raceSwitch(topic, waiters, (s) => direct.waitForEvents(topic, partition, after, s), signal);
    // Waits on the log read() takes the event after `after` from, not on the newest of all of them: on a
    // node whose replica of an old timeline still lacks its last events while the new timeline has
    // some, read() answers nothing, and answering "there are events" at once made a reader's
    // read-and-wait loop spin without yielding, which starved the very replication it waited for.
    const t = this.#timelineAfter(tls, partition, after);
    if (this.#boundsOf(t, partition).newest > after) return Promise.resolve();
    return this.#raceSwitch(topic, waiters, async (s) => (await this.ensureStorage(t.storage_id)).waitForEvents(t.topic, partition, after, s), signal);
  }

  /** Waits for the store, or a timeline switch of the topic (the store waited on is then the old one). */
  #raceSwitch(topic: number, waiters: Set<() => void>, wait: (s: AbortSignal) => Promise<void>, signal: AbortSignal): Promise<void> {
    const round = new AbortController();
    const onAbort = () => round.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const switched = new Promise<void>((resolve) => {
      const wake = () => resolve();
      waiters.add(wake);
      round.signal.addEventListener('abort', () => {
        waiters.delete(wake);
        resolve();
      }, { once: true });
    });
    return Promise.race([wait(round.signal), switched]).finally(() => {
      round.abort();
      signal.removeEventListener('abort', onAbort);
      if (waiters.size === 0) this.#switchWaiters.delete(topic);
    });
  }

  // ---------------------------------------------------------------- appends

  /** The timeline new writes of a logical topic go to, as this node's metadata knows it. */
  #current(topic: number): TimelineRecord | undefined {
    const tls = this.#timelines(topic);
    return tls === undefined ? undefined : tls[tls.length - 1];
  }

  append(items: PartitionAppend[]): Promise<PartitionAppendResult[]> {
    const deadlineMs = this.#o.monotonicMs() + this.#o.switchWaitMs;
    // The common case, no event type of the batch has timelines: everything goes to the default store
    // as it is, in one call and without the routing below (its maps, lists and async frame were about
    // 3 KB per small publish, all of it kept until the entries committed). A log sealed meanwhile
    // (the first timeline of its event type was just created) is handled as in the general case.
    for (const item of items) if (this.#current(item.topic) !== undefined) return this.#appendRouted(items, deadlineMs);
    return this.#stores
      .get(defaultStorageId)!
      .append(items)
      .then((r) => {
        let sealed: Sealed[] | undefined;
        for (let index = 0; index < r.length; index++) {
          const res = r[index]!;
          if (!res.ok && res.error instanceof PartitionSealedError) (sealed ??= []).push({ index, item: items[index]!, from: undefined, timeline: res.error.timeline });
        }
        if (sealed === undefined) return r;
        const results = r.slice();
        return this.#resendSealed(items, results, sealed, deadlineMs);
      });
  }

  /** Appends routed to each event type's current timeline (general case of append). */
  async #appendRouted(items: PartitionAppend[], deadlineMs: number): Promise<PartitionAppendResult[]> {
    const results: PartitionAppendResult[] = new Array(items.length);
    return this.#routeAndAppend(items, results, items.map((item, index) => ({ index, item })), deadlineMs);
  }

  async #routeAndAppend(items: PartitionAppend[], results: PartitionAppendResult[], unplaced: { index: number; item: PartitionAppend }[], deadlineMs: number): Promise<PartitionAppendResult[]> {
    while (unplaced.length > 0) {
      // Route each item to its event type's current timeline.
      const byStore = new Map<PartitionLogs, { index: number; item: PartitionAppend; from: string | undefined }[]>();
      for (const { index, item } of unplaced) {
        const cur = this.#current(item.topic);
        let store = this.#stores.get(defaultStorageId)!;
        let routed = item;
        if (cur !== undefined) {
          store = await this.ensureStorage(cur.storage_id);
          await this.#baseOnce(store, cur, item.partition);
          routed = { ...item, topic: cur.topic };
        }
        const list = byStore.get(store) ?? [];
        list.push({ index, item: routed, from: cur?.id });
        byStore.set(store, list);
      }
      const sealed: Sealed[] = [];
      await Promise.all(
        [...byStore].map(async ([store, list]) => {
          const r = await store.append(list.map((x) => x.item));
          list.forEach((x, j) => {
            const res = r[j]!;
            if (!res.ok && res.error instanceof PartitionSealedError) sealed.push({ ...x, item: items[x.index]!, timeline: res.error.timeline });
            else results[x.index] = res;
          });
        }),
      );
      unplaced = await this.#awaitSwitches(results, sealed, deadlineMs);
    }
    return results;
  }

  /** Items a sealed log took nothing of, sent on once their switches are committed here. */
  async #resendSealed(items: PartitionAppend[], results: PartitionAppendResult[], sealed: Sealed[], deadlineMs: number): Promise<PartitionAppendResult[]> {
    return this.#routeAndAppend(items, results, await this.#awaitSwitches(results, sealed, deadlineMs), deadlineMs);
  }

  /**
   * A sealed log took nothing: waits for the switch's commit here and answers the items to send to the
   * new timeline (those whose switch did not complete in time get their failure in `results`).
   */
  async #awaitSwitches(results: PartitionAppendResult[], sealed: Sealed[], deadlineMs: number): Promise<{ index: number; item: PartitionAppend }[]> {
    const waits = new Map<number, Promise<Error | undefined>>();
    for (const x of sealed) {
      if (!waits.has(x.item.topic)) waits.set(x.item.topic, this.#awaitSwitch(x.item.topic, x.from, x.timeline, deadlineMs).then(() => undefined, (err: Error) => err));
    }
    const unplaced: { index: number; item: PartitionAppend }[] = [];
    for (const x of sealed) {
      const failed = await waits.get(x.item.topic)!;
      if (failed === undefined) unplaced.push({ index: x.index, item: x.item });
      else results[x.index] = { ok: false, error: new PartitionUnavailableError(x.item.topic, x.item.partition, failed) };
    }
    return unplaced;
  }

  /**
   * Waits until this node's metadata names a current timeline of the logical topic other than `from`
   * (the switch to `timeline` was committed and applied here). A batch that waits past stuckAfterMs
   * reports the switch as stuck once (its switcher may have died: any node may finish it).
   */
  async #awaitSwitch(topic: number, from: string | undefined, timeline: string, deadlineMs: number): Promise<void> {
    const started = this.#o.monotonicMs();
    let reported = false;
    for (;;) {
      if (this.#lookup(topic) === undefined) throw new Error('the event type was deleted');
      const cur = this.#current(topic);
      if (cur !== undefined && cur.id !== from) return;
      const now = this.#o.monotonicMs();
      if (now >= deadlineMs) {
        throw new Error(`the switch to timeline ${timeline} did not complete in time; the batch was not stored, retry it`);
      }
      if (!reported && now - started >= this.#o.stuckAfterMs) {
        reported = true;
        this.#o.onSwitchStuck?.(topic, timeline);
      }
      const waiters = this.#appendWaiters.get(topic) ?? new Set<() => void>();
      this.#appendWaiters.set(topic, waiters);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(switchPollMs, Math.max(1, deadlineMs - now)));
        waiters.add(done);
      });
      if (waiters.size === 0) this.#appendWaiters.delete(topic);
    }
  }

  /**
   * A timeline of the logical topic was committed here (main.ts calls this when it applies the
   * commit): batches waiting for it are sent on, and streams waiting on the old log wake.
   */
  timelineChanged(topic: number): void {
    for (const wake of [...(this.#appendWaiters.get(topic) ?? [])]) wake();
    for (const wake of [...(this.#switchWaiters.get(topic) ?? [])]) wake();
  }

  /**
   * The first offset of a timeline's log is its groups' starting point (partition-replicas.ts,
   * GroupPlacement.start). Logs created by versions that set it with a base entry after the switch
   * may lack it after a crash in between: set it before the first append (once per partition here).
   */
  async #baseOnce(store: PartitionLogs, t: TimelineRecord, partition: number): Promise<void> {
    const key = `${t.topic}:${partition}`;
    if (this.#based.has(key)) return;
    const start = t.starts[partition] ?? 0;
    const b = store.bounds(t.topic, partition);
    if (start > 0 && b.newest === -1 && b.oldest === 0) await store.setBase(t.topic, partition, start);
    this.#based.add(key);
  }

  /**
   * Seals partition `partition` of timeline `t`'s log for the switch to `switchTo`, through its
   * group's leader; resolves with where the new timeline starts for that partition.
   */
  async sealLog(t: TimelineRecord, partition: number, switchTo: string, deadlineMs: number): Promise<number> {
    const store = await this.ensureStorage(t.storage_id);
    return store.control(t.topic, partition, { kind: 'seal', timeline: switchTo, floor: t.starts[partition] ?? 0 }, deadlineMs);
  }

  // ---------------------------------------------------------------- maintenance

  /** Retention over every timeline of the event type (RetentionTarget). */
  async applyRetention(topic: number, partition: number, cutoffMs: number): Promise<number> {
    const rec = this.#lookup(topic);
    const tls = rec === undefined ? undefined : this.#timelines(topic);
    if (tls === undefined) return this.#stores.get(defaultStorageId)!.applyRetention(topic, partition, cutoffMs);
    let removed = 0;
    for (const t of tls) removed += await (await this.ensureStorage(t.storage_id)).applyRetention(t.topic, partition, cutoffMs);
    return removed;
  }

  /** Removes the logs of a deleted event type in every storage that held one of its timelines. */
  async dropLogs(logs: readonly { storage_id: string; topic: number }[]): Promise<void> {
    for (const l of logs) await (await this.ensureStorage(l.storage_id)).dropTopic(l.topic);
  }

  /** Opens the storages that hold timelines of these event types (at start). */
  async openInUse(records: Iterable<EventTypeRecord>): Promise<void> {
    for (const r of records) for (const t of timelinesOf(r)) await this.ensureStorage(t.storage_id);
  }

  /** Closes the extra storages (the default store belongs to the caller). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#opening.values()]);
    for (const close of this.#closers.values()) await close();
    this.#closers.clear();
  }
}
