// Goal: the leadership balancer returns transfers that bring every live node's count of led partitions
// within one of the others (when it can: every live node a voter of every group), prefers preferred
// leaders, never hands leadership to a dead node or a learner, and asks for nothing more once its
// transfers are done.
// Method: examples (failover and recovery of a three-node cluster), and fast-check properties over
// random placements, observed leaders and live sets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { balanceLeadership } from './leadership-balancer.js';
import { placePartitions } from './placement.js';
function placed(members, rf, count) {
    return placePartitions({ members, replicationFactor: rf, current: [], count }).map((replicas, i) => ({ group: i + 1, replicas }));
}
function after(leaders, transfers) {
    const out = new Map(leaders);
    for (const t of transfers) {
        assert.equal(out.get(t.group), t.from, `transfer ${JSON.stringify(t)} does not start at the observed leader`);
        out.set(t.group, t.to);
    }
    return out;
}
function ledCounts(leaders, live) {
    return live.map((n) => [...leaders.values()].filter((l) => l === n).length);
}
const atPreferred = (ps) => new Map(ps.map((p) => [p.group, p.replicas[0]]));
test('leaders at their preferred nodes: nothing to do', () => {
    const ps = placed([1, 2, 3], 3, 9);
    assert.deepEqual(balanceLeadership(ps, atPreferred(ps), [1, 2, 3]), []);
});
test('after a failover piled leadership onto one node, it goes back to the preferred leaders', () => {
    const ps = placed([1, 2, 3], 3, 6);
    const allOnOne = new Map(ps.map((p) => [p.group, 1]));
    const transfers = balanceLeadership(ps, allOnOne, [1, 2, 3]);
    assert.ok(transfers.every((t) => t.to === ps.find((p) => p.group === t.group).replicas[0]), JSON.stringify(transfers));
    assert.deepEqual(after(allOnOne, transfers), atPreferred(ps));
});
test('a dead node\'s groups are spread over the live voters, never to the dead node or a learner', () => {
    const ps = placed([1, 2, 3], 3, 6).map((p) => ({ ...p, learners: [4] }));
    // Node 3 died: its groups elected node 1 (say), which now leads four.
    const observed = new Map(ps.map((p) => [p.group, p.replicas[0] === 3 ? 1 : p.replicas[0]]));
    const transfers = balanceLeadership(ps, observed, [1, 2, 4]);
    for (const t of transfers)
        assert.ok(t.to === 1 || t.to === 2, JSON.stringify(t));
    assert.deepEqual(ledCounts(after(observed, transfers), [1, 2]), [3, 3]);
    assert.deepEqual(balanceLeadership(ps, after(observed, transfers), [1, 2, 4]), [], 'settled');
});
test('after a failover the leaders go to a target fixed by placement and live nodes; stale leaders get no transfer', () => {
    const ps = placed([1, 2, 3], 3, 6);
    // Groups 3 and 6 prefer node 3 (replicas [3, 1, 2]); the target gives 3 to node 1 and 6 to node 2
    // (fewest led, then replica order), whichever won the elections.
    assert.deepEqual([ps[2].replicas, ps[5].replicas], [[3, 1, 2], [3, 1, 2]]);
    const elected = new Map([[1, 1], [2, 2], [3, 2], [4, 1], [5, 2], [6, 1]]);
    assert.deepEqual(balanceLeadership(ps, elected, [1, 2]), [{ group: 3, from: 2, to: 1 }, { group: 6, from: 1, to: 2 }]);
    const settled = new Map([[1, 1], [2, 2], [3, 1], [4, 1], [5, 2], [6, 2]]);
    assert.deepEqual(balanceLeadership(ps, settled, [1, 2]), []);
    const stale = new Map([[1, 3], [2, 9]]);
    assert.deepEqual(balanceLeadership(ps, stale, [1, 2]), [], 'a dead or foreign leader cannot hand over');
});
const scenario = fc
    .record({
    nodes: fc.integer({ min: 1, max: 6 }),
    partitions: fc.integer({ min: 1, max: 40 }),
    seed: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 40, maxLength: 40 }),
    liveMask: fc.integer({ min: 1, max: 63 }),
})
    .map(({ nodes, partitions, seed, liveMask }) => {
    const members = Array.from({ length: nodes }, (_, i) => i + 1);
    const live = members.filter((n) => (liveMask >> (n - 1)) & 1);
    return { members, partitions, seed, live: live.length > 0 ? live : [1] };
});
test('preferred leaders piled on one node (replicas moved onto new nodes): spread by transfers over the voters', () => {
    const ps = Array.from({ length: 8 }, (_, i) => ({ group: i + 1, replicas: i < 4 ? [1, 2, 3, 4] : [1, 2] }));
    const transfers = balanceLeadership(ps, atPreferred(ps), [1, 2, 3, 4]);
    assert.deepEqual(ledCounts(after(atPreferred(ps), transfers), [1, 2, 3, 4]), [2, 2, 2, 2]);
    assert.ok(transfers.every((t) => t.group <= 4 ? t.to >= 2 : t.to === 2), JSON.stringify(transfers));
    // Node 2 dead: groups 5-8 can only be led by node 1, the rest spread over 3 and 4.
    const down = balanceLeadership(ps, atPreferred(ps), [1, 3, 4]);
    assert.deepEqual(ledCounts(after(atPreferred(ps), down), [1, 3, 4]), [4, 2, 2]);
});
test('property (every node a voter of every group, any preferred leaders): leaders end within one of even over the live nodes, and settle', () => {
    fc.assert(fc.property(scenario, ({ members, partitions, seed, live }) => {
        // Replica order (so the preferred leader) rotated at random: preferences may be far from even.
        const ps = placed(members, members.length, partitions).map((p, i) => {
            const k = seed[(i + 7) % seed.length] % p.replicas.length;
            return { ...p, replicas: [...p.replicas.slice(k), ...p.replicas.slice(0, k)] };
        });
        // Observed: any live voter leads (groups always have one: every voter is in every group).
        const observed = new Map(ps.map((p, i) => [p.group, live[seed[i] % live.length]]));
        const transfers = balanceLeadership(ps, observed, live);
        for (const t of transfers)
            assert.ok(live.includes(t.to), `transfer to dead node ${t.to}`);
        const final = after(observed, transfers);
        const counts = ledCounts(final, live);
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `counts ${JSON.stringify(counts)} over live ${JSON.stringify(live)}`);
        assert.deepEqual(balanceLeadership(ps, final, live), [], 'a second round has nothing to do');
    }), { numRuns: 400 });
});
test('property: with even preferred leaders and every node live, every group ends at its preferred leader', () => {
    fc.assert(fc.property(scenario, fc.integer({ min: 1, max: 6 }), ({ members, partitions, seed }, rf) => {
        const ps = placed(members, rf, partitions);
        const observed = new Map(ps.map((p, i) => [p.group, p.replicas[seed[i] % p.replicas.length]]));
        assert.deepEqual(after(observed, balanceLeadership(ps, observed, members)), atPreferred(ps));
    }));
});
test('property (any factor, learners, unknown leaders): transfers go to live voters only, start at the observed leader, and settle', () => {
    fc.assert(fc.property(scenario, fc.integer({ min: 1, max: 3 }), ({ members, partitions, seed, live }, rf) => {
        const ps = placed(members, rf, partitions).map((p, i) => (seed[i] % 3 === 0 ? { ...p, learners: members.filter((n) => !p.replicas.includes(n)).slice(0, 1) } : p));
        const observed = new Map();
        for (const [i, p] of ps.entries()) {
            const voters = p.replicas.filter((n) => live.includes(n));
            if (voters.length > 0 && seed[i] % 5 !== 0)
                observed.set(p.group, voters[seed[i] % voters.length]);
        }
        const transfers = balanceLeadership(ps, observed, live);
        for (const t of transfers) {
            const p = ps.find((x) => x.group === t.group);
            assert.ok(live.includes(t.to) && p.replicas.includes(t.to), `${JSON.stringify(t)}: not a live voter of ${JSON.stringify(p)}`);
            assert.notEqual(t.from, t.to);
        }
        const final = after(observed, transfers);
        assert.deepEqual(balanceLeadership(ps, final, live), []);
        // With every node live, the (even) preferred leaders are the targets.
        if (live.length === members.length)
            for (const t of transfers)
                assert.equal(t.to, ps.find((p) => p.group === t.group).replicas[0]);
    }), { numRuns: 400 });
});
/** Every way to give each group (that has a live voter) a live voter as leader: the best max and min. */
function bruteForce(ps, live) {
    const choices = ps.map((p) => p.replicas.filter((n) => live.includes(n))).filter((c) => c.length > 0);
    let bestMax = Infinity;
    let bestMin = -Infinity;
    const counts = new Map(live.map((n) => [n, 0]));
    const walk = (i) => {
        if (i === choices.length) {
            bestMax = Math.min(bestMax, Math.max(...counts.values()));
            bestMin = Math.max(bestMin, Math.min(...counts.values()));
            return;
        }
        for (const n of choices[i]) {
            counts.set(n, counts.get(n) + 1);
            walk(i + 1);
            counts.set(n, counts.get(n) - 1);
        }
    };
    walk(0);
    return { max: bestMax, min: bestMin };
}
test('property (any replica sets): the balanced leaders are optimal: the lowest maximum and the highest minimum any assignment reaches', () => {
    const group = fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 });
    fc.assert(fc.property(fc.array(group, { minLength: 1, maxLength: 7 }), fc.integer({ min: 1, max: 31 }), fc.array(fc.nat(), { minLength: 7, maxLength: 7 }), (sets, liveMask, seed) => {
        const live = [1, 2, 3, 4, 5].filter((n) => (liveMask >> (n - 1)) & 1);
        const ps = sets.map((replicas, i) => ({ group: i + 1, replicas }));
        const observed = new Map();
        for (const [i, p] of ps.entries()) {
            const voters = p.replicas.filter((n) => live.includes(n));
            if (voters.length > 0)
                observed.set(p.group, voters[seed[i] % voters.length]);
        }
        const final = after(observed, balanceLeadership(ps, observed, live));
        const counts = ledCounts(final, live);
        const best = bruteForce(ps, live);
        assert.equal(Math.max(...counts), best.max, `max of ${JSON.stringify(counts)} for ${JSON.stringify(sets)} live ${JSON.stringify(live)}`);
        assert.equal(Math.min(...counts), best.min, `min of ${JSON.stringify(counts)} for ${JSON.stringify(sets)} live ${JSON.stringify(live)}`);
        assert.deepEqual(balanceLeadership(ps, final, live), []);
    }), { numRuns: 500 });
});
//# sourceMappingURL=leadership-balancer.test.js.map