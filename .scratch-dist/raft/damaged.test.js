// Goal: a member whose durable state was damaged (RaftConfig.damaged: a lost log tail, a corrupt
// record, a wiped disk) never votes, pre-votes, campaigns or takes leadership, yet follows a leader and
// takes its entries; once a healthy leader has brought its log up to date it is repaired (reported
// once in a Ready) and votes again. Issue 9: a replica that lost acknowledged state must not elect a
// leader that lacks a committed entry.
// Method: a lone RawNode fed hand-made messages for the rules, and the synchronous harness
// (src/sim/harness.ts) for the story: an entry committed by nodes 1 and 3 only, node 3 wiped and
// restarted damaged, node 1 down; node 2 (without the entry) must not be elected with node 3's vote.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness } from '../sim/harness.js';
import { Prng } from '../sim/prng.js';
import { bootstrapState } from './confchange.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import { campaignTransfer, makeMessage } from './types.js';
/** A lone node of a 3-voter group, bootstrapped and with its founding entries applied. */
function loneNode(damaged) {
    const storage = new MemoryStorage();
    const { entries, hardState } = bootstrapState([1, 2, 3]);
    storage.append(entries);
    storage.setHardState(hardState);
    const raw = new RawNode({ id: 1, storage, electionTicks: 10, heartbeatTicks: 1, random: new Prng(3), preVote: true, checkQuorum: true, damaged });
    drain(raw, storage);
    assert.deepEqual(raw.status().confState.voters, [1, 2, 3], 'a voter: only the damage keeps it from campaigning');
    return { raw, storage };
}
/** Carries out every Ready of a lone node; returns the messages it sent and whether one said repaired. */
function drain(raw, storage) {
    const out = [];
    let repaired = false;
    while (raw.hasReady()) {
        const rd = raw.ready();
        storage.append(rd.entries);
        if (rd.hardState)
            storage.setHardState(rd.hardState);
        for (const e of rd.committedEntries)
            if (e.type === 'confChange')
                raw.applyConfChange(e);
        out.push(...rd.messages);
        if (rd.repaired) {
            assert.ok(rd.mustSync, 'the Ready that repairs is written durably');
            repaired = true;
        }
        raw.advance(rd);
    }
    return { out, repaired };
}
function msg(type, from, term, extra = {}) {
    return makeMessage({ type, from, to: 1, term, ...extra });
}
const damage = { term: 0, index: 0 };
test('a damaged member grants no vote that a healthy member would grant', () => {
    for (const damaged of [null, damage]) {
        const { raw, storage } = loneNode(damaged);
        // A candidate whose log (10, 4) is ahead of ours (3, 1), in a higher term.
        raw.step(msg('vote', 2, 5, { index: 10, logTerm: 4 }));
        const resp = drain(raw, storage).out.find((m) => m.type === 'voteResp');
        assert.equal(resp?.reject, damaged !== null, damaged === null ? 'healthy: granted' : 'damaged: refused');
        assert.equal(raw.status().vote, damaged === null ? 2 : 0);
        assert.equal(raw.status().term, 5, 'the higher term is adopted either way');
    }
});
test('a damaged member grants no pre-vote', () => {
    for (const damaged of [null, damage]) {
        const { raw, storage } = loneNode(damaged);
        raw.step(msg('preVote', 2, 2, { index: 10, logTerm: 1 }));
        const resp = drain(raw, storage).out.find((m) => m.type === 'preVoteResp');
        assert.equal(resp?.reject, damaged !== null);
    }
});
test('a damaged member does not campaign: not on election timeout, not when asked, not on a transfer', () => {
    const asked = (damaged, poke) => {
        const { raw, storage } = loneNode(damaged);
        poke(raw);
        return drain(raw, storage).out.map((m) => m.type);
    };
    const pokes = [
        ['election timeout', (raw) => { for (let i = 0; i < 100; i++)
                raw.tick(); }],
        ['campaign()', (raw) => raw.campaign()],
        ['timeoutNow', (raw) => raw.step(msg('timeoutNow', 2, 1))],
    ];
    for (const [what, poke] of pokes) {
        assert.ok(asked(null, poke).some((t) => t === 'preVote' || t === 'vote'), `healthy: ${what} starts an election`);
        assert.deepEqual(asked(damage, poke), [], `damaged: ${what} sends nothing`);
    }
    const { raw, storage } = loneNode(damage);
    for (let i = 0; i < 100; i++)
        raw.tick();
    drain(raw, storage);
    assert.equal(raw.status().state, 'follower');
    assert.equal(raw.status().term, 1);
    assert.deepEqual(raw.status().damaged, damage);
});
test('a damaged member takes entries from a leader, and is repaired only once they cover the leader\'s term and commit', () => {
    const { raw, storage } = loneNode({ term: 2, index: 5 });
    const e = (index, term) => ({ term, index, type: 'normal', data: new Uint8Array([index]) });
    // A leader of term 1 (below the damaged term 2): entries accepted, no repair.
    raw.step(msg('app', 2, 1, { index: 3, logTerm: 1, entries: [e(4, 1), e(5, 1), e(6, 1)], commit: 3 }));
    let r = drain(raw, storage);
    assert.deepEqual(r.out.map((m) => [m.type, m.index, m.reject]), [['appResp', 6, false]]);
    assert.equal(r.repaired, false, 'a leader of a term below the damage does not repair');
    // The leader of term 3 confirms our log up to its commit index 5, all of it older than its term:
    // entries committed in earlier terms may still follow (its own first entry comes after them).
    raw.step(msg('app', 3, 3, { index: 5, logTerm: 1, entries: [], commit: 5 }));
    r = drain(raw, storage);
    assert.equal(r.repaired, false, 'no entry of the leader\'s term yet');
    // The leader appends its first entry but says it has committed up to 9: not yet.
    raw.step(msg('app', 3, 3, { index: 6, logTerm: 1, entries: [e(7, 3)], commit: 9 }));
    r = drain(raw, storage);
    assert.equal(r.repaired, false, 'short of the leader\'s commit index');
    assert.notEqual(raw.status().damaged, null);
    // Then the rest: the log now holds the leader's commit and an entry of its term.
    raw.step(msg('app', 3, 3, { index: 7, logTerm: 3, entries: [e(8, 3), e(9, 3)], commit: 9 }));
    r = drain(raw, storage);
    assert.equal(r.repaired, true);
    assert.equal(raw.status().damaged, null);
    assert.equal(raw.status().vote, 3, 'stands as having voted for the leader of its term');
    assert.equal(storage.hardState().vote, 3, 'and that is persisted with the repair');
    // Healthy again: it grants a vote in a later term (a transfer's vote, which the leader lease lets through).
    raw.step(msg('vote', 2, 4, { index: 9, logTerm: 3, context: campaignTransfer }));
    assert.equal(drain(raw, storage).out.find((m) => m.type === 'voteResp')?.reject, false);
});
test('a wiped member that lost an entry committed with its help cannot elect a leader without it, and is repaired by one that has it', () => {
    const h = new Harness([1, 2, 3], { preVote: true, checkQuorum: true });
    h.elect(1);
    // Entry "x" is committed by nodes 1 and 3 while node 2 is cut off.
    h.isolate(2);
    const x = h.propose(1, 'x');
    h.stabilize();
    assert.equal(h.status(1).commit, x.index, 'committed by 1 and 3');
    // Node 3 loses its disk and comes back damaged; node 1 goes down; node 2 is reachable again.
    h.crash(3);
    h.wipe(3);
    h.start(3, { damaged: { term: 0, index: 0 } });
    h.crash(1);
    h.heal();
    h.tickAll(100);
    assert.equal(h.leader(), undefined, 'node 2 (without "x") is not elected: node 3 refuses its votes');
    assert.notEqual(h.status(3).damaged, null);
    // Node 1 returns: elected with node 2's vote, it repairs node 3.
    h.start(1);
    h.tickAll(100);
    assert.equal(h.leader(), 1);
    assert.equal(h.status(3).damaged, null, 'repaired by the leader');
    assert.deepEqual(h.appliedTexts(3), ['x']);
    // Node 3 votes again: without node 1, nodes 2 and 3 elect a leader, and "x" is kept.
    h.crash(1);
    h.tickAll(100);
    const l = h.leader();
    assert.ok(l === 2 || l === 3, `a leader among 2 and 3, got ${l}`);
    h.propose(l, 'y');
    h.stabilize();
    assert.deepEqual(h.appliedTexts(2), ['x', 'y']);
    assert.deepEqual(h.appliedTexts(3), ['x', 'y']);
});
test('a leadership transfer to a damaged member does not make it campaign', () => {
    const { raw, storage } = loneNode(damage);
    raw.step(msg('heartbeat', 2, 1, { commit: 3 }));
    drain(raw, storage);
    raw.step(msg('timeoutNow', 2, 1));
    assert.deepEqual(drain(raw, storage).out.filter((m) => m.type === 'vote' || m.context === campaignTransfer), []);
    assert.equal(raw.status().state, 'follower');
    assert.equal(raw.status().lead, 2);
});
test('the Ready that repairs is to be written durably even when it changes nothing else', () => {
    const storage = new MemoryStorage();
    const { entries } = bootstrapState([1, 2, 3]);
    storage.append([...entries, { term: 3, index: 4, type: 'normal', data: new Uint8Array() }]);
    // Before the damage it had voted for node 3 in term 3 (the vote survived; the log may not have).
    storage.setHardState({ term: 3, vote: 3, commit: 3 });
    const raw = new RawNode({ id: 1, storage, electionTicks: 10, heartbeatTicks: 1, random: new Prng(3), damaged: { term: 3, index: 4 } });
    drain(raw, storage);
    // Node 3, leader of term 3, confirms the log as it is: no new entry, no new term or vote.
    raw.step(msg('app', 3, 3, { index: 4, logTerm: 3, commit: 4 }));
    const rd = raw.ready();
    assert.equal(rd.repaired, true);
    assert.deepEqual(rd.entries, []);
    assert.equal(rd.hardState?.vote ?? 3, 3);
    assert.equal(rd.mustSync, true);
    raw.advance(rd);
});
test('a leader that still counts a wiped member\'s old match forgets it on the member\'s damaged rejection and repairs it', () => {
    for (const compacted of [false, true]) {
        const h = new Harness([1, 2, 3], { preVote: true, checkQuorum: true });
        h.elect(1);
        for (let i = 0; i < 5; i++)
            h.propose(1, `w${i}`);
        h.stabilize();
        if (compacted)
            h.compact(1);
        // Node 3 loses its disk and comes back at once: the leader's progress says it holds everything.
        h.crash(3);
        h.wipe(3);
        h.start(3, { damaged: { term: 0, index: 0 } });
        h.tickAll(30);
        assert.equal(h.leader(), 1, 'the leader stayed');
        assert.equal(h.status(3).damaged, null, `repaired (${compacted ? 'through a snapshot' : 'through entries'})`);
        assert.deepEqual(h.appliedTexts(3), ['w0', 'w1', 'w2', 'w3', 'w4']);
    }
});
test('a member the leader counts as holding entries it lacks becomes damaged instead of stopping', () => {
    const { raw, storage } = loneNode(null);
    // The leader of term 2 says index 9 is committed and held here (its match for us): we hold 3.
    raw.step(msg('heartbeat', 2, 2, { commit: 9 }));
    const rd = raw.ready();
    assert.deepEqual(rd.damaged, { term: 2, index: 9 }, 'reported for the host to record');
    assert.equal(rd.mustSync, true);
    assert.deepEqual(rd.messages.map((m) => [m.type, m.reject, m.rejectHint, m.context]), [['appResp', true, 3, 'damaged'], ['heartbeatResp', false, 0, '']], 'the leader learns its match is void');
    raw.advance(rd);
    assert.equal(raw.status().commit, 3, 'commits no further than it holds');
    assert.notEqual(raw.status().damaged, null);
    // Damaged: it refuses votes, and its rejections tell the leader its match is void.
    raw.step(msg('vote', 3, 3, { index: 20, logTerm: 2, context: campaignTransfer }));
    raw.step(msg('app', 2, 3, { index: 9, logTerm: 2, commit: 9 }));
    const out = drain(raw, storage).out;
    assert.equal(out.find((m) => m.type === 'voteResp')?.reject, true);
    const rej = out.find((m) => m.type === 'appResp');
    assert.equal(rej?.reject, true);
    assert.equal(rej?.context, 'damaged');
});
//# sourceMappingURL=damaged.test.js.map