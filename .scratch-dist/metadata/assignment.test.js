// Goal: the rebalance of a subscription's partitions over its streams is balanced within one
// partition, deterministic, and moves as few partitions as possible when a stream joins or leaves.
// Method: fast-check over partition sets (1..3 event types, 1..12 partitions each), session lists and
// arbitrary previous assignments; the number of partitions taken from a live owner is compared with
// the theoretical minimum (brute force over every choice of which sessions get the larger quota), and
// with the closed forms for a join (floor(n/(s+1))) and a leave (0 from the others) from a balanced
// state. Plus examples that pin the exact result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { partitionKeyOf, rebalance, sortPartitions } from './assignment.js';
const partitionsArb = fc
    .array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 3 })
    .map((counts) => sortPartitions(counts.flatMap((c, t) => Array.from({ length: c }, (_, p) => ({ event_type: `et${t}`, partition: String(p) })))));
const sessionsArb = fc.uniqueArray(fc.integer({ min: 0, max: 40 }).map((i) => `s${i}`), { minLength: 0, maxLength: 16 });
function asMap(a) {
    return new Map(a.filter((x) => x.session !== undefined).map((x) => [partitionKeyOf(x), x.session]));
}
function counts(a, sessions) {
    return sessions.map((id) => a.filter((x) => x.session === id).length);
}
function assertBalanced(a, sessions, n) {
    if (sessions.length === 0) {
        assert.ok(a.every((x) => x.session === undefined));
        return;
    }
    assert.ok(a.every((x) => x.session !== undefined && sessions.includes(x.session)), 'every partition has a live owner');
    const c = counts(a, sessions);
    const lo = Math.floor(n / sessions.length);
    const hi = Math.ceil(n / sessions.length);
    assert.ok(c.every((k) => k === lo || k === hi), `counts ${c} not within [${lo}, ${hi}]`);
    assert.equal(c.reduce((x, y) => x + y, 0), n);
}
/** Partitions whose previous owner is still live and now differs. */
function movedFromLive(prev, next, sessions) {
    return next.filter((x) => {
        const before = prev.get(partitionKeyOf(x));
        return before !== undefined && sessions.includes(before) && before !== x.session;
    }).length;
}
/** The least movedFromLive of any balanced assignment: brute force over which sessions get ceil. */
function minimumMoves(partitions, sessions, prev) {
    const n = partitions.length;
    const s = sessions.length;
    if (s === 0)
        return 0;
    const owned = sessions.map((id) => partitions.filter((p) => prev.get(partitionKeyOf(p)) === id).length);
    const base = Math.floor(n / s);
    const extra = n % s;
    let best = Infinity;
    for (let mask = 0; mask < 1 << s; mask++) {
        let bits = 0;
        for (let i = 0; i < s; i++)
            if (mask & (1 << i))
                bits++;
        if (bits !== extra)
            continue;
        let moves = 0;
        for (let i = 0; i < s; i++)
            moves += Math.max(0, owned[i] - (base + (mask & (1 << i) ? 1 : 0)));
        best = Math.min(best, moves);
    }
    return best;
}
/** An arbitrary previous assignment: each partition owned by one of `pool` or by nobody. */
const previousArb = (partitions, pool) => fc.array(fc.integer({ min: -1, max: Math.max(0, pool.length - 1) }), { minLength: partitions.length, maxLength: partitions.length }).map((picks) => new Map(partitions.flatMap((p, i) => (picks[i] >= 0 && pool.length > 0 ? [[partitionKeyOf(p), pool[picks[i]]]] : []))));
test('balanced within one partition from any previous assignment, and no more moves than the minimum', () => {
    fc.assert(fc.property(fc
        .tuple(partitionsArb, fc.uniqueArray(fc.integer({ min: 0, max: 40 }).map((i) => `s${i}`), { minLength: 0, maxLength: 8 }), fc.uniqueArray(fc.integer({ min: 41, max: 60 }).map((i) => `s${i}`), { maxLength: 4 }))
        .chain(([partitions, sessions, formerOnly]) => previousArb(partitions, [...sessions, ...formerOnly]).map((prev) => ({ partitions, sessions, prev }))), ({ partitions, sessions, prev }) => {
        const next = rebalance(partitions, sessions, prev);
        assert.deepEqual(next.map(({ event_type, partition }) => ({ event_type, partition })), partitions.map(({ event_type, partition }) => ({ event_type, partition })));
        assertBalanced(next, sessions, partitions.length);
        assert.equal(movedFromLive(prev, next, sessions), minimumMoves(partitions, sessions, prev));
    }));
});
test('deterministic: same inputs, same result, whatever the iteration order of the previous assignment', () => {
    fc.assert(fc.property(partitionsArb, sessionsArb, fc.integer(), (partitions, sessions, seed) => {
        const first = rebalance(partitions, sessions, new Map());
        const prev = asMap(rebalance(partitions, sessions.slice(1), asMap(first)));
        // The same entries inserted in other orders.
        const entries = [...prev];
        const cut = Math.abs(seed) % Math.max(1, entries.length);
        const reversed = new Map([...entries].reverse());
        const rotated = new Map([...entries.slice(cut), ...entries.slice(0, cut)]);
        const a = rebalance(partitions, sessions, prev);
        assert.deepEqual(rebalance(partitions, sessions, prev), a);
        assert.deepEqual(rebalance(partitions, sessions, reversed), a);
        assert.deepEqual(rebalance(partitions, sessions, rotated), a);
    }));
});
/** Builds a balanced state by letting sessions join one by one, as streams do. */
function joinOneByOne(partitions, sessions) {
    let a = rebalance(partitions, [], new Map());
    for (let i = 1; i <= sessions.length; i++)
        a = rebalance(partitions, sessions.slice(0, i), asMap(a));
    return a;
}
test('a joining session takes floor(n/(s+1)) partitions, all from others, and nothing else moves', () => {
    fc.assert(fc.property(partitionsArb, sessionsArb.filter((s) => s.length >= 1), (partitions, all) => {
        const before = all.slice(0, -1);
        const joiner = all[all.length - 1];
        const prevA = joinOneByOne(partitions, before);
        const prev = asMap(prevA);
        const next = rebalance(partitions, all, prev);
        assertBalanced(next, all, partitions.length);
        const n = partitions.length;
        const moved = movedFromLive(prev, next, before);
        if (before.length === 0) {
            assert.equal(moved, 0);
            assert.ok(next.every((x) => x.session === joiner));
            return;
        }
        assert.equal(moved, Math.floor(n / all.length), 'moved partitions = the joiner\'s share');
        assert.equal(counts(next, [joiner])[0], moved, 'every moved partition went to the joiner');
        assert.equal(moved, minimumMoves(partitions, all, prev));
    }));
});
test('a leaving session\'s partitions are spread over the others, and no other partition moves', () => {
    fc.assert(fc.property(partitionsArb, sessionsArb.filter((s) => s.length >= 1), fc.nat(), (partitions, all, pick) => {
        const prevA = joinOneByOne(partitions, all);
        const prev = asMap(prevA);
        const leaver = all[pick % all.length];
        const rest = all.filter((id) => id !== leaver);
        const next = rebalance(partitions, rest, prev);
        assertBalanced(next, rest, partitions.length);
        assert.equal(movedFromLive(prev, next, rest), 0);
        for (const x of next) {
            const before = prev.get(partitionKeyOf(x));
            if (before !== leaver)
                assert.equal(x.session, before, 'a partition of a remaining session stays');
        }
    }));
});
const p = (event_type, partition) => ({ event_type, partition });
const owners = (a) => a.map((x) => x.session ?? '-').join(',');
test('examples: 4 partitions over joining and leaving streams', () => {
    const parts = sortPartitions([p('b', '1'), p('a', '10'), p('a', '2'), p('b', '0')]);
    assert.deepEqual(parts.map(partitionKeyOf), ['a\u00002', 'a\u000010', 'b\u00000', 'b\u00001']);
    const one = rebalance(parts, ['x'], new Map());
    assert.equal(owners(one), 'x,x,x,x');
    const two = rebalance(parts, ['x', 'y'], asMap(one));
    assert.equal(owners(two), 'x,x,y,y');
    const three = rebalance(parts, ['x', 'y', 'z'], asMap(two));
    assert.equal(owners(three), 'x,x,y,z');
    const five = rebalance(parts, ['x', 'y', 'z', 'v', 'w'], asMap(three));
    assert.equal(owners(five), 'x,v,y,z', 'a fifth stream gets nothing; the earliest joiner gives one up');
    const xLeft = rebalance(parts, ['y', 'z', 'v', 'w'], asMap(five));
    assert.equal(owners(xLeft), 'w,v,y,z');
    assert.equal(owners(rebalance(parts, [], asMap(xLeft))), '-,-,-,-');
});
test('examples: previous owners that are gone, partitions that are new, duplicate session ids', () => {
    const parts = [p('a', '0'), p('a', '1'), p('a', '2')];
    const prev = new Map([[partitionKeyOf(parts[0]), 'gone'], [partitionKeyOf(parts[2]), 'y'], ['a\u00009', 'y']]);
    // y owned one partition, x none: y gets the larger quota and keeps a/2; x takes the orphan a/0 first.
    assert.equal(owners(rebalance(parts, ['x', 'y'], prev)), 'x,y,y');
    assert.equal(owners(rebalance(parts, ['x', 'x', 'y'], prev)), 'x,y,y');
});
//# sourceMappingURL=assignment.test.js.map