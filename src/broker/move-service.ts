/**
 * POST /cluster/partitions/{group}/move and DELETE .../move (administrator-only): the operator's way to
 * move a replica of a partition to another node, or to cancel a move that has not promoted its new
 * replica yet. The request records the move's first step (partition.move add_learner) in metadata and
 * answers 202: the partition's group leader carries out the rest (replica-mover.ts) and GET /cluster
 * shows how far it is (`learners`, `moving`, then the new `replicas`).
 */
import { problems, type Problem } from '../core/problem.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { placedPartitions, type PlacedPartition } from '../metadata/placement-of.js';
import { isNodeId, memberOnNode, type PartitionPlacement } from '../metadata/placement-types.js';
import { nodeOfMember } from '../core/member-id.js';
import type { ApplyResult } from '../metadata/state-machine.js';
import type { EventTypeRecord } from '../metadata/types.js';

export interface MoveServiceOptions {
  eventTypes(): Iterable<EventTypeRecord>;
  /** The cluster's members (voters and learners of the metadata group): a move may only go to one of them. */
  members(): readonly number[];
  propose(cmd: MetadataCommand): Promise<ApplyResult>;
  /** The replica of partitions created before placement existed (placement-of.ts). */
  legacyReplica: number;
}

/** The answer of a move request: the partition and its placement as now stored. */
export interface MoveAnswer {
  event_type: string;
  partition: string;
  topic: number;
  group: number;
  placement: { replicas: number[]; learners: number[]; moving: { from: number; to: number } | null };
}

function groupOf(raw: string): number {
  const group = /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(group) || group >= 2 ** 32) throw problems.notFound(`No partition is replicated by group ${JSON.stringify(raw)}; GET /cluster lists the groups`);
  return group;
}

function problemOf(r: Extract<ApplyResult, { ok: false }>): Problem {
  if (r.reason === 'not_found') return problems.notFound(r.detail);
  if (r.reason === 'conflict') return problems.conflict(r.detail);
  return problems.unprocessable(r.detail);
}

function answer(at: PlacedPartition, p: PartitionPlacement): MoveAnswer {
  return {
    event_type: at.event_type,
    partition: at.partition,
    topic: at.topic,
    group: p.group,
    placement: { replicas: [...p.replicas], learners: [...(p.learners ?? [])], moving: p.moving === undefined ? null : { ...p.moving } },
  };
}

export class MoveService {
  readonly #o: MoveServiceOptions;

  constructor(o: MoveServiceOptions) {
    this.#o = o;
  }

  #find(group: number): PlacedPartition {
    for (const p of placedPartitions(this.#o.eventTypes(), this.#o.legacyReplica)) if (p.placement.group === group) return p;
    throw problems.notFound(`No partition is replicated by group ${group}; GET /cluster lists the groups`);
  }

  /** Starts moving the replica on `from` to `to` (body `{"from": n, "to": m}`). */
  async start(rawGroup: string, body: unknown): Promise<MoveAnswer> {
    const group = groupOf(rawGroup);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw problems.unprocessable('The body must be an object: {"from": <node id>, "to": <node id>}');
    const { from, to } = body as Record<string, unknown>;
    if (!isNodeId(from) || !isNodeId(to)) throw problems.unprocessable('"from" and "to" must be node ids (positive integers)');
    const extra = Object.keys(body).filter((k) => k !== 'from' && k !== 'to');
    if (extra.length > 0) throw problems.unprocessable(`Unknown field(s): ${extra.join(', ')}`);
    const at = this.#find(group);
    // The API names nodes; placements and the metadata group's members name member ids (a node's
    // wiped directory runs a later incarnation: core/member-id.ts). The move takes the member the
    // placement lists on `from` to the member `to` runs now.
    const members = this.#o.members();
    const memberOf = (n: number) => members.find((m) => nodeOfMember(m) === n);
    for (const n of [from, to]) if (memberOf(n) === undefined) throw problems.unprocessable(`Node ${n} is not a member of this cluster (members: ${members.map(nodeOfMember).join(', ')})`);
    if (from === to) throw problems.unprocessable('A replica cannot move to the node it is on');
    if (at.placement.moving !== undefined) throw problems.conflict(`Group ${group} is already moving a replica from ${at.placement.moving.from} to ${at.placement.moving.to}`);
    const r = await this.#o.propose({ op: 'partition.move', group, step: 'add_learner', from: memberOnNode(at.placement, from) ?? from, to: memberOf(to)! });
    if (!r.ok) throw problemOf(r);
    return answer(at, r.placement ?? at.placement);
  }

  /** Cancels the move in flight, if its new replica has not been promoted yet. */
  async cancel(rawGroup: string): Promise<MoveAnswer> {
    const group = groupOf(rawGroup);
    const at = this.#find(group);
    const moving = at.placement.moving;
    if (moving === undefined) throw problems.conflict(`Group ${group} has no move in flight`);
    const r = await this.#o.propose({ op: 'partition.move', group, step: 'cancel', from: moving.from, to: moving.to });
    if (!r.ok) throw r.reason === 'invalid' ? problems.conflict(r.detail) : problemOf(r);
    return answer(at, r.placement ?? at.placement);
  }
}
