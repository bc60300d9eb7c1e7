// Goal: the partition and cursor tools follow interface.md "Partitions and cursors (unmanaged)" and the
// Partition / Cursor / ShiftedCursor / CursorDistance objects: GET /event-types/{name}/partitions (with
// ?cursors= and unconsumed_events), GET .../partitions/{partition} (with consumed_offset), POST
// cursor-distances, cursors-lag and shifted-cursors, with 422 for unknown partitions, malformed,
// expired or not-yet-existing offsets and malformed bodies, 400 for bodies that are not JSON, 404 for
// unknown event types and partitions.
// Method: a real broker in this process (real HTTP, real RocksDB in a temporary directory). Events are
// placed in chosen partitions (user_defined strategy) so every expected offset is known: partition 0
// holds offsets 0..4, partition 1 offsets 0..1, partition 2 is never written. Expiry uses a tiny
// retention_time with a retention check every 100 ms.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { assertProblem, createEventType, eventIn, eventually, off, publish, sleep, statisticFor } from '../testing/stream-client.js';
let broker;
let base;
const name = 'cursors.main';
const enc = encodeURIComponent;
before(async () => {
    broker = await startTestBroker({ retentionCheckIntervalMs: 100 });
    base = broker.url;
    await createEventType(base, businessEventType(name, { partition_strategy: 'user_defined', default_statistic: statisticFor(3) }));
    await publish(base, name, ['a', 'b', 'c'].map((o) => eventIn('0', o)));
    await publish(base, name, ['d', 'e'].map((o) => eventIn('0', o)));
    await publish(base, name, ['x', 'y'].map((o) => eventIn('1', o)));
});
after(async () => {
    await broker.destroy();
});
const post = (path, body) => call(base, 'POST', `/event-types/${name}/${path}`, body);
describe('GET /event-types/{name}/partitions', () => {
    test('lists every partition with oldest and newest available offsets; a never-written partition reports BEGIN for both', async () => {
        const r = await call(base, 'GET', `/event-types/${name}/partitions`);
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, [
            { partition: '0', oldest_available_offset: off(0), newest_available_offset: off(4) },
            { partition: '1', oldest_available_offset: off(0), newest_available_offset: off(1) },
            { partition: '2', oldest_available_offset: 'BEGIN', newest_available_offset: 'BEGIN' },
        ]);
    });
    test('?cursors= adds unconsumed_events (exclusive of the cursor) to the partitions named, and only to them', async () => {
        const cursors = [{ partition: '0', offset: off(1) }, { partition: '1', offset: 'begin' }];
        const r = await call(base, 'GET', `/event-types/${name}/partitions?cursors=${enc(JSON.stringify(cursors))}`);
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, [
            { partition: '0', oldest_available_offset: off(0), newest_available_offset: off(4), unconsumed_events: 3 },
            { partition: '1', oldest_available_offset: off(0), newest_available_offset: off(1), unconsumed_events: 2 },
            { partition: '2', oldest_available_offset: 'BEGIN', newest_available_offset: 'BEGIN' },
        ]);
        const atNewest = await call(base, 'GET', `/event-types/${name}/partitions?cursors=${enc(JSON.stringify([{ partition: '0', offset: off(4) }, { partition: '2', offset: 'BEGIN' }]))}`);
        const body = atNewest.body;
        assert.equal(body[0].unconsumed_events, 0);
        assert.equal(body[2].unconsumed_events, 0);
    });
    test('?cursors= that is not JSON is 400; an unknown partition, a malformed, a not-yet-existing offset or a non-cursor item is 422', async () => {
        assertProblem(await call(base, 'GET', `/event-types/${name}/partitions?cursors=${enc('not json')}`), 400);
        assertProblem(await call(base, 'GET', `/event-types/${name}/partitions?cursors=${enc('{"partition":"0"}')}`), 400);
        const bad = [
            [{ partition: '9', offset: 'BEGIN' }],
            [{ partition: '0', offset: 'xyz' }],
            [{ partition: '0', offset: off(5) }],
            [{ partition: '2', offset: off(0) }],
            [{ partition: '0' }],
            [42],
        ];
        for (const cursors of bad) {
            assertProblem(await call(base, 'GET', `/event-types/${name}/partitions?cursors=${enc(JSON.stringify(cursors))}`), 422);
        }
    });
    test('404 for an unknown event type', async () => {
        assertProblem(await call(base, 'GET', '/event-types/no.such.type/partitions'), 404);
    });
});
describe('GET /event-types/{name}/partitions/{partition}', () => {
    test('returns the Partition; unconsumed_events only when consumed_offset is given', async () => {
        const r = await call(base, 'GET', `/event-types/${name}/partitions/0`);
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, { partition: '0', oldest_available_offset: off(0), newest_available_offset: off(4) });
        const never = await call(base, 'GET', `/event-types/${name}/partitions/2`);
        assert.deepEqual(never.body, { partition: '2', oldest_available_offset: 'BEGIN', newest_available_offset: 'BEGIN' });
    });
    test('consumed_offset: unconsumed_events counts the events after it (BEGIN counts all, newest counts zero)', async () => {
        const cases = [
            ['0', 'BEGIN', 5],
            ['0', off(0), 4],
            ['0', off(3), 1],
            ['0', off(4), 0],
            ['1', 'Begin', 2],
            ['2', 'BEGIN', 0],
        ];
        for (const [p, consumed, expected] of cases) {
            const r = await call(base, 'GET', `/event-types/${name}/partitions/${p}?consumed_offset=${enc(consumed)}`);
            assert.equal(r.status, 200, r.text);
            assert.equal(r.body.unconsumed_events, expected, `${p} after ${consumed}`);
        }
    });
    test('404 for an unknown partition or event type; 422 for a malformed or not-yet-existing consumed_offset', async () => {
        assertProblem(await call(base, 'GET', `/event-types/${name}/partitions/3`), 404);
        assertProblem(await call(base, 'GET', `/event-types/${name}/partitions/x`), 404);
        assertProblem(await call(base, 'GET', '/event-types/no.such.type/partitions/0'), 404);
        assertProblem(await call(base, 'GET', `/event-types/${name}/partitions/0?consumed_offset=nope`), 422);
        assertProblem(await call(base, 'GET', `/event-types/${name}/partitions/0?consumed_offset=${off(5)}`), 422, /does not exist yet/);
        assertProblem(await call(base, 'GET', `/event-types/${name}/partitions/2?consumed_offset=${off(0)}`), 422, /does not exist yet/);
    });
});
describe('POST /event-types/{name}/cursor-distances', () => {
    const q = (p, a, b) => ({ initial_cursor: { partition: p, offset: a }, final_cursor: { partition: p, offset: b } });
    test('distance excludes initial_cursor and includes final_cursor; zero for equal cursors; negative when final < initial; BEGIN allowed', async () => {
        const queries = [
            q('0', off(0), off(4)), // events 1..4
            q('0', 'BEGIN', off(4)), // events 0..4
            q('0', 'BEGIN', off(0)), // event 0
            q('0', off(2), off(2)),
            q('0', 'begin', 'BEGIN'),
            q('0', off(4), off(1)),
            q('0', off(3), 'BEGIN'),
            q('1', 'BEGIN', off(1)),
        ];
        const r = await post('cursor-distances', queries);
        assert.equal(r.status, 200, r.text);
        const body = r.body;
        assert.deepEqual(body.map((x) => x.distance), [4, 5, 1, 0, 0, -3, -4, 2]);
        body.forEach((x, i) => {
            assert.deepEqual(x.initial_cursor, queries[i].initial_cursor);
            assert.deepEqual(x.final_cursor, queries[i].final_cursor);
        });
    });
    test('422 for unknown partitions, malformed or not-yet-existing offsets, different partitions, and malformed queries', async () => {
        const bad = [
            [q('7', 'BEGIN', 'BEGIN')],
            [q('0', 'BEGIN', 'garbage')],
            [q('0', 'BEGIN', off(5))],
            [q('2', 'BEGIN', off(0))],
            [{ initial_cursor: { partition: '0', offset: 'BEGIN' }, final_cursor: { partition: '1', offset: 'BEGIN' } }],
            [{ initial_cursor: { partition: '0', offset: 'BEGIN' } }],
            [{ final_cursor: { partition: '0', offset: 'BEGIN' } }],
            [{ initial_cursor: { partition: 0, offset: 'BEGIN' }, final_cursor: { partition: '0', offset: 'BEGIN' } }],
            [null],
            [q('0', 'BEGIN', off(1)), q('9', 'BEGIN', off(1))],
            { initial_cursor: { partition: '0', offset: 'BEGIN' }, final_cursor: { partition: '0', offset: 'BEGIN' } },
        ];
        for (const body of bad)
            assertProblem(await post('cursor-distances', body), 422);
    });
    test('400 for a body that is not JSON; 404 for an unknown event type', async () => {
        assertProblem(await post('cursor-distances', '[{"initial_cursor":'), 400);
        assertProblem(await call(base, 'POST', '/event-types/no.such.type/cursor-distances', [q('0', 'BEGIN', 'BEGIN')]), 404);
    });
});
describe('POST /event-types/{name}/cursors-lag', () => {
    test('answers a Partition with unconsumed_events per cursor given (not every partition needed); zero at the newest', async () => {
        const r = await post('cursors-lag', [{ partition: '0', offset: off(1) }, { partition: '2', offset: 'BEGIN' }]);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body, [
            { partition: '0', oldest_available_offset: off(0), newest_available_offset: off(4), unconsumed_events: 3 },
            { partition: '2', oldest_available_offset: 'BEGIN', newest_available_offset: 'BEGIN', unconsumed_events: 0 },
        ]);
        const lag = async (p, o) => (await post('cursors-lag', [{ partition: p, offset: o }])).body[0].unconsumed_events;
        assert.equal(await lag('0', off(4)), 0);
        assert.equal(await lag('0', 'BEGIN'), 5);
        assert.equal(await lag('1', off(0)), 1);
    });
    test('422 for unknown partitions, malformed or not-yet-existing offsets and malformed bodies; 400 for non-JSON', async () => {
        const bad = [
            [{ partition: '5', offset: 'BEGIN' }],
            [{ partition: '0', offset: '001-0001-00000000000000000x' }],
            [{ partition: '0', offset: off(5) }],
            [{ partition: '0' }],
            [{ offset: 'BEGIN' }],
            ['0'],
            { partition: '0', offset: 'BEGIN' },
        ];
        for (const body of bad)
            assertProblem(await post('cursors-lag', body), 422);
        assertProblem(await post('cursors-lag', 'nope'), 400);
        assertProblem(await call(base, 'POST', '/event-types/no.such.type/cursors-lag', [{ partition: '0', offset: 'BEGIN' }]), 404);
    });
});
describe('POST /event-types/{name}/shifted-cursors', () => {
    const shift = (partition, offset, by) => ({ partition, offset, shift: by });
    test('shifts forward and backward by a number of events; zero keeps the cursor; BEGIN is a valid start and result', async () => {
        const r = await post('shifted-cursors', [
            shift('0', off(0), 2),
            shift('0', off(4), -3),
            shift('0', 'BEGIN', 1),
            shift('0', 'BEGIN', 5),
            shift('0', off(3), 0),
            shift('0', off(0), -1),
            shift('1', off(1), -2),
        ]);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body, [
            { partition: '0', offset: off(2) },
            { partition: '0', offset: off(1) },
            { partition: '0', offset: off(0) },
            { partition: '0', offset: off(4) },
            { partition: '0', offset: off(3) },
            { partition: '0', offset: 'BEGIN' },
            { partition: '1', offset: 'BEGIN' },
        ]);
    });
    test('422 when the result does not exist yet or lies before the first event', async () => {
        assertProblem(await post('shifted-cursors', [shift('0', off(4), 1)]), 422, /does not exist yet/);
        assertProblem(await post('shifted-cursors', [shift('0', 'BEGIN', 6)]), 422, /does not exist yet/);
        assertProblem(await post('shifted-cursors', [shift('2', 'BEGIN', 1)]), 422, /does not exist yet/);
        assertProblem(await post('shifted-cursors', [shift('0', off(1), -3)]), 422);
        assertProblem(await post('shifted-cursors', [shift('0', 'BEGIN', -1)]), 422);
        // Issue 10: an offset plus 2^53-1 is past every exact integer; it answered 500.
        assertProblem(await post('shifted-cursors', [shift('0', off(1), Number.MAX_SAFE_INTEGER)]), 422, /goes past the newest offset/);
        assertProblem(await post('shifted-cursors', [shift('0', off(4), Number.MAX_SAFE_INTEGER - 3)]), 422, /goes past the newest offset/);
    });
    test('422 for unknown partitions, a start that does not exist yet, malformed offsets or shifts and malformed bodies; 400 for non-JSON', async () => {
        const bad = [
            [shift('3', 'BEGIN', 0)],
            [shift('0', off(5), -1)],
            [shift('0', 'bad', 1)],
            [{ partition: '0', offset: off(0) }],
            [{ partition: '0', offset: off(0), shift: '1' }],
            [{ partition: '0', offset: off(0), shift: 1.5 }],
            [{ offset: off(0), shift: 1 }],
            { partition: '0', offset: off(0), shift: 1 },
        ];
        for (const body of bad)
            assertProblem(await post('shifted-cursors', body), 422);
        assertProblem(await post('shifted-cursors', '[{'), 400);
        assertProblem(await call(base, 'POST', '/event-types/no.such.type/shifted-cursors', [shift('0', 'BEGIN', 0)]), 404);
    });
});
describe('expired offsets (retention cleanup)', () => {
    test('after cleanup moves oldest_available_offset (offsets kept, never renumbered), every tool answers 422 for an expired cursor or result', async () => {
        const short = 'cursors.short';
        await createEventType(base, businessEventType(short, { options: { retention_time: 3000 } }));
        await publish(base, short, ['a0', 'a1', 'a2'].map((o) => eventIn('0', o)));
        await sleep(3200); // the first batch is now older than retention_time
        await publish(base, short, ['b0', 'b1'].map((o) => eventIn('0', o)));
        // The second batch expires 3 s after it was written: every check below must come before that.
        await eventually(async () => {
            const r = await call(base, 'GET', `/event-types/${short}/partitions/0`);
            return r.body.oldest_available_offset === off(3);
        }, 2_000, 'retention to remove the first batch');
        const p = (await call(base, 'GET', `/event-types/${short}/partitions/0?consumed_offset=BEGIN`)).body;
        assert.deepEqual(p, { partition: '0', oldest_available_offset: off(3), newest_available_offset: off(4), unconsumed_events: 2 });
        const at = (path, body) => call(base, 'POST', `/event-types/${short}/${path}`, body);
        const expired = off(1);
        assertProblem(await call(base, 'GET', `/event-types/${short}/partitions/0?consumed_offset=${expired}`), 422, /expired/);
        assertProblem(await call(base, 'GET', `/event-types/${short}/partitions?cursors=${enc(JSON.stringify([{ partition: '0', offset: expired }]))}`), 422, /expired/);
        assertProblem(await at('cursors-lag', [{ partition: '0', offset: expired }]), 422, /expired/);
        assertProblem(await at('cursor-distances', [{ initial_cursor: { partition: '0', offset: expired }, final_cursor: { partition: '0', offset: off(4) } }]), 422, /expired/);
        assertProblem(await at('cursor-distances', [{ initial_cursor: { partition: '0', offset: off(4) }, final_cursor: { partition: '0', offset: off(0) } }]), 422, /expired/);
        assertProblem(await at('shifted-cursors', [{ partition: '0', offset: expired, shift: 2 }]), 422, /expired/);
        assertProblem(await at('shifted-cursors', [{ partition: '0', offset: off(4), shift: -3 }]), 422, /expired/);
        // oldest - 1 is still valid (it names the last removed event: "consumed everything removed"),
        // and BEGIN now means it.
        const lag = await at('cursors-lag', [{ partition: '0', offset: off(2) }, { partition: '0', offset: 'BEGIN' }]);
        assert.equal(lag.status, 200, lag.text);
        assert.deepEqual(lag.body.map((x) => x.unconsumed_events), [2, 2]);
        const shifted = await at('shifted-cursors', [{ partition: '0', offset: off(4), shift: -2 }, { partition: '0', offset: 'BEGIN', shift: 0 }]);
        assert.deepEqual(shifted.body, [{ partition: '0', offset: off(2) }, { partition: '0', offset: off(2) }]);
        const dist = await at('cursor-distances', [{ initial_cursor: { partition: '0', offset: 'BEGIN' }, final_cursor: { partition: '0', offset: off(4) } }]);
        assert.equal(dist.body[0].distance, 2);
    });
});
//# sourceMappingURL=cursors.http.test.js.map