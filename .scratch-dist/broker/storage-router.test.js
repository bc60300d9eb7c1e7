// Goal: timelines keep one dense, ordered offset sequence per partition across storages: a switch under
// concurrent appends loses, duplicates and reorders nothing; reads cross from the old timeline to the
// new one; bounds span timelines; a base offset survives a crash; waiting readers wake on a switch.
// Also the replicated rules of storages and timelines in the state machine.
// Method: the router over PartitionStores on MemoryKv (one per storage) and a real state machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toOffset } from '../core/offset.js';
import { MemoryKv, PartitionStore } from '../log/index.js';
import { gate, ManualClock } from '../log/test-support.js';
import { MetadataStateMachine } from '../metadata/state-machine.js';
import { StorageRouter } from './storage-router.js';
import { storedEventType } from '../testing/metadata-fixtures.js';
const et = (name) => storedEventType(name);
async function setup(partitions = 2) {
    const clock = new ManualClock();
    const sm = new MetadataStateMachine();
    const apply = (cmd) => sm.apply(sm.appliedIndex + 1, cmd);
    apply({ op: 'event_type.create', eventType: et('orders'), partitionCount: partitions });
    apply({ op: 'storage.create', storage: { id: 'second', storage_type: 'broker', broker_configuration: {} } });
    const kvs = new Map([['default', new MemoryKv()], ['second', new MemoryKv()]]);
    const main = await PartitionStore.open(kvs.get('default'), { clock });
    const opened = [];
    const router = new StorageRouter(main, (topic) => [...sm.eventTypes()].find((r) => r.storage.topic === topic), async (id) => {
        opened.push(id);
        const store = await PartitionStore.open(kvs.get(id), { clock });
        return { store, close: () => store.close() };
    });
    const topic = sm.eventType('orders').storage.topic;
    const append = (p, texts) => router.append([{ topic, partition: p, events: texts.map((t) => Buffer.from(t)) }]);
    const switchTo = (storage) => router.switchTimeline(topic, partitions, storage, async (starts) => {
        const r = apply({ op: 'timeline.create', eventType: 'orders', id: `tl-${storage}-${sm.appliedIndex}`, storage_id: storage, starts, at: 't1' });
        assert.ok(r.ok, JSON.stringify(r));
        return r.timeline;
    });
    const readAll = async (p, after = -1) => {
        const out = [];
        let pos = after;
        for (;;) {
            const evs = await router.read(topic, p, toOffset(pos), 3, 1_000_000);
            if (evs.length === 0)
                break;
            for (const e of evs) {
                assert.equal(e.offset, pos + 1, 'dense offsets across timelines');
                out.push(e.bytes.toString());
                pos = e.offset;
            }
        }
        return out;
    };
    return { sm, apply, router, topic, append, switchTo, readAll, kvs, main, opened, clock };
}
test('a switch continues the offsets; reads cross timelines; bounds span them', async () => {
    const s = await setup();
    await s.append(0, ['a0', 'a1', 'a2']);
    await s.append(1, ['b0']);
    const t = await s.switchTo('second');
    assert.deepEqual(t.starts, [3, 1]);
    assert.equal(t.order, 2);
    assert.deepEqual(s.opened, ['second']);
    await s.append(0, ['a3', 'a4']);
    assert.deepEqual(await s.readAll(0), ['a0', 'a1', 'a2', 'a3', 'a4']);
    assert.deepEqual(await s.readAll(0, 2), ['a3', 'a4'], 'after the last offset of the old timeline, the new one');
    assert.deepEqual(await s.readAll(0, 1), ['a2', 'a3', 'a4']);
    assert.deepEqual(s.router.bounds(s.topic, 0), { oldest: 0, newest: 4 });
    assert.deepEqual(s.router.bounds(s.topic, 1), { oldest: 0, newest: 0 }, 'nothing written on the new timeline yet');
    assert.deepEqual(s.main.bounds(s.topic, 0), { oldest: 0, newest: 2 }, 'the old log is closed at the switch');
    // A third timeline back on the default storage, in a new log.
    await s.switchTo('default');
    await s.append(1, ['b1']);
    assert.deepEqual(await s.readAll(1), ['b0', 'b1']);
    assert.equal(s.sm.eventType('orders').storage.timelines.length, 3);
});
test('a switch under concurrent appends loses, repeats and reorders nothing', async () => {
    const s = await setup(1);
    let n = 0;
    let stop = false;
    const writers = Array.from({ length: 4 }, async () => {
        while (!stop) {
            const batch = [`e${n++}`, `e${n++}`];
            const r = await s.append(0, batch);
            assert.ok(r.every((x) => x.ok));
            await new Promise((res) => setImmediate(res));
        }
    });
    await new Promise((r) => setTimeout(r, 20));
    await s.switchTo('second');
    await new Promise((r) => setTimeout(r, 20));
    await s.switchTo('default');
    await new Promise((r) => setTimeout(r, 20));
    stop = true;
    await Promise.all(writers);
    const all = await s.readAll(0);
    assert.equal(all.length, n, 'every acknowledged event is readable');
    assert.equal(new Set(all).size, n, 'no duplicates');
    const tls = s.sm.eventType('orders').storage.timelines;
    assert.ok(tls[1].starts[0] > 0 && tls[2].starts[0] > tls[1].starts[0], 'events were written on each timeline');
});
test('a switch waits for appends in flight: their events stay before the new timeline', async () => {
    const s = await setup(1);
    await s.append(0, ['h0']);
    const held = gate();
    s.kvs.get('default').beforeWrite = () => held.promise;
    const inFlight = s.append(0, ['h1', 'h2']);
    await new Promise((r) => setImmediate(r));
    let switched = false;
    const switching = s.switchTo('second').then((t) => {
        switched = true;
        return t;
    });
    const waiting = s.append(0, ['h3']); // arrives during the switch: must go to the new timeline
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(switched, false, 'the switch waits for the append in flight');
    held.open();
    s.kvs.get('default').beforeWrite = undefined;
    await inFlight;
    const t = await switching;
    await waiting;
    assert.deepEqual(t.starts, [3], 'the new timeline starts after the held events');
    assert.deepEqual(await s.readAll(0), ['h0', 'h1', 'h2', 'h3']);
    assert.deepEqual(s.main.bounds(s.topic, 0), { oldest: 0, newest: 2 });
});
test('between a switch being committed and the new log getting its first offset, a reader at the newest event gets nothing, not an error', async () => {
    const s = await setup(1);
    await s.append(0, ['q0', 'q1']);
    await s.router.ensureStorage('second');
    // The timeline applied (as on a node that applies it) before any base was set on the new log.
    const r = s.apply({ op: 'timeline.create', eventType: 'orders', id: 'tl-x', storage_id: 'second', starts: [2], at: 't' });
    assert.ok(r.ok);
    assert.deepEqual(s.router.bounds(s.topic, 0), { oldest: 0, newest: 1 });
    assert.deepEqual(await s.router.read(s.topic, 0, toOffset(1), 10, 1_000_000), []);
    assert.deepEqual(await s.readAll(0), ['q0', 'q1']);
    await s.append(0, ['q2']); // the router sets the base before this first append
    assert.deepEqual(await s.readAll(0, 1), ['q2']);
});
test('a reader waiting on the old timeline wakes at the switch and continues on the new one', async () => {
    const s = await setup(1);
    await s.append(0, ['x0']);
    const ac = new AbortController();
    let woke = false;
    const waiting = s.router.waitForEvents(s.topic, 0, toOffset(0), ac.signal).then(() => (woke = true));
    await s.switchTo('second');
    await waiting;
    assert.ok(woke);
    await s.append(0, ['x1']);
    assert.deepEqual(await s.readAll(0, 0), ['x1']);
    ac.abort();
});
test('the base offset of a new log survives a crash; setBase is idempotent and refuses a partition already written', async () => {
    const s = await setup(1);
    await s.append(0, ['y0', 'y1']);
    await s.switchTo('second');
    const t = s.sm.eventType('orders').storage.timelines[1];
    const crashed = s.kvs.get('second').crash();
    const reopened = await PartitionStore.open(crashed, { clock: s.clock });
    assert.deepEqual(reopened.bounds(t.topic, 0), { oldest: 2, newest: 1 });
    const r = await reopened.append([{ topic: t.topic, partition: 0, events: [Buffer.from('y2')] }]);
    assert.deepEqual(r[0], { ok: true, first: 2, last: 2 });
    const fresh = new MemoryKv();
    const store = await PartitionStore.open(fresh, { clock: s.clock });
    await store.setBase(9, 0, 5);
    await store.setBase(9, 0, 5);
    assert.deepEqual(store.bounds(9, 0), { oldest: 5, newest: 4 }, 'idempotent');
    await assert.rejects(async () => {
        await store.append([{ topic: 9, partition: 1, events: [Buffer.from('z')] }]);
        await store.setBase(9, 1, 3);
    }, /written before its base/);
});
test('retention and deletion reach every timeline', async () => {
    const s = await setup(1);
    await s.append(0, ['r0', 'r1']);
    await s.switchTo('second');
    s.clock.now += 10_000;
    await s.append(0, ['r2']);
    const removed = await s.router.applyRetention(s.topic, 0, s.clock.now - 1);
    assert.equal(removed, 2, 'the old timeline was cleaned, the new event kept');
    assert.deepEqual(s.router.bounds(s.topic, 0), { oldest: 2, newest: 2 });
    assert.deepEqual(await s.readAll(0, 1), ['r2']);
    const r = s.apply({ op: 'event_type.delete', name: 'orders' });
    assert.ok(r.ok && r.droppedLogs?.length === 2);
    await s.router.dropLogs(r.ok ? r.droppedLogs : []);
    const t = (r.ok ? r.droppedLogs : [])[1];
    const second = await s.router.ensureStorage('second');
    assert.deepEqual(second.topics().includes(t.topic), false);
});
test('state machine: storages are unique, in use cannot be deleted, the default one is built in; timelines never go back', () => {
    const sm = new MetadataStateMachine();
    const apply = (cmd) => sm.apply(sm.appliedIndex + 1, cmd);
    const storage = (id) => ({ id, storage_type: 'broker', broker_configuration: {} });
    assert.ok(apply({ op: 'storage.create', storage: storage('s1') }).ok);
    assert.deepEqual(apply({ op: 'storage.create', storage: storage('s1') }).ok, false);
    assert.deepEqual(apply({ op: 'storage.create', storage: storage('default') }).ok, false);
    apply({ op: 'event_type.create', eventType: et('a'), partitionCount: 2 });
    assert.equal(apply({ op: 'timeline.create', eventType: 'a', id: 't', storage_id: 'nope', starts: [0, 0], at: 't' }).ok, false);
    assert.equal(apply({ op: 'timeline.create', eventType: 'a', id: 't', storage_id: 's1', starts: [0], at: 't' }).ok, false, 'a start per partition');
    const r = apply({ op: 'timeline.create', eventType: 'a', id: 't2', storage_id: 's1', starts: [4, 0], at: 't' });
    assert.ok(r.ok);
    assert.deepEqual(sm.eventType('a').storage.timelines.map((t) => [t.order, t.storage_id, t.starts]), [[1, 'default', [0, 0]], [2, 's1', [4, 0]]]);
    assert.equal(sm.eventType('a').storage.timeline, 2);
    const back = apply({ op: 'timeline.create', eventType: 'a', id: 't3', storage_id: 'default', starts: [3, 0], at: 't' });
    assert.deepEqual([back.ok, back.ok ? '' : back.reason], [false, 'conflict']);
    const inUse = apply({ op: 'storage.delete', id: 's1' });
    assert.deepEqual([inUse.ok, inUse.ok ? '' : inUse.reason], [false, 'in_use']);
    assert.deepEqual(apply({ op: 'storage.delete', id: 'default' }).ok, false);
    apply({ op: 'storage.create', storage: storage('s2') });
    assert.ok(apply({ op: 'storage.delete', id: 's2' }).ok);
    const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
    assert.deepEqual([...restored.storages()].map((s) => s.id), ['s1']);
    assert.deepEqual(restored.eventType('a').storage.timelines, sm.eventType('a').storage.timelines);
});
//# sourceMappingURL=storage-router.test.js.map