/**
 * What this node knows of the partition groups, for GET /cluster (metadata/cluster-partitions.ts
 * merges the facts of every node): of each group it hosts, its own indexes and, where it leads, its
 * followers'; of each partition held elsewhere, the leader a replica named.
 */
import { nodeOfMember } from '../core/member-id.js';
import type { GroupFacts, ReplicaFacts } from '../metadata/cluster-partitions.js';
import { memberOnNode } from '../metadata/placement-types.js';
import { noNode, type NodeId } from '../raft/index.js';
import type { PartitionRemoteReads } from './partition-remote-reads.js';
import type { ReplicasContext } from './partition-replicas-context.js';

/**
 * What this node knows of each group it hosts, for GET /cluster: its own commit and applied index,
 * the leader and term, and, where it leads, how far each follower has acknowledged (match; the
 * leader does not learn a follower's applied index, so match stands for both), and whether each is
 * incomplete (its own flag; a follower's from its latest append answer in the leader's progress).
 *
 * `reachable` is the transport's word on a peer. A follower it cannot reach reports nothing (and
 * so counts as not in sync): the leader's progress of a dead follower keeps the match it had, and a
 * new leader starts every follower at match 0; either way an idle group would call a follower
 * that was killed "in sync" for as long as it stays down.
 */
export function groupFacts(c: ReplicasContext, remote: PartitionRemoteReads, reachable: (node: NodeId) => boolean): Map<number, GroupFacts> {
  const out = new Map<number, GroupFacts>();
  for (const r of c.byKey.values()) {
    const st = r.group.raw.status();
    // Keyed by member id, as the placement lists them; the transport is asked about their nodes.
    const replicas = new Map<number, ReplicaFacts>([[r.group.self, { commit: st.commit, applied: r.group.applied, incomplete: r.group.raw.incomplete }]]);
    if (st.progress !== undefined) for (const [peer, pr] of st.progress) if (peer !== r.group.self && reachable(nodeOfMember(peer))) replicas.set(peer, { commit: pr.match, applied: pr.match, incomplete: pr.incomplete });
    out.set(r.groupId, { leader: st.lead === noNode ? null : st.lead, term: st.term, replicas, partial: st.progress === undefined });
  }
  // Partitions held elsewhere: only the leader a replica named; their replicas are unknown here.
  for (const [key, b] of remote.entries()) {
    const [topic, partition] = key.split(':').map(Number) as [number, number];
    const p = c.o.placement(topic, partition);
    // A replica held here (a learner, or one promoted since it was remote) tells more than the cache.
    // The replica named the leader's node; the placement names its member.
    if (p !== undefined && !out.has(p.group)) out.set(p.group, { leader: b.leader === undefined ? null : (memberOnNode(p, b.leader.id) ?? b.leader.id), term: b.leader?.term ?? 0, replicas: new Map(), partial: true });
  }
  return out;
}
