/**
 * Goal: the node host applies, before a turn's write, only committed entries that are durable here as
 * they are; an entry the turn overwrites (a follower taking a new leader's entry at an index where it
 * holds an older one) waits for the write, so a refused write (a full disk) never leaves a group that
 * applied an entry its log does not hold. Method: a follower of a three-member group stores 4@2, then
 * receives 4@3 already committed, and its write is refused. Found by the host simulation (seed 1565
 * of SEEDS=2000: CommittedPrefix, "node 1 has term 7 at its commit 31, committed term 8").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { KvWriteError, MemoryKv } from '../../log/index.js';
import { makeMessage } from '../../raft/index.js';
import { RaftLogStore } from '../raft-log-store.js';
import { RaftNodeHost } from './node-host.js';
import { RaftGroup } from './raft-group.js';
const entry = (index, term, text) => ({ index, term, type: 'normal', data: Buffer.from(text) });
async function until(cond, what) {
    for (let i = 0; i < 200 && !cond(); i++)
        await new Promise((r) => setTimeout(r, 5));
    assert.ok(cond(), what);
}
test('a refused write after an overwrite of the durable log leaves nothing applied that the log does not hold', async () => {
    const kv = new MemoryKv();
    const store = await RaftLogStore.open(kv, 9);
    await store.bootstrap([1, 2, 3]);
    const g = new RaftGroup({ id: 9, self: 1, store, conf: { voters: [1, 2, 3], learners: [] }, applied: 3, electionTicks: 10, heartbeatTicks: 1, random: { int: () => 0 } });
    const applied = [];
    g.setApplier({ apply: (e) => (applied.push(`${e.index}@${e.term}`), ''), applied: () => undefined, restore: () => undefined });
    const host = new RaftNodeHost({
        self: 1,
        kv,
        tickMs: 1000,
        clock: { nowMs: () => 0, monotonicMs: () => 0 },
        ticks: { every: () => () => undefined },
        logger: pino({ level: 'silent' }),
        onFatal: (err) => assert.fail(`the host stopped: ${String(err)}`),
    });
    host.start({ send: () => undefined });
    host.add(g);
    // Leader 2 of term 2 appends 4@2, not committed.
    host.receive(9, makeMessage({ type: 'app', from: 2, to: 1, term: 2, index: 3, logTerm: 1, entries: [entry(4, 2, 'old')], commit: 3 }));
    await until(() => store.storage.lastIndex() === 4, '4@2 is durable');
    // Leader 3 of term 3 replaces it with 4@3, committed; this node's write of it is refused.
    kv.failNextWrites(1, new KvWriteError(new Error('IO error: No space left on device')));
    host.receive(9, makeMessage({ type: 'app', from: 3, to: 1, term: 3, index: 3, logTerm: 1, entries: [entry(4, 3, 'new')], commit: 4 }));
    await until(() => host.refusal !== undefined || g.applied === 4, 'the turn ran');
    // Whatever was applied is what the group's log holds at that index, and within its commit index.
    await new Promise((r) => setTimeout(r, 20));
    for (const a of applied) {
        const [index, term] = a.split('@').map(Number);
        assert.equal(g.raw.termAt(index), term, `applied ${a}, but the log holds ${index}@${g.raw.termAt(index)}`);
        assert.ok(index <= g.raw.status().commit);
    }
    // Once the disk takes writes again, the leader's entry arrives again and is applied.
    host.receive(9, makeMessage({ type: 'app', from: 3, to: 1, term: 3, index: 3, logTerm: 1, entries: [entry(4, 3, 'new')], commit: 4 }));
    await until(() => applied.includes('4@3'), '4@3 applied after the disk recovered');
    assert.deepEqual(applied, ['4@3']);
    await host.close();
});
//# sourceMappingURL=node-host-refusal.test.js.map