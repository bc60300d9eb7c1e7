/**
 * Where new partitions go: the metadata leader's choice of replicas and preferred leaders when an event
 * type or a timeline is created. PURE and deterministic: the same members, factor and current
 * placements give the same answer on every node.
 *
 * The rule, one partition at a time, over the current load (replicas and learners count as replica
 * load, the first replica as a preferred leadership):
 * 1. The preferred leader is the member that leads fewest, then holds fewest replicas, then has the
 *    lowest id.
 * 2. The other replicas are the members that hold fewest replicas, then have the lowest id.
 * Starting from an even cluster this keeps replica counts within one of each other and preferred-leader
 * counts within one of each other, whatever the partition counts of the event types created (checked
 * exhaustively for up to 12 members and every factor in placement.test.ts: the state, normalized to its
 * minimum, repeats, so every later step was seen). Choosing the leader by fewest replicas too is what
 * keeps both even at once: picking the other replicas first can leave every least-loaded node holding
 * an extra leadership.
 *
 * An uneven cluster (a node just joined) is evened out by new partitions over time, the new node taking
 * them first; moving existing replicas is partition.move's job, leadership the balancer's.
 */
import { assert } from '../core/assert.js';
import { placedPartitions } from './placement-of.js';
import type { PartitionPlacement, PlacementProposal } from './placement-types.js';
import type { EventTypeRecord } from './types.js';

/** The replication factor when none is configured: three copies, or every member of a smaller cluster. */
export const replicationFactorDefault = 3;

/**
 * The port placement needs from the node runtime: the cluster's members (metadata group voters and
 * learners), the configured replication factor, and the node that holds legacy partitions.
 */
export interface MembersSource {
  /** Member ids (core/member-id.ts), one per node: the member each node runs now (currentMembers). */
  members(): number[];
  /** Replicas per new partition; undefined: min(replicationFactorDefault, members). Clamped to the member count. */
  readonly replicationFactor?: number | undefined;
  /** The node that served partitions before placement existed (see placementOf). */
  readonly legacyReplica: number;
}

export interface PlacementInput {
  /** The cluster's member ids, one per node (order and duplicates do not matter). */
  members: readonly number[];
  /** Replicas per partition; undefined: the default. Clamped to [1, members]. */
  replicationFactor?: number | undefined;
  /** Placements that exist, for their load; nodes that are not members are ignored. */
  current: Iterable<PartitionPlacement>;
  /** How many partitions to place. */
  count: number;
}

/** The replication factor actually used for `memberCount` members. */
export function effectiveReplicationFactor(memberCount: number, configured?: number): number {
  assert(memberCount >= 1, 'placement needs at least one member');
  const rf = configured ?? replicationFactorDefault;
  assert(Number.isSafeInteger(rf) && rf >= 1, `replication factor ${rf} must be a positive integer`);
  return Math.min(rf, memberCount);
}

/** Replicas for `count` new partitions, each list led by its preferred leader. */
export function placePartitions(input: PlacementInput): number[][] {
  const members = [...new Set(input.members)].sort((a, b) => a - b);
  const rf = effectiveReplicationFactor(members.length, input.replicationFactor);
  assert(Number.isSafeInteger(input.count) && input.count >= 0, `partition count ${input.count} must be a non-negative integer`);
  const replicaLoad = new Map(members.map((m) => [m, 0]));
  const leaderLoad = new Map(members.map((m) => [m, 0]));
  for (const p of input.current) {
    for (const n of [...p.replicas, ...(p.learners ?? [])]) if (replicaLoad.has(n)) replicaLoad.set(n, replicaLoad.get(n)! + 1);
    const preferred = p.replicas[0];
    if (preferred !== undefined && leaderLoad.has(preferred)) leaderLoad.set(preferred, leaderLoad.get(preferred)! + 1);
  }
  const r = (n: number) => replicaLoad.get(n)!;
  const l = (n: number) => leaderLoad.get(n)!;
  const out: number[][] = [];
  for (let i = 0; i < input.count; i++) {
    const leader = [...members].sort((a, b) => l(a) - l(b) || r(a) - r(b) || a - b)[0]!;
    const followers = members.filter((n) => n !== leader).sort((a, b) => r(a) - r(b) || a - b).slice(0, rf - 1);
    const replicas = [leader, ...followers];
    leaderLoad.set(leader, l(leader) + 1);
    for (const n of replicas) replicaLoad.set(n, r(n) + 1);
    out.push(replicas);
  }
  return out;
}

/**
 * The placement a proposer puts into event_type.create or timeline.create: `count` partitions placed
 * over the members, balanced against every partition of every timeline that exists. Undefined while no
 * member is known (a node that has not learned the configuration yet): the proposer must refuse then,
 * not fall back to the legacy layout.
 */
export function proposePlacement(records: Iterable<EventTypeRecord>, source: MembersSource, count: number): PlacementProposal | undefined {
  const members = [...new Set(source.members())].sort((a, b) => a - b);
  if (members.length === 0) return undefined;
  const current = [...placedPartitions(records, source.legacyReplica)].map((p) => p.placement);
  return { replicas: placePartitions({ members, replicationFactor: source.replicationFactor, current, count }), members };
}
