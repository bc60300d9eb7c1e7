/**
 * Goal: the simulator's generator is deterministic per seed, differs across seeds and stays in
 * range, since every replay depends on it. Method: fixed-seed comparisons and fast-check ranges.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MinHeap } from './heap.js';
import { Prng } from './prng.js';
test('the same seed yields the same sequence and different seeds different ones', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const c = new Prng(43);
    const sa = Array.from({ length: 50 }, () => a.nextU32());
    assert.deepEqual(sa, Array.from({ length: 50 }, () => b.nextU32()));
    assert.notDeepEqual(sa, Array.from({ length: 50 }, () => c.nextU32()));
});
test('int(n) stays in [0, n) and next() in [0, 1)', () => {
    fc.assert(fc.property(fc.nat(), fc.integer({ min: 1, max: 1_000_000 }), (seed, n) => {
        const p = new Prng(seed);
        for (let i = 0; i < 20; i++) {
            const x = p.int(n);
            assert.ok(Number.isInteger(x) && x >= 0 && x < n);
            const f = p.next();
            assert.ok(f >= 0 && f < 1);
        }
    }));
});
test('int(n) is roughly uniform', () => {
    const p = new Prng(7);
    const counts = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++)
        counts[p.int(10)]++;
    for (const c of counts)
        assert.ok(c > 9_500 && c < 10_500, `bucket ${c}`);
});
test('the event heap pops in (time, sequence) order', () => {
    fc.assert(fc.property(fc.array(fc.nat({ max: 20 })), (times) => {
        const h = new MinHeap((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
        times.forEach((at, seq) => h.push({ at, seq }));
        const out = [];
        for (let x = h.pop(); x !== undefined; x = h.pop())
            out.push(x);
        const want = times.map((at, seq) => ({ at, seq })).sort((a, b) => a.at - b.at || a.seq - b.seq);
        assert.deepEqual(out, want);
    }));
});
//# sourceMappingURL=prng.test.js.map