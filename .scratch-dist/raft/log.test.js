/**
 * Goal: the log view (storage + unstable) answers like one contiguous log, and the follower-side
 * append rules of the paper hold. Method: example tests for each rule, and a property test of
 * findConflictByTerm against a linear scan.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { RaftLog } from './log.js';
import { CompactedError, MemoryStorage, UnavailableError } from './storage.js';
function ents(from, terms) {
    return terms.map((term, i) => ({ index: from + i, term, type: 'normal', data: new Uint8Array([i & 0xff]) }));
}
function logWith(stored, unstable = []) {
    const s = new MemoryStorage();
    s.append(ents(1, stored));
    const log = new RaftLog(s);
    if (unstable.length > 0)
        log.append(ents(stored.length + 1, unstable));
    return log;
}
test('an append whose previous entry matches is accepted and the commit index follows the leader', () => {
    const log = logWith([1, 1, 2]);
    assert.equal(log.maybeAppend(3, 2, 4, ents(4, [3])), 4);
    assert.equal(log.committed, 4);
    assert.equal(log.lastIndex(), 4);
});
test('an append whose previous entry does not match is refused', () => {
    const log = logWith([1, 1, 2]);
    assert.equal(log.maybeAppend(3, 3, 3, ents(4, [3])), undefined);
    assert.equal(log.maybeAppend(5, 2, 3, []), undefined);
    assert.equal(log.lastIndex(), 3);
});
test('a conflicting entry and all that follow it are replaced', () => {
    const log = logWith([1, 1, 2, 2, 2]);
    assert.equal(log.maybeAppend(2, 1, 0, ents(3, [3, 3])), 4);
    assert.equal(log.lastIndex(), 4);
    assert.equal(log.term(3), 3);
    assert.equal(log.term(5), undefined);
});
test('entries already present are not truncated by a stale, shorter append', () => {
    const log = logWith([1, 1, 2, 2, 2]);
    assert.equal(log.maybeAppend(1, 1, 0, ents(2, [1])), 2);
    assert.equal(log.lastIndex(), 5, 'a delayed append must not cut the log');
});
test('the commit index never exceeds the last new entry of an append', () => {
    const log = logWith([1, 1, 1, 1]);
    log.maybeAppend(1, 1, 10, ents(2, [1]));
    assert.equal(log.committed, 2);
});
test('a candidate log is up to date if its last term is higher, or equal with a length at least ours', () => {
    const log = logWith([1, 2, 2]);
    assert.equal(log.isUpToDate(1, 3), true);
    assert.equal(log.isUpToDate(3, 2), true);
    assert.equal(log.isUpToDate(2, 2), false);
    assert.equal(log.isUpToDate(9, 1), false);
});
test('the commit index only advances for entries of the given term', () => {
    const log = logWith([1, 2, 3]);
    assert.equal(log.maybeCommit(2, 3), false);
    assert.equal(log.maybeCommit(3, 3), true);
    assert.equal(log.committed, 3);
});
test('slices span storage and unstable entries and respect the byte cap (at least one entry)', () => {
    const log = logWith([1, 1, 1], [2, 2]);
    assert.deepEqual(log.slice(2, 6, 1_000).map((e) => e.index), [2, 3, 4, 5]);
    assert.deepEqual(log.slice(2, 6, 0).map((e) => e.index), [2]);
    assert.deepEqual(log.slice(3, 6, 2).map((e) => e.index), [3, 4]);
});
test('entries covered by a snapshot are reported compacted', () => {
    const s = new MemoryStorage();
    s.append(ents(1, [1, 1, 1, 2, 2]));
    s.createSnapshot(3, { voters: [1], learners: [] }, new Uint8Array());
    s.compact(3);
    assert.throws(() => s.entries(2, 4, 100), CompactedError);
    assert.throws(() => s.entries(4, 7, 100), UnavailableError);
    assert.equal(s.term(3), 1);
    const log = new RaftLog(s);
    assert.equal(log.firstIndex(), 4);
    assert.equal(log.term(3), 1);
    assert.equal(log.term(2), undefined);
    assert.throws(() => log.slice(2, 5, 100), CompactedError);
});
test('persisting entries that a new leader replaced meanwhile does not mark the replacements stable', () => {
    const log = logWith([1], [1, 1]); // unstable 2..3 at term 1 (being written)
    log.maybeAppend(1, 1, 0, ents(2, [2])); // a new leader overwrites 2 while the write is in flight
    log.stableTo(3, 1);
    assert.equal(log.unstable.entries.length, 1, 'the replacement entry must still be written');
    assert.equal(log.unstable.offset, 2);
});
test('findConflictByTerm returns the last index whose term is at most the given term', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 20 }).map((ds) => {
        let t = 0;
        return ds.map((d) => (t += d - 1) + 1); // non-decreasing terms starting at >= 1
    }), fc.nat({ max: 25 }), fc.nat({ max: 70 }), (terms, index, term) => {
        const log = logWith(terms);
        const i = Math.min(index, terms.length);
        let want = i;
        while (want > 0 && terms[want - 1] > term)
            want--;
        assert.equal(log.findConflictByTerm(i, term), want);
    }), { numRuns: 500 });
});
//# sourceMappingURL=log.test.js.map