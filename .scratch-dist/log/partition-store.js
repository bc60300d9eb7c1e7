/**
 * Partition logs over the ordered KV port.
 *
 * Every append call is queued; one commit is in flight at a time, and every call queued meanwhile
 * joins the next commit: its events are grouped per partition into record batches (one per partition,
 * split only if a partition's share of one commit exceeds recordBatchBytesMax), offsets are assigned
 * densely after each partition's newest, and all batches go into ONE durable KV write (one fsync).
 * In-memory state (newest offsets, the tail cache) advances only after that write succeeded, so a
 * failed write leaves nothing half-done and the next commit reuses the same offsets.
 *
 * Readers only ever see acknowledged (durable) events: `newest` is the last durable offset, and reads
 * stop there even if RocksDB already holds a newer, not yet synced batch.
 *
 * Integrity: every batch read from the KV is CRC-checked before its bytes are served. At start the
 * store verifies, per partition, every batch after its "verified-through" mark (written at a clean
 * close and after each successful start), i.e. everything written since the last clean shutdown or
 * start; with verifyOnStart: 'all' it verifies everything. A corrupt partition fails start (default) or
 * is quarantined (onCorruption: 'quarantine'): it then refuses reads and appends with
 * PartitionUnavailableError, so corrupt bytes are never served.
 *
 * The store does not own the KV: close() flushes its own state but leaves kv.close() to the caller,
 * because metadata shares the same KV.
 */
import { assert } from '../core/assert.js';
import { appendQueueEventsMax } from '../core/limits.js';
import { crc32c } from './crc32c.js';
import { AppendQueueFullError, CorruptBatchError, OffsetExpiredError, OffsetNotYetAvailableError, PartitionUnavailableError, StoreClosedError, TopicDroppingError, } from './errors.js';
import { batchKey, decodeBatchKey, decodePartitionKey, partitionBatchRange, partitionKey, prefixBatch, prefixLowWatermark, prefixRange, prefixVerified, readU64, topicRange, u32Max, writeU64, } from './keys.js';
import { BatchFormatError, decodeRecordBatch, encodeRecordBatch, readBatchHeader } from './record-batch.js';
import { TailCache, newTailRun } from './tail-cache.js';
const noopLogger = { info() { }, warn() { }, error() { } };
const metaVersion = 1;
/** Map key of a partition: exact as a number while topic * 2^32 + partition < 2^53, else a string. */
function pkey(topic, partition) {
    return topic < 0x20_0000 ? topic * 0x1_0000_0000 + partition : `${topic}:${partition}`;
}
export class PartitionStore {
    kv;
    opts;
    partitions = new Map();
    cache;
    logger;
    pending = [];
    pendingEvents = 0;
    pendingBytes = 0;
    flushing = null;
    /** The commit currently being written, if any. */
    inflight = null;
    maintenance = Promise.resolve();
    dropping = new Set();
    closed = false;
    queueEventsMax;
    queueBytesMax;
    recordBatchBytesMax;
    /** Counters for tests and metrics. */
    stats = { commits: 0, appendCalls: 0, failedCommits: 0, cacheReads: 0, kvReads: 0 };
    startReport;
    constructor(kv, opts) {
        this.kv = kv;
        this.opts = opts;
        this.cache = new TailCache(opts.tailCacheBytesMax ?? 64 * 1024 * 1024);
        this.logger = opts.logger ?? noopLogger;
        this.queueEventsMax = opts.appendQueueEventsMax ?? appendQueueEventsMax;
        this.queueBytesMax = opts.appendQueueBytesMax ?? 256 * 1024 * 1024;
        this.recordBatchBytesMax = opts.recordBatchBytesMax ?? 8 * 1024 * 1024;
    }
    static async open(kv, opts) {
        const store = new PartitionStore(kv, opts);
        await store.recover();
        return store;
    }
    // ---------------------------------------------------------------- start-up
    async recover() {
        const started = performance.now();
        const lowWatermarks = await this.readMetaMap(prefixLowWatermark);
        const verified = await this.readMetaMap(prefixVerified);
        const report = { partitions: 0, batchesVerified: 0, bytesVerified: 0, durationMs: 0, quarantined: [] };
        // Visit each partition with two seeks (first and last batch), never scanning the data in between.
        let cursor = prefixRange(prefixBatch).gte;
        const end = prefixRange(prefixBatch).lt;
        for (;;) {
            const firstEntry = await this.first({ gte: cursor, lt: end, limit: 1, capacity: 1 });
            if (firstEntry === null)
                break;
            const { topic, partition } = decodeBatchKey(firstEntry[0]);
            const range = partitionBatchRange(topic, partition);
            cursor = range.lt;
            const lastEntry = (await this.first({ ...range, reverse: true, limit: 1, capacity: 1 }));
            const state = this.newState(topic, partition);
            report.partitions++;
            const lw = lowWatermarks.get(pkey(topic, partition))?.value ?? 0;
            lowWatermarks.delete(pkey(topic, partition));
            const lastOffset = decodeBatchKey(lastEntry[0]).lastOffset;
            state.newest = lastOffset;
            state.avgBatchBytes = lastEntry[1].length;
            try {
                let oldest;
                try {
                    oldest = readBatchHeader(firstEntry[1]).first;
                }
                catch (err) {
                    throw this.corruption(topic, partition, decodeBatchKey(firstEntry[0]).lastOffset, err);
                }
                state.oldest = oldest;
                if (oldest !== lw) {
                    throw new CorruptBatchError(topic, partition, oldest, `first stored offset ${oldest} differs from the low watermark ${lw}: batches are missing`);
                }
                const mark = this.opts.verifyOnStart === 'all' ? -1 : (verified.get(pkey(topic, partition))?.value ?? -1);
                const from = Math.min(Math.max(mark + 1, oldest), lastOffset);
                const v = await this.verifyRange(state, from, lastOffset);
                report.batchesVerified += v.batches;
                report.bytesVerified += v.bytes;
                state.lastAppendTimeMs = v.lastAppendTimeMs;
            }
            catch (err) {
                if (!(err instanceof CorruptBatchError))
                    throw err;
                if (this.opts.onCorruption !== 'quarantine')
                    throw err;
                state.corrupt = err;
                report.quarantined.push({ topic, partition, error: err.message });
                this.logger.error({ topic, partition, offset: err.offset, err: err.message }, 'partition quarantined: corrupt record batch');
            }
        }
        // Partitions whose batches were all removed by retention: offsets continue after the watermark.
        for (const { topic, partition, value: lw } of lowWatermarks.values()) {
            const state = this.newState(topic, partition);
            state.oldest = lw;
            state.newest = lw - 1;
            report.partitions++;
        }
        // Everything up to here is verified: a crash from now on re-verifies only newer batches.
        await this.writeVerifiedMarks();
        report.durationMs = performance.now() - started;
        this.startReport = report;
        this.logger.info(report, 'partition store started');
    }
    async first(range) {
        for await (const e of this.kv.iterate(range))
            return e;
        return null;
    }
    async readMetaMap(prefix) {
        const out = new Map();
        for await (const [k, v] of this.kv.iterate({ ...prefixRange(prefix), capacity: 1000 })) {
            const { topic, partition } = decodePartitionKey(k, prefix);
            const value = decodeMeta(v);
            if (value === null) {
                throw new CorruptBatchError(topic, partition, -1, `corrupt ${prefix === prefixLowWatermark ? 'low watermark' : 'verified mark'} record`);
            }
            out.set(pkey(topic, partition), { topic, partition, value });
        }
        return out;
    }
    /** CRC-checks every batch holding offsets in [from, to] and that they are contiguous. */
    async verifyRange(state, from, to) {
        const { topic, partition } = state;
        let expected = -1;
        let batches = 0;
        let bytes = 0;
        let lastAppendTimeMs = 0;
        const range = partitionBatchRange(topic, partition);
        for await (const [k, v] of this.kv.iterate({ gte: batchKey(topic, partition, from), lt: range.lt, capacity: 64 })) {
            const { lastOffset } = decodeBatchKey(k);
            let b;
            try {
                b = decodeRecordBatch(v, lastOffset);
            }
            catch (err) {
                throw this.corruption(topic, partition, lastOffset, err);
            }
            if (expected !== -1 && b.first !== expected) {
                throw new CorruptBatchError(topic, partition, expected, `offsets ${expected}..${b.first - 1} are missing`);
            }
            expected = lastOffset + 1;
            batches++;
            bytes += v.length;
            lastAppendTimeMs = b.appendTimeMs;
            if (lastOffset >= to)
                break;
        }
        assert(expected === to + 1, `verification of ${topic}/${partition} ended at ${expected - 1}, expected ${to}`);
        return { batches, bytes, lastAppendTimeMs };
    }
    corruption(topic, partition, offset, err) {
        const reason = err instanceof BatchFormatError ? err.message : String(err);
        return new CorruptBatchError(topic, partition, offset, reason);
    }
    async writeVerifiedMarks() {
        const marks = [];
        for (const s of this.partitions.values()) {
            if (s.corrupt === null && s.newest >= 0)
                marks.push([partitionKey(prefixVerified, s.topic, s.partition), encodeMeta(s.newest)]);
        }
        if (marks.length === 0)
            return;
        await this.kv.write((b) => {
            for (const [k, v] of marks)
                b.put(k, v);
        }, { durable: true });
    }
    newState(topic, partition) {
        const s = {
            topic, partition, oldest: 0, newest: -1, lastAppendTimeMs: 0, avgBatchBytes: 4096,
            run: newTailRun(), waiters: new Set(), corrupt: null,
        };
        this.partitions.set(pkey(topic, partition), s);
        return s;
    }
    state(topic, partition) {
        return this.partitions.get(pkey(topic, partition));
    }
    // ---------------------------------------------------------------- appends
    append(items) {
        if (this.closed)
            return Promise.reject(new StoreClosedError());
        let events = 0;
        let bytes = 0;
        const results = new Array(items.length).fill(undefined);
        items.forEach((it, i) => {
            const bad = checkItem(it);
            if (bad !== null) {
                results[i] = { ok: false, error: bad };
                return;
            }
            events += it.events.length;
            for (const e of it.events)
                bytes += e.length;
        });
        if (this.pendingEvents + events > this.queueEventsMax || this.pendingBytes + bytes > this.queueBytesMax) {
            return Promise.reject(new AppendQueueFullError(this.pendingEvents, this.pendingBytes));
        }
        this.stats.appendCalls++;
        this.pendingEvents += events;
        this.pendingBytes += bytes;
        return new Promise((resolve) => {
            this.pending.push({ items, results, events, bytes, resolve });
            if (this.flushing === null)
                this.flushing = this.flushLoop();
        });
    }
    async flushLoop() {
        await Promise.resolve(); // appends of the same tick share the first commit
        while (this.pending.length > 0) {
            const jobs = this.pending;
            this.pending = [];
            try {
                this.inflight = this.commit(jobs);
                await this.inflight;
            }
            finally {
                this.inflight = null;
                for (const j of jobs) {
                    this.pendingEvents -= j.events;
                    this.pendingBytes -= j.bytes;
                    j.resolve(j.results.map((r) => r ?? { ok: false, error: new Error('append not processed') }));
                }
            }
        }
        this.flushing = null;
    }
    async commit(jobs) {
        const groups = new Map();
        for (const job of jobs) {
            job.items.forEach((item, index) => {
                if (job.results[index] !== undefined)
                    return;
                if (this.dropping.has(item.topic)) {
                    job.results[index] = { ok: false, error: new TopicDroppingError(item.topic) };
                    return;
                }
                const k = pkey(item.topic, item.partition);
                const state = this.partitions.get(k) ?? this.newState(item.topic, item.partition);
                if (state.corrupt !== null) {
                    job.results[index] = { ok: false, error: new PartitionUnavailableError(item.topic, item.partition, state.corrupt) };
                    return;
                }
                let g = groups.get(k);
                if (g === undefined)
                    groups.set(k, (g = { state, entries: [], next: state.newest + 1 }));
                g.entries.push({ job, index, first: g.next });
                g.next += item.events.length;
            });
        }
        if (groups.size === 0)
            return;
        const now = this.opts.clock.nowMs();
        const planned = [];
        for (const g of groups.values()) {
            // Append times never go backwards within a partition, so retention's prefix rule holds.
            const appendTimeMs = Math.max(now, g.state.lastAppendTimeMs);
            let chunk = [];
            let chunkBytes = 0;
            let chunkFirst = g.state.newest + 1;
            const flushChunk = () => {
                if (chunk.length === 0)
                    return;
                const value = encodeRecordBatch(chunkFirst, appendTimeMs, chunk);
                const last = chunkFirst + chunk.length - 1;
                planned.push({ state: g.state, first: chunkFirst, value, key: batchKey(g.state.topic, g.state.partition, last), count: chunk.length });
                chunkFirst = last + 1;
                chunk = [];
                chunkBytes = 0;
            };
            for (const e of g.entries) {
                const evs = e.job.items[e.index].events;
                let b = 0;
                for (const ev of evs)
                    b += ev.length + 4;
                // Split only between items, never inside one publish's events for this partition.
                if (chunk.length > 0 && chunkBytes + b > this.recordBatchBytesMax)
                    flushChunk();
                for (const ev of evs)
                    chunk.push(ev);
                chunkBytes += b;
            }
            flushChunk();
            g.state.lastAppendTimeMs = appendTimeMs;
        }
        try {
            await this.kv.write((b) => {
                for (const p of planned)
                    b.put(p.key, p.value);
            }, { durable: true });
        }
        catch (err) {
            this.stats.failedCommits++;
            const error = err instanceof Error ? err : new Error(String(err));
            this.logger.warn({ err: error.message, partitions: groups.size }, 'append commit failed');
            for (const g of groups.values())
                for (const e of g.entries)
                    e.job.results[e.index] = { ok: false, error };
            return;
        }
        this.stats.commits++;
        for (const p of planned) {
            const s = p.state;
            // A partition dropped while this commit was in flight cannot happen: dropTopic waits for commits.
            assert(s.newest + 1 === p.first, `commit for ${s.topic}/${s.partition} starts at ${p.first}, newest is ${s.newest}`);
            s.newest = p.first + p.count - 1;
            s.avgBatchBytes = Math.round(s.avgBatchBytes * 0.8 + p.value.length * 0.2);
            this.cache.add(s.run, p.first, p.value, p.count);
        }
        for (const g of groups.values()) {
            for (const e of g.entries) {
                const n = e.job.items[e.index].events.length;
                e.job.results[e.index] = { ok: true, first: e.first, last: (e.first + n - 1) };
            }
            wake(g.state);
        }
    }
    // ---------------------------------------------------------------- reads
    bounds(topic, partition) {
        const s = this.state(topic, partition);
        if (s === undefined)
            return { oldest: 0, newest: -1 };
        return { oldest: s.oldest, newest: s.newest };
    }
    /** Topics with stored partitions; lets the host drop logs of event types deleted before a crash. */
    topics() {
        return [...new Set([...this.partitions.values()].map((s) => s.topic))];
    }
    /** Partitions refusing service after corruption was found. */
    quarantined() {
        const out = [];
        for (const s of this.partitions.values())
            if (s.corrupt !== null)
                out.push({ topic: s.topic, partition: s.partition, error: s.corrupt });
        return out;
    }
    async read(topic, partition, after, maxEvents, maxBytes) {
        if (this.closed)
            throw new StoreClosedError();
        assert(Number.isSafeInteger(after) && after >= -1, `invalid after ${after}`);
        assert(Number.isSafeInteger(maxEvents) && maxEvents >= 1, `invalid maxEvents ${maxEvents}`);
        assert(maxBytes >= 1, `invalid maxBytes ${maxBytes}`);
        const s = this.state(topic, partition);
        if (s === undefined) {
            this.checkReadable(topic, partition, { oldest: 0, newest: -1, corrupt: null }, after);
            return [];
        }
        this.checkReadable(topic, partition, s, after);
        const newest = s.newest; // acknowledged only, fixed for this read
        const out = [];
        let bytes = 0;
        let next = after + 1;
        const full = () => out.length >= maxEvents || bytes >= maxBytes || next > newest;
        const take = (offset, ev) => {
            out.push({ offset: offset, bytes: ev });
            bytes += ev.length;
            next = offset + 1;
        };
        while (!full()) {
            if (this.cache.read(s.run, next, take, full)) {
                this.stats.cacheReads++;
                break;
            }
            // Older than the cache: read whole batches from the KV, sized so one round trip carries about
            // maxBytes (at most 1000 batches), and loop if batches were smaller than estimated.
            this.stats.kvReads++;
            const remainingBytes = Math.max(1, maxBytes - bytes);
            const want = Math.min(1000, maxEvents - out.length, Math.ceil(remainingBytes / Math.max(1, s.avgBatchBytes)) + 1);
            const range = partitionBatchRange(topic, partition);
            let seen = 0;
            const start = next;
            for await (const [k, v] of this.kv.iterate({ gte: batchKey(topic, partition, next), lt: range.lt, limit: want, capacity: want })) {
                seen++;
                const { lastOffset } = decodeBatchKey(k);
                let b;
                try {
                    b = decodeRecordBatch(v, lastOffset);
                }
                catch (err) {
                    throw this.quarantine(s, this.corruption(topic, partition, lastOffset, err));
                }
                if (b.first > next) {
                    // Retention removed batches after we checked the bounds, or a batch is missing.
                    if (next < s.oldest)
                        throw new OffsetExpiredError(topic, partition, after, s.oldest);
                    throw this.quarantine(s, new CorruptBatchError(topic, partition, next, `offsets ${next}..${b.first - 1} are missing`));
                }
                for (let o = next; o <= lastOffset && !full(); o++)
                    take(o, b.events[o - b.first]);
                if (full())
                    break;
            }
            if (next === start) {
                if (next < s.oldest)
                    throw new OffsetExpiredError(topic, partition, after, s.oldest);
                if (seen === 0 && next <= newest)
                    throw this.quarantine(s, new CorruptBatchError(topic, partition, next, 'acknowledged batch not found'));
                break;
            }
        }
        return out;
    }
    checkReadable(topic, partition, s, after) {
        if (s.corrupt !== null)
            throw new PartitionUnavailableError(topic, partition, s.corrupt);
        if (after < s.oldest - 1)
            throw new OffsetExpiredError(topic, partition, after, s.oldest);
        if (after > s.newest)
            throw new OffsetNotYetAvailableError(topic, partition, after, s.newest);
    }
    quarantine(s, err) {
        if (s.corrupt === null) {
            s.corrupt = err;
            this.cache.dropRun(s.run);
            this.logger.error({ topic: err.topic, partition: err.partition, offset: err.offset, err: err.message }, 'partition quarantined: corrupt record batch');
            wake(s);
        }
        return err;
    }
    waitForEvents(topic, partition, after, signal) {
        if (this.closed || signal.aborted)
            return Promise.resolve();
        const s = this.state(topic, partition) ?? this.newState(topic, partition);
        if (s.newest > after || s.corrupt !== null)
            return Promise.resolve();
        return new Promise((resolve) => {
            const done = () => {
                s.waiters.delete(check);
                signal.removeEventListener('abort', done);
                resolve();
            };
            // Woken on every append to the partition; resolves once the wanted offset exists.
            const check = () => {
                if (s.newest > after || s.corrupt !== null || this.closed || this.state(topic, partition) !== s)
                    done();
            };
            s.waiters.add(check);
            signal.addEventListener('abort', done, { once: true });
        });
    }
    // ---------------------------------------------------------------- retention and deletion
    /** Runs maintenance operations one at a time. */
    exclusive(fn) {
        const run = this.maintenance.then(fn, fn);
        this.maintenance = run.catch(() => undefined);
        return run;
    }
    /**
     * Makes a never-written partition start at offset `base` instead of 0: the log of a new timeline
     * continues the offsets of the previous one. Durable (the low watermark, as after retention), so a
     * restart keeps it; a no-op when the partition already starts there.
     */
    setBase(topic, partition, base) {
        assert(Number.isSafeInteger(base) && base >= 0, `invalid base ${base}`);
        return this.exclusive(async () => {
            if (this.closed)
                throw new StoreClosedError();
            const s = this.state(topic, partition);
            if (s !== undefined && s.oldest === base)
                return;
            assert(s === undefined || (s.newest === -1 && s.oldest === 0), `partition ${topic}/${partition} was written before its base ${base} was set`);
            await this.kv.write((b) => b.put(partitionKey(prefixLowWatermark, topic, partition), encodeMeta(base)), { durable: true });
            const st = s ?? this.newState(topic, partition);
            st.oldest = base;
            st.newest = base - 1;
        });
    }
    applyRetention(topic, partition, cutoffMs) {
        return this.exclusive(async () => {
            if (this.closed)
                throw new StoreClosedError();
            const s = this.state(topic, partition);
            if (s === undefined || s.corrupt !== null || s.oldest > s.newest)
                return 0;
            const newest = s.newest;
            let lastDeleted = -1;
            let removed = 0;
            const range = partitionBatchRange(topic, partition);
            for await (const [k, v] of this.kv.iterate({ gte: batchKey(topic, partition, s.oldest), lt: range.lt, capacity: 16 })) {
                const { lastOffset } = decodeBatchKey(k);
                if (lastOffset > newest)
                    break; // never touch batches not yet acknowledged
                let h;
                try {
                    h = readBatchHeader(v);
                }
                catch (err) {
                    this.logger.warn({ topic, partition, offset: lastOffset, err: String(err) }, 'retention stopped at an unreadable batch');
                    break;
                }
                if (h.appendTimeMs >= cutoffMs)
                    break;
                lastDeleted = lastOffset;
                removed += h.count;
            }
            if (lastDeleted < 0)
                return 0;
            const oldest = lastDeleted + 1;
            await this.kv.write((b) => {
                b.delRange(range.gte, batchKey(topic, partition, oldest));
                b.put(partitionKey(prefixLowWatermark, topic, partition), encodeMeta(oldest));
            }, { durable: true });
            s.oldest = oldest;
            this.cache.dropUpTo(s.run, lastDeleted);
            return removed;
        });
    }
    dropTopic(topic) {
        assert(Number.isInteger(topic) && topic >= 0 && topic <= u32Max, `invalid topic ${topic}`);
        return this.exclusive(async () => {
            if (this.closed)
                throw new StoreClosedError();
            this.dropping.add(topic);
            try {
                // The commit in flight may still write this topic: let it finish. Later commits see the
                // `dropping` mark and fail this topic's items (waiting for an idle queue could starve).
                if (this.inflight !== null)
                    await this.inflight.catch(() => undefined);
                await this.kv.write((b) => {
                    for (const prefix of [prefixBatch, prefixLowWatermark, prefixVerified]) {
                        const r = topicRange(prefix, topic);
                        b.delRange(r.gte, r.lt);
                    }
                }, { durable: true });
                for (const [k, s] of this.partitions) {
                    if (s.topic !== topic)
                        continue;
                    this.partitions.delete(k);
                    this.cache.dropRun(s.run);
                    wake(s);
                }
            }
            finally {
                this.dropping.delete(topic);
            }
        });
    }
    /** Finishes queued appends, records the clean-shutdown verification marks. Does not close the KV. */
    async close() {
        if (this.closed)
            return;
        this.closed = true;
        while (this.flushing !== null)
            await this.flushing;
        await this.maintenance;
        for (const s of this.partitions.values())
            wake(s);
        try {
            await this.writeVerifiedMarks();
        }
        catch (err) {
            // Not fatal: the next start then verifies more than it would have.
            this.logger.warn({ err: String(err) }, 'could not record clean-shutdown marks');
        }
    }
    /** Bytes held by the tail cache (metrics). */
    get cacheBytes() {
        return this.cache.bytes;
    }
}
function wake(s) {
    for (const w of [...s.waiters])
        w();
}
function checkItem(it) {
    if (!Number.isInteger(it.topic) || it.topic < 0 || it.topic > u32Max)
        return new RangeError(`invalid topic ${it.topic}`);
    if (!Number.isInteger(it.partition) || it.partition < 0 || it.partition > u32Max)
        return new RangeError(`invalid partition ${it.partition}`);
    if (!Array.isArray(it.events) || it.events.length === 0)
        return new RangeError('an append item needs at least one event');
    for (const e of it.events)
        if (!Buffer.isBuffer(e))
            return new TypeError('events must be Buffers');
    return null;
}
/** Views of the events inside a record batch we just encoded (no checksum needed: we made it). */
/** Per-partition metadata value: [version u8][CRC32C u32 of the rest][u64]. */
function encodeMeta(n) {
    const v = Buffer.allocUnsafe(13);
    v[0] = metaVersion;
    writeU64(v, 5, n);
    v.writeUInt32BE(crc32c(v, 0, 5), 1);
    return v;
}
function decodeMeta(v) {
    if (v.length !== 13 || v[0] !== metaVersion || v.readUInt32BE(1) !== crc32c(v, 0, 5))
        return null;
    return readU64(v, 5);
}
//# sourceMappingURL=partition-store.js.map