/**
 * The partitions part of GET /cluster: for every partition of every log, where it lives (from
 * placement) and how its group is doing (from runtime facts the caller gathers: leader, term, and each
 * replica's commit and applied index). PURE: a read model, it decides nothing. Field names follow the
 * rest of GET /cluster (snake_case).
 *
 * A partition is under-replicated when one of its voters is not in sync: it reported nothing (down,
 * unreachable, or not hosting the group yet) or its applied index is more than `inSyncLagMax` entries
 * behind the group's commit index. Learners are listed but do not count: they are not replicas yet.
 * A partition without a known leader is counted apart as leaderless (it cannot take writes).
 *
 * A replica is incomplete while it fetches the retained log before its snapshot (docs/replication.md,
 * "incomplete"): it holds everything Raft counts, so it does not make the partition under-replicated,
 * but it cannot serve that older log, campaigns late and gives the leadership away. Operators see it
 * per replica and per partition; a replica whose state this node does not know shows null.
 *
 * Placements list Raft member ids (core/member-id.ts), which are node ids until a data directory is
 * wiped and rejoins under a new incarnation (incarnation * 2^31 + node: a number an operator does not
 * recognise). The raw ids stay where they were (`leader`, `replicas`, `learners`, `moving`, ...), and
 * beside them the node each runs on (`leader_node`, `replica_nodes`, ...) and, per replica, its node
 * and incarnation (`replica_status`), so that a reader never has to decode a member id.
 */
import { incarnationOfMember, nodeOfMember } from '../core/member-id.js';
import type { PlacedPartition } from './placement-of.js';

/** The default of `inSyncLagMax`: entries a voter may trail the commit index and still count as in sync. */
export const inSyncLagEntriesDefault = 1000;

export interface ReplicaFacts {
  commit: number;
  applied: number;
  /** The replica is still fetching the retained log before its snapshot (absent: not known). */
  incomplete?: boolean;
}

export interface GroupFacts {
  /** The leader as observed (null: none known). */
  leader: number | null;
  term: number;
  /** What each replica (voter or learner) reported, by node id; absent nodes reported nothing. */
  replicas: ReadonlyMap<number, ReplicaFacts>;
  /**
   * The facts come from a node that does not lead the group (it knows only itself): a replica absent
   * from `replicas` is unknown, not out of sync, and the partition counts as under-replicated only
   * if a reported one is behind.
   */
  partial?: boolean;
}

export interface ReplicaStatus {
  /** The node the replica runs on. */
  node: number;
  /** The replica's Raft member id, as the placement lists it (the node id for incarnation 0). */
  member: number;
  /** 0 for the node's original member; another for a data directory that replaced a wiped one. */
  incarnation: number;
  /** 'voter' or 'learner', from placement. */
  role: 'voter' | 'learner';
  commit_index: number | null;
  applied_index: number | null;
  /** Entries behind the group's commit index; null when the replica reported nothing. */
  lag: number | null;
  in_sync: boolean;
  /** Still fetching the retained log before its snapshot; null when the replica reported nothing. */
  incomplete: boolean | null;
}

export interface PartitionStatus {
  event_type: string;
  partition: string;
  /** The log (timeline) the partition belongs to. */
  topic: number;
  group: number;
  /** The leader's member id (null: none known), and the node it runs on. */
  leader: number | null;
  leader_node: number | null;
  term: number | null;
  /** Member ids, as the placement lists them; `*_node`: the node of each, in the same order. */
  preferred_leader: number;
  preferred_leader_node: number;
  replicas: number[];
  replica_nodes: number[];
  learners: number[];
  learner_nodes: number[];
  /** The replica move in flight (POST /cluster/partitions/{group}/move), or null: members, and their nodes. */
  moving: { from: number; to: number; from_node: number; to_node: number } | null;
  /** The group's commit index: the leader's, or the highest reported when the leader did not report. */
  commit_index: number | null;
  /** The lowest applied index among the voters that reported. */
  applied_index: number | null;
  /** How far the slowest voter trails the commit index (null: no voter reported). */
  lag: number | null;
  under_replicated: boolean;
  /** The replicas (voters or learners) known to be incomplete: still fetching the retained log before their snapshot. */
  incomplete_replicas: number[];
  replica_status: ReplicaStatus[];
}

export interface ClusterPartitions {
  partitions: PartitionStatus[];
  under_replicated_partitions: number;
  leaderless_partitions: number;
  /** Partitions with at least one incomplete replica. */
  incomplete_partitions: number;
}

function statusOf(p: PlacedPartition, facts: GroupFacts | undefined, inSyncLagMax: number): PartitionStatus {
  const { group, replicas } = p.placement;
  const learners = p.placement.learners ?? [];
  const reported = facts?.replicas ?? new Map<number, ReplicaFacts>();
  const leaderFacts = facts?.leader === null || facts?.leader === undefined ? undefined : reported.get(facts.leader);
  const commits = [...reported.values()].map((r) => r.commit);
  const commit = leaderFacts?.commit ?? (commits.length > 0 ? Math.max(...commits) : null);
  const replicaStatus = [...replicas.map((member) => ({ member, role: 'voter' as const })), ...learners.map((member) => ({ member, role: 'learner' as const }))].map(({ member, role }): ReplicaStatus => {
    const r = reported.get(member);
    const lag = r === undefined || commit === null ? null : Math.max(0, commit - r.applied);
    const unknown = r === undefined && facts?.partial === true;
    return { node: nodeOfMember(member), member, incarnation: incarnationOfMember(member), role, commit_index: r?.commit ?? null, applied_index: r?.applied ?? null, lag, in_sync: unknown || (lag !== null && lag <= inSyncLagMax), incomplete: r?.incomplete ?? null };
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
    leader_node: facts?.leader === null || facts?.leader === undefined ? null : nodeOfMember(facts.leader),
    term: facts?.term ?? null,
    preferred_leader: replicas[0]!,
    preferred_leader_node: nodeOfMember(replicas[0]!),
    replicas: [...replicas],
    replica_nodes: replicas.map(nodeOfMember),
    learners: [...learners],
    learner_nodes: learners.map(nodeOfMember),
    moving: p.placement.moving === undefined ? null : { from: p.placement.moving.from, to: p.placement.moving.to, from_node: nodeOfMember(p.placement.moving.from), to_node: nodeOfMember(p.placement.moving.to) },
    commit_index: commit,
    applied_index: votersApplied.length > 0 ? Math.min(...votersApplied) : null,
    lag: votersLag.length > 0 ? Math.max(...votersLag) : null,
    under_replicated: voters.some((r) => !r.in_sync),
    incomplete_replicas: replicaStatus.filter((r) => r.incomplete === true).map((r) => r.member),
    replica_status: replicaStatus,
  };
}

/** The partitions list of GET /cluster and its counts, in the order of `placed`. */
export function clusterPartitions(placed: Iterable<PlacedPartition>, facts: ReadonlyMap<number, GroupFacts>, inSyncLagMax = inSyncLagEntriesDefault): ClusterPartitions {
  const partitions = [...placed].map((p) => statusOf(p, facts.get(p.placement.group), inSyncLagMax));
  return {
    partitions,
    under_replicated_partitions: partitions.filter((p) => p.under_replicated).length,
    leaderless_partitions: partitions.filter((p) => p.leader === null).length,
    incomplete_partitions: partitions.filter((p) => p.incomplete_replicas.length > 0).length,
  };
}
