/**
 * When an operator may accept the loss of a partition's damaged sole replica (pure; the action is in
 * loss-service.ts, the Raft side in src/raft Raft.acceptLoss).
 *
 * Why a rule at all. A replica whose raft marker found a lost write-ahead-log tail (node-disk.ts) is
 * damaged: it neither votes nor leads until a healthy member has sent it what it lacks. With other
 * replicas that is a repair and happens by itself. With none (replication factor 1), nobody can, and
 * the partition keeps its records but never takes a write again. Accepting the loss makes what the
 * replica holds the partition's log; what it lacked is gone for good. That is only ever right when no
 * other member could bring the lost entries back: a partition with another voter or a replica being
 * added (a learner) is refused, even when that member is down (bring it back, or cancel the move),
 * since its copy may hold exactly what this one lost.
 */
import { nodeOfMember } from '../core/member-id.js';

/** What the rule goes by, as this node sees it. */
export interface LossFacts {
  /** The partition's placement (member ids), or undefined when no partition is replicated by the group. */
  readonly placement: { readonly replicas: readonly number[]; readonly learners: readonly number[] } | undefined;
  /** This node's member in the placement (undefined: the placement lists no member on this node). */
  readonly member: number | undefined;
  /** Whether this node's replica of it is open (one still opening, or whose open failed, is not). */
  readonly open: boolean;
  /** Whether that replica is damaged (it lacks entries it may have acknowledged). */
  readonly damaged: boolean;
  /** Whether it is still learning a term floor from other members (it then has some). */
  readonly probing: boolean;
}

export type LossVerdict = { readonly allowed: true } | { readonly allowed: false; readonly status: 404 | 409; readonly detail: string };

const nodes = (members: readonly number[]): string => [...new Set(members.map(nodeOfMember))].join(', ');

export function lossAcceptance(group: number, f: LossFacts): LossVerdict {
  const p = f.placement;
  if (p === undefined) return { allowed: false, status: 404, detail: `No partition is replicated by group ${group}; GET /cluster lists the groups` };
  if (f.member === undefined) {
    return { allowed: false, status: 409, detail: `This node holds no replica of group ${group}; node(s) ${nodes([...p.replicas, ...p.learners])} do: ask the node that holds the damaged replica` };
  }
  const others = [...p.replicas, ...p.learners].filter((m) => m !== f.member);
  if (others.length > 0) {
    return {
      allowed: false,
      status: 409,
      detail:
        `Group ${group} has other replicas (node(s) ${nodes(others)}): a damaged replica is repaired from them, and their copies may hold what this one lost. ` +
        'When every replica is damaged (or too few are healthy to elect a leader), accept the partition\'s loss by its group (POST /cluster/partitions/{group}/accept-loss, ' +
        'brook cluster accept-loss <event-type> <partition>): the replica with the newest log keeps it',
    };
  }
  if (!f.open) return { allowed: false, status: 409, detail: `This node's replica of group ${group} is not open (it is still opening, or its open failed: the node's log says why): there is nothing to accept yet` };
  if (!f.damaged) return { allowed: false, status: 409, detail: `This node's replica of group ${group} is not damaged: it lost nothing, and leads by itself` };
  if (f.probing) return { allowed: false, status: 409, detail: `This node's replica of group ${group} is still learning its term floor; try again in a moment` };
  return { allowed: true };
}
