// Goal: the dispatcher hands each message and request to the group it names, tells every group about
// an unreachable peer, drops traffic for groups this node does not host with a log line that is rate
// limited (one line per interval however many messages), and answers requests for them as unavailable.
// Method: recording group handlers, a recording logger and a manual clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeMessage } from '../raft/index.js';
import { GroupDispatcher, TransportError } from './index.js';
import { RecordingLogger } from './test-support.js';
function group() {
    const got = [];
    const unreachable = [];
    const snaps = [];
    const h = { receive: (m) => got.push(m), unreachable: (p) => unreachable.push(p), snapshotStatus: (p, d) => snaps.push([p, d]) };
    return { h, got, unreachable, snaps };
}
test('messages, snapshot statuses and requests go to the group named; unreachable goes to every group', async () => {
    const d = new GroupDispatcher({ logger: new RecordingLogger() });
    const g0 = group();
    const g5 = group();
    d.register(0, { ...g0.h, propose: async () => ({ status: 'applied', index: 1, result: Buffer.from('r') }) });
    d.register(5, {
        ...g5.h,
        append: async (_from, req) => ({ status: 'committed', epoch: 2, firstOffset: 10, lastOffset: 10 + req.events.length - 1 }),
        bounds: async () => ({ oldest: 0, newest: 9, epoch: 2, leader: 1 }),
    });
    assert.throws(() => d.register(5, g5.h), /already registered/);
    d.receive(5, makeMessage({ type: 'vote', from: 2, to: 1, term: 3 }));
    d.receive(0, makeMessage({ type: 'heartbeat', from: 2, to: 1, term: 3 }));
    d.snapshotStatus(5, 2, false);
    d.unreachable(3);
    assert.deepEqual(g5.got.map((m) => m.type), ['vote']);
    assert.deepEqual(g0.got.map((m) => m.type), ['heartbeat']);
    assert.deepEqual(g5.snaps, [[2, false]]);
    assert.deepEqual(g0.snaps, []);
    assert.deepEqual([g0.unreachable, g5.unreachable], [[3], [3]]);
    assert.equal((await d.propose({ from: 2, command: Buffer.from('{}'), flowId: '', deadlineMs: 10 })).status, 'applied');
    const append = { group: 5, topic: 1, partition: 0, epoch: 2, requestId: 'r', flowId: '', deadlineMs: 100, events: [Buffer.from('{}')] };
    assert.deepEqual(await d.append(2, append), { status: 'committed', epoch: 2, firstOffset: 10, lastOffset: 10 });
    assert.equal((await d.bounds(2, { group: 5, topic: 1, partition: 0 })).newest, 9);
    d.unregister(5);
    assert.equal(d.has(5), false);
    assert.equal((await d.append(2, append)).status, 'unavailable');
});
test('traffic for a group not hosted here is dropped with one log line per interval, and requests for it are unavailable', async () => {
    const logger = new RecordingLogger();
    let now = 1000;
    const d = new GroupDispatcher({ logger, unknownLogIntervalMs: 10_000, nowMs: () => now });
    d.register(1, group().h);
    for (let k = 0; k < 500; k++)
        d.receive(77, makeMessage({ type: 'app', from: 2, to: 1, term: 1 }));
    assert.equal(logger.lines.length, 1);
    now += 10_000;
    d.receive(78, makeMessage({ type: 'heartbeat', from: 3, to: 1, term: 1 }));
    assert.equal(logger.lines.length, 2);
    assert.deepEqual(logger.lines[1].obj, { group: 78, from: 3, what: 'heartbeat', dropped: 500, droppedTotal: 501 });
    assert.equal(d.droppedForUnknownGroups(), 501);
    // Requests for it.
    assert.equal((await d.append(2, { group: 9, topic: 1, partition: 0, epoch: 0, requestId: 'r', flowId: '', deadlineMs: 1, events: [] })).status, 'unavailable');
    assert.throws(() => d.read(2, { group: 9, topic: 1, partition: 0, afterOffset: -1, maxEvents: 1, maxBytes: 1, waitMs: 0, follow: false, flowId: '' }, new AbortController().signal), TransportError);
    await assert.rejects(d.bounds(2, { group: 9, topic: 1, partition: 0 }), TransportError);
    assert.throws(() => d.fetchLog(2, { group: 9, fromIndex: 1, toIndex: 2, maxBytes: 1 }, new AbortController().signal), TransportError);
    // Group 0 absent: a forwarded proposal is unavailable, not an error.
    assert.equal((await d.propose({ from: 2, command: Buffer.from('{}'), flowId: '', deadlineMs: 10 })).status, 'unavailable');
});
//# sourceMappingURL=dispatcher.test.js.map