/**
 * Goal: a group whose write was refused (a full disk) restarts from its disk even when it has already
 * applied entries the refused write would have marked committed. Method: a one-member group applies
 * an entry that was durable before the turn whose hard state (commit) is then refused, and resets.
 * Found by the host simulation (src/sim/host-cluster.ts): the node stopped on "applied 49 is beyond
 * committed 48", since the host applies durable committed entries before the turn's write resolves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KvWriteError, MemoryKv } from '../../log/index.js';
import { RaftLogStore } from '../raft-log-store.js';
import { RaftGroup } from './raft-group.js';
test('reset after a refused write keeps entries applied from the durable log (applied beyond the stored commit)', async () => {
    const kv = new MemoryKv();
    const store = await RaftLogStore.open(kv, 1);
    await store.bootstrap([1]);
    const g = new RaftGroup({ id: 1, self: 1, store, conf: { voters: [1], learners: [] }, applied: 1, electionTicks: 10, heartbeatTicks: 1, random: { int: () => 0 } });
    const applied = [];
    g.setApplier({ apply: (e) => void applied.push(e.index), applied: () => undefined, restore: () => undefined });
    g.raw.campaign();
    // Turn 1: the new leader's no-op is written durably; the commit index it allows is not yet known.
    const rd1 = g.raw.ready();
    assert.equal(rd1.entries.length, 1);
    await kv.write((b) => store.fill(b, rd1), { durable: true });
    store.persisted(rd1);
    for (const e of rd1.committedEntries)
        g.applyEntry(e);
    g.raw.advance(rd1);
    // Turn 2: the no-op is committed; it is durable already, so the host applies it at once...
    const rd2 = g.raw.ready();
    assert.equal(rd2.committedEntries.at(-1)?.index, 2);
    assert.equal(rd2.hardState?.commit, 2);
    for (const e of rd2.committedEntries)
        g.applyEntry(e);
    assert.deepEqual(applied, [2]);
    // ...and then the turn's write (with commit 2) is refused.
    assert.equal(store.storage.hardState().commit, 1);
    g.reset(new KvWriteError(new Error('IO error: No space left on device')));
    assert.equal(g.applied, 2);
    // The group goes on: it elects itself again and commits a new entry.
    const p = g.propose(Buffer.from('x'), Number.MAX_SAFE_INTEGER);
    for (let i = 0; i < 5 && g.raw.hasReady(); i++) {
        const rd = g.raw.ready();
        await kv.write((b) => store.fill(b, rd), { durable: true });
        store.persisted(rd);
        for (const e of rd.committedEntries)
            g.applyEntry(e);
        g.raw.advance(rd);
    }
    const r = await p;
    assert.ok(r.index > 2);
    assert.deepEqual(applied.slice(-1), [r.index]);
});
test('a refused write tells "not stored" only to proposals stored nowhere; those durable or sent may still commit', async () => {
    const kv = new MemoryKv();
    const store = await RaftLogStore.open(kv, 1);
    await store.bootstrap([1]);
    const g = new RaftGroup({ id: 1, self: 1, store, conf: { voters: [1], learners: [] }, applied: 1, electionTicks: 10, heartbeatTicks: 1, random: { int: () => 0 } });
    const applied = [];
    g.setApplier({ apply: (e) => void applied.push(e.index), applied: () => undefined, restore: () => undefined });
    g.raw.campaign();
    const turn = async (refuse) => {
        const rd = g.raw.ready();
        if (refuse) {
            // What the host does: everything durable here before the write may still commit.
            g.reset(new KvWriteError(new Error('IO error: No space left on device')), store.storage.lastIndex());
            return;
        }
        await kv.write((b) => store.fill(b, rd), { durable: true });
        store.persisted(rd);
        for (const e of rd.committedEntries)
            g.applyEntry(e);
        g.raw.advance(rd);
    };
    await turn(false); // the leader's no-op, durable
    await turn(false); // ...and applied
    const durable = g.propose(Buffer.from('a'), Number.MAX_SAFE_INTEGER);
    await turn(false); // 'a' is durable here, not yet committed
    const lost = g.propose(Buffer.from('b'), Number.MAX_SAFE_INTEGER);
    await turn(true); // the write with 'b' (and the commit of 'a') is refused
    const [d, l] = await Promise.allSettled([durable, lost]);
    assert.equal(d.status, 'rejected');
    assert.equal(l.status, 'rejected');
    const de = d.reason;
    const le = l.reason;
    assert.equal(de.reason, 'timeout', 'a durable entry may still commit: its outcome is unknown');
    assert.equal(de.storageError, undefined);
    assert.equal(le.reason, 'refused');
    assert.ok(le.storageError instanceof KvWriteError, 'an entry stored nowhere is told why it was not stored');
    // After the reset the group elects itself again and commits 'a' (which is why it was not told
    // "not stored"), never 'b'.
    for (let i = 0; i < 5 && g.raw.hasReady(); i++)
        await turn(false);
    assert.ok(applied.includes(4), `applied ${applied.join(',')}`);
    const texts = applied.map((i) => Buffer.from(store.storage.entries(i, i + 1, Number.MAX_SAFE_INTEGER)[0].data).toString());
    assert.ok(texts.includes('a'));
    assert.ok(!texts.includes('b'));
});
//# sourceMappingURL=raft-group-reset.test.js.map