import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { SessionReaper } from './session-reaper.js';
test('the metadata leader closes the sessions of a node unreachable past the limit, and only then', async () => {
    let t = 0;
    let leader = true;
    const down = new Set([3]);
    const holders = new Set([2, 3]);
    const proposed = [];
    const reaper = new SessionReaper({
        isLeader: () => leader,
        peers: () => [2, 3],
        reachable: (n) => !down.has(n),
        holdsSessions: (n) => holders.has(n),
        propose: async (cmd) => {
            proposed.push(cmd);
            return { ok: true };
        },
        nowMs: () => 1_000_000 + t,
        monotonicMs: () => t,
        logger: pino({ level: 'silent' }),
        afterMs: 60_000,
    });
    assert.deepEqual(await reaper.check(), []);
    t = 59_000;
    assert.deepEqual(await reaper.check(), [], 'not before the limit');
    t = 61_000;
    leader = false;
    assert.deepEqual(await reaper.check(), [], 'a follower never proposes');
    leader = true;
    assert.deepEqual(await reaper.check(), [3]);
    assert.deepEqual(proposed, [{ op: 'stream.close_stale', node: 3, incarnation: '', atMs: 1_061_000 }]);
    // Back for a moment: the clock starts again.
    down.delete(3);
    await reaper.check();
    down.add(3);
    t = 100_000;
    assert.deepEqual(await reaper.check(), [], 'unreachable again only just now');
    // Node 2 is reachable: never touched.
    assert.ok(proposed.every((c) => c.op === 'stream.close_stale' && c.node === 3));
});
//# sourceMappingURL=session-reaper.test.js.map