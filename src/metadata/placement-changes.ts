/**
 * Changing a stored placement: the steps of partition.move and partition.leader. PURE.
 *
 * A placement is the desired configuration of the partition's Raft group. Every step changes it by one
 * member (add a learner, promote it, remove the old voter), so the partition leader that carries it
 * out always has exactly one configuration change to make, as Raft's single-server changes require.
 * The state machine refuses a step that does not follow the move in flight, and a second move while
 * one is in flight.
 *
 * A partition of a legacy log (no stored placement) is addressed by its derived group id. Its first
 * move stores the placement of the whole log, each partition with the move's `from` as its only replica:
 * the proposer names the legacy replica (placementOf), which holds every partition of such a log.
 */
import type { MetadataCommand } from './commands.js';
import { partitionMoveSteps } from './commands.js';
import { isLegacyTopic, placementOf, withTopicPlacement } from './placement-of.js';
import { nodeOfMember } from '../core/member-id.js';
import { isMemberId, legacyGroupParts, type PartitionPlacement } from './placement-types.js';
import { timelinesOf } from './timelines.js';
import type { EventTypeRecord } from './types.js';

export type PlacementCommand = Extract<MetadataCommand, { op: 'partition.move' | 'partition.leader' }>;

export type PlacementChange =
  | { ok: true; record: EventTypeRecord; placement: PartitionPlacement }
  | { ok: false; reason: 'not_found' | 'conflict' | 'invalid'; detail: string };

interface Located {
  rec: EventTypeRecord;
  topic: number;
  index: number;
  /** The topic's placements, stored or (legacy) derived. */
  placements: PartitionPlacement[];
  legacy: boolean;
}

/** The partition replicated by `group`, stored or legacy. */
function locate(records: Iterable<EventTypeRecord>, group: number, legacyReplica: number): Located | undefined {
  const legacyParts = legacyGroupParts(group);
  for (const rec of records) {
    for (const tl of timelinesOf(rec)) {
      const legacy = isLegacyTopic(rec, tl.topic);
      if (legacy && (legacyParts === undefined || legacyParts.topic !== tl.topic)) continue;
      const placements = rec.storage.partitions.map((_, i) => placementOf(rec, tl.topic, i, legacyReplica));
      const index = placements.findIndex((p) => p.group === group);
      if (index >= 0) return { rec, topic: tl.topic, index, placements, legacy };
    }
  }
  return undefined;
}

const rejected = (reason: 'not_found' | 'conflict' | 'invalid', detail: string): PlacementChange => ({ ok: false, reason, detail });

/** A placement with empty optional parts left out, so equal placements serialize alike. */
function normalized(p: PartitionPlacement): PartitionPlacement {
  const out: PartitionPlacement = { group: p.group, replicas: p.replicas };
  if (p.learners !== undefined && p.learners.length > 0) out.learners = p.learners;
  if (p.moving !== undefined) out.moving = p.moving;
  if (p.founders !== undefined) out.founders = p.founders;
  return out;
}

/** One step of a move applied to a placement (the rules the state machine applies; the host simulation models metadata with it). */
export function moveStep(p: PartitionPlacement, cmd: Extract<PlacementCommand, { op: 'partition.move' }>): PartitionPlacement | PlacementChange {
  const { from, to } = cmd;
  const learners = p.learners ?? [];
  if (cmd.step === 'rejoin') {
    // A learner left by an accepted loss of the whole group (lossPlacement) becomes a voter again.
    if (p.moving !== undefined) return rejected('conflict', `Group ${p.group} is moving a replica from ${p.moving.from} to ${p.moving.to}; a rejoin waits for it`);
    if (!learners.includes(to)) return rejected('invalid', `Node ${to} is not a learner of group ${p.group}`);
    return { ...p, replicas: [...p.replicas, to], learners: learners.filter((n) => n !== to) };
  }
  if (cmd.step === 'add_learner') {
    if (p.moving !== undefined) return rejected('conflict', `Group ${p.group} is already moving a replica from ${p.moving.from} to ${p.moving.to}`);
    if (!p.replicas.includes(from)) return rejected('invalid', `Node ${from} is not a replica of group ${p.group}`);
    if (p.replicas.includes(to) || learners.includes(to)) return rejected('invalid', `Node ${to} already replicates group ${p.group}`);
    // A node holds one member of a group; the one exception is a replacement, a move from the member
    // of a node's wiped directory to the member of its new one (docs/partition-replication.md).
    const node = nodeOfMember(to);
    if (node !== nodeOfMember(from) && [...p.replicas, ...learners].some((m) => nodeOfMember(m) === node)) return rejected('invalid', `Node ${node} already replicates group ${p.group}`);
    return { ...p, learners: [...learners, to], moving: { from, to }, founders: p.founders ?? [...p.replicas].sort((a, b) => a - b) };
  }
  if (p.moving === undefined) return rejected('invalid', `Group ${p.group} has no move in flight`);
  if (p.moving.from !== from || p.moving.to !== to) {
    return rejected('conflict', `Group ${p.group} is moving a replica from ${p.moving.from} to ${p.moving.to}, not from ${from} to ${to}`);
  }
  const promoted = p.replicas.includes(to);
  switch (cmd.step) {
    case 'promote':
      if (promoted) return rejected('invalid', `Node ${to} is already a voter of group ${p.group}`);
      return { ...p, replicas: [...p.replicas, to], learners: learners.filter((n) => n !== to) };
    case 'remove':
      if (!promoted) return rejected('invalid', `Node ${to} must be promoted before ${from} leaves group ${p.group}`);
      // `to` takes the place of `from`, so the order (and the preferred leader's slot) is kept.
      return { group: p.group, replicas: p.replicas.filter((n) => n !== to).map((n) => (n === from ? to : n)), learners, ...(p.founders === undefined ? {} : { founders: p.founders }) };
    case 'cancel':
      if (promoted) return rejected('invalid', `Node ${to} was promoted; move it out with a new move instead`);
      return { group: p.group, replicas: p.replicas, learners: learners.filter((n) => n !== to), ...(p.founders === undefined ? {} : { founders: p.founders }) };
  }
}

