// Goal: quiescence in the core. An idle group's leader quiesces only when nothing is under way and every
// member holds and has committed its whole log; it tells its followers with a heartbeat; then nobody
// ticks or sends anything, and no follower times out. A proposal or any message wakes the group. A
// follower that missed the quiesce heartbeat wakes the leader with its pre-vote without deposing it. A
// follower woken because its leader went silent (its host says how long ago it was heard from)
// campaigns and gets the votes of the others.
// Method: three RawNodes over MemoryStorage and a synchronous in-memory network that can lose chosen
// messages; ticks driven by the test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '../sim/prng.js';
import { bootstrapState } from './confchange.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import { quiesceContext } from './types.js';
const electionTicks = 10;
class Cluster {
    nodes = new Map();
    down = new Set();
    /** Messages sent, by type, since the last reset. */
    sent = [];
    drop;
    constructor(ids) {
        const rng = new Prng(7);
        for (const id of ids) {
            const storage = new MemoryStorage();
            const { entries, hardState } = bootstrapState(ids);
            storage.append(entries);
            storage.setHardState(hardState);
            const raw = new RawNode({ id, storage, applied: 0, electionTicks, heartbeatTicks: 1, random: rng.fork(), preVote: true, checkQuorum: true, damaged: null });
            this.nodes.set(id, { raw, storage });
        }
    }
    raw(id) {
        return this.nodes.get(id).raw;
    }
    /** Runs every Ready and delivers every message until nothing moves. */
    settle() {
        for (let round = 0; round < 1000; round++) {
            const inFlight = [];
            for (const [id, n] of this.nodes) {
                if (this.down.has(id))
                    continue;
                while (n.raw.hasReady()) {
                    const rd = n.raw.ready();
                    if (rd.snapshot)
                        n.storage.applySnapshot(rd.snapshot);
                    n.storage.append(rd.entries);
                    if (rd.hardState)
                        n.storage.setHardState(rd.hardState);
                    for (const e of rd.committedEntries)
                        if (e.type === 'confChange')
                            n.raw.applyConfChange(e);
                    inFlight.push(...rd.messages);
                    n.raw.advance(rd);
                }
            }
            if (inFlight.length === 0)
                return;
            for (const m of inFlight) {
                this.sent.push(m);
                if (this.down.has(m.to) || this.drop?.(m) === true)
                    continue;
                this.raw(m.to).step(m);
            }
        }
        throw new Error('the cluster does not settle');
    }
    tick(times = 1) {
        for (let k = 0; k < times; k++) {
            for (const [id, n] of this.nodes)
                if (!this.down.has(id))
                    n.raw.tick();
            this.settle();
        }
    }
    leader() {
        return [...this.nodes].find(([id, n]) => !this.down.has(id) && n.raw.isLeader())?.[0];
    }
}
function elected() {
    const c = new Cluster([1, 2, 3]);
    c.settle(); // apply the founding configuration
    c.raw(1).campaign();
    c.settle();
    assert.equal(c.leader(), 1);
    c.tick(2); // the no-op commits everywhere
    return c;
}
test('an idle leader quiesces its followers: then no ticks, no messages, no elections', () => {
    const c = elected();
    assert.equal(c.raw(1).quiesce(), true);
    c.settle();
    for (const id of [1, 2, 3])
        assert.equal(c.raw(id).quiesced, true, `node ${id} quiesced`);
    const term = c.raw(1).status().term;
    c.sent = [];
    c.tick(10 * electionTicks);
    assert.deepEqual(c.sent, [], 'nothing sent while quiesced');
    for (const id of [1, 2, 3])
        assert.equal(c.raw(id).status().term, term);
    assert.equal(c.leader(), 1);
});
test('a leader does not quiesce while something is under way', () => {
    const c = elected();
    // A follower that lacks entries.
    c.down.add(3);
    assert.equal(c.raw(1).propose(new Uint8Array([1])).ok, true);
    c.settle();
    assert.equal(c.raw(1).quiesce(), false, 'a follower lags');
    c.down.delete(3);
    c.tick(3);
    assert.equal(c.raw(1).quiesce(), true, 'once it caught up');
    c.settle();
    // A read in flight.
    const d = elected();
    d.drop = (m) => m.type === 'heartbeatResp';
    assert.equal(d.raw(1).readIndex('r1'), true);
    d.settle();
    assert.equal(d.raw(1).quiesce(), false, 'a ReadIndex round is under way');
    // A proposal not yet committed.
    const e = elected();
    e.drop = (m) => m.type === 'appResp';
    assert.equal(e.raw(1).propose(new Uint8Array([2])).ok, true);
    e.settle();
    assert.equal(e.raw(1).quiesce(), false, 'an entry is not committed');
});
test('a proposal wakes the leader and its followers; the group commits and can quiesce again', () => {
    const c = elected();
    c.raw(1).quiesce();
    c.settle();
    const r = c.raw(1).propose(new Uint8Array([9]));
    assert.ok(r.ok);
    assert.equal(c.raw(1).quiesced, false);
    c.settle();
    for (const id of [2, 3]) {
        assert.equal(c.raw(id).quiesced, false, `node ${id} woke on the append`);
        assert.equal(c.raw(id).status().commit >= r.lastIndex || c.raw(id).status().lastIndex >= r.lastIndex, true);
    }
    c.tick(1);
    for (const id of [1, 2, 3])
        assert.ok(c.raw(id).status().commit >= r.lastIndex, `node ${id} committed the proposal`);
    assert.equal(c.raw(1).quiesce(), true);
    c.settle();
    for (const id of [2, 3])
        assert.equal(c.raw(id).quiesced, true);
});
test('a follower that missed the quiesce heartbeat wakes the leader with a pre-vote that deposes nobody', () => {
    const c = elected();
    c.drop = (m) => m.type === 'heartbeat' && m.context === quiesceContext && m.to === 3;
    c.raw(1).quiesce();
    c.settle();
    c.drop = undefined;
    assert.equal(c.raw(3).quiesced, false);
    const term = c.raw(1).status().term;
    c.sent = [];
    c.tick(3 * electionTicks);
    assert.ok(c.sent.some((m) => m.type === 'preVote' && m.from === 3), 'node 3 timed out and asked for pre-votes');
    assert.ok(c.sent.some((m) => m.type === 'heartbeat' && m.from === 1 && m.context !== quiesceContext), 'which woke the leader');
    assert.equal(c.leader(), 1);
    for (const id of [1, 2, 3])
        assert.equal(c.raw(id).status().term, term, 'no new term');
});
test('followers woken because the leader went silent elect a new leader; a pre-vote while the leader is heard deposes nobody', () => {
    // The leader is alive: a member that campaigns at once is refused by the others, whose lease holds
    // (quiesced, they did not count the time).
    const a = elected();
    a.raw(1).quiesce();
    a.settle();
    const term = a.raw(1).status().term;
    a.raw(2).campaign();
    a.settle();
    assert.equal(a.leader(), 1);
    for (const id of [1, 2, 3])
        assert.equal(a.raw(id).status().term, term);
    // The leader died: woken as the host does when its node has not been heard from for an election
    // timeout, the others elect one of them within one more election timeout.
    const c = elected();
    c.raw(1).quiesce();
    c.settle();
    c.down.add(1);
    for (const id of [2, 3])
        c.raw(id).wake(electionTicks);
    let ticks = 0;
    while (c.leader() === undefined || c.leader() === 1) {
        c.tick(1);
        assert.ok(++ticks <= electionTicks, `no new leader within ${electionTicks} ticks of waking`);
    }
    assert.ok([2, 3].includes(c.leader()));
});
//# sourceMappingURL=quiesce.test.js.map