/**
 * In-memory twin of the RocksDB KV, for unit tests and the deterministic simulator.
 *
 * It keeps two copies of the data: `live` (what reads see) and `durable` (what survived the last
 * fsync). A durable write makes everything written before it durable too, as an fsync of RocksDB's
 * write-ahead log does. `crash()` returns a fresh store holding only the durable copy, which is how tests
 * simulate `kill -9` plus power loss losing non-durable writes. Faults: `failNextWrites(n)` makes the
 * next n writes fail without applying anything; `beforeWrite` can delay writes to create concurrency.
 */
import { StoreClosedError } from './errors.js';
import { recordOps } from './kv.js';
/** A sorted map of Buffer keys (binary search over a sorted array; fine for test-sized data). */
export class SortedBufferMap {
    keys = [];
    values = [];
    get size() {
        return this.keys.length;
    }
    /** Index of the first key >= k. */
    lowerBound(k) {
        let lo = 0;
        let hi = this.keys.length;
        while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (Buffer.compare(this.keys[mid], k) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }
    get(k) {
        const i = this.lowerBound(k);
        return i < this.keys.length && this.keys[i].equals(k) ? this.values[i] : undefined;
    }
    put(k, v) {
        const i = this.lowerBound(k);
        if (i < this.keys.length && this.keys[i].equals(k))
            this.values[i] = v;
        else {
            this.keys.splice(i, 0, k);
            this.values.splice(i, 0, v);
        }
    }
    del(k) {
        const i = this.lowerBound(k);
        if (i < this.keys.length && this.keys[i].equals(k)) {
            this.keys.splice(i, 1);
            this.values.splice(i, 1);
        }
    }
    delRange(start, end) {
        if (Buffer.compare(start, end) >= 0)
            return;
        const a = this.lowerBound(start);
        const b = this.lowerBound(end);
        this.keys.splice(a, b - a);
        this.values.splice(a, b - a);
    }
    apply(ops) {
        for (const op of ops) {
            if (op.kind === 'put')
                this.put(op.key, op.value);
            else if (op.kind === 'del')
                this.del(op.key);
            else
                this.delRange(op.start, op.end);
        }
    }
    /** Entries in range, copied (a snapshot). */
    range(r) {
        let a = 0;
        let b = this.keys.length;
        if (r.gte)
            a = Math.max(a, this.lowerBound(r.gte));
        if (r.gt) {
            let i = this.lowerBound(r.gt);
            if (i < this.keys.length && this.keys[i].equals(r.gt))
                i++;
            a = Math.max(a, i);
        }
        if (r.lt)
            b = Math.min(b, this.lowerBound(r.lt));
        if (r.lte) {
            let i = this.lowerBound(r.lte);
            if (i < this.keys.length && this.keys[i].equals(r.lte))
                i++;
            b = Math.min(b, i);
        }
        const out = [];
        const limit = r.limit === undefined || r.limit < 0 ? Infinity : r.limit;
        if (r.reverse)
            for (let i = b - 1; i >= a && out.length < limit; i--)
                out.push([this.keys[i], this.values[i]]);
        else
            for (let i = a; i < b && out.length < limit; i++)
                out.push([this.keys[i], this.values[i]]);
        return out;
    }
    clone() {
        const m = new SortedBufferMap();
        m.keys = this.keys.slice();
        m.values = this.values.slice();
        return m;
    }
    bytes() {
        let n = 0;
        for (let i = 0; i < this.keys.length; i++)
            n += this.keys[i].length + this.values[i].length;
        return n;
    }
}
export class MemoryKv {
    live;
    durable;
    unsynced = [];
    closed = false;
    failures = { remaining: 0, error: new Error('injected write failure') };
    /** Serialises writes so they apply in call order even when beforeWrite delays some. */
    tail = Promise.resolve();
    stats = { writes: 0, durableWrites: 0, syncs: 0 };
    /** Test hook awaited before each write is applied (e.g. to simulate fsync latency). */
    beforeWrite;
    constructor(from) {
        this.live = from ? from.clone() : new SortedBufferMap();
        this.durable = from ? from.clone() : new SortedBufferMap();
    }
    /** The next `n` writes fail without applying anything. */
    failNextWrites(n, error = new Error('injected write failure')) {
        this.failures = { remaining: n, error };
    }
    /**
     * Simulates a process kill plus power loss: this instance is closed and a new store holding only
     * what durable writes had made durable is returned.
     */
    crash() {
        this.closed = true;
        return new MemoryKv(this.durable);
    }
    /**
     * A new store holding what this one holds durably now, which stays usable: an image of the disk at
     * this moment, for tests that roll a disk back (a write-ahead log that lost its tail).
     */
    copyDurable() {
        return new MemoryKv(this.durable);
    }
    /** Raw access for tests that corrupt stored values. */
    rawPut(key, value) {
        this.live.put(key, value);
        this.durable.put(key, value);
    }
    write(fill, opts) {
        if (this.closed)
            return Promise.reject(new StoreClosedError('memory kv'));
        let ops;
        try {
            ops = recordOps(fill);
        }
        catch (err) {
            return Promise.reject(err);
        }
        const run = async () => {
            if (this.beforeWrite)
                await this.beforeWrite();
            if (this.closed)
                throw new StoreClosedError('memory kv');
            if (this.failures.remaining > 0) {
                this.failures.remaining--;
                throw this.failures.error;
            }
            this.stats.writes++;
            this.live.apply(ops);
            this.unsynced.push(ops);
            if (opts.durable) {
                this.stats.durableWrites++;
                this.stats.syncs++;
                for (const u of this.unsynced)
                    this.durable.apply(u);
                this.unsynced = [];
            }
        };
        const p = this.tail.then(run);
        this.tail = p.then(() => undefined, () => undefined);
        return p;
    }
    async get(key) {
        if (this.closed)
            throw new StoreClosedError('memory kv');
        return this.live.get(key) ?? null;
    }
    async *iterate(range) {
        if (this.closed)
            throw new StoreClosedError('memory kv');
        const snapshot = this.live.range(range);
        for (const e of snapshot)
            yield e;
    }
    async sizeBytes() {
        return this.live.bytes();
    }
    async close() {
        await this.tail;
        this.closed = true;
    }
    /** Number of keys (tests). */
    get keyCount() {
        return this.live.size;
    }
}
//# sourceMappingURL=memory-kv.js.map