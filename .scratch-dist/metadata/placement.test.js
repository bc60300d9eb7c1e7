// Goal: new partitions are spread evenly: replica counts per node differ by at most one, and so do
// preferred-leader counts; replicas are distinct members; the factor is honoured and clamped; the
// answer is a function of its input alone.
// Method: an exhaustive walk for up to 12 members and every factor (the state, normalized to its
// minimum, repeats within a few steps, so every later state was checked), fast-check properties over
// random clusters and random event types, and examples for uneven clusters and legacy load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { effectiveReplicationFactor, placePartitions, proposePlacement, replicationFactorDefault } from './placement.js';
import { legacyGroupId } from './placement-types.js';
function counts(members, placements) {
    const replicas = new Map(members.map((m) => [m, 0]));
    const leaders = new Map(members.map((m) => [m, 0]));
    for (const p of placements) {
        for (const n of p.replicas)
            replicas.set(n, (replicas.get(n) ?? 0) + 1);
        leaders.set(p.replicas[0], (leaders.get(p.replicas[0]) ?? 0) + 1);
    }
    return { replicas, leaders };
}
const spread = (m) => Math.max(...m.values()) - Math.min(...m.values());
function assertEven(members, placements, context) {
    const c = counts(members, placements);
    assert.ok(spread(c.replicas) <= 1, `${context}: replica counts ${JSON.stringify([...c.replicas])}`);
    assert.ok(spread(c.leaders) <= 1, `${context}: preferred-leader counts ${JSON.stringify([...c.leaders])}`);
}
function assertWellFormed(replicas, members, rf, context) {
    for (const list of replicas) {
        assert.equal(list.length, rf, `${context}: ${JSON.stringify(list)} has not ${rf} replicas`);
        assert.equal(new Set(list).size, list.length, `${context}: ${JSON.stringify(list)} repeats a node`);
        for (const n of list)
            assert.ok(members.includes(n), `${context}: ${n} is not a member`);
    }
}
test('exhaustive: every factor on up to 12 members stays even after every partition', () => {
    for (let n = 1; n <= 12; n++) {
        // Ids that are neither dense nor sorted: only their order may matter.
        const members = Array.from({ length: n }, (_, i) => ((i * 7919) % 97) + 1 + i * 100).reverse();
        for (let rf = 1; rf <= n; rf++) {
            const placed = [];
            const seen = new Set();
            let repeated = false;
            for (let step = 0; step < 1000 && !repeated; step++) {
                const [replicas] = placePartitions({ members, replicationFactor: rf, current: placed, count: 1 });
                assertWellFormed([replicas], members, rf, `n=${n} rf=${rf} step ${step}`);
                placed.push({ group: step + 1, replicas: replicas });
                assertEven(members, placed, `n=${n} rf=${rf} after ${step + 1} partitions`);
                const c = counts(members, placed);
                const minR = Math.min(...c.replicas.values());
                const minL = Math.min(...c.leaders.values());
                const key = members.map((m) => `${c.replicas.get(m) - minR}/${c.leaders.get(m) - minL}`).join(',');
                repeated = seen.has(key);
                seen.add(key);
            }
            assert.ok(repeated, `n=${n} rf=${rf}: the normalized state never repeated, so the walk proves nothing`);
        }
    }
});
const members = fc.uniqueArray(fc.integer({ min: 1, max: 2 ** 31 - 1 }), { minLength: 1, maxLength: 9 });
test('property: creating many event types with random partition counts keeps the cluster even', () => {
    fc.assert(fc.property(members, fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }), fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 30 }), (ms, rf, eventTypes) => {
        const want = Math.min(rf ?? replicationFactorDefault, ms.length);
        const placed = [];
        for (const count of eventTypes) {
            const replicas = placePartitions({ members: ms, replicationFactor: rf, current: placed, count });
            assert.equal(replicas.length, count);
            assertWellFormed(replicas, ms, want, `rf=${String(rf)}`);
            for (const list of replicas)
                placed.push({ group: placed.length + 1, replicas: list });
            assertEven(ms, placed, `after ${placed.length} partitions`);
        }
    }), { numRuns: 300 });
});
test('property: deterministic, whatever the order the members are listed in', () => {
    fc.assert(fc.property(members, fc.integer({ min: 1, max: 5 }), fc.array(fc.integer({ min: 1, max: 20 }), { maxLength: 10 }), fc.integer({ min: 1, max: 50 }), (ms, rf, before, count) => {
        const placed = [];
        for (const c of before)
            for (const list of placePartitions({ members: ms, replicationFactor: rf, current: placed, count: c }))
                placed.push({ group: placed.length + 1, replicas: list });
        const a = placePartitions({ members: ms, replicationFactor: rf, current: placed, count });
        const b = placePartitions({ members: [...ms].reverse().concat(ms), replicationFactor: rf, current: [...placed], count });
        assert.deepEqual(a, b);
    }), { numRuns: 200 });
});
test('the factor defaults to three, and a factor above the member count is clamped to it', () => {
    assert.equal(effectiveReplicationFactor(5), 3);
    assert.equal(effectiveReplicationFactor(2), 2);
    assert.equal(effectiveReplicationFactor(1, 3), 1);
    assert.equal(effectiveReplicationFactor(4, 7), 4);
    assert.deepEqual(placePartitions({ members: [2, 1], replicationFactor: 5, current: [], count: 2 }), [[1, 2], [2, 1]]);
    assert.deepEqual(placePartitions({ members: [9], current: [], count: 3 }), [[9], [9], [9]]);
    assert.throws(() => placePartitions({ members: [], current: [], count: 1 }), /at least one member/);
});
test('a node that joined an even cluster takes new partitions (and their leadership) first', () => {
    const current = [
        { group: 1, replicas: [1, 2] },
        { group: 2, replicas: [2, 1] },
    ];
    assert.deepEqual(placePartitions({ members: [1, 2, 3], replicationFactor: 2, current, count: 2 }), [
        [3, 1],
        [3, 2],
    ]);
});
test('learners count as load; nodes that are no longer members are ignored', () => {
    const current = [{ group: 1, replicas: [1], learners: [2] }, { group: 2, replicas: [7] }];
    // Node 1 leads one and node 2 learns one: node 3 is the least loaded; node 7 is gone.
    assert.deepEqual(placePartitions({ members: [1, 2, 3], replicationFactor: 2, current, count: 1 }), [[3, 1]]);
});
function record(name, topic, partitions, placement) {
    const eventType = { name, created_at: 't0' };
    const storage = { topic, partitions: Array.from({ length: partitions }, (_, i) => String(i)), timeline: 1 };
    if (placement !== undefined)
        storage.placement = placement;
    return { eventType, schemas: [], storage };
}
test('proposePlacement balances against stored and legacy placements alike; no members, no proposal', () => {
    const legacy = record('old', 1, 2);
    const placed = record('new', 2, 1, [{ group: 1, replicas: [2, 3] }]);
    const source = { members: () => [3, 1, 2], replicationFactor: 2, legacyReplica: 1 };
    // Loads: node 1 leads 2 legacy partitions, node 2 leads one and node 3 follows it.
    assert.deepEqual(proposePlacement([legacy, placed], source, 1), { replicas: [[3, 2]], members: [1, 2, 3] });
    assert.equal(proposePlacement([legacy], { ...source, members: () => [] }, 1), undefined);
    assert.equal(legacyGroupId(1, 1) > 2 ** 31, true);
});
//# sourceMappingURL=placement.test.js.map