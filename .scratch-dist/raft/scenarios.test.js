/**
 * Goal: the classic hard cases of Raft, each driven step by step into the exact situation the paper
 * describes, with the safety-relevant outcome asserted and the whole run compared to a golden trace.
 * Method: the synchronous harness (src/sim/harness.ts) with cut links and message filters; after each
 * step the cluster is described (role, term, commit, term of every log entry per node) and the lines
 * are compared with src/raft/testdata/<scenario>.txt. Re-record with UPDATE_GOLDEN=1 (run from the
 * repository root) and review the diff.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Harness } from '../sim/harness.js';
class Script {
    lines = [];
    h;
    constructor(h) {
        this.h = h;
    }
    step(what) {
        this.lines.push(`> ${what}`);
        this.lines.push(...this.h.describe());
    }
    note(what) {
        this.lines.push(`# ${what}`);
    }
}
/** Campaigns until `id` leads: a first pre-election may only teach a restarted node the current term. */
function electUntilLeader(h, id) {
    for (let i = 0; i < 3 && h.status(id).state !== 'leader'; i++)
        h.elect(id);
    return h.status(id).state;
}
function golden(name, lines) {
    const file = join(process.cwd(), 'src', 'raft', 'testdata', `${name}.txt`);
    const text = lines.join('\n') + '\n';
    if (process.env['UPDATE_GOLDEN'] === '1') {
        writeFileSync(file, text);
        return;
    }
    assert.ok(existsSync(file), `golden file ${file} is missing: run with UPDATE_GOLDEN=1 from the repository root`);
    assert.equal(text, readFileSync(file, 'utf8'), `${name} differs from its golden trace`);
}
test('figure 8: a leader never commits an entry of an earlier term by counting its replicas', () => {
    // Founding entries occupy indexes 1..5 (term 1); the paper's index 2 is our index 7 here.
    const h = new Harness([1, 2, 3, 4, 5], { appendEntriesMax: 1, checkQuorum: false });
    const s = new Script(h);
    h.elect(1);
    s.step('(a) S1 leads term 2 and its no-op (6) commits everywhere');
    for (const id of [3, 4, 5])
        h.cut(1, id);
    h.propose(1, 'from term 2');
    h.stabilize();
    s.step('(a) S1 replicates entry 7 of term 2 to S2 only');
    h.crash(1);
    h.heal();
    h.filter = (m) => !(m.from === 5 && m.type === 'app');
    assert.equal(h.elect(5).state, 'leader');
    h.propose(5, 'from term 3');
    h.stabilize();
    s.step('(b) S1 crashes; S5 leads term 3 with votes of S3, S4, S5, and appends entries that reach nobody');
    assert.equal(h.status(5).term, 3);
    h.crash(5);
    h.heal();
    h.start(1);
    // S1 replicates entry 7 (term 2) to S3; its term-4 no-op (index 8) may reach S2 but not S3: an
    // append carrying it to S3 is dropped once S3 holds entry 7 (before that S3 rejects it anyway,
    // which is how the leader learns to send entry 7 alone). S4 hears nothing.
    h.filter = (m) => m.to !== 4 && !(m.to === 3 && m.type === 'app' && m.entries.some((e) => e.index >= 8) && h.raw(3).termAt(7) === 2);
    assert.equal(electUntilLeader(h, 1), 'leader');
    h.tickAll(3);
    s.step('(c) S5 crashes; S1 leads term 4 and gets entry 7 (term 2) onto a majority (S1, S2, S3), its no-op onto S2 only');
    assert.equal(h.status(1).term, 4);
    for (const id of [1, 2, 3])
        assert.equal(h.raw(id).termAt(7), 2);
    assert.equal(h.status(1).commit, 6, 'entry 7 is on a majority, but of an earlier term: not committed');
    h.crash(1);
    h.heal();
    h.start(5);
    assert.equal(electUntilLeader(h, 5), 'leader');
    h.stabilize();
    s.step('(d) S1 crashes; S5 wins term 5 (its last term 3 beats term 2) and overwrites entry 7 everywhere');
    for (const id of [2, 3, 4, 5])
        assert.equal(h.raw(id).termAt(7), 3);
    for (const id of [2, 3, 4, 5])
        assert.deepEqual(h.appliedTexts(id), ['from term 3']);
    h.start(1);
    h.tickAll(3);
    s.step('S1 returns and its entry 7 of term 2 is replaced too; every applied history agrees');
    for (const id of [1, 2, 3, 4, 5])
        assert.deepEqual(h.appliedTexts(id), ['from term 3']);
    golden('figure-8', s.lines);
});
test('figure 8 (e): once an entry of the current term is on a majority, earlier entries commit with it', () => {
    const h = new Harness([1, 2, 3, 4, 5], { appendEntriesMax: 1, checkQuorum: false });
    h.elect(1);
    for (const id of [3, 4, 5])
        h.cut(1, id);
    h.propose(1, 'from term 2');
    h.stabilize();
    h.crash(1);
    h.heal();
    h.filter = (m) => !(m.from === 5 && m.type === 'app');
    h.elect(5);
    h.propose(5, 'from term 3');
    h.stabilize();
    h.crash(5);
    h.heal();
    h.start(1);
    h.filter = (m) => m.to !== 4 && m.to !== 5;
    assert.equal(electUntilLeader(h, 1), 'leader');
    h.tickAll(3);
    assert.ok(h.status(1).commit >= 8, 'the term-4 no-op on S1, S2, S3 commits entry 7 with it');
    h.crash(1);
    h.heal();
    h.start(5);
    h.raw(5).campaign();
    h.stabilize();
    h.tickAll(30);
    assert.notEqual(h.leader(), 5, 'S5 lacks a committed entry and can never win');
    for (const id of [2, 3, 4, 5]) {
        if (h.status(id).state === 'leader')
            assert.equal(h.raw(id).termAt(7), 2);
    }
});
test('a partitioned old leader with a stale term cannot commit, steps down when it hears the new term, and loses its uncommitted entries', () => {
    const h = new Harness([1, 2, 3, 4, 5], { checkQuorum: false, preVote: true });
    const s = new Script(h);
    h.elect(1);
    h.propose(1, 'before');
    h.stabilize();
    s.step('S1 leads term 2; "before" is committed everywhere');
    h.cut(1, 3);
    h.cut(1, 4);
    h.cut(1, 5);
    h.cut(2, 3);
    h.cut(2, 4);
    h.cut(2, 5);
    const stale = h.propose(1, 'stale write');
    h.stabilize();
    h.tick(1, 5);
    h.tick(2, 5);
    h.stabilize();
    s.step('S1 and S2 are cut off from S3-S5; S1 still believes it leads and appends "stale write"');
    assert.ok(h.status(1).commit < stale.index, 'two of five cannot commit');
    assert.equal(h.elect(3).state, 'leader');
    h.propose(3, 'majority write');
    h.stabilize();
    s.step('S3 leads term 3 with S4 and S5 and commits "majority write"');
    assert.equal(h.status(1).state, 'leader', 'the old leader has not heard the news');
    assert.equal(h.status(1).term, 2);
    h.heal();
    h.tickAll(3);
    s.step('the partition heals: S1 hears term 3, steps down, and its uncommitted entry is overwritten');
    assert.equal(h.leader(), 3);
    assert.equal(h.status(1).state, 'follower');
    assert.notEqual(h.raw(1).termAt(stale.index), stale.term, 'the stale entry is gone');
    for (const id of [1, 2, 3, 4, 5])
        assert.deepEqual(h.appliedTexts(id), ['before', 'majority write']);
    golden('stale-leader', s.lines);
});
test('a follower with a longer uncommitted log from an old term is truncated in a few round trips (fast backtracking)', () => {
    const h = new Harness([1, 2, 3], { checkQuorum: false, appendEntriesMax: 100 });
    const s = new Script(h);
    h.elect(3);
    h.stabilize();
    h.isolate(3);
    for (let i = 0; i < 40; i++)
        h.propose(3, `lost ${i}`);
    h.stabilize();
    s.note('S3 leads term 2, then appends 40 entries while cut off: they never commit');
    h.crash(3);
    h.elect(1);
    for (let i = 0; i < 60; i++)
        h.propose(1, `kept ${i}`);
    h.stabilize();
    // A new leader starts probing S3 from the end of its own (longer) log.
    assert.equal(electUntilLeader(h, 2), 'leader');
    s.step('S1 leads term 3 with S2 and commits 60 entries; S2 takes over in term 4; S3 holds 40 uncommitted entries of term 2');
    h.start(3);
    h.heal();
    h.recording = true;
    h.tickAll(2);
    const rejections = h.log.filter((l) => l.startsWith('3->2') && l.includes('REJECT'));
    s.note(`S3 rejected ${rejections.length} append(s) before matching: ${rejections.join('; ')}`);
    s.step('S3 rejoins; its 40 entries are replaced by the leader log');
    // One index per round trip would take 60 rejections; the term hint skips the whole divergent run.
    assert.ok(rejections.length >= 1 && rejections.length <= 2, `backtracking took ${rejections.length} rejections`);
    assert.equal(h.status(3).lastIndex, h.status(2).lastIndex);
    assert.deepEqual(h.appliedTexts(3), Array.from({ length: 60 }, (_, i) => `kept ${i}`));
    golden('longer-follower-log', s.lines);
});
test('a follower that lags behind the leader compacted log catches up through a snapshot and keeps replicating', () => {
    const h = new Harness([1, 2, 3], { checkQuorum: false });
    const s = new Script(h);
    h.elect(1);
    h.crash(3);
    for (let i = 0; i < 20; i++)
        h.propose(1, `e${i}`);
    h.stabilize();
    const snapIndex = h.compact(1, 2);
    h.compact(2, 0);
    s.step(`S3 is down while 20 entries commit; S1 snapshots at ${snapIndex} and compacts its log`);
    h.start(3);
    h.recording = true;
    h.tickAll(3);
    const snaps = h.log.filter((l) => l.startsWith('1->3 snap'));
    s.note(`S1 sent ${snaps.length} snapshot(s) to S3`);
    s.step('S3 restarts, is sent the snapshot, installs it and receives the rest of the log');
    assert.equal(snaps.length, 1);
    assert.deepEqual(h.appliedTexts(3), Array.from({ length: 20 }, (_, i) => `e${i}`));
    h.propose(1, 'after');
    h.stabilize();
    assert.equal(h.appliedTexts(3).at(-1), 'after');
    assert.equal(h.node(3).storage.snapshot().metadata.index, snapIndex);
    golden('snapshot-lagging-follower', s.lines);
});
test('a snapshot lost in transit is sent again', () => {
    const h = new Harness([1, 2, 3], { checkQuorum: false, snapshotRetryTicks: 5 });
    h.elect(1);
    h.crash(3);
    for (let i = 0; i < 10; i++)
        h.propose(1, `e${i}`);
    h.stabilize();
    h.compact(1);
    h.start(3);
    let dropped = 0;
    h.filter = (m) => {
        if (m.type === 'snap' && dropped === 0) {
            dropped++;
            return false;
        }
        return true;
    };
    h.tickAll(12);
    assert.equal(dropped, 1);
    assert.equal(h.appliedTexts(3).length, 10);
});
//# sourceMappingURL=scenarios.test.js.map