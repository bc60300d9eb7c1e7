/**
 * Raft member ids that are not node ids (docs/metadata-raft.md, "A wiped directory is a new member").
 *
 * A Raft group names its members by id, and the transport routes by node. For partition groups the
 * two are the same. The metadata group needs more: a node whose data directory was wiped (or lost its
 * raft state) must come back as a NEW member, so that nothing its former self voted or acknowledged
 * can be taken for the new member's word, and so that the former member can be removed from the
 * configuration (its messages, still in flight, are then not counted: the core counts votes and
 * acknowledgements of configured members only).
 *
 * A member id encodes the node id and an incarnation of that node's directory in one safe integer:
 * `incarnation * 2^31 + node`. Node ids are at most 2^31 - 1 (config.ts), so `node` is the id modulo
 * 2^31 and the transport routes any member id without a lookup table. Incarnation 0 is the node id
 * itself: founders, every partition group and every directory written before member ids existed keep
 * their ids (and their records) unchanged. Incarnations go up to 2^22 - 1 so that the id stays below
 * 2^53 (safe in JSON, in float64 conf change records and in the u64 wire and record fields).
 */

/** Node ids are within [1, nodeIdMax] (config.ts checks BROOK_NODE_ID and BROOK_PEERS against it). */
export const nodeIdMax = 2 ** 31 - 1;
const nodeSpan = 2 ** 31;
/** The largest incarnation: (2^22 - 1) * 2^31 + (2^31 - 1) = 2^53 - 1. */
export const memberIncarnationMax = 2 ** 22 - 1;

/** The member id of incarnation `incarnation` of node `node` (incarnation 0: the node id itself). */
export function memberIdOf(node: number, incarnation: number): number {
  if (!Number.isSafeInteger(node) || node < 1 || node > nodeIdMax) throw new RangeError(`not a node id: ${node}`);
  if (!Number.isSafeInteger(incarnation) || incarnation < 0 || incarnation > memberIncarnationMax) throw new RangeError(`not a member incarnation: ${incarnation}`);
  return incarnation * nodeSpan + node;
}

/** The node a member id lives on (the id itself for incarnation 0). */
export function nodeOfMember(member: number): number {
  return member % nodeSpan;
}

/** The incarnation a member id names (0: the node's original member, its id the node id). */
export function incarnationOfMember(member: number): number {
  return Math.floor(member / nodeSpan);
}

/** A member id as people read it: "3" for incarnation 0, "3.17" for incarnation 17 of node 3. */
export function memberLabel(member: number): string {
  const inc = incarnationOfMember(member);
  return inc === 0 ? String(member) : `${nodeOfMember(member)}.${inc}`;
}

/**
 * The member each node runs now, one per node: of the member ids given (a metadata configuration,
 * which holds a wiped node's former member beside its new one until the replacement removes it), the
 * latest incarnation of each node. What new placements and replica moves name: a replica placed on a
 * former member would be held by nobody (its node runs the new member only).
 */
export function currentMembers(members: Iterable<number>): number[] {
  const latest = new Map<number, number>();
  for (const m of members) {
    const node = nodeOfMember(m);
    const seen = latest.get(node);
    if (seen === undefined || incarnationOfMember(m) > incarnationOfMember(seen)) latest.set(node, m);
  }
  return [...latest.values()].sort((a, b) => a - b);
}
