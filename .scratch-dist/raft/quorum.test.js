/**
 * Goal: the commit index and vote arithmetic are exactly majority arithmetic. Method: fast-check
 * properties against naive models (etcd quorum/quick_test.go): the committed index is the largest
 * index acknowledged by at least a majority, found by trying every candidate index.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { committedIndex, majority, voteResult } from './quorum.js';
function naiveCommitted(acks) {
    // The largest value v such that at least a majority of voters acknowledged >= v.
    let best = 0;
    for (const v of acks) {
        const n = acks.filter((a) => a >= v).length;
        if (n >= Math.floor(acks.length / 2) + 1 && v > best)
            best = v;
    }
    return best;
}
test('the committed index equals the largest index a majority acknowledged (against a naive model)', () => {
    fc.assert(fc.property(fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 9 }), (acks) => {
        const voters = acks.map((_, i) => i + 1);
        assert.equal(committedIndex(voters, (id) => acks[id - 1]), naiveCommitted(acks));
    }), { numRuns: 2000 });
});
test('a voter without progress counts as having acknowledged nothing', () => {
    assert.equal(committedIndex([1, 2, 3], (id) => (id === 1 ? 10 : undefined)), 0);
    assert.equal(committedIndex([1, 2, 3], (id) => (id === 3 ? undefined : 7)), 7);
    assert.equal(committedIndex([], () => 5), 0);
});
test('an election is won by a majority of grants and lost once a majority is out of reach', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom(true, false, undefined), { minLength: 1, maxLength: 9 }), (vs) => {
        const voters = vs.map((_, i) => i + 1);
        const votes = new Map();
        vs.forEach((v, i) => {
            if (v !== undefined)
                votes.set(i + 1, v);
        });
        const granted = vs.filter((v) => v === true).length;
        const rejected = vs.filter((v) => v === false).length;
        const q = majority(vs.length);
        const want = granted >= q ? 'won' : vs.length - rejected >= q ? 'pending' : 'lost';
        assert.equal(voteResult(voters, votes), want);
    }), { numRuns: 2000 });
});
//# sourceMappingURL=quorum.test.js.map