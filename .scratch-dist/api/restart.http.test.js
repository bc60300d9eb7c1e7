// Goal: the durability part of issue 2 point 3 over real HTTP: partition offsets are dense and
// increasing (also under many concurrent publishers to one partition, with each publish batch stored
// contiguously), and the data survives a restart of the broker on the same RocksDB directory: every
// event readable in the same order with the same offsets, and new publishes continue the offsets
// densely. Also: a clean shutdown ends open streams instead of hanging on them.
// Method: a real broker in this process on a temporary RocksDB directory, restarted with the harness's
// restart() (clean close, open again on the same directory and port). Events are read back with the
// low-level stream at batch_limit=1, so each line's cursor is the offset of its one event.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { closeAllStreams, countEvents, createEventType, cursorsHeader, eventIn, off, openStream, publish, readToEnd, readUntil, statisticFor, } from '../testing/stream-client.js';
let broker;
before(async () => {
    broker = await startTestBroker();
});
after(async () => {
    await closeAllStreams();
    await broker.destroy();
});
/** Reads exactly `total` events from BEGIN of the given partitions, one event per line. */
async function readBack(base, name, partitions, total) {
    const res = await openStream(base, name, `batch_limit=1&batch_flush_timeout=1&stream_limit=${total}`, cursorsHeader(partitions.map((p) => ({ partition: p, offset: 'BEGIN' }))));
    assert.equal(res.status, 200);
    const lines = await readToEnd(res, 60_000);
    assert.equal(countEvents(lines), total);
    const out = [];
    for (const l of lines) {
        if (l.events === undefined)
            continue;
        assert.equal(l.events.length, 1);
        const e = l.events[0];
        out.push({ partition: l.cursor.partition, offset: l.cursor.offset, order: String(e.order_number), eid: String(e.metadata['eid']) });
    }
    return out;
}
function byPartition(events) {
    const m = new Map();
    for (const e of events)
        m.set(e.partition, [...(m.get(e.partition) ?? []), e]);
    return m;
}
function assertDense(events, from = 0) {
    events.forEach((e, i) => assert.equal(e.offset, off(from + i), `partition ${e.partition}: event ${i} (${e.order})`));
}
test('offsets are dense and increasing per partition, and after a restart every event is readable in the same order with the same offsets', async () => {
    const name = 'restart.orders';
    await createEventType(broker.url, businessEventType(name, { partition_strategy: 'user_defined', default_statistic: statisticFor(3) }));
    let n = 0;
    for (let batch = 0; batch < 6; batch++) {
        // Batches spread over partitions 0 and 1 in an uneven pattern; partition 2 stays empty.
        await publish(broker.url, name, Array.from({ length: batch + 2 }, (_, i) => eventIn(String((batch + i) % 2), `o${n++}`)));
    }
    const parts = ['0', '1', '2'];
    const beforeRestart = await readBack(broker.url, name, parts, n);
    const grouped = byPartition(beforeRestart);
    for (const events of grouped.values()) {
        assertDense(events);
        const orders = events.map((e) => Number(e.order.slice(1)));
        assert.deepEqual(orders, [...orders].sort((a, b) => a - b), 'each partition keeps publish order');
    }
    const partitionsBefore = (await call(broker.url, 'GET', `/event-types/${name}/partitions`)).body;
    broker = await broker.restart();
    assert.deepEqual((await call(broker.url, 'GET', `/event-types/${name}/partitions`)).body, partitionsBefore);
    const afterRestart = await readBack(broker.url, name, parts, n);
    assert.deepEqual(byPartition(afterRestart), grouped, 'same events, same offsets, same order per partition');
    // New publishes continue each partition's offsets densely.
    const counts = new Map([...grouped].map(([p, evs]) => [p, evs.length]));
    await publish(broker.url, name, [eventIn('0', 'new0'), eventIn('0', 'new1'), eventIn('1', 'new2'), eventIn('2', 'new3')]);
    const resumed = await readUntil(await openStream(broker.url, name, 'batch_limit=1&batch_flush_timeout=1', cursorsHeader([
        { partition: '0', offset: off(counts.get('0') - 1) },
        { partition: '1', offset: off(counts.get('1') - 1) },
        { partition: '2', offset: 'BEGIN' },
    ])), (ls) => countEvents(ls) >= 4);
    const fresh = resumed.filter((l) => l.events !== undefined).map((l) => [l.cursor.partition, l.cursor.offset, l.events[0].order_number]);
    assert.deepEqual(fresh.filter((x) => x[0] === '0'), [['0', off(counts.get('0')), 'new0'], ['0', off(counts.get('0') + 1), 'new1']]);
    assert.deepEqual(fresh.filter((x) => x[0] === '1'), [['1', off(counts.get('1')), 'new2']]);
    assert.deepEqual(fresh.filter((x) => x[0] === '2'), [['2', off(0), 'new3']]);
});
test('offsets stay dense under many concurrent publishers to one partition; each batch is stored contiguously and each publisher\'s batches in its order; all survive a restart', async () => {
    const name = 'restart.concurrent';
    await createEventType(broker.url, businessEventType(name));
    const publishers = 20;
    const batchesEach = 15;
    const batchSize = 5;
    await Promise.all(Array.from({ length: publishers }, async (_, p) => {
        for (let b = 0; b < batchesEach; b++) {
            await publish(broker.url, name, Array.from({ length: batchSize }, (_, i) => businessEvent(`${p}.${b}.${i}`)));
        }
    }));
    const total = publishers * batchesEach * batchSize;
    const check = (events) => {
        assert.equal(events.length, total);
        assertDense(events);
        assert.equal(new Set(events.map((e) => e.eid)).size, total, 'no event stored twice');
        const lastBatch = new Map();
        for (let i = 0; i < events.length; i += batchSize) {
            const [p, b] = events[i].order.split('.').map(Number);
            // The batch's events follow one another with nothing in between (one atomic write per batch).
            for (let j = 0; j < batchSize; j++)
                assert.equal(events[i + j].order, `${p}.${b}.${j}`, `offset ${i + j}`);
            assert.equal(b, (lastBatch.get(p) ?? -1) + 1, `publisher ${p}'s batches are stored in the order it sent them`);
            lastBatch.set(p, b);
        }
        assert.equal(lastBatch.size, publishers);
    };
    const first = await readBack(broker.url, name, ['0'], total);
    check(first);
    const part = (await call(broker.url, 'GET', `/event-types/${name}/partitions/0`)).body;
    assert.deepEqual(part, { partition: '0', oldest_available_offset: off(0), newest_available_offset: off(total - 1) });
    broker = await broker.restart();
    const second = await readBack(broker.url, name, ['0'], total);
    assert.deepEqual(second, first);
    await publish(broker.url, name, [businessEvent('after-restart')]);
    const p2 = (await call(broker.url, 'GET', `/event-types/${name}/partitions/0`)).body;
    assert.equal(p2.newest_available_offset, off(total));
});
test('a clean shutdown ends open streams (the client sees the end of the stream) and the restart completes', async () => {
    const name = 'restart.streaming';
    await createEventType(broker.url, businessEventType(name));
    await publish(broker.url, name, [businessEvent('s0')]);
    const res = await openStream(broker.url, name, 'batch_flush_timeout=30', cursorsHeader([{ partition: '0', offset: 'BEGIN' }]));
    assert.equal(res.status, 200);
    const reading = readToEnd(res, 20_000);
    const restarted = broker.restart();
    const lines = await reading; // ends because the server closed the stream, not by timeout
    broker = await restarted;
    assert.deepEqual(lines.map((l) => l.events?.map((e) => e.order_number)), [['s0']]);
    // The restarted broker serves the same data.
    const again = await readToEnd(await openStream(broker.url, name, 'stream_limit=1', cursorsHeader([{ partition: '0', offset: 'BEGIN' }])));
    assert.equal(again[0].events[0].order_number, 's0');
});
//# sourceMappingURL=restart.http.test.js.map