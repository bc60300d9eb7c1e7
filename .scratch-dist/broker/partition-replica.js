import { assert } from '../core/assert.js';
import { publishBatchEventsMax } from '../core/limits.js';
import { batchEvents, decodeEntryHead, isEncodedHere, PartitionEntryError } from '../log/partition-entry.js';
import { CorruptBatchError, OffsetExpiredError, OffsetNotYetAvailableError } from '../log/index.js';
import { readU64, writeU64 } from '../log/keys.js';
import { dedupWindow, partitionImageProblem, PartitionState } from '../replication/partition-state.js';
import { entryKey } from './raft-log-store.js';
export const prefixOffsetIndex = 0x14;
export const prefixApplied = 0x15;
/** Index rows (and entries) fetched by one read from the KV at most. */
const rowsPerReadMax = 1024;
function groupKey(prefix, group) {
    const k = Buffer.allocUnsafe(5);
    k[0] = prefix;
    k.writeUInt32BE(group, 1);
    return k;
}
function indexKey(group, lastOffset) {
    const k = Buffer.allocUnsafe(13);
    k[0] = prefixOffsetIndex;
    k.writeUInt32BE(group, 1);
    writeU64(k, 5, lastOffset);
    return k;
}
/**
 * Row values: [0x01][raft index u64][first offset u64][append time u64][position u32][request id].
 * Rows written before entries held several batches have no format byte and no position:
 * [raft index u64][first offset u64][append time u64][request id] (a raft index is below 2^53, so
 * their first byte is always 0).
 */
const indexRowFormat = 1;
function encodeIndexRow(r) {
    const idBytes = Buffer.byteLength(r.requestId, 'utf8');
    const v = Buffer.allocUnsafe(29 + idBytes);
    v[0] = indexRowFormat;
    writeU64(v, 1, r.raftIndex);
    writeU64(v, 9, r.first);
    writeU64(v, 17, r.appendTimeMs);
    v.writeUInt32BE(r.position, 25);
    v.write(r.requestId, 29, 'utf8');
    return v;
}
function decodeIndexRow(k, v) {
    if (v[0] === indexRowFormat) {
        return { last: readU64(k, 5), raftIndex: readU64(v, 1), first: readU64(v, 9), appendTimeMs: readU64(v, 17), position: v.readUInt32BE(25), requestId: v.toString('utf8', 29) };
    }
    return { last: readU64(k, 5), raftIndex: readU64(v, 0), first: readU64(v, 8), appendTimeMs: readU64(v, 16), position: 0, requestId: v.toString('utf8', 24) };
}
function encodeApplied(s) {
    const v = Buffer.allocUnsafe(24);
    writeU64(v, 0, s.applied);
    writeU64(v, 8, s.newest + 1);
    writeU64(v, 16, s.oldest);
    return v;
}
export function encodeImage(img) {
    return Buffer.from(JSON.stringify(img), 'utf8');
}
export function decodeImage(data) {
    const img = JSON.parse(Buffer.from(data).toString('utf8'));
    assert(Number.isSafeInteger(img.applied) && Number.isSafeInteger(img.next) && Number.isSafeInteger(img.oldest) && Array.isArray(img.recent), 'malformed partition image');
    return img;
}
/** Why a snapshot from a peer cannot be installed (checked before anything of it is stored), or undefined. */
export function snapshotProblem(s) {
    let img;
    try {
        img = JSON.parse(Buffer.from(s.data.buffer, s.data.byteOffset, s.data.byteLength).toString('utf8'));
    }
    catch (err) {
        return `not JSON (${err.message})`;
    }
    return partitionImageProblem(img, s.metadata.index);
}
export class PartitionReplica {
    topic;
    partition;
    groupId;
    #kv;
    #host;
    #logger;
    #group;
    #state;
    /** Batches applied whose entries are still in the group's memory tail: [first, last, raft index]. */
    #recent = [];
    #waiters = new Set();
    #corrupt;
    /** About how many events an index row of this partition held in recent reads (sizes the next read's iterator). */
    #eventsPerRow = 64;
    /** Committed entries that did not decode (dropped: they assign no offsets). */
    #malformedEntries = 0;
    constructor(topic, partition, groupId, kv, host, logger, state) {
        this.topic = topic;
        this.partition = partition;
        this.groupId = groupId;
        this.#kv = kv;
        this.#host = host;
        this.#logger = logger;
        this.#state = state;
    }
    /** Reads the stored applied state and the de-duplication window. */
    static async load(topic, partition, groupId, kv, host, logger) {
        const raw = await kv.get(groupKey(prefixApplied, groupId));
        let image = { applied: 0, next: 0, oldest: 0, recent: [] };
        if (raw !== null) {
            const recent = [];
            for await (const [k, v] of kv.iterate({ gte: indexKey(groupId, 0), lt: groupKey(prefixOffsetIndex, groupId + 1), reverse: true, limit: dedupWindow })) {
                const r = decodeIndexRow(k, v);
                if (r.requestId !== '')
                    recent.unshift([r.requestId, r.first, r.last]);
            }
            image = { applied: readU64(raw, 0), next: readU64(raw, 8), oldest: readU64(raw, 16), recent };
        }
        return new PartitionReplica(topic, partition, groupId, kv, host, logger, new PartitionState(image));
    }
    /** The applied index the group restarts from. */
    get applied() {
        return this.#state.applied;
    }
    attach(group) {
        this.#group = group;
        group.setApplier({
            apply: (e) => this.#apply(e),
            applied: (index) => {
                this.#state.applyOther(index);
                this.#writeApplied();
            },
            restore: (s) => this.#restore(s),
            snapshotProblem,
        });
        group.onApplied = () => this.#wake();
    }
    get group() {
        return this.#group;
    }
    bounds() {
        return { oldest: this.#state.oldest, newest: this.#state.newest };
    }
    image() {
        return this.#state.image();
    }
    // ------------------------------------------------------------------ apply
    #apply(e) {
        this.tailBytes += e.data.byteLength;
        this.onTailBytes?.(e.data.byteLength);
        const data = Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength);
        let head;
        try {
            // An entry from another node or from the disk is checked here; one this node encoded (its own
            // proposal, still the same buffer) was never stored or sent before this point.
            head = decodeEntryHead(data, isEncodedHere(e.data));
            const next = this.#state.newest + 1;
            if (head.kind === 'batches' && (head.batches.some((b) => b.count > publishBatchEventsMax) || next + head.count > Number.MAX_SAFE_INTEGER)) {
                throw new PartitionEntryError(`a batch of ${Math.max(...head.batches.map((b) => b.count))} events (${head.count} in the entry) after offset ${next - 1}`);
            }
            if (head.kind === 'base' && !Number.isSafeInteger(head.base))
                throw new PartitionEntryError(`base offset ${head.base} is not exact`);
        }
        catch (err) {
            // A committed entry that does not decode, or would take offsets past exact integers, came from
            // a buggy member: this node's own entries always decode, and Raft gives every replica the same
            // bytes (with mutual TLS nothing can alter them on the way; the stored copy is checksummed). It
            // is dropped with a log line and assigns no offsets, alike on every replica and at every replay.
            // Stopping here instead would stop the node again at every start, the entry staying in the log.
            if (!(err instanceof PartitionEntryError))
                throw err;
            this.#malformedEntries++;
            if (this.#malformedEntries <= 10 || this.#malformedEntries % 100 === 0) {
                this.#logger.error({ topic: this.topic, partition: this.partition, group: this.groupId, index: e.index, err: err.message, dropped: this.#malformedEntries }, 'dropped a malformed committed partition entry (it assigns no offsets)');
            }
            this.#state.applyOther(e.index);
            this.#writeApplied();
            return undefined;
        }
        let outcome;
        switch (head.kind) {
            case 'noop':
                this.#state.applyOther(e.index);
                break;
            case 'base':
                this.#state.applyBase(e.index, head.base);
                break;
            case 'batches': {
                // Each batch of the entry is de-duplicated on its own; those appended get an index row that
                // says where their events start in the entry.
                const outcomes = this.#state.applyBatches(e.index, head.batches);
                const rows = [];
                let position = 0;
                for (let i = 0; i < outcomes.length; i++) {
                    const o = outcomes[i];
                    const b = head.batches[i];
                    if (o.kind === 'appended')
                        rows.push({ raftIndex: e.index, first: o.first, last: o.last, appendTimeMs: head.appendTimeMs, requestId: b.requestId, position });
                    position += b.count;
                }
                if (rows.length > 0) {
                    for (const row of rows)
                        this.#recent.push(row);
                    const g = this.groupId;
                    this.#host.writeRows((b) => {
                        for (const row of rows)
                            b.put(indexKey(g, row.last), encodeIndexRow(row));
                    });
                }
                outcome = outcomes;
                break;
            }
        }
        this.#writeApplied();
        return outcome;
    }
    /**
     * The applied index and offsets, written with the index rows of the entries up to it: once per
     * write whatever the number of entries applied since the last one, encoded when the write is
     * filled. The rows of every entry applied by then were asked for before (apply asks first), so
     * they are in the same write or an earlier one.
     */
    #writeApplied() {
        if (this.#appliedAsked)
            return;
        this.#appliedAsked = true;
        this.#host.writeRows((b) => {
            this.#appliedAsked = false;
            b.put(groupKey(prefixApplied, this.groupId), encodeApplied(this.#state));
        });
    }
    #appliedAsked = false;
    /**
     * Applies a committed entry while the group is being opened (before its Raft node exists): the
     * same rules as apply, so a restart reaches the same state as a replica that never stopped.
     */
    replay(e) {
        if (e.type === 'confChange') {
            this.#state.applyOther(e.index);
            this.#writeApplied();
        }
        else
            this.#apply(e);
    }
    /** Starts from an image (a stored snapshot newer than the stored applied rows). */
    restoreImage(img) {
        this.#state = new PartitionState(img);
        this.#recent = [];
    }
    #restore(s) {
        this.#state = new PartitionState(decodeImage(s.data));
        this.#recent = [];
        this.#writeApplied();
    }
    /** Bytes of entries applied since memory was last compacted (about what the memory tail holds). */
    tailBytes = 0;
    /** Told every change of tailBytes (the node's budget for all memory tails). */
    onTailBytes;
    /** Drops the in-memory index of batches whose entries left the memory tail (after compaction). */
    forgetBefore(raftIndex) {
        this.onTailBytes?.(-this.tailBytes);
        this.tailBytes = 0;
        let n = 0;
        while (n < this.#recent.length && this.#recent[n].raftIndex < raftIndex)
            n++;
        if (n > 0)
            this.#recent = this.#recent.slice(n);
    }
    // ------------------------------------------------------------------ reads
    async read(after, maxEvents, maxBytes) {
        if (this.#corrupt !== undefined)
            throw this.#corrupt;
        const s = this.#state;
        if (after < s.oldest - 1)
            throw new OffsetExpiredError(this.topic, this.partition, after, s.oldest);
        if (after > s.newest)
            throw new OffsetNotYetAvailableError(this.topic, this.partition, after, s.newest);
        const newest = s.newest;
        const out = [];
        let next = after + 1;
        let bytes = 0;
        /** The events of the entry decoded last (consecutive rows often share an entry). */
        let decoded;
        /** Takes the events of one indexed batch; false once the read is full. */
        const take = (row, e) => {
            if (e === undefined || e.index !== row.raftIndex)
                throw this.#damaged(next, `raft entry ${row.raftIndex} of the batch ${row.first}..${row.last} is missing`);
            if (row.first > next) {
                if (next < this.#state.oldest)
                    throw new OffsetExpiredError(this.topic, this.partition, after, this.#state.oldest);
                throw this.#damaged(next, `offsets ${next}..${row.first - 1} are missing`);
            }
            if (decoded?.index !== e.index) {
                const data = Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength);
                try {
                    // Checked once already: at apply (an entry in memory) or by its record's CRC (read from the KV).
                    if (decodeEntryHead(data, true).kind !== 'batches')
                        throw new PartitionEntryError('entry holds no events');
                    decoded = { index: e.index, events: batchEvents(data) };
                }
                catch (err) {
                    throw this.#damaged(next, `raft entry ${e.index}: ${err.message}`);
                }
            }
            const events = decoded.events;
            if (row.position + row.last - row.first + 1 > events.length)
                throw this.#damaged(next, `raft entry ${e.index} does not hold the batch ${row.first}..${row.last}`);
            const at = row.position - row.first;
            for (let o = next; o <= row.last; o++) {
                if (o > newest || out.length >= maxEvents || bytes >= maxBytes)
                    return false;
                const ev = events[at + o];
                out.push({ offset: o, bytes: ev });
                bytes += ev.length;
                next = o + 1;
            }
            return out.length < maxEvents && bytes < maxBytes && next <= newest;
        };
        const mem = this.#group.store.storage;
        const memEntry = (i) => (i >= mem.firstIndex() && i <= mem.lastIndex() ? mem.entries(i, i + 1, Number.MAX_SAFE_INTEGER)[0] : undefined);
        if (next > newest)
            return out;
        // 1. Batches older than the in-memory index: the offset index rows holding the wanted events (one
        //    iterator, sized by how many events a row held so far), then their entries: those still in
        //    the memory tail from there, the others in one bounded iterator over the Raft log (entries
        //    between indexed batches are skipped: no-ops, configuration changes, refused duplicates).
        const recentFirst = this.#recent[0]?.first ?? Number.MAX_SAFE_INTEGER;
        if (next < recentFirst) {
            const rows = [];
            let events = 0;
            const capacity = Math.min(rowsPerReadMax, Math.max(4, Math.ceil(maxEvents / this.#eventsPerRow) + 1));
            for await (const [k, v] of this.#kv.iterate({ gte: indexKey(this.groupId, next), lt: groupKey(prefixOffsetIndex, this.groupId + 1), capacity })) {
                const row = decodeIndexRow(k, v);
                if (row.first >= recentFirst)
                    break;
                rows.push(row);
                events += row.last - Math.max(row.first, next) + 1;
                if (events >= maxEvents || rows.length >= rowsPerReadMax)
                    break;
            }
            if (rows.length > 1)
                this.#eventsPerRow = Math.max(1, (this.#eventsPerRow + (rows[rows.length - 1].last - rows[0].first + 1) / rows.length) / 2);
            const memFirst = mem.firstIndex();
            const stored = rows.filter((row) => row.raftIndex < memFirst);
            let entries;
            if (stored.length > 0) {
                const from = stored[0].raftIndex;
                const to = stored[stored.length - 1].raftIndex;
                entries = this.#group.store.readStored(from, to + 1, Math.min(rowsPerReadMax, to - from + 1))[Symbol.asyncIterator]();
            }
            let last;
            try {
                for (const row of rows) {
                    let e = last?.index === row.raftIndex ? last : row.raftIndex >= memFirst ? memEntry(row.raftIndex) : undefined;
                    if (e === undefined && entries !== undefined) {
                        for (;;) {
                            const r = await entries.next();
                            if (r.done === true)
                                break;
                            if (r.value.index >= row.raftIndex) {
                                e = r.value;
                                break;
                            }
                        }
                    }
                    last = e;
                    if (!take(row, e))
                        return out;
                }
            }
            finally {
                await entries?.return?.();
            }
            // As many rows as one read takes, and room left: the caller reads on from here.
            if (rows.length >= rowsPerReadMax)
                return out;
            if (next < recentFirst && next <= newest) {
                if (next < this.#state.oldest)
                    throw new OffsetExpiredError(this.topic, this.partition, after, this.#state.oldest);
                if (this.#recent.length === 0)
                    throw this.#damaged(next, 'no index row holds this offset');
            }
        }
        // 2. Recent batches: the in-memory index and the Raft log's memory tail.
        const r = this.#recent;
        let lo = 0;
        let hi = r.length;
        while (lo < hi) {
            const mid = (lo + hi) >> 1;
            if (r[mid].last < next)
                lo = mid + 1;
            else
                hi = mid;
        }
        let prev;
        for (let i = lo; i < r.length && next <= newest; i++) {
            const row = r[i];
            let e = prev?.index === row.raftIndex ? prev : memEntry(row.raftIndex);
            if (e === undefined)
                for await (const x of this.#group.store.readStored(row.raftIndex, row.raftIndex + 1))
                    e = x;
            prev = e;
            if (!take(row, e))
                return out;
        }
        return out;
    }
    #damaged(offset, why) {
        const err = new CorruptBatchError(this.topic, this.partition, offset, why);
        if (this.#corrupt === undefined) {
            this.#corrupt = err;
            this.#logger.error({ topic: this.topic, partition: this.partition, group: this.groupId, offset, err: why }, 'partition replica refuses reads: corrupt raft entry');
        }
        return err;
    }
    /**
     * Removes the batches appended before `cutoffMs`, oldest first, from the offset index and the Raft
     * log (log truncation below a watermark). Entries still in the group's memory tail are first
     * dropped from memory (`compactTo`): a follower that still needs them is then sent a snapshot and
     * fetches what the leader still holds. Retention is decided by each replica on its own clock:
     * replicas may differ in their oldest offset for a while, never in the events at an offset.
     */
    async applyRetention(cutoffMs, compactTo) {
        let cut;
        for await (const [k, v] of this.#kv.iterate({ gte: indexKey(this.groupId, 0), lt: groupKey(prefixOffsetIndex, this.groupId + 1), capacity: 256 })) {
            const row = decodeIndexRow(k, v);
            if (row.appendTimeMs >= cutoffMs || row.last > this.#state.newest)
                break;
            cut = row;
        }
        if (cut === undefined)
            return 0;
        const before = this.#state.oldest;
        const last = cut;
        if (last.raftIndex >= this.#group.store.storage.firstIndex())
            await compactTo(last.raftIndex);
        await this.#kv.write((b) => {
            b.delRange(indexKey(this.groupId, 0), indexKey(this.groupId, last.last + 1));
            b.delRange(entryKey(this.groupId, 0), entryKey(this.groupId, last.raftIndex + 1));
        }, { durable: false });
        this.#state.truncateBefore(last.last + 1);
        this.forgetBefore(last.raftIndex + 1);
        this.#writeApplied();
        return Math.max(0, last.last + 1 - before);
    }
    waitForEvents(after, signal) {
        if (signal.aborted || this.#state.newest > after)
            return Promise.resolve();
        return new Promise((resolve) => {
            const done = () => {
                this.#waiters.delete(check);
                signal.removeEventListener('abort', done);
                resolve();
            };
            const check = () => {
                if (this.#state.newest > after)
                    done();
            };
            this.#waiters.add(check);
            signal.addEventListener('abort', done, { once: true });
        });
    }
    #wake() {
        for (const w of [...this.#waiters])
            w();
    }
    /**
     * Raft entries [from, to] of this replica's log in chunks of about `maxBytes` (log shipping to a
     * follower behind the leader's memory tail): from the KV, then from memory. The first chunk starts
     * later than `from` when retention removed the entries before it.
     */
    async *readLog(from, to, maxBytes, signal) {
        const mem = this.#group.store.storage;
        let chunk = [];
        let bytes = 0;
        let next = from;
        const full = () => chunk.length > 0 && bytes >= maxBytes;
        if (next < mem.firstIndex()) {
            for await (const e of this.#group.store.readStored(next, Math.min(to + 1, mem.firstIndex()))) {
                if (signal.aborted)
                    return;
                chunk.push(e);
                bytes += e.data.byteLength;
                next = e.index + 1;
                if (full()) {
                    yield chunk;
                    chunk = [];
                    bytes = 0;
                }
            }
            next = Math.max(next, mem.firstIndex());
        }
        while (next <= Math.min(to, mem.lastIndex()) && !signal.aborted) {
            for (const e of mem.entries(next, Math.min(to, mem.lastIndex()) + 1, Math.max(1, maxBytes - bytes))) {
                chunk.push(e);
                bytes += e.data.byteLength;
                next = e.index + 1;
            }
            if (full() || next > Math.min(to, mem.lastIndex())) {
                if (chunk.length > 0)
                    yield chunk;
                chunk = [];
                bytes = 0;
            }
        }
        if (chunk.length > 0)
            yield chunk;
    }
    /**
     * Stores entries fetched from the leader (log shipping) and applies them: they are committed (at or
     * before the leader's snapshot index) and follow this replica's applied index without a gap.
     * Returns false when they do not (the leader's log starts after what this replica applied: the
     * events in between are gone everywhere and this replica cannot continue by itself).
     */
    storeFetched(entries) {
        const first = entries[0];
        if (first === undefined)
            return true;
        if (first.index !== this.#state.applied + 1)
            return false;
        const store = this.#group.store;
        this.#host.writeRows((b) => store.fillFetched(b, entries));
        for (const e of entries)
            this.replay(e);
        return true;
    }
    /** Wakes every waiter for good (the replica is closing). */
    release() {
        for (const w of [...this.#waiters])
            w();
        this.#waiters.clear();
    }
}
//# sourceMappingURL=partition-replica.js.map