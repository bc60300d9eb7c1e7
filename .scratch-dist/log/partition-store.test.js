/**
 * Goal: PartitionStore keeps the log invariants on both KV implementations: dense offsets per partition
 * under concurrent appends, only acknowledged events readable, restart recovery of offsets and data,
 * retention that moves `oldest` without renumbering (also across restarts when everything expired),
 * typed read errors, notify-on-append, group commit, bounded queue, and corruption never served.
 * Method: each behaviour runs against MemoryKv (with crash and fault injection) and a real RocksDB in a
 * temporary directory; the dense-offset test is a fast-check property over random concurrent append
 * schedules, checked against a model (per-partition list of appended events).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MemoryKv } from './memory-kv.js';
import { openRocksKv } from './rocks-kv.js';
import { PartitionStore } from './partition-store.js';
import { AppendQueueFullError, CorruptBatchError, TopicDroppingError, OffsetExpiredError, OffsetNotYetAvailableError, PartitionUnavailableError, } from './errors.js';
import { batchKey } from './keys.js';
import { ManualClock, ev, gate, tempDir } from './test-support.js';
const off = (n) => n;
async function memoryBackend() {
    let mem = new MemoryKv();
    const b = {
        kv: mem,
        async restart() { mem = mem.crash(); b.kv = mem; return mem; },
        async corrupt(key) {
            const v = Buffer.from((await mem.get(key)));
            v[v.length - 1] ^= 0x01;
            mem.rawPut(key, v);
        },
        async dispose() { await mem.close(); },
    };
    return b;
}
async function rocksBackend() {
    const t = await tempDir('store');
    let kv = await openRocksKv(t.dir);
    const b = {
        kv,
        async restart() { await kv.close(); kv = await openRocksKv(t.dir); b.kv = kv; return kv; },
        async corrupt(key) {
            const v = Buffer.from((await kv.get(key)));
            v[v.length - 1] ^= 0x01;
            await kv.write((w) => w.put(key, v), { durable: true });
        },
        async dispose() { await kv.close(); await t.remove(); },
    };
    return b;
}
const backends = [['memory', memoryBackend], ['rocksdb', rocksBackend]];
async function readAll(store, t, p, after = -1) {
    const out = [];
    let cursor = after;
    for (;;) {
        const evs = await store.read(t, p, off(cursor), 7, 1 << 20);
        if (evs.length === 0)
            return out;
        for (const e of evs) {
            assert.equal(e.offset, cursor + 1, 'offsets returned densely');
            cursor = e.offset;
            out.push(e.bytes.toString());
        }
    }
}
for (const [name, make] of backends) {
    describe(`PartitionStore on ${name}`, () => {
        const open = (kv, clock = new ManualClock(), extra = {}) => PartitionStore.open(kv, { clock, ...extra });
        test('dense offsets across concurrent appends (property)', async () => {
            const be = await make();
            const store = await open(be.kv);
            let topic = 0;
            try {
                const item = fc.record({ partition: fc.integer({ min: 0, max: 3 }), n: fc.integer({ min: 1, max: 5 }) });
                await fc.assert(fc.asyncProperty(fc.array(fc.array(item, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }), async (calls) => {
                    topic++;
                    const model = new Map();
                    let seq = 0;
                    const pending = calls.map((items) => store.append(items.map((it) => ({
                        topic, partition: it.partition,
                        events: Array.from({ length: it.n }, () => ev(`{"seq":${seq++}}`)),
                    }))));
                    const results = await Promise.all(pending);
                    // Every item ok; its range has exactly its events; ranges of a partition tile 0..n-1.
                    const ranges = new Map();
                    calls.forEach((items, c) => items.forEach((it, i) => {
                        const r = results[c][i];
                        assert.ok(r.ok, 'append failed');
                        assert.equal(r.last - r.first + 1, it.n);
                        const list = ranges.get(it.partition) ?? [];
                        list.push([r.first, r.last, []]);
                        ranges.set(it.partition, list);
                    }));
                    for (const [p, list] of ranges) {
                        list.sort((a, b) => a[0] - b[0]);
                        let next = 0;
                        for (const [f, l] of list) {
                            assert.equal(f, next, `partition ${p}: gap or overlap at ${f}`);
                            next = l + 1;
                        }
                        assert.deepEqual(store.bounds(topic, p), { oldest: 0, newest: next - 1 });
                        model.set(p, []);
                    }
                    // Reading back yields call order: events of earlier calls first.
                    let s2 = 0;
                    calls.forEach((items) => items.forEach((it) => {
                        for (let i = 0; i < it.n; i++)
                            model.get(it.partition).push(`{"seq":${s2++}}`);
                    }));
                    for (const [p, expected] of model)
                        assert.deepEqual(await readAll(store, topic, p), expected);
                }), { numRuns: name === 'memory' ? 100 : 30 });
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
        test('restart recovers next offsets and data; unacknowledged writes never appear', async () => {
            const be = await make();
            let store = await open(be.kv);
            try {
                await store.append([{ topic: 1, partition: 0, events: [ev('a'), ev('b')] }, { topic: 1, partition: 5, events: [ev('x')] }]);
                await store.append([{ topic: 1, partition: 0, events: [ev('c')] }]);
                await store.close();
                store = await open(await be.restart());
                assert.deepEqual(store.bounds(1, 0), { oldest: 0, newest: 2 });
                assert.deepEqual(store.bounds(1, 5), { oldest: 0, newest: 0 });
                assert.deepEqual(await readAll(store, 1, 0), ['a', 'b', 'c']);
                const [r] = await store.append([{ topic: 1, partition: 0, events: [ev('d')] }]);
                assert.deepEqual(r, { ok: true, first: 3, last: 3 });
                assert.deepEqual(await readAll(store, 1, 0, 1), ['c', 'd']);
                // Hard stop without store.close(): data and offsets still come back.
                await store.append([{ topic: 1, partition: 0, events: [ev('e')] }]);
                store = await open(await be.restart());
                assert.deepEqual(await readAll(store, 1, 0), ['a', 'b', 'c', 'd', 'e']);
                assert.ok(store.startReport.batchesVerified >= 1);
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
        test('retention moves oldest, never renumbers, and survives a restart when everything is deleted', async () => {
            const be = await make();
            const clock = new ManualClock(10_000);
            let store = await open(be.kv, clock);
            try {
                await store.append([{ topic: 2, partition: 0, events: [ev('a'), ev('b')] }]);
                clock.now = 20_000;
                await store.append([{ topic: 2, partition: 0, events: [ev('c')] }]);
                clock.now = 30_000;
                await store.append([{ topic: 2, partition: 0, events: [ev('d'), ev('e')] }]);
                assert.equal(await store.applyRetention(2, 0, 15_000), 2);
                assert.deepEqual(store.bounds(2, 0), { oldest: 2, newest: 4 });
                await assert.rejects(store.read(2, 0, off(-1), 10, 1000), OffsetExpiredError);
                await assert.rejects(store.read(2, 0, off(0), 10, 1000), OffsetExpiredError);
                const evs = await store.read(2, 0, off(1), 10, 1000);
                assert.deepEqual(evs.map((e) => [e.offset, e.bytes.toString()]), [[2, 'c'], [3, 'd'], [4, 'e']]);
                assert.equal(await store.applyRetention(2, 0, 15_000), 0);
                // Everything expires: empty, oldest = newest + 1.
                assert.equal(await store.applyRetention(2, 0, 40_000), 3);
                assert.deepEqual(store.bounds(2, 0), { oldest: 5, newest: 4 });
                assert.deepEqual(await store.read(2, 0, off(4), 10, 1000), []);
                await store.close();
                store = await open(await be.restart(), clock);
                assert.deepEqual(store.bounds(2, 0), { oldest: 5, newest: 4 });
                const [r] = await store.append([{ topic: 2, partition: 0, events: [ev('f')] }]);
                assert.deepEqual(r, { ok: true, first: 5, last: 5 });
                assert.deepEqual(await readAll(store, 2, 0, 4), ['f']);
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
        test('read errors for expired and not-yet-existing offsets; limits respected', async () => {
            const be = await make();
            const store = await open(be.kv);
            try {
                await assert.rejects(store.read(3, 0, off(0), 10, 1000), OffsetNotYetAvailableError);
                assert.deepEqual(await store.read(3, 0, off(-1), 10, 1000), []);
                await store.append([{ topic: 3, partition: 0, events: ['a', 'bb', 'ccc', 'dddd'].map(ev) }]);
                await assert.rejects(store.read(3, 0, off(4), 10, 1000), OffsetNotYetAvailableError);
                assert.deepEqual((await store.read(3, 0, off(-1), 2, 1000)).map((e) => e.offset), [0, 1]);
                // About maxBytes: stops once reached, but always returns at least one event.
                assert.deepEqual((await store.read(3, 0, off(-1), 10, 3)).map((e) => e.offset), [0, 1]);
                assert.deepEqual((await store.read(3, 0, off(2), 10, 1)).map((e) => e.offset), [3]);
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
        test('reads older than the tail cache come from the KV and match', async () => {
            const be = await make();
            const store = await open(be.kv, new ManualClock(), { tailCacheBytesMax: 200 });
            try {
                const expected = [];
                for (let i = 0; i < 30; i++) {
                    const evs = [ev(`{"i":${i},"a":1}`), ev(`{"i":${i},"a":2}`)];
                    expected.push(...evs.map(String));
                    await store.append([{ topic: 4, partition: 1, events: evs }]);
                }
                assert.ok(store.cacheBytes <= 200);
                assert.deepEqual(await readAll(store, 4, 1), expected);
                assert.ok(store.stats.kvReads > 0 && store.stats.cacheReads > 0);
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
        test('waitForEvents resolves on append and on abort', async () => {
            const be = await make();
            const store = await open(be.kv);
            try {
                let woke = false;
                const w = store.waitForEvents(5, 0, off(-1), new AbortController().signal).then(() => (woke = true));
                await new Promise((r) => setTimeout(r, 5));
                assert.equal(woke, false);
                await store.append([{ topic: 5, partition: 0, events: [ev('a')] }]);
                await w;
                assert.equal(woke, true);
                // Already available: resolves at once.
                await store.waitForEvents(5, 0, off(-1), new AbortController().signal);
                const ac = new AbortController();
                const w2 = store.waitForEvents(5, 0, off(0), ac.signal);
                ac.abort();
                await w2;
                assert.deepEqual(store.bounds(5, 0), { oldest: 0, newest: 0 });
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
        test('dropTopic removes every partition of the topic only', async () => {
            const be = await make();
            let store = await open(be.kv);
            try {
                await store.append([
                    { topic: 6, partition: 0, events: [ev('a')] }, { topic: 6, partition: 1, events: [ev('b')] },
                    { topic: 7, partition: 0, events: [ev('c')] },
                ]);
                await store.dropTopic(6);
                assert.deepEqual(store.bounds(6, 0), { oldest: 0, newest: -1 });
                assert.deepEqual(await readAll(store, 7, 0), ['c']);
                await store.close();
                store = await open(await be.restart());
                assert.deepEqual(store.bounds(6, 1), { oldest: 0, newest: -1 });
                assert.deepEqual(store.bounds(7, 0), { oldest: 0, newest: 0 });
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
        test('a corrupted batch is detected at start (fail or quarantine) and never served', async () => {
            const be = await make();
            let store = await open(be.kv);
            try {
                await store.append([{ topic: 8, partition: 0, events: [ev('a'), ev('b')] }, { topic: 8, partition: 1, events: [ev('z')] }]);
                await store.append([{ topic: 8, partition: 0, events: [ev('c')] }]);
                // Hard stop (no clean close), so start-up verifies everything written since the last start.
                await be.corrupt(batchKey(8, 0, 1));
                const kv = await be.restart();
                await assert.rejects(open(kv), (err) => {
                    assert.ok(err instanceof CorruptBatchError);
                    assert.equal(err.topic, 8);
                    assert.equal(err.partition, 0);
                    assert.equal(err.offset, 1);
                    assert.match(err.message, /topic 8 partition 0 at offset 1: checksum mismatch/);
                    return true;
                });
                store = await open(kv, new ManualClock(), { onCorruption: 'quarantine' });
                assert.equal(store.quarantined().length, 1);
                await assert.rejects(store.read(8, 0, off(-1), 10, 1000), PartitionUnavailableError);
                const [r] = await store.append([{ topic: 8, partition: 0, events: [ev('d')] }]);
                assert.ok(!r.ok && r.error instanceof PartitionUnavailableError);
                assert.deepEqual(await readAll(store, 8, 1), ['z']);
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
        test('corruption in already-verified data is caught on read (and by verifyOnStart all)', async () => {
            const be = await make();
            let store = await open(be.kv, new ManualClock(), { tailCacheBytesMax: 0 });
            try {
                await store.append([{ topic: 9, partition: 0, events: [ev('a')] }]);
                await store.append([{ topic: 9, partition: 0, events: [ev('b')] }]);
                await store.close(); // clean: the next start verifies only the newest batch
                await be.corrupt(batchKey(9, 0, 0));
                store = await open(await be.restart(), new ManualClock(), { tailCacheBytesMax: 0 });
                await assert.rejects(store.read(9, 0, off(-1), 10, 1000), CorruptBatchError);
                await assert.rejects(store.read(9, 0, off(0), 10, 1000), PartitionUnavailableError);
                await store.close();
                await assert.rejects(open(await be.restart(), new ManualClock(), { verifyOnStart: 'all' }), CorruptBatchError);
            }
            finally {
                await store.close();
                await be.dispose();
            }
        });
    });
}
describe('PartitionStore on MemoryKv: commits, failures and limits', () => {
    test('concurrent appends share one KV write (group commit) while a write is in flight', async () => {
        const kv = new MemoryKv();
        const store = await PartitionStore.open(kv, { clock: new ManualClock() });
        const held = gate();
        kv.beforeWrite = () => held.promise;
        const first = store.append([{ topic: 1, partition: 0, events: [ev('first')] }]);
        await new Promise((r) => setImmediate(r));
        const rest = Array.from({ length: 50 }, (_, i) => store.append([{ topic: 1, partition: i % 4, events: [ev(`e${i}`)] }, { topic: 2, partition: 0, events: [ev('x')] }]));
        const writesBefore = kv.stats.writes;
        held.open();
        kv.beforeWrite = undefined;
        await first;
        const results = await Promise.all(rest);
        assert.ok(results.every((r) => r.every((x) => x.ok)));
        assert.equal(kv.stats.writes - writesBefore, 2, '1 held write + 1 grouped write for 50 calls');
        assert.deepEqual(store.bounds(2, 0), { oldest: 0, newest: 49 });
        await store.close();
    });
    test('a failed write rejects its items, advances nothing, and offsets stay dense', async () => {
        const kv = new MemoryKv();
        const store = await PartitionStore.open(kv, { clock: new ManualClock() });
        await store.append([{ topic: 1, partition: 0, events: [ev('a')] }]);
        kv.failNextWrites(1, new Error('disk on fire'));
        const [bad] = await store.append([{ topic: 1, partition: 0, events: [ev('lost')] }]);
        assert.ok(!bad.ok && /disk on fire/.test(bad.error.message));
        assert.deepEqual(store.bounds(1, 0), { oldest: 0, newest: 0 });
        const [good] = await store.append([{ topic: 1, partition: 0, events: [ev('b')] }]);
        assert.deepEqual(good, { ok: true, first: 1, last: 1 });
        assert.deepEqual(await readAll(store, 1, 0), ['a', 'b']);
        await store.close();
    });
    test('invalid items fail alone; a crash loses only unacknowledged appends', async () => {
        const kv = new MemoryKv();
        const store = await PartitionStore.open(kv, { clock: new ManualClock() });
        const res = await store.append([{ topic: 1, partition: 0, events: [] }, { topic: 1, partition: 0, events: [ev('a')] }]);
        assert.equal(res[0].ok, false);
        assert.deepEqual(res[1], { ok: true, first: 0, last: 0 });
        const held = gate();
        kv.beforeWrite = () => held.promise;
        const inflight = store.append([{ topic: 1, partition: 0, events: [ev('never acked')] }]);
        await new Promise((r) => setImmediate(r));
        const after = kv.crash();
        held.open();
        assert.equal((await inflight)[0].ok, false);
        const s2 = await PartitionStore.open(after, { clock: new ManualClock() });
        assert.deepEqual(await readAll(s2, 1, 0), ['a']);
        await s2.close();
    });
    test('the pending-append queue is bounded', async () => {
        const kv = new MemoryKv();
        const store = await PartitionStore.open(kv, { clock: new ManualClock(), appendQueueEventsMax: 10 });
        const held = gate();
        kv.beforeWrite = () => held.promise;
        const a = store.append([{ topic: 1, partition: 0, events: Array.from({ length: 8 }, () => ev('x')) }]);
        await assert.rejects(store.append([{ topic: 1, partition: 0, events: [ev('1'), ev('2'), ev('3')] }]), AppendQueueFullError);
        const b = store.append([{ topic: 1, partition: 0, events: [ev('y')] }]);
        held.open();
        kv.beforeWrite = undefined;
        await Promise.all([a, b]);
        assert.deepEqual(store.bounds(1, 0), { oldest: 0, newest: 8 });
        await store.close();
    });
    test('dropTopic racing with appends: in-flight commit finishes, queued items for the topic fail', async () => {
        const kv = new MemoryKv();
        const store = await PartitionStore.open(kv, { clock: new ManualClock() });
        const held = gate();
        kv.beforeWrite = () => held.promise;
        const inflight = store.append([{ topic: 1, partition: 0, events: [ev('a')] }]);
        await new Promise((r) => setImmediate(r));
        const drop = store.dropTopic(1);
        const queued = store.append([{ topic: 1, partition: 0, events: [ev('b')] }, { topic: 2, partition: 0, events: [ev('c')] }]);
        kv.beforeWrite = undefined;
        held.open();
        assert.equal((await inflight)[0].ok, true);
        const [r1, r2] = await queued;
        assert.ok(!r1.ok && r1.error instanceof TopicDroppingError);
        assert.ok(r2.ok);
        await drop;
        assert.deepEqual(store.bounds(1, 0), { oldest: 0, newest: -1 });
        assert.deepEqual(await readAll(store, 2, 0), ['c']);
        await store.close();
    });
    test('reads see only acknowledged events', async () => {
        const kv = new MemoryKv();
        const store = await PartitionStore.open(kv, { clock: new ManualClock() });
        await store.append([{ topic: 1, partition: 0, events: [ev('a')] }]);
        const held = gate();
        kv.beforeWrite = () => held.promise;
        const p = store.append([{ topic: 1, partition: 0, events: [ev('b')] }]);
        await new Promise((r) => setImmediate(r));
        assert.deepEqual(await readAll(store, 1, 0), ['a']);
        held.open();
        await p;
        assert.deepEqual(await readAll(store, 1, 0), ['a', 'b']);
        await store.close();
    });
});
describe('PartitionStore on RocksDB: group commit', () => {
    test('concurrent appends are grouped into few fsyncs', async () => {
        const t = await tempDir('store-gc');
        const kv = await openRocksKv(t.dir);
        const store = await PartitionStore.open(kv, { clock: new ManualClock() });
        try {
            const calls = 300;
            const res = await Promise.all(Array.from({ length: calls }, (_, i) => store.append([{ topic: 1, partition: i % 8, events: Array.from({ length: 10 }, () => Buffer.alloc(500, 65)) }])));
            assert.ok(res.every((r) => r[0].ok));
            assert.ok(store.stats.commits < calls / 5, `${store.stats.commits} commits for ${calls} calls`);
            assert.ok(kv.stats.walSyncs < calls / 5, `${kv.stats.walSyncs} fsyncs for ${calls} calls`);
            for (let p = 0; p < 8; p++)
                assert.equal(store.bounds(1, p).newest, (Math.floor(calls / 8) + (p < calls % 8 ? 1 : 0)) * 10 - 1);
        }
        finally {
            await store.close();
            await kv.close();
            await t.remove();
        }
    });
});
//# sourceMappingURL=partition-store.test.js.map