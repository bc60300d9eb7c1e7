/**
 * Goal: each rule of the Raft paper and thesis that the core implements, stated as the sentence it
 * checks (etcd's raft_paper_test.go style). Method: real RawNodes, either alone and fed hand-made
 * messages, or wired through the synchronous test harness (src/sim/harness.ts) whose links can be
 * cut and whose messages can be filtered.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness } from '../sim/harness.js';
import { Prng } from '../sim/prng.js';
import { MemoryStorage } from './storage.js';
import { RawNode } from './rawnode.js';
import { bootstrapState } from './confchange.js';
import { makeMessage } from './types.js';
const enc = new TextEncoder();
/** A lone node of a 3-voter group, bootstrapped and with its founding entries applied. */
function loneNode(opts = {}) {
    const storage = new MemoryStorage();
    const { entries, hardState } = bootstrapState([1, 2, 3]);
    storage.append(entries);
    storage.setHardState(hardState);
    const raw = new RawNode({
        id: 1,
        storage,
        electionTicks: 10,
        heartbeatTicks: 1,
        random: new Prng(3),
        preVote: opts.preVote ?? false,
        checkQuorum: opts.checkQuorum ?? false,
    });
    drain(raw, storage);
    return raw;
}
/** Carries out every Ready of a lone node; returns the messages it sent. */
function drain(raw, storage) {
    const out = [];
    while (raw.hasReady()) {
        const rd = raw.ready();
        storage.append(rd.entries);
        if (rd.hardState)
            storage.setHardState(rd.hardState);
        for (const e of rd.committedEntries)
            if (e.type === 'confChange')
                raw.applyConfChange(e);
        out.push(...rd.messages);
        raw.advance(rd);
    }
    return out;
}
function msg(type, from, term, extra = {}) {
    return makeMessage({ type, from, to: 1, term, ...extra });
}
test('a follower that hears from no leader for an election timeout starts an election and a leader emerges', () => {
    const h = new Harness([1, 2, 3]);
    assert.equal(h.leader(), undefined);
    h.tickAll(30);
    const l = h.leader();
    assert.ok(l !== undefined);
    assert.equal(h.status(l).term, 2);
});
test('a candidate that receives a message with a higher term becomes a follower', () => {
    const h = new Harness([1, 2, 3]);
    h.filter = () => false; // nothing gets through: node 1 stays a candidate
    h.raw(1).campaign();
    h.stabilize();
    assert.equal(h.status(1).state, 'preCandidate');
    const storage = h.node(1).storage;
    const raw = h.raw(1);
    raw.step(makeMessage({ type: 'heartbeat', from: 2, to: 1, term: 5, commit: 0 }));
    drain(raw, storage);
    assert.equal(h.status(1).state, 'follower');
    assert.equal(h.status(1).term, 5);
    assert.equal(h.status(1).lead, 2);
});
test('a node grants at most one vote per term', () => {
    const raw = loneNode();
    raw.step(msg('vote', 2, 5, { index: 10, logTerm: 4 }));
    raw.step(msg('vote', 3, 5, { index: 10, logTerm: 4 }));
    const storage = new MemoryStorage();
    const out = drain(raw, storage).filter((m) => m.type === 'voteResp');
    assert.deepEqual(out.map((m) => [m.to, m.reject]), [[2, false], [3, true]]);
    assert.equal(raw.status().vote, 2);
});
test('a voter denies its vote to a candidate whose log is less up to date than its own', () => {
    const raw = loneNode();
    // Our log ends at index 3 with term 1; a candidate ending at (2, 1) is behind.
    raw.step(msg('vote', 2, 5, { index: 2, logTerm: 1 }));
    const out = drain(raw, new MemoryStorage());
    assert.equal(out.find((m) => m.type === 'voteResp')?.reject, true);
});
test('a vote request with a higher term makes the receiver adopt that term even when it denies the vote', () => {
    const raw = loneNode();
    raw.step(msg('vote', 2, 7, { index: 0, logTerm: 0 }));
    drain(raw, new MemoryStorage());
    assert.equal(raw.status().term, 7);
    assert.equal(raw.status().vote, 0);
});
test('a leader appends a no-op entry of its own term when elected', () => {
    const h = new Harness([1, 2, 3]);
    const st = h.elect(1);
    assert.equal(st.state, 'leader');
    assert.equal(h.raw(1).termAt(st.lastIndex), st.term);
    assert.equal(st.commit, st.lastIndex, 'the no-op commits once replicated');
});
test('with Pre-Vote a partitioned node does not raise its term and does not disrupt the leader when it returns', () => {
    const h = new Harness([1, 2, 3], { preVote: true, checkQuorum: true });
    h.elect(1);
    const term = h.status(1).term;
    h.isolate(3);
    h.tickAll(100);
    assert.equal(h.status(3).term, term, 'pre-votes failed, so the term stayed');
    h.heal();
    h.tickAll(5);
    assert.equal(h.leader(), 1);
    assert.equal(h.status(1).term, term);
});
test('without Pre-Vote the same partitioned node raises its term and forces a new election on return', () => {
    const h = new Harness([1, 2, 3], { preVote: false, checkQuorum: false });
    h.elect(1);
    const term = h.status(1).term;
    h.isolate(3);
    h.tickAll(100);
    assert.ok(h.status(3).term > term);
    h.heal();
    h.tickAll(40);
    assert.ok(h.status(h.leader()).term > term, 'the returning node deposed the leader');
});
test('with CheckQuorum a leader that cannot reach a majority steps down', () => {
    const h = new Harness([1, 2, 3], { checkQuorum: true });
    h.elect(1);
    h.isolate(1);
    h.tick(1, 25);
    h.stabilize();
    assert.equal(h.status(1).state, 'follower');
});
test('a follower that heard from its leader within the election timeout ignores a vote request (leader lease)', () => {
    const h = new Harness([1, 2, 3], { checkQuorum: true });
    h.elect(1);
    const raw2 = h.raw(2);
    const before = h.status(2).term;
    raw2.step(makeMessage({ type: 'vote', from: 3, to: 2, term: before + 5, index: 100, logTerm: 100 }));
    assert.equal(h.status(2).term, before);
    assert.equal(h.status(2).lead, 1);
});
test('a stale leader learns the higher term from a follower and steps down', () => {
    const h = new Harness([1, 2, 3], { preVote: true, checkQuorum: true });
    h.elect(1);
    h.isolate(1);
    h.tickAll(40); // 2 or 3 becomes leader in a higher term; 1 may have stepped down already
    const newLeader = h.leader();
    assert.ok(newLeader !== undefined && newLeader !== 1);
    h.heal();
    h.tickAll(3);
    assert.equal(h.status(1).state, 'follower');
    assert.equal(h.status(1).term, h.status(newLeader).term);
});
test('a proposal is replicated to every follower and applied everywhere in the same order', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    for (let i = 0; i < 20; i++)
        h.propose(1, `v${i}`);
    h.stabilize();
    const want = Array.from({ length: 20 }, (_, i) => `v${i}`);
    for (const id of [1, 2, 3])
        assert.deepEqual(h.appliedTexts(id), want);
});
test('proposals made between two Readies go out in as few appends as the entry cap allows (batching)', () => {
    const h = new Harness([1, 2, 3], { appendEntriesMax: 8 });
    h.elect(1);
    h.recording = true;
    for (let i = 0; i < 32; i++)
        h.propose(1, `v${i}`);
    h.stabilize();
    const appsTo2 = h.log.filter((l) => l.startsWith('1->2 app') && !l.includes('ents -'));
    assert.equal(appsTo2.length, 4, appsTo2.join('\n'));
});
test('a follower in replicate state has at most inflightAppendsMax unacknowledged appends (pipelining window)', () => {
    const h = new Harness([1, 2, 3], { appendEntriesMax: 1, inflightAppendsMax: 3 });
    h.elect(1);
    h.recording = true;
    h.filter = (m) => !(m.from === 2 && m.type === 'appResp'); // node 2 never acknowledges
    for (let i = 0; i < 10; i++)
        h.propose(1, `v${i}`);
    h.stabilize();
    const appsTo2 = h.log.filter((l) => l.startsWith('1->2 app') && !l.includes('ents -'));
    assert.equal(appsTo2.length, 3);
    const appsTo3 = h.log.filter((l) => l.startsWith('1->3 app') && !l.includes('ents -'));
    assert.equal(appsTo3.length, 10, 'an acknowledging follower gets everything, one entry per append');
});
test('the payload bytes of one append are capped, but at least one entry is always sent', () => {
    const h = new Harness([1, 2], { appendBytesMax: 10 });
    h.elect(1);
    h.recording = true;
    h.propose(1, 'x'.repeat(25));
    h.propose(1, 'abcd');
    h.propose(1, 'efgh');
    h.stabilize();
    const apps = h.log.filter((l) => l.startsWith('1->2 app') && !l.includes('ents -'));
    assert.equal(apps.length, 2, apps.join('\n'));
});
test('a leader refuses proposals once uncommitted bytes exceed the bound, and accepts again after commit', () => {
    const h = new Harness([1, 2, 3], { uncommittedBytesMax: 20 });
    h.elect(1);
    h.isolate(1);
    const raw = h.raw(1);
    assert.equal(raw.propose(enc.encode('0123456789')).ok, true);
    assert.equal(raw.propose(enc.encode('0123456789')).ok, true);
    const refused = raw.propose(enc.encode('0123456789'));
    assert.deepEqual(refused, { ok: false, reason: 'uncommittedBytesMax' });
    h.heal();
    h.stabilize();
    h.tickAll(2);
    assert.equal(raw.propose(enc.encode('0123456789')).ok, true);
});
test('a follower refuses to propose and names no index; the host forwards to the leader', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    assert.deepEqual(h.raw(2).propose(enc.encode('x')), { ok: false, reason: 'notLeader' });
    assert.equal(h.status(2).lead, 1);
});
test('a ReadIndex on the leader is answered only after a majority acknowledges a heartbeat round', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    h.propose(1, 'w');
    h.stabilize();
    h.isolate(1);
    assert.equal(h.raw(1).readIndex('r1'), true);
    h.stabilize();
    assert.deepEqual(h.node(1).readStates, [], 'no majority, no answer');
    h.heal();
    h.tickAll(1);
    assert.deepEqual(h.node(1).readStates, [{ index: h.status(1).commit, context: 'r1' }]);
});
test('a follower forwards a ReadIndex to the leader and receives the leader commit index', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    h.propose(1, 'w');
    h.stabilize();
    assert.equal(h.raw(3).readIndex('r2'), true);
    h.stabilize();
    assert.deepEqual(h.node(3).readStates, [{ index: h.status(1).commit, context: 'r2' }]);
});
test('a new leader answers no read before an entry of its own term is committed', () => {
    const h = new Harness([1, 2, 3], { checkQuorum: false });
    h.elect(1);
    h.stabilize();
    // Node 2 wins an election but its no-op cannot reach anyone yet.
    h.raw(2).campaign();
    h.filter = (m) => !(m.from === 2 && m.type === 'app');
    h.stabilize();
    assert.equal(h.status(2).state, 'leader');
    assert.equal(h.raw(2).readIndex('early'), true);
    h.stabilize();
    assert.deepEqual(h.node(2).readStates, []);
    h.heal();
    h.tickAll(2);
    assert.equal(h.node(2).readStates[0]?.context, 'early');
    assert.equal(h.raw(2).termAt(h.node(2).readStates[0].index), h.status(2).term);
});
test('leadership transfer hands over to an up-to-date voter, which wins without Pre-Vote or lease delays', () => {
    const h = new Harness([1, 2, 3], { preVote: true, checkQuorum: true });
    h.elect(1);
    assert.equal(h.raw(1).transferLeadership(3), true);
    h.stabilize();
    assert.equal(h.leader(), 3);
    assert.equal(h.status(1).state, 'follower');
});
test('leadership transfer to a lagging voter first catches it up; proposals are refused meanwhile', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    h.isolate(3);
    for (let i = 0; i < 5; i++)
        h.propose(1, `v${i}`);
    h.stabilize();
    assert.equal(h.raw(1).transferLeadership(3), true);
    assert.deepEqual(h.raw(1).propose(enc.encode('x')), { ok: false, reason: 'leadershipTransfer' });
    h.heal();
    h.tickAll(1);
    assert.equal(h.leader(), 3);
    assert.deepEqual(h.appliedTexts(3).slice(0, 5), ['v0', 'v1', 'v2', 'v3', 'v4']);
});
test('a leadership transfer that cannot finish within an election timeout is abandoned', () => {
    const h = new Harness([1, 2, 3], { checkQuorum: false });
    h.elect(1);
    h.isolate(3);
    h.propose(1, 'v');
    h.stabilize();
    h.raw(1).transferLeadership(3);
    h.tickAll(12);
    assert.equal(h.leader(), 1);
    assert.equal(h.status(1).leadTransferee, 0);
    assert.equal(h.raw(1).propose(enc.encode('after')).ok, true);
});
test('a leader accepts a second membership change only after the first is applied', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    h.addEmpty(4);
    h.addEmpty(5);
    h.isolate(2);
    h.isolate(3); // nothing commits
    assert.equal(h.raw(1).proposeConfChange({ type: 'addLearner', nodeId: 4 }).ok, true);
    assert.deepEqual(h.raw(1).proposeConfChange({ type: 'addLearner', nodeId: 5 }), { ok: false, reason: 'confChangePending' });
    h.heal();
    h.stabilize();
    h.tickAll(1);
    assert.equal(h.raw(1).proposeConfChange({ type: 'addLearner', nodeId: 5 }).ok, true);
    h.stabilize();
    assert.deepEqual(h.status(1).confState, { voters: [1, 2, 3], learners: [4, 5] });
});
test('a learner receives the log but neither votes nor counts toward commitment, until promoted', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    h.addEmpty(4);
    assert.equal(h.raw(1).proposeConfChange({ type: 'addLearner', nodeId: 4 }).ok, true);
    h.stabilize();
    h.tickAll(2);
    h.propose(1, 'a');
    h.stabilize();
    assert.deepEqual(h.appliedTexts(4), ['a'], 'the learner caught up from an empty log');
    assert.deepEqual(h.status(4).confState, { voters: [1, 2, 3], learners: [4] }, 'it learned the founders from the log');
    // With 2 and 3 cut off, leader + learner are not a majority: nothing commits.
    h.cut(1, 2);
    h.cut(1, 3);
    const { index } = h.propose(1, 'b');
    h.stabilize();
    assert.ok(h.status(1).commit < index);
    h.tick(4, 50);
    h.stabilize();
    assert.equal(h.status(4).state, 'follower', 'a learner never campaigns');
    h.heal();
    h.tickAll(2);
    assert.equal(h.raw(1).proposeConfChange({ type: 'addVoter', nodeId: 4 }).ok, true);
    h.stabilize();
    h.tickAll(1);
    assert.deepEqual(h.status(1).confState, { voters: [1, 2, 3, 4], learners: [] });
    // Now 1 + 4 + one more make a majority of four.
    h.cut(1, 2);
    h.cut(4, 2);
    const c = h.propose(1, 'c');
    h.stabilize();
    assert.ok(h.status(1).commit >= c.index);
});
test('a removed node stops counting: the remaining voters commit without it', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    assert.equal(h.raw(1).proposeConfChange({ type: 'removeNode', nodeId: 3 }).ok, true);
    h.stabilize();
    h.crash(3);
    const { index } = h.propose(1, 'x');
    h.stabilize();
    assert.ok(h.status(1).commit >= index);
    assert.deepEqual(h.status(2).confState, { voters: [1, 2], learners: [] });
});
test('a leader that applies its own removal steps down', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    assert.equal(h.raw(1).proposeConfChange({ type: 'removeNode', nodeId: 1 }).ok, true);
    h.stabilize();
    h.tickAll(1);
    assert.notEqual(h.status(1).state, 'leader');
    h.tickAll(40);
    const l = h.leader();
    assert.ok(l === 2 || l === 3);
    h.tickAll(40);
    assert.equal(h.status(1).state, 'follower', 'a removed node never campaigns');
});
test('removing the last voter or re-adding an existing member is refused as invalid', () => {
    const h = new Harness([1]);
    h.elect(1);
    assert.deepEqual(h.raw(1).proposeConfChange({ type: 'removeNode', nodeId: 1 }), { ok: false, reason: 'invalid' });
    assert.deepEqual(h.raw(1).proposeConfChange({ type: 'addVoter', nodeId: 1 }), { ok: false, reason: 'invalid' });
});
test('a single-voter group elects itself and commits only what it has persisted', () => {
    const h = new Harness([1]);
    const st = h.elect(1);
    assert.equal(st.state, 'leader');
    const raw = h.raw(1);
    const r = raw.propose(enc.encode('solo'));
    assert.ok(r.ok);
    const rd = raw.ready();
    assert.equal(rd.entries.length, 1);
    assert.ok(rd.committedEntries.every((e) => !r.ok || e.index < r.lastIndex), 'not committed before it is durable');
    h.node(1).storage.append(rd.entries);
    raw.advance(rd);
    const rd2 = raw.ready();
    assert.deepEqual(rd2.committedEntries.map((e) => e.index), r.ok ? [r.lastIndex] : []);
    assert.equal(rd2.mustSync, false, 'a commit-only change needs no fsync');
    raw.advance(rd2);
});
test('a restarted node keeps its term, vote and log, and re-applies committed entries after its snapshot', () => {
    const h = new Harness([1, 2, 3]);
    h.elect(1);
    for (let i = 0; i < 5; i++)
        h.propose(1, `v${i}`);
    h.stabilize();
    const before = h.status(2);
    h.crash(2);
    h.start(2);
    const after = h.status(2);
    assert.equal(after.term, before.term);
    assert.equal(after.vote, before.vote);
    assert.equal(after.lastIndex, before.lastIndex);
    h.stabilize();
    h.tickAll(1);
    assert.deepEqual(h.appliedTexts(2), ['v0', 'v1', 'v2', 'v3', 'v4']);
});
test('advance() refuses a Ready whose conf change entries were not applied', () => {
    const storage = new MemoryStorage();
    const { entries, hardState } = bootstrapState([1]);
    storage.append(entries);
    storage.setHardState(hardState);
    const raw = new RawNode({ id: 1, storage, electionTicks: 10, heartbeatTicks: 1, random: new Prng(1) });
    const rd = raw.ready();
    assert.equal(rd.committedEntries.length, 1);
    assert.throws(() => raw.advance(rd), /before applying conf change/);
});
test('a node does not campaign while a committed membership change is unapplied', () => {
    const storage = new MemoryStorage();
    const { entries, hardState } = bootstrapState([1, 2, 3]);
    storage.append(entries);
    storage.setHardState(hardState);
    // Restart as if the host had applied only the first founding entry.
    const raw = new RawNode({ id: 1, storage, applied: 0, electionTicks: 10, heartbeatTicks: 1, random: new Prng(1) });
    for (let i = 0; i < 50; i++)
        raw.tick();
    assert.equal(raw.status().state, 'follower');
    assert.equal(raw.status().term, 1);
});
//# sourceMappingURL=raft.test.js.map