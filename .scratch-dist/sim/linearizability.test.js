/**
 * Goal: the linearizability checker accepts exactly the linearizable register histories, so a green
 * simulation means something. Method: hand-written histories with known verdicts (stale read, read
 * of a value never written, concurrent overlap, indeterminate writes), plus a property: any history
 * produced by a sequential register with random overlapping intervals around each atomic point is
 * accepted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkLinearizable } from './linearizability.js';
const w = (value, invoke, complete, key = 'k') => ({ client: 0, kind: 'write', key, value, invoke, complete });
const r = (value, invoke, complete, key = 'k') => ({ client: 1, kind: 'read', key, value, invoke, complete });
test('a read that returns a value overwritten before it began is not linearizable (stale read)', () => {
    assert.equal(checkLinearizable([w('a', 0, 1), w('b', 2, 3), r('a', 4, 5)]).ok, false);
});
test('a read of a value never written is not linearizable', () => {
    assert.equal(checkLinearizable([w('a', 0, 1), r('z', 2, 3)]).ok, false);
});
test('a read concurrent with a write may return the old or the new value', () => {
    assert.equal(checkLinearizable([w('a', 0, 1), w('b', 2, 6), r('a', 3, 4)]).ok, true);
    assert.equal(checkLinearizable([w('a', 0, 1), w('b', 2, 6), r('b', 3, 4)]).ok, true);
});
test('two reads cannot see the new value and then the old one', () => {
    assert.equal(checkLinearizable([w('a', 0, 1), w('b', 2, 9), r('b', 3, 4), r('a', 5, 6)]).ok, false);
});
test('an indeterminate write may take effect late, or never', () => {
    assert.equal(checkLinearizable([w('a', 0, Infinity), r(undefined, 1, 2), r('a', 3, 4)]).ok, true);
    assert.equal(checkLinearizable([w('a', 0, Infinity), r(undefined, 1, 2)]).ok, true);
    assert.equal(checkLinearizable([w('a', 0, Infinity), r('a', 1, 2), r(undefined, 3, 4)]).ok, false);
});
test('keys are independent registers', () => {
    assert.equal(checkLinearizable([w('a', 0, 1, 'x'), r(undefined, 2, 3, 'y'), r('a', 4, 5, 'x')]).ok, true);
    const bad = checkLinearizable([w('a', 0, 1, 'x'), r('a', 2, 3, 'y')]);
    assert.equal(bad.ok, false);
    assert.equal(bad.badKey, 'y');
});
test('every history of an atomic register observed through overlapping intervals is accepted', () => {
    fc.assert(fc.property(fc.array(fc.record({ write: fc.boolean(), before: fc.nat({ max: 6 }), after: fc.nat({ max: 6 }) }), { maxLength: 14 }), (ops) => {
        // Operation i takes effect atomically at time 10 * i + 5; its interval surrounds that point.
        let value;
        const history = [];
        let seq = 0;
        ops.forEach((op, i) => {
            const at = 10 * i + 5;
            const invoke = at - 1 - op.before * 3 + (seq++ % 2) * 0.5;
            const complete = at + 1 + op.after * 3 + (seq++ % 2) * 0.25;
            if (op.write) {
                value = `v${i}`;
                history.push(w(value, invoke, complete));
            }
            else {
                history.push(r(value, invoke, complete));
            }
        });
        assert.equal(checkLinearizable(history).ok, true);
    }), { numRuns: 300 });
});
//# sourceMappingURL=linearizability.test.js.map