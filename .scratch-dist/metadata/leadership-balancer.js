/**
 * Leadership balancing: which partition groups should transfer their leadership, and to whom, so that
 * each live node leads about as many partitions as the others. PURE; the caller observes the leaders
 * and carries the transfers out (Raft leadership transfer), then may record a lasting change with
 * partition.leader. Replicas are not moved here (that is partition.move).
 *
 * The answer is a target leader per group, computed from the placements and the live nodes alone:
 * 1. a group whose preferred leader (first replica) is live is led by it;
 * 2. a group whose preferred leader is dead goes to its live voter that leads fewest so far (ties:
 *    replica order, so the next preferred);
 * 3. while a chain of hand-overs (a gives a group to one of its live voters b, b gives another to c,
 *    ...) leads from a node to one that leads at least two fewer, the chain is carried out. Each chain
 *    lowers the sum of squared counts, so this ends, and an assignment without such a chain is optimal
 *    (Harvey, Ladner, Lovász, Tamir, "Semi-matchings for bipartite graphs and load balancing", 2003):
 *    no other gives a lower maximum or a higher minimum. So whenever the replica sets allow every live
 *    node's count to be within one of the others, the balancer gets there (checked against a
 *    brute-force search in the tests).
 * A transfer is returned for each group whose observed leader is live, a voter, and not its target.
 * Never to a dead node or a learner. The target does not depend on the observed leaders at all, so
 * running the balancer again after its transfers were carried out returns none: no flapping. The
 * price: after a failover whose elections happened to be even, leaders may still move once, to the
 * target. (Preferring the observed leader on ties looks cheaper but is not stable: step 3 changes
 * what the next round observes, and the next round's ties then fall differently.)
 */
import { InvariantError } from '../core/assert.js';
/** The leader each group should have; groups without a live voter are left out. */
export function targetLeaders(placements, live) {
    const alive = new Set(live);
    const groups = [...placements].sort((a, b) => a.group - b.group);
    const led = new Map([...alive].map((n) => [n, 0]));
    const count = (n) => led.get(n);
    const target = new Map();
    const assign = (g, n) => {
        const before = target.get(g);
        if (before !== undefined)
            led.set(before, count(before) - 1);
        target.set(g, n);
        led.set(n, count(n) + 1);
    };
    const liveVoters = (p) => p.replicas.filter((n) => alive.has(n));
    // 1. Preferred leaders that are live.
    for (const p of groups)
        if (alive.has(p.replicas[0]))
            assign(p.group, p.replicas[0]);
    // 2. The others, to their least-loaded live voter.
    for (const p of groups) {
        if (target.has(p.group))
            continue;
        const voters = liveVoters(p);
        if (voters.length === 0)
            continue;
        const least = Math.min(...voters.map(count));
        assign(p.group, voters.find((n) => count(n) === least));
    }
    // 3. Even out what preferences left uneven.
    const byGroup = new Map(groups.map((p) => [p.group, p]));
    for (let rounds = 0; rounds <= groups.length * groups.length + 1; rounds++) {
        const path = improvingPath(groups, byGroup, target, alive, count);
        if (path === undefined)
            return target;
        // Along the path every node in between hands one group on and takes one: only the ends change.
        for (const step of path)
            assign(step.group, step.to);
    }
    throw new InvariantError('leadership balancing did not settle (the sum of squares must fall with every path)');
}
/**
 * A chain of hand-overs from a node to one that leads at least two fewer: node a hands group g1 to
 * voter b, b hands g2 to c, ... Single hand-overs are not enough: a node may only be able to shed a
 * group to an equally loaded one, which can shed another to an idle node. Breadth-first from the
 * busiest node, so chains are short; groups away from their preferred leader are handed on first.
 */
function improvingPath(groups, byGroup, target, alive, count) {
    const ledBy = new Map();
    for (const p of groups) {
        const n = target.get(p.group);
        if (n === undefined)
            continue;
        if (!ledBy.has(n))
            ledBy.set(n, []);
        ledBy.get(n).push(p);
    }
    for (const mine of ledBy.values())
        mine.sort((x, y) => Number(x.replicas[0] === target.get(x.group)) - Number(y.replicas[0] === target.get(y.group)) || x.group - y.group);
    const busiestFirst = [...alive].sort((a, b) => count(b) - count(a) || a - b);
    for (const start of busiestFirst) {
        const via = new Map([[start, { from: start, group: 0 }]]);
        const queue = [start];
        for (let head = 0; head < queue.length; head++) {
            const x = queue[head];
            for (const p of ledBy.get(x) ?? []) {
                for (const y of byGroup.get(p.group).replicas) {
                    if (y === x || !alive.has(y) || via.has(y))
                        continue;
                    via.set(y, { from: x, group: p.group });
                    if (count(y) <= count(start) - 2) {
                        const path = [];
                        for (let at = y; at !== start; at = via.get(at).from)
                            path.unshift({ group: via.get(at).group, to: at });
                        return path;
                    }
                    queue.push(y);
                }
            }
        }
    }
    return undefined;
}
/**
 * The leadership transfers that bring the observed leaders to their targets. `leaders`: group -> the
 * node observed leading it (groups without a known leader are absent: they elect one first).
 */
export function balanceLeadership(placements, leaders, live) {
    const alive = new Set(live);
    const target = targetLeaders(placements, alive);
    const out = [];
    for (const p of [...placements].sort((a, b) => a.group - b.group)) {
        const from = leaders.get(p.group);
        const to = target.get(p.group);
        // Only a live leader that is a voter can hand over; a stale observation waits for the next round.
        if (from === undefined || to === undefined || from === to || !alive.has(from) || !p.replicas.includes(from))
            continue;
        out.push({ group: p.group, from, to });
    }
    return out;
}
//# sourceMappingURL=leadership-balancer.js.map