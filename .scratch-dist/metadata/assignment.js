/**
 * The rebalance of a subscription's partitions over its stream sessions. PURE and deterministic: it is
 * run by the state machine at apply time on every node, so every node computes the same assignment
 * from the same (partitions, sessions, previous assignment) (DESIGN.md, "Replication model").
 *
 * Rules:
 * - Balanced within one partition: with n partitions and s sessions every session owns floor(n/s) or
 *   ceil(n/s) partitions (with s > n, n sessions own one and the rest none).
 * - Minimal movement: a session keeps the partitions it owned as far as its quota allows, and the
 *   n mod s larger quotas go to the sessions that already own the most (ties: earlier join first).
 *   That moves exactly sum(max(0, owned_i - quota_i)) partitions away from live owners, the least any
 *   balanced assignment can (an exchange argument: giving a larger quota to a session that owns fewer
 *   never frees fewer partitions). Partitions of sessions that left, or never owned, are simply filled in.
 * - Deterministic: the result depends only on the order of `partitions` and `sessions` (join order),
 *   never on the iteration order of `previous`.
 */
/** The key of a partition in assignment maps (event type names cannot contain a NUL). */
export function partitionKeyOf(p) {
    return `${p.event_type}\u0000${p.partition}`;
}
/** Sorts partitions by event type name, then by partition id (numeric ids numerically). */
export function sortPartitions(partitions) {
    return [...partitions].sort((a, b) => {
        if (a.event_type !== b.event_type)
            return a.event_type < b.event_type ? -1 : 1;
        const na = Number(a.partition);
        const nb = Number(b.partition);
        if (Number.isInteger(na) && Number.isInteger(nb) && na !== nb)
            return na - nb;
        return a.partition < b.partition ? -1 : a.partition > b.partition ? 1 : 0;
    });
}
/**
 * The new assignment, one element per partition in the order given.
 * `previous` maps partitionKeyOf(partition) to the session that owned it before.
 */
export function rebalance(partitions, sessions, previous) {
    const n = partitions.length;
    const s = sessions.length;
    if (s === 0)
        return partitions.map((p) => ({ event_type: p.event_type, partition: p.partition, session: undefined }));
    const joinOrder = new Map();
    sessions.forEach((id, i) => {
        if (!joinOrder.has(id))
            joinOrder.set(id, i);
    });
    const live = [...joinOrder.keys()];
    // What each live session owned before, in partition order.
    const owned = new Map(live.map((id) => [id, []]));
    partitions.forEach((p, i) => {
        const prev = previous.get(partitionKeyOf(p));
        if (prev !== undefined)
            owned.get(prev)?.push(i);
    });
    // Quotas: floor(n/s) each, plus one for the n mod s sessions owning the most (ties: join order).
    const base = Math.floor(n / live.length);
    const extra = n % live.length;
    const ranked = [...live].sort((a, b) => owned.get(b).length - owned.get(a).length || joinOrder.get(a) - joinOrder.get(b));
    const quota = new Map(ranked.map((id, rank) => [id, base + (rank < extra ? 1 : 0)]));
    const owner = new Array(n).fill(undefined);
    const count = new Map(live.map((id) => [id, 0]));
    for (const id of live) {
        const keep = owned.get(id).slice(0, quota.get(id));
        for (const i of keep)
            owner[i] = id;
        count.set(id, keep.length);
    }
    // Fill the partitions left over, in partition order, into sessions below quota, in join order.
    let cursor = 0;
    for (let i = 0; i < n; i++) {
        if (owner[i] !== undefined)
            continue;
        while (count.get(live[cursor]) >= quota.get(live[cursor]))
            cursor++;
        const id = live[cursor];
        owner[i] = id;
        count.set(id, count.get(id) + 1);
    }
    return partitions.map((p, i) => ({ event_type: p.event_type, partition: p.partition, session: owner[i] }));
}
//# sourceMappingURL=assignment.js.map