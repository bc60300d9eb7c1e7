/**
 * The partition logs of every event type over its timelines and storages (docs/decisions.md,
 * "Storages and timelines"). Consumption and publishing address a log by the event type's first topic
 * (its "logical" topic, EventTypeStorage.topic); the router maps that to the timeline holding the
 * offsets asked for, and to the PartitionLogs of the storage holding that timeline:
 *
 * - reads cross timelines: reading after the last offset of timeline k continues at the first offset
 *   of timeline k+1 (one dense offset sequence per partition over all timelines);
 * - bounds span all timelines (oldest of the first one still holding events, newest of the current);
 * - appends go to the current timeline; a timeline switch closes the event type's append gate, waits
 *   for appends in flight, reads each partition's newest offset, lets the caller propose the new
 *   timeline with those starts, sets the new logs' first offsets, then reopens the gate: no event is
 *   lost or reordered at the boundary and publishers only wait;
 * - streams waiting for events on a timeline that is switched away are woken.
 *
 * An event type that never switched (no timelines recorded) takes the direct path to the default store.
 */
import { assert } from '../core/assert.js';
import { timelineAt, timelinesOf } from '../metadata/timelines.js';
import { defaultStorageId } from '../metadata/types.js';
export class StorageRouter {
    #stores = new Map();
    #closers = new Map();
    #opening = new Map();
    #lookup;
    #openStorage;
    #gates = new Map();
    /** Wakes streams waiting on a timeline that was switched away, per logical topic. */
    #switchWaiters = new Map();
    constructor(defaultStore, lookup, openStorage) {
        this.#stores.set(defaultStorageId, defaultStore);
        this.#lookup = lookup;
        this.#openStorage = openStorage;
    }
    /** Opens a storage's store (once); the default one is always open. */
    ensureStorage(id) {
        const open = this.#stores.get(id);
        if (open !== undefined)
            return Promise.resolve(open);
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
    #store(t) {
        const s = this.#stores.get(t.storage_id);
        assert(s !== undefined, `storage ${t.storage_id} of timeline ${t.id} is not open`);
        return s;
    }
    /** The timelines of a logical topic, or undefined for the direct path (never switched). */
    #timelines(topic) {
        const rec = this.#lookup(topic);
        if (rec?.storage.timelines === undefined || rec.storage.timelines.length === 0)
            return undefined;
        return rec.storage.timelines;
    }
    // ---------------------------------------------------------------- reads
    bounds(topic, partition) {
        const tls = this.#timelines(topic);
        const direct = this.#stores.get(defaultStorageId);
        if (tls === undefined)
            return direct.bounds(topic, partition);
        const cur = tls[tls.length - 1];
        const newest = Math.max(this.#store(cur).bounds(cur.topic, partition).newest, (cur.starts[partition] ?? 0) - 1);
        for (let k = 0; k < tls.length; k++) {
            const t = tls[k];
            const b = this.#store(t).bounds(t.topic, partition);
            const lo = Math.max(b.oldest, t.starts[partition] ?? 0);
            const hi = k + 1 < tls.length ? (tls[k + 1].starts[partition] ?? 0) - 1 : newest;
            if (b.newest >= lo && lo <= hi)
                return { oldest: lo, newest: newest };
        }
        return { oldest: (newest + 1), newest: newest };
    }
    read(topic, partition, after, maxEvents, maxBytes) {
        const tls = this.#timelines(topic);
        if (tls === undefined)
            return this.#stores.get(defaultStorageId).read(topic, partition, after, maxEvents, maxBytes);
        // Nothing after the newest event. This also covers the moment between a switch's commit and the
        // new log's first offset being set, when that log would not know the offset yet.
        if (after === this.bounds(topic, partition).newest)
            return Promise.resolve([]);
        const t = this.#timelineAfter(tls, partition, after);
        return this.#store(t).read(t.topic, partition, after, maxEvents, maxBytes);
    }
    /** The timeline holding the event after `after`: past the last offset of a timeline, the next one. */
    #timelineAfter(tls, partition, after) {
        let k = tls.indexOf(timelineAt(tls, partition, after + 1));
        while (k + 1 < tls.length && after >= (tls[k + 1].starts[partition] ?? 0) - 1)
            k++;
        return tls[k];
    }
    waitForEvents(topic, partition, after, signal) {
        const tls = this.#timelines(topic);
        const direct = this.#stores.get(defaultStorageId);
        const waiters = this.#switchWaiters.get(topic) ?? new Set();
        this.#switchWaiters.set(topic, waiters);
        if (tls === undefined)
            return this.#raceSwitch(topic, waiters, (s) => direct.waitForEvents(topic, partition, after, s), signal);
        if (this.bounds(topic, partition).newest > after)
            return Promise.resolve();
        const cur = tls[tls.length - 1];
        return this.#raceSwitch(topic, waiters, (s) => this.#store(cur).waitForEvents(cur.topic, partition, after, s), signal);
    }
    /** Waits for the store, or a timeline switch of the topic (the store waited on is then the old one). */
    #raceSwitch(topic, waiters, wait, signal) {
        const round = new AbortController();
        const onAbort = () => round.abort();
        signal.addEventListener('abort', onAbort, { once: true });
        const switched = new Promise((resolve) => {
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
            if (waiters.size === 0)
                this.#switchWaiters.delete(topic);
        });
    }
    // ---------------------------------------------------------------- appends
    #gate(topic) {
        let g = this.#gates.get(topic);
        if (g === undefined) {
            g = { closed: undefined, inflight: 0, idle: undefined };
            this.#gates.set(topic, g);
        }
        return g;
    }
    async append(items) {
        const topics = [...new Set(items.map((i) => i.topic))];
        const gates = topics.map((t) => this.#gate(t));
        for (;;) {
            const closed = gates.find((g) => g.closed !== undefined);
            if (closed === undefined)
                break;
            await closed.closed;
        }
        for (const g of gates)
            g.inflight++;
        try {
            // Route each item to its event type's current timeline.
            const byStore = new Map();
            for (let i = 0; i < items.length; i++) {
                const item = items[i];
                const tls = this.#timelines(item.topic);
                let store = this.#stores.get(defaultStorageId);
                let routed = item;
                if (tls !== undefined) {
                    const cur = tls[tls.length - 1];
                    store = await this.ensureStorage(cur.storage_id);
                    // The base is set by the switch; after a crash in between, set it now (never written yet).
                    const start = cur.starts[item.partition] ?? 0;
                    const b = store.bounds(cur.topic, item.partition);
                    if (start > 0 && b.newest === -1 && b.oldest === 0)
                        await store.setBase(cur.topic, item.partition, start);
                    routed = { ...item, topic: cur.topic };
                }
                const list = byStore.get(store) ?? [];
                list.push({ index: i, item: routed });
                byStore.set(store, list);
            }
            const results = new Array(items.length);
            await Promise.all([...byStore].map(async ([store, list]) => {
                const r = await store.append(list.map((x) => x.item));
                list.forEach((x, j) => (results[x.index] = r[j]));
            }));
            return results;
        }
        finally {
            for (const g of gates) {
                g.inflight--;
                if (g.inflight === 0)
                    g.idle?.();
            }
        }
    }
    /**
     * Switches a logical topic to a new timeline: appends wait meanwhile. `propose` gets the first
     * offset of the new timeline per partition and answers the applied timeline (or throws).
     */
    async switchTimeline(topic, partitions, storageId, propose) {
        const gate = this.#gate(topic);
        while (gate.closed !== undefined)
            await gate.closed;
        let reopen;
        gate.closed = new Promise((r) => (reopen = r));
        try {
            while (gate.inflight > 0)
                await new Promise((r) => (gate.idle = r));
            gate.idle = undefined;
            const target = await this.ensureStorage(storageId);
            const starts = Array.from({ length: partitions }, (_, p) => this.bounds(topic, p).newest + 1);
            const t = await propose(starts);
            for (let p = 0; p < partitions; p++)
                await target.setBase(t.topic, p, t.starts[p] ?? 0);
            for (const wake of this.#switchWaiters.get(topic) ?? [])
                wake();
            return t;
        }
        finally {
            gate.closed = undefined;
            reopen();
        }
    }
    // ---------------------------------------------------------------- maintenance
    /** Retention over every timeline of the event type (RetentionTarget). */
    async applyRetention(topic, partition, cutoffMs) {
        const rec = this.#lookup(topic);
        const tls = rec === undefined ? undefined : this.#timelines(topic);
        if (tls === undefined)
            return this.#stores.get(defaultStorageId).applyRetention(topic, partition, cutoffMs);
        let removed = 0;
        for (const t of tls)
            removed += await (await this.ensureStorage(t.storage_id)).applyRetention(t.topic, partition, cutoffMs);
        return removed;
    }
    /** Removes the logs of a deleted event type in every storage that held one of its timelines. */
    async dropLogs(logs) {
        for (const l of logs)
            await (await this.ensureStorage(l.storage_id)).dropTopic(l.topic);
    }
    /** Opens the storages that hold timelines of these event types (at start). */
    async openInUse(records) {
        for (const r of records)
            for (const t of timelinesOf(r))
                await this.ensureStorage(t.storage_id);
    }
    /** Closes the extra storages (the default store belongs to the caller). */
    async close() {
        await Promise.allSettled([...this.#opening.values()]);
        for (const close of this.#closers.values())
            await close();
        this.#closers.clear();
    }
}
//# sourceMappingURL=storage-router.js.map