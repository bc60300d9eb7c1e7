/** The default of `inSyncLagMax`: entries a voter may trail the commit index and still count as in sync. */
export const inSyncLagEntriesDefault = 1000;
function statusOf(p, facts, inSyncLagMax) {
    const { group, replicas } = p.placement;
    const learners = p.placement.learners ?? [];
    const reported = facts?.replicas ?? new Map();
    const leaderFacts = facts?.leader === null || facts?.leader === undefined ? undefined : reported.get(facts.leader);
    const commits = [...reported.values()].map((r) => r.commit);
    const commit = leaderFacts?.commit ?? (commits.length > 0 ? Math.max(...commits) : null);
    const replicaStatus = [...replicas.map((node) => ({ node, role: 'voter' })), ...learners.map((node) => ({ node, role: 'learner' }))].map(({ node, role }) => {
        const r = reported.get(node);
        const lag = r === undefined || commit === null ? null : Math.max(0, commit - r.applied);
        const unknown = r === undefined && facts?.partial === true;
        return { node, role, commit_index: r?.commit ?? null, applied_index: r?.applied ?? null, lag, in_sync: unknown || (lag !== null && lag <= inSyncLagMax) };
    });
    const voters = replicaStatus.filter((r) => r.role === 'voter');
    const votersApplied = voters.flatMap((r) => (r.applied_index === null ? [] : [r.applied_index]));
    const votersLag = voters.flatMap((r) => (r.lag === null ? [] : [r.lag]));
    return {
        event_type: p.event_type,
        partition: p.partition,
        topic: p.topic,
        group,
        leader: facts?.leader ?? null,
        term: facts?.term ?? null,
        preferred_leader: replicas[0],
        replicas: [...replicas],
        learners: [...learners],
        moving: p.placement.moving === undefined ? null : { ...p.placement.moving },
        commit_index: commit,
        applied_index: votersApplied.length > 0 ? Math.min(...votersApplied) : null,
        lag: votersLag.length > 0 ? Math.max(...votersLag) : null,
        under_replicated: voters.some((r) => !r.in_sync),
        replica_status: replicaStatus,
    };
}
/** The partitions list of GET /cluster and its counts, in the order of `placed`. */
export function clusterPartitions(placed, facts, inSyncLagMax = inSyncLagEntriesDefault) {
    const partitions = [...placed].map((p) => statusOf(p, facts.get(p.placement.group), inSyncLagMax));
    return {
        partitions,
        under_replicated_partitions: partitions.filter((p) => p.under_replicated).length,
        leaderless_partitions: partitions.filter((p) => p.leader === null).length,
    };
}
//# sourceMappingURL=cluster-partitions.js.map