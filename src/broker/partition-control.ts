/**
 * Commands of a partition's group that carry no events (a seal for a timeline switch, a base), proposed
 * through the group's leader from any node (docs/decisions.md "Storages and timelines").
 *
 * The caller may hold a replica of the group (it then knows the leader and its term) or not (it asks
 * the replicas in turn, each naming the leader it knows). A "not leader" answer is retried on the named
 * leader until the deadline, like a forwarded append. Both commands are idempotent (sealing again for
 * the same switch answers the same offset; a base on a written log changes nothing), so a retry after
 * a lost answer is harmless, and no request id is needed.
 */
import { PartitionUnavailableError } from '../log/index.js';
import { encodeBaseEntry, encodeSealEntry, PartitionEntryError } from '../log/partition-entry.js';
import type { Clock } from '../core/ports.js';
// nodeOfMember(noNode) is noNode: a member id's node part of 0 is 0.
import { nodeOfMember } from '../core/member-id.js';
import { noNode, type NodeId } from '../raft/index.js';
import type { ControlAnswer, ControlCommand, ControlRequest } from '../transport/index.js';
import type { PartitionReplica } from './partition-replica.js';
import { ProposalFailedError } from './raft-host/raft-group.js';

export type { ControlAnswer, ControlCommand, ControlRequest };

/** How a node sends a control command to another (the gRPC transport's forwardControl). */
export type ControlSender = (to: NodeId, req: ControlRequest) => Promise<ControlAnswer>;

/** A seal refused because the log was sealed for another timeline switch (never retried). */
export class SealConflictError extends Error {
  override name = 'SealConflictError';
  constructor(readonly topic: number, readonly partition: number, readonly sealedFor: string, detail: string) {
    super(`topic ${topic} partition ${partition}: ${detail}`);
  }
}

/** Where a partition's group is, as the node that sends the command sees it. */
export interface ControlRoute {
  readonly self: NodeId;
  readonly group: number;
  readonly topic: number;
  readonly partition: number;
  /** This node's replica of the group, if it holds one. */
  readonly local: PartitionReplica | undefined;
  /** The group's other replicas: asked in turn when no leader is known. */
  readonly others: readonly NodeId[];
}

export interface ControlDeps {
  readonly clock: Clock;
  readonly send: ControlSender | undefined;
  readonly sleep: (ms: number) => Promise<void>;
}

const retryMs = 25;

/** The group's entry for a command; throws PartitionEntryError for one that cannot be encoded. */
function entryOf(cmd: ControlCommand): Buffer {
  return cmd.kind === 'seal' ? encodeSealEntry(cmd.timeline, cmd.floor) : encodeBaseEntry(cmd.base);
}

/** The leader's side: proposes the command to the group this node leads and answers once it is applied. */
export async function serveControl(r: PartitionReplica, req: ControlRequest, clock: Clock): Promise<ControlAnswer> {
  const g = r.group;
  // Hints name nodes on the wire: the group's leader is a member id (core/member-id.ts).
  if (!g.isLeader()) return { status: 'notLeader', leaderHint: nodeOfMember(g.leader), epoch: g.term };
  let data: Buffer;
  try {
    data = entryOf(req.command);
  } catch (err) {
    if (err instanceof PartitionEntryError) return { status: 'refused', detail: err.message };
    throw err;
  }
  try {
    const applied = await g.propose(data, clock.monotonicMs() + req.deadlineMs, req.epoch);
    // A seal's outcome (never a batches entry's: a seal is an entry of its own, not coalesced).
    const out = applied.outcome === undefined || !('kind' in applied.outcome) ? undefined : applied.outcome;
    if (req.command.kind === 'seal') {
      if (out?.kind === 'seal') return { status: 'applied', epoch: applied.term, next: out.next };
      if (out?.kind === 'sealRefused') return { status: 'refused', detail: `the log was sealed for timeline ${out.sealedFor}, not ${req.command.timeline}`, sealedFor: out.sealedFor };
      return { status: 'unavailable', detail: 'the seal was applied without its outcome' };
    }
    return { status: 'applied', epoch: applied.term, next: r.bounds().newest + 1 };
  } catch (err) {
    if (err instanceof ProposalFailedError && (err.reason === 'notLeader' || err.reason === 'overwritten')) return { status: 'notLeader', leaderHint: nodeOfMember(err.leader), epoch: err.term };
    return { status: 'unavailable', detail: (err as Error).message };
  }
}

/**
 * Applies `cmd` in the partition's group through its leader, wherever it is; resolves with the log's
 * next offset after it (for a seal: where the new timeline starts). Throws SealConflictError for a
 * seal refused because of another switch, PartitionUnavailableError when no leader applied it in time.
 */
export async function proposeControl(route: ControlRoute, cmd: ControlCommand, deadlineMs: number, flowId: string, deps: ControlDeps): Promise<number> {
  const { topic, partition, local } = route;
  let hint: NodeId = noNode;
  let lastDetail = 'no leader is known';
  for (let round = 0; ; round++) {
    let order: NodeId[];
    if (local !== undefined) {
      const lead = local.group.isLeader() ? route.self : nodeOfMember(local.group.leader);
      order = lead !== noNode ? [lead] : hint !== noNode ? [hint] : [];
    } else order = hint !== noNode ? [hint, ...route.others.filter((n) => n !== hint)] : [...route.others];
    for (const to of order) {
      const remaining = Math.max(1, deadlineMs - deps.clock.monotonicMs());
      // The term is named only when it is known to be the leader's (this node's own replica told it).
      const epoch = local !== undefined && to === nodeOfMember(local.group.leader) ? local.group.term : 0;
      const req: ControlRequest = { group: route.group, topic, partition, epoch, flowId, deadlineMs: remaining, command: cmd };
      let answer: ControlAnswer;
      if (to === route.self && local !== undefined) answer = await serveControl(local, req, deps.clock);
      else if (deps.send === undefined) answer = { status: 'unavailable', detail: `node ${to} cannot be reached (no transport)` };
      else answer = await deps.send(to, req).catch((err: Error): ControlAnswer => ({ status: 'unavailable', detail: err.message }));
      if (answer.status === 'applied') return answer.next;
      if (answer.status === 'refused') {
        if (answer.sealedFor !== undefined) throw new SealConflictError(topic, partition, answer.sealedFor, answer.detail);
        throw new PartitionUnavailableError(topic, partition, new Error(`node ${to} refused the ${cmd.kind}: ${answer.detail}`));
      }
      if (answer.status === 'notLeader') {
        lastDetail = `node ${to} does not lead it`;
        if (answer.leaderHint !== noNode && answer.leaderHint !== to) {
          hint = answer.leaderHint;
          break;
        }
      } else lastDetail = `node ${to}: ${answer.detail}`;
    }
    if (deps.clock.monotonicMs() >= deadlineMs) {
      throw new PartitionUnavailableError(topic, partition, new Error(`no leader applied the ${cmd.kind} in time (${lastDetail})`));
    }
    if (round > 0 || order.length === 0) await deps.sleep(retryMs);
  }
}
