/**
 * Goal: membership changes encode losslessly, apply deterministically, and the founding state is
 * what a joining node replays. Method: fast-check round trips and example-based rules.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { applyConfChangeToState, bootstrapState, decodeConfChange, encodeConfChange } from './confchange.js';
const ccArb = fc.record({
    type: fc.constantFrom('addVoter', 'addLearner', 'removeNode'),
    nodeId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
});
test('a conf change survives encoding and decoding', () => {
    fc.assert(fc.property(ccArb, (cc) => assert.deepEqual(decodeConfChange(encodeConfChange(cc)), { type: cc.type, nodeId: cc.nodeId })));
});
test('a corrupt conf change payload is an invariant violation, not a silent change', () => {
    const bytes = encodeConfChange({ type: 'addVoter', nodeId: 3 });
    bytes[1] = 99;
    assert.throws(() => decodeConfChange(bytes), /type code/);
    assert.throws(() => decodeConfChange(new Uint8Array(3)), /bytes/);
});
test('adding a learner that is a voter demotes it; adding a voter that is a learner promotes it', () => {
    const c = { voters: [1, 2, 3], learners: [4] };
    assert.deepEqual(applyConfChangeToState(c, { type: 'addVoter', nodeId: 4 }), { voters: [1, 2, 3, 4], learners: [] });
    assert.deepEqual(applyConfChangeToState(c, { type: 'addLearner', nodeId: 2 }), { voters: [1, 3], learners: [2, 4] });
    assert.deepEqual(applyConfChangeToState(c, { type: 'removeNode', nodeId: 4 }), { voters: [1, 2, 3], learners: [] });
});
test('every change keeps voters and learners sorted and disjoint, and changes at most one member', () => {
    fc.assert(fc.property(fc.array(ccArb.map((cc) => ({ ...cc, nodeId: (cc.nodeId % 7) + 1 })), { maxLength: 30 }), (ccs) => {
        let c = { voters: [], learners: [] };
        for (const cc of ccs) {
            const next = applyConfChangeToState(c, cc);
            const members = (s) => new Set([...s.voters, ...s.learners]);
            assert.deepEqual([...next.voters], [...next.voters].sort((a, b) => a - b));
            assert.ok(next.voters.every((v) => !next.learners.includes(v)));
            const diffVoters = next.voters.filter((v) => !c.voters.includes(v)).length + c.voters.filter((v) => !next.voters.includes(v)).length;
            assert.ok(diffVoters <= 1, 'single-server change');
            assert.ok(Math.abs(members(next).size - members(c).size) <= 1);
            c = next;
        }
    }));
});
test('replaying the founding entries yields the founding configuration', () => {
    const { entries, hardState } = bootstrapState([3, 1, 2]);
    let c = { voters: [], learners: [] };
    for (const e of entries)
        c = applyConfChangeToState(c, decodeConfChange(e.data));
    assert.deepEqual(c, { voters: [1, 2, 3], learners: [] });
    assert.deepEqual(hardState, { term: 1, vote: 0, commit: 3 });
    assert.throws(() => bootstrapState([1, 1]), /twice/);
});
//# sourceMappingURL=confchange.test.js.map