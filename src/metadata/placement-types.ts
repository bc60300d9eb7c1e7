/**
 * Where a partition lives: the Raft group that replicates it and the nodes in that group. Stored in
 * replicated metadata (DESIGN.md, "Replication model": placement is decided by the metadata leader and
 * stored in metadata). Every partition of every timeline's log is its own group.
 *
 * Group ids are u32 and never reused, so a re-created event type (or a new timeline) never meets the
 * Raft state of an older one. Two ranges exist:
 * - 0 is the metadata group;
 * - [1, groupIdAllocatedMax] are handed out by the state machine, in log order, from a counter;
 * - [legacyGroupIdBase, 2^32) are derived from (topic, partition) for partitions of event types created
 *   before placement existed (see placementOf). The counter never reaches that range, so the two kinds
 *   cannot collide.
 */
import { assert } from '../core/assert.js';
import { partitionsPerEventTypeMax } from '../core/limits.js';
import { nodeOfMember } from '../core/member-id.js';

/**
 * Replicas are named by Raft member id (core/member-id.ts): incarnation 0 of a node is the node id
 * itself, so placements written before member ids existed hold valid member ids. A node holds at most
 * one member of a group, except while a replacement moves the group from the member of its wiped
 * directory to the member of its new one (docs/partition-replication.md, "A wiped directory rejoins
 * partition groups as a new member"); `nodeOfMember` gives the node a member runs on.
 */
export interface PartitionPlacement {
  /** u32 Raft group id, > 0, never reused; group 0 is the metadata group. */
  group: number;
  /** Voting member ids, on distinct nodes; the first is the preferred leader. */
  replicas: number[];
  /** Members being added, not yet voters (absent: none). */
  learners?: number[];
  /**
   * The move in flight (absent: none). A move replaces `from` by `to` one configuration change at a
   * time (partition.move: add_learner, promote, remove); a second move of the partition waits for it.
   */
  moving?: { from: number; to: number };
  /**
   * The voters the group was founded with, recorded by its first move (absent: `replicas` still are
   * them, in some order). A replica opened on a node with no state for the group writes the founding
   * configuration only if the node is one of these; any other node joins empty and is brought up to
   * date by the leader (partition-replicas.ts). Founding with today's replicas instead would give the
   * node a first log that differs from the group's under the same (index, term).
   */
  founders?: number[];
}

/**
 * The replicas a proposer chose for the partitions a command creates. Group ids are not part of it:
 * the state machine allocates them when it applies the command, so they follow the log order.
 */
export interface PlacementProposal {
  /** Per new partition (indexed like `partitions`), its replicas; the first is the preferred leader. */
  replicas: number[][];
  /** The cluster members the proposer placed over: every replica must be one of them. */
  members: number[];
}

/** The highest group id the state machine's counter may hand out. */
export const groupIdAllocatedMax = 2 ** 31 - 1;
/** Node ids are Raft member ids: positive and within the config's range. */
export const nodeIdMax = 2 ** 31 - 1;

/** Derived group ids of legacy partitions: base + topic * 2^legacyPartitionBits + partition index. */
export const legacyGroupIdBase = 2 ** 31;
const legacyPartitionBits = 10;
const legacyTopicMax = 2 ** (32 - 1 - legacyPartitionBits) - 1;

assert(partitionsPerEventTypeMax <= 2 ** legacyPartitionBits, 'a legacy group id must have room for every partition index');

export const isNodeId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && v <= nodeIdMax;

/** A Raft member id (core/member-id.ts): a safe integer whose node part is a node id. */
export const isMemberId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && nodeOfMember(v) >= 1;

/** The member of the placement (voter or learner) that runs on `node`; a replacement's new one when two do. */
export function memberOnNode(p: { readonly replicas: readonly number[]; readonly learners?: readonly number[]; readonly moving?: { readonly to: number } }, node: number): number | undefined {
  const on = [...p.replicas, ...(p.learners ?? [])].filter((m) => nodeOfMember(m) === node);
  return on.length > 1 && p.moving !== undefined && on.includes(p.moving.to) ? p.moving.to : on[0];
}

/** The group id of partition `index` of a legacy log (one written before placement existed). */
export function legacyGroupId(topic: number, index: number): number {
  assert(Number.isSafeInteger(topic) && topic >= 1 && topic <= legacyTopicMax, `legacy topic ${topic} out of range`);
  assert(Number.isSafeInteger(index) && index >= 0 && index < 2 ** legacyPartitionBits, `legacy partition index ${index} out of range`);
  return legacyGroupIdBase + topic * 2 ** legacyPartitionBits + index;
}

/** The (topic, partition index) a legacy group id was derived from; undefined for other ids. */
export function legacyGroupParts(group: number): { topic: number; index: number } | undefined {
  if (!Number.isSafeInteger(group) || group < legacyGroupIdBase || group >= 2 ** 32) return undefined;
  const rest = group - legacyGroupIdBase;
  const topic = Math.floor(rest / 2 ** legacyPartitionBits);
  if (topic < 1) return undefined;
  return { topic, index: rest % 2 ** legacyPartitionBits };
}
