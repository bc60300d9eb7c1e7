/**
 * POST /cluster/partitions/{group}/accept-loss for a partition of several replicas, every one damaged
 * (docs/replication.md, "Accepting the loss of a partition whose every replica is damaged"): the node
 * asked gathers every replica's report (its own, and each other node's GET
 * /cluster/partitions/{group}/replica), chooses the replica that keeps its log (group-loss-choice.ts)
 * and proposes `partition.loss` (placement and record in one metadata command). The nodes act on it
 * when they apply it (group-loss-apply.ts): the kept replica becomes the only voter, the others rejoin
 * empty as learners and are made voters again by the partition's leader (replica-move-plan.ts).
 *
 * What was lost is written into the record's reason (bounded): each other replica's log end and newest
 * offset beside the kept one's; entries past the kept log's end on any replica are gone, and offsets
 * after the kept newest offset will be given to new events.
 */
import type { Logger } from 'pino';
import { problems } from '../core/problem.js';
import { nodeOfMember } from '../core/member-id.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult } from '../metadata/state-machine.js';
import { lossTextLengthMax, type LossRecord } from '../metadata/accepted-losses.js';
import type { PlacedPartition } from '../metadata/placement-of.js';
import { groupLossChoice, type ReplicaReport } from './group-loss-choice.js';
import type { ReplicaReportAnswer } from './loss-service.js';

export interface GroupLossDeps {
  /** Asks the node of `member` for its replica's report (this node's own included); undefined when it did not answer. */
  ask(member: number, group: number): Promise<ReplicaReportAnswer | undefined>;
  /** Proposes a metadata command; resolves with its outcome once the leader applied it. */
  propose(cmd: MetadataCommand): Promise<ApplyResult>;
  newId(): string;
  nowMs(): number;
  logger: Logger;
}

/** The answer: the loss as recorded, the replicas as they reported, and who rejoins. */
export type GroupLossAnswer = LossRecord & {
  event_type: string;
  partition: string;
  kept: { newest_offset: string; last_index: number };
  /** The nodes whose replicas rejoin empty and are made voters again. */
  rejoin: number[];
  replicas: ReplicaReportAnswer[];
};

const toReport = (member: number, a: ReplicaReportAnswer | undefined): ReplicaReport =>
  a === undefined || a.member !== member ? { member, answered: false } : { member, answered: true, damaged: a.damage !== null, probing: a.probing, lastTerm: a.last_term, lastIndex: a.last_index };

export async function acceptGroupLoss(d: GroupLossDeps, at: PlacedPartition, named: number | undefined): Promise<GroupLossAnswer> {
  const p = at.placement;
  const group = p.group;
  const seen = { replicas: [...p.replicas], learners: [...(p.learners ?? [])] };
  const members = [...seen.replicas, ...seen.learners.filter((m) => !seen.replicas.includes(m))];
  const answers = await Promise.all(members.map((m) => d.ask(m, group).catch(() => undefined)));
  const verdict = groupLossChoice(group, { placement: seen, reports: members.map((m, i) => toReport(m, answers[i])), moving: p.moving !== undefined, ...(named === undefined ? {} : { named }) });
  if (!verdict.allowed) throw verdict.status === 404 ? problems.notFound(verdict.detail) : problems.conflict(verdict.detail);
  const got = answers.filter((a): a is ReplicaReportAnswer => a !== undefined);
  const kept = got.find((a) => a.member === verdict.keep)!;
  const floor = Math.max(...got.map((a) => a.term_floor));
  const others = got.filter((a) => a !== kept).map((a) => `node ${a.node} held up to index ${a.last_index} (term ${a.last_term}, newest offset ${a.newest_offset ?? '?'})`);
  const why = `${verdict.healthy || got.some((a) => a.damage === null) ? 'too few healthy replicas to elect a leader' : 'every replica damaged'} (kept: ${kept.damage ?? 'healthy'}); kept node ${kept.node} up to index ${kept.last_index} (term ${kept.last_term}, newest offset ${kept.newest_offset ?? '?'}); ${others.join('; ')}`;
  const loss: LossRecord = {
    id: d.newId(),
    scope: 'partition',
    node: kept.node,
    event_type: at.event_type,
    partition: at.partition,
    group,
    at: new Date(d.nowMs()).toISOString(),
    kept: { ...(kept.newest_offset === undefined ? {} : { newest_offset: kept.newest_offset }), last_index: kept.last_index },
    damage: { index: kept.damage_index ?? 0, term: kept.damage_term ?? 0, reason: why.slice(0, lossTextLengthMax) },
    term_before: kept.term,
    // Not known here: the kept replica's node moves it above the floor when it applies the command
    // (group-loss-apply.ts), and it leads after its next election timeout.
    term: 0,
  };
  const cmd: MetadataCommand = { op: 'partition.loss', group, keep: verdict.keep, seen, floor, loss };
  const r = await d.propose(cmd);
  if (!r.ok) throw r.reason === 'not_found' ? problems.notFound(r.detail) : problems.conflict(`Group ${group}: ${r.detail}`);
  d.logger.error(
    { lossAccepted: loss, rejoin: verdict.rejoin },
    `ACCEPTED DATA LOSS on partition ${at.partition} of ${at.event_type} (group ${group}), at the operator's request: every replica was damaged; ` +
      `node ${kept.node}'s keeps its log (raft index ${kept.last_index}, newest offset ${kept.newest_offset ?? '?'}) and becomes the only voter; ` +
      `the others (node(s) ${verdict.rejoin.map(nodeOfMember).join(', ')}) rejoin empty. Events past the kept log are gone, and their offsets will be given to new events`,
  );
  return { ...loss, event_type: at.event_type, partition: at.partition, kept: { newest_offset: kept.newest_offset ?? '', last_index: kept.last_index }, rejoin: verdict.rejoin.map(nodeOfMember), replicas: got };
}
