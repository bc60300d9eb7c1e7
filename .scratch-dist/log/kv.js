/**
 * The ordered key-value port under the partition logs (and, later, metadata). RocksDB implements it
 * in production (rocks-kv.ts); MemoryKv is the in-memory twin for unit tests and the simulator. Keys
 * are compared bytewise, like RocksDB's default comparator.
 */
/**
 * Runs `fill` against a recorder; throws whatever `fill` throws. An inverted range is refused here:
 * RocksDB only notices it while inserting into the memtable, after the WAL write, and then switches the
 * whole database to read-only (every later write fails with "end key comes before start key").
 */
export function recordOps(fill) {
    const ops = [];
    fill({
        put: (key, value) => void ops.push({ kind: 'put', key, value }),
        del: (key) => void ops.push({ kind: 'del', key }),
        delRange: (start, end) => {
            const c = Buffer.compare(start, end);
            if (c > 0)
                throw new RangeError(`delRange end ${end.toString('hex')} is before start ${start.toString('hex')}`);
            if (c < 0)
                ops.push({ kind: 'delRange', start, end });
        },
    });
    return ops;
}
//# sourceMappingURL=kv.js.map