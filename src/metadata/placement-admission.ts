/**
 * Admitting a proposed placement when event_type.create or timeline.create is applied. PURE.
 *
 * The proposer computed the placement (placement.ts), but a committed command is applied by every
 * node, so the state machine checks it again here (defence in depth: a buggy or older proposer must
 * not store a placement the data plane cannot run) and allocates the group ids itself, from the
 * counter in the state, so ids follow the log order and are never reused. A command refused here
 * creates nothing and consumes no group id.
 */
import { nodeOfMember } from '../core/member-id.js';
import { groupIdAllocatedMax, isMemberId, type PartitionPlacement } from './placement-types.js';

export type Admission =
  | { ok: true; placement: PartitionPlacement[]; nextGroup: number }
  | { ok: false; reason: 'invalid' | 'no_slots'; detail: string };

const invalid = (detail: string): Admission => ({ ok: false, reason: 'invalid', detail: `Placement refused: ${detail}` });

/**
 * Why a list of member ids (placement-types.ts: a node id is incarnation 0 of itself) is not a set of
 * valid ids on distinct nodes, or undefined when it is one.
 */
function nodeSetProblem(v: unknown, what: string): string | undefined {
  if (!Array.isArray(v) || v.length === 0) return `${what} must be a non-empty list of member ids`;
  if (!v.every(isMemberId)) return `${what} holds an id that is not a member id (a node id, or a node's later incarnation)`;
  if (new Set(v.map(nodeOfMember)).size !== v.length) return `${what} names a node twice`;
  return undefined;
}

/**
 * Checks `proposal` (untrusted: it is whatever the committed command holds) for `partitionCount`
 * partitions and allocates their groups from `nextGroup`.
 */
export function admitPlacement(proposal: unknown, partitionCount: number, nextGroup: number): Admission {
  if (typeof proposal !== 'object' || proposal === null || Array.isArray(proposal)) return invalid('it must be an object');
  const { replicas, members } = proposal as Record<string, unknown>;
  const membersProblem = nodeSetProblem(members, 'members');
  if (membersProblem !== undefined) return invalid(membersProblem);
  const memberSet = new Set(members as number[]);
  if (!Array.isArray(replicas) || replicas.length !== partitionCount) return invalid(`it needs the replicas of each of the ${partitionCount} partitions`);
  for (const [i, list] of replicas.entries()) {
    const problem = nodeSetProblem(list, `the replicas of partition ${i}`);
    if (problem !== undefined) return invalid(problem);
    const outside = (list as number[]).filter((n) => !memberSet.has(n));
    if (outside.length > 0) return invalid(`the replicas of partition ${i} name node(s) ${outside.join(', ')}, which are not members`);
  }
  if (nextGroup + partitionCount - 1 > groupIdAllocatedMax) {
    return { ok: false, reason: 'no_slots', detail: `No group ids are left for ${partitionCount} partitions (the next is ${nextGroup})` };
  }
  const placement = (replicas as number[][]).map((list, i): PartitionPlacement => ({ group: nextGroup + i, replicas: [...list] }));
  return { ok: true, placement, nextGroup: nextGroup + partitionCount };
}