function leaderStep(p: PartitionPlacement, leader: number): PartitionPlacement | PlacementChange {
  if (!p.replicas.includes(leader)) return rejected('invalid', `Node ${leader} is not a voter of group ${p.group}`);
  return { ...p, replicas: [leader, ...p.replicas.filter((n) => n !== leader)] };
}

function commandProblem(cmd: PlacementCommand): string | undefined {
  if (!Number.isSafeInteger(cmd.group) || cmd.group < 1) return `${String(cmd.group)} is not a partition group id`;
  if (cmd.op === 'partition.leader') return isMemberId(cmd.leader) ? undefined : `${String(cmd.leader)} is not a member id`;
  if (!partitionMoveSteps.includes(cmd.step)) return `${String(cmd.step)} is not a move step`;
  if (!isMemberId(cmd.from) || !isMemberId(cmd.to)) return 'from and to must be member ids';
  if (cmd.step === 'rejoin' ? cmd.from !== cmd.to : cmd.from === cmd.to) return cmd.step === 'rejoin' ? 'a rejoin names its member as from and to' : 'a replica cannot move to the member it is';
  return undefined;
}

/** Applies partition.move or partition.leader to the records; the changed record replaces its old self. */
export function changePlacement(records: Iterable<EventTypeRecord>, cmd: PlacementCommand): PlacementChange {
  const problem = commandProblem(cmd);
  if (problem !== undefined) return rejected('invalid', problem);
  // A legacy log's only replica is the one the proposer names; only a move's first step may name it.
  const legacyReplica = cmd.op === 'partition.move' ? cmd.from : 0;
  const at = locate(records, cmd.group, legacyReplica);
  if (at === undefined) return rejected('not_found', `No partition is replicated by group ${cmd.group}`);
  if (at.legacy && !(cmd.op === 'partition.move' && cmd.step === 'add_learner')) {
    return rejected('invalid', `Group ${cmd.group} predates placement and has one replica; start with a move (add_learner)`);
  }
  const current = at.placements[at.index]!;
  const next = cmd.op === 'partition.move' ? moveStep(current, cmd) : leaderStep(current, cmd.leader);
  if ('ok' in next) return next;
  const placement = normalized(next);
  const placements = at.placements.map((p, i) => (i === at.index ? placement : p));
  return { ok: true, record: withTopicPlacement(at.rec, at.topic, placements), placement };
}

export type LossCommand = Extract<MetadataCommand, { op: 'partition.loss' }>;

const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The placement after an operator accepted the loss of a partition whose every replica is damaged
 * (partition.loss; docs/replication.md): the kept member is the only voter, every other member of the
 * placement the proposer saw a learner, in placement order (they rejoin empty and are made voters
 * again one by one: the `rejoin` step); the move in flight is dropped. Refused when the placement is
 * not the one the proposer saw (a step applied in between: the choice was made on other facts).
 */
export function lossPlacement(p: PartitionPlacement, cmd: LossCommand): PartitionPlacement | PlacementChange {
  const learners = p.learners ?? [];
  if (!sameList(p.replicas, cmd.seen.replicas) || !sameList(learners, cmd.seen.learners)) {
    return rejected('conflict', `The placement of group ${p.group} changed since the replicas were asked (voters ${p.replicas.join(', ')}, learners ${learners.join(', ') || 'none'}); ask again`);
  }
  const members = [...p.replicas, ...learners.filter((m) => !p.replicas.includes(m))];
  if (!members.includes(cmd.keep)) return rejected('invalid', `Member ${cmd.keep} is not a replica of group ${p.group}`);
  return { group: p.group, replicas: [cmd.keep], learners: members.filter((m) => m !== cmd.keep), founders: p.founders ?? [...p.replicas].sort((a, b) => a - b) };
}

/** Applies partition.loss's placement to the records (the loss record is the state machine's). */
export function acceptGroupLoss(records: Iterable<EventTypeRecord>, cmd: LossCommand): PlacementChange {
  if (!Number.isSafeInteger(cmd.group) || cmd.group < 1) return rejected('invalid', `${String(cmd.group)} is not a partition group id`);
  if (!isMemberId(cmd.keep)) return rejected('invalid', `${String(cmd.keep)} is not a member id`);
  if (cmd.loss.scope !== 'partition' || cmd.loss.group !== cmd.group) return rejected('invalid', `The loss record of group ${cmd.group} must be a partition's, of that group`);
  const at = locate(records, cmd.group, 0);
  if (at === undefined) return rejected('not_found', `No partition is replicated by group ${cmd.group}`);
  if (at.legacy) return rejected('invalid', `Group ${cmd.group} predates placement and has one replica; accept its loss as a sole replica's`);
  const next = lossPlacement(at.placements[at.index]!, cmd);
  if ('ok' in next) return next;
  const placement = normalized(next);
  return { ok: true, record: withTopicPlacement(at.rec, at.topic, at.placements.map((p, i) => (i === at.index ? placement : p))), placement };
}
