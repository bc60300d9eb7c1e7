/**
 * Goal: a one-member group never fails a proposal for taking long: its entry commits as soon as the
 * node's own write completes, so a "did not commit in time (it may still commit)" there told clients
 * "failed" about batches that were then stored (207s on a single node under load, and duplicates when
 * the client resent them). A group with other voters still times out (it may have lost its quorum).
 * Method: a group on the node host over MemoryKv whose writes wait on a gate; the clock is moved past
 * the deadline and the host ticked while the write hangs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MemoryKv } from '../../log/index.js';
import { makeMessage } from '../../raft/index.js';
import { RaftLogStore } from '../raft-log-store.js';
import { RaftNodeHost } from './node-host.js';
import { ProposalFailedError, RaftGroup } from './raft-group.js';
async function hosted(voters) {
    const kv = new MemoryKv();
    const store = await RaftLogStore.open(kv, 4);
    await store.bootstrap(voters);
    const g = new RaftGroup({ id: 4, self: 1, store, conf: { voters, learners: [] }, applied: store.storage.lastIndex(), electionTicks: 10, heartbeatTicks: 1, random: { int: () => 0 } });
    g.setApplier({ apply: (e) => `applied ${e.index}`, applied: () => undefined, restore: () => undefined });
    let now = 0;
    let tick = () => undefined;
    const host = new RaftNodeHost({
        self: 1,
        kv,
        tickMs: 100,
        clock: { nowMs: () => now, monotonicMs: () => now },
        ticks: { every: (_ms, fn) => ((tick = fn), () => undefined) },
        logger: pino({ level: 'silent' }),
        onFatal: (err) => assert.fail(`the host stopped: ${String(err)}`),
    });
    host.start({ send: () => undefined });
    host.add(g);
    return { kv, g, host, advance: (ms) => ((now += ms), tick()) };
}
async function until(cond, what) {
    for (let i = 0; i < 400 && !cond(); i++)
        await new Promise((r) => setTimeout(r, 5));
    assert.ok(cond(), what);
}
test('a one-member group waits for its own write however long it takes, then answers', async () => {
    const { kv, g, host, advance } = await hosted([1]);
    g.raw.campaign();
    host.kick(4);
    await until(() => g.isLeader(), 'the group of one elects itself');
    let open;
    const gate = new Promise((r) => (open = r));
    kv.beforeWrite = () => gate;
    const outcome = g.propose(Buffer.from('x'), 5000).then((a) => a.outcome, (err) => err);
    // The turn's write hangs (a slow disk) well past the proposal's deadline, with ticks coming.
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 100; i++)
        advance(100);
    const early = await Promise.race([outcome, new Promise((r) => setTimeout(() => r('still waiting'), 30))]);
    assert.equal(early, 'still waiting', `the proposal was answered before its write completed: ${String(early)}`);
    kv.beforeWrite = undefined;
    open();
    assert.match(String(await outcome), /^applied \d+$/);
    await host.close();
});
test('a group with other voters still fails a proposal at its deadline (its peers may be gone)', async () => {
    const { g, host, advance } = await hosted([1, 2, 3]);
    // Node 1 campaigns and node 2 grants the pre-vote and the vote; then nobody answers any more.
    g.raw.campaign();
    host.kick(4);
    await until(() => g.raw.status().state === 'preCandidate' || g.raw.status().state === 'candidate', 'node 1 campaigns');
    if (g.raw.status().state === 'preCandidate') {
        host.receive(4, makeMessage({ type: 'preVoteResp', from: 2, to: 1, term: g.raw.status().term + 1 }));
        await until(() => g.raw.status().state === 'candidate', 'node 1 is a candidate');
    }
    host.receive(4, makeMessage({ type: 'voteResp', from: 2, to: 1, term: g.raw.status().term }));
    await until(() => g.isLeader(), 'node 1 leads');
    const outcome = g.propose(Buffer.from('x'), 5000).then(() => 'committed', (err) => err);
    await new Promise((r) => setTimeout(r, 20));
    advance(5000);
    const err = await outcome;
    assert.ok(err instanceof ProposalFailedError, String(err));
    assert.equal(err.reason, 'timeout');
    await host.close();
});
//# sourceMappingURL=raft-group-expire.test.js.map