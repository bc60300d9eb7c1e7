/**
 * Which other nodes a replica asks (for entries, bounds, reads, a repair): pure rules over the
 * member ids a placement or a group names, without I/O, so that the order of asking is tested apart
 * from the fetches and reads that follow it (partition-replicas.ts and its parts).
 */
import { nodeOfMember } from '../core/member-id.js';
import { noNode, type NodeId } from '../raft/index.js';

/**
 * The nodes of `members` (member ids; noNode is skipped) other than `self`, each once, in the order
 * of their first member: a list that names the leader first keeps it first.
 */
export function otherNodes(members: readonly number[], self: NodeId): NodeId[] {
  const out: NodeId[] = [];
  for (const m of members) {
    if (m === noNode) continue;
    const n = nodeOfMember(m);
    if (n !== self && !out.includes(n)) out.push(n);
  }
  return out;
}

/**
 * The replicas a read or a bounds ask for a partition held elsewhere goes to: `nodes` in their order,
 * but the one that answered last first when it is still among them (it answered: it is likely to
 * again, and a read that fails over goes on to the others).
 */
export function answeredLastFirst(nodes: readonly NodeId[], last: NodeId | undefined): NodeId[] {
  if (last === undefined || !nodes.includes(last)) return [...nodes];
  return [last, ...nodes.filter((n) => n !== last)];
}

/**
 * The nodes a batch for a partition held elsewhere is forwarded to, in turn: the leader a replica
 * named (`hint`, even one the placement does not list yet) first, then the replicas.
 */
export function hintFirst(nodes: readonly NodeId[], hint: NodeId): readonly NodeId[] {
  return hint !== noNode ? [hint, ...nodes.filter((t) => t !== hint)] : nodes;
}
