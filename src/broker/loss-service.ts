/**
 * POST /cluster/partitions/{group}/accept-loss and POST /cluster/accept-loss (administrator-only): the
 * operator accepts the loss of a partition whose only replica is damaged (docs/replication.md,
 * "Accepting the loss of a sole replica"). The rule is loss-acceptance.ts; the Raft side is
 * src/raft Raft.acceptLoss. Every acceptance is logged at error level with what the replica holds
 * and what it may have lost, and recorded in the metadata (`loss.accepted`, loss-records.ts): GET /cluster
 * lists it (`accepted_losses`) on every node, after restarts too.
 */
import type { Logger } from 'pino';
import { problems } from '../core/problem.js';
import type { NodeId } from '../raft/index.js';
import type { PlacedPartition } from '../metadata/placement-of.js';
import { memberOnNode } from '../metadata/placement-types.js';
import { lossAcceptance, type LossFacts } from './loss-acceptance.js';
import { lossTextLengthMax, type AcceptedLosses, type LossRecord } from '../metadata/accepted-losses.js';
import type { PartitionReplica } from './partition-replica.js';
import type { PartitionReplicas } from './partition-replicas.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult } from '../metadata/state-machine.js';
import { nodeOfMember } from '../core/member-id.js';
import { acceptGroupLoss, type GroupLossAnswer } from './group-loss.js';

export interface LossServiceOptions {
  /** Every partition with its placement, from this node's applied metadata (metadata/placement-of.ts). */
  placed(): Iterable<PlacedPartition>;
  /** This node's replicas, one set per open storage (node-replica-set.ts). */
  replicas(): Iterable<PartitionReplicas>;
  readonly self: NodeId;
  /** The wire form of a partition's cursor after `offset` (-1: BEGIN; consumption/cursors.ts formatCursor). */
  formatCursor(eventType: string, partition: string, offset: number): string;
  /** Wall-clock time (the record's `at`) and a monotonic one (the wait for the replica to lead). */
  nowMs(): number;
  monotonicMs(): number;
  logger: Logger;
  /** How long an answer waits for the replica to lead, and then for the record (default 5000 ms each). */
  leadWaitMs?: number;
  /** A fresh id for each record. */
  newId(): string;
  /** The losses the metadata this node applied records (absent: none, in unit tests without metadata). */
  recorded?(): AcceptedLosses;
  /** Records a loss in the metadata, resolving once this node applied it (loss-records.ts); never rejects. */
  record?(loss: LossRecord): Promise<void>;
  /**
   * For a partition of several replicas (group-loss.ts): asks another node for its replica's report
   * (GET /cluster/partitions/{group}/replica, with the operator's credentials); undefined when it did
   * not answer. And proposes a metadata command. Absent: such a partition is refused.
   */
  askPeer?(node: number, group: number, authorization: string | undefined): Promise<ReplicaReportAnswer | undefined>;
  propose?(cmd: MetadataCommand): Promise<ApplyResult>;
}

/** One accepted loss of a partition, as answered (the record in the metadata: accepted-losses.ts). */
export type AcceptedLoss = LossRecord & { event_type: string; partition: string; kept: { newest_offset: string; last_index: number } };

/** What the metadata group's own acceptance (BROOK_ACCEPT_METADATA_LOSS) is recorded with (metadata-group.ts). */
export interface MetadataLossFacts {
  damage: { index: number; term: number; reason: string };
  lastIndex: number;
  termBefore: number;
  term: number;
}

/**
 * GET /cluster/partitions/{group}/replica: this node's replica of a partition, as the lever for a group
 * whose every replica is damaged compares them (group-loss-choice.ts; docs/replication.md).
 */
export interface ReplicaReportAnswer {
  group: number;
  event_type: string;
  partition: string;
  node: number;
  member: number;
  /** What its damage mark says, or null when it is not damaged. */
  damage: string | null;
  /** Still learning a term floor from the other replicas. */
  probing: boolean;
  term: number;
  /** Its log's last entry. */
  last_term: number;
  last_index: number;
  /** The highest of its term, its damage term and its node's (storage's) term ceiling. */
  term_floor: number;
  /** Its damage mark's index and term (absent: not damaged), and its newest offset (a cursor; BEGIN when empty). */
  damage_index?: number;
  damage_term?: number;
  newest_offset?: string;
}

/** GET /cluster: every recorded loss (from the metadata) and this node's not yet recorded ones. */
export interface LossesView {
  accepted_losses: (LossRecord & { recorded: boolean })[];
  /** Recorded losses older than the listed ones, let go to bound the metadata. */
  accepted_losses_older: number;
}

export interface AcceptAllAnswer {
  accepted: AcceptedLoss[];
  /** Damaged replicas of this node that were not accepted, each with why (another replica can repair it, ...). */
  refused: { group: number; event_type: string; partition: string; detail: string }[];
}

export class LossService {
  readonly #o: LossServiceOptions;
  /** Losses accepted on this node that the applied metadata does not hold yet, by id. */
  readonly #pending = new Map<string, LossRecord>();

  constructor(o: LossServiceOptions) {
    this.#o = o;
  }

  /** GET /cluster: the losses recorded in the metadata (from every node, for good), then this node's not yet recorded ones. */
  view(): LossesView {
    const recorded = this.#o.recorded?.() ?? { records: [], older: 0 };
    const ids = new Set(recorded.records.map((r) => r.id));
    for (const id of [...this.#pending.keys()]) if (ids.has(id)) this.#pending.delete(id);
    return {
      accepted_losses: [...recorded.records.map((r) => ({ ...r, recorded: true })), ...[...this.#pending.values()].map((r) => ({ ...r, recorded: false }))],
      accepted_losses_older: recorded.older,
    };
  }

  /**
   * The metadata group leads again after its loss was accepted at the start (BROOK_ACCEPT_METADATA_LOSS,
   * metadata-group.ts): recorded like a partition's, once the group commits again.
   */
  metadataLossAccepted(f: MetadataLossFacts): LossRecord {
    const record: LossRecord = {
      id: this.#o.newId(),
      scope: 'metadata',
      node: this.#o.self,
      group: 0,
      at: new Date(this.#o.nowMs()).toISOString(),
      kept: { last_index: f.lastIndex },
      damage: { index: f.damage.index, term: f.damage.term, reason: f.damage.reason.slice(0, lossTextLengthMax) },
      term_before: f.termBefore,
      term: f.term,
    };
    this.#pending.set(record.id, record);
    void this.#o.record?.(record);
    return record;
  }

  /** Records `record` in the metadata, waiting at most `ms` for it (it goes on in the background). */
  async #record(record: LossRecord, ms: number): Promise<void> {
    this.#pending.set(record.id, record);
    const done = this.#o.record?.(record);
    if (done === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  #where(group: number): { at: PlacedPartition | undefined; replica: PartitionReplica | undefined; set: PartitionReplicas | undefined } {
    let at: PlacedPartition | undefined;
    for (const p of this.#o.placed()) if (p.placement.group === group) at = p;
    for (const set of this.#o.replicas()) {
      const replica = set.hostedGroup(group);
      if (replica !== undefined) return { at, replica, set };
    }
    return { at, replica: undefined, set: undefined };
  }

  #facts(group: number): { facts: LossFacts; at: PlacedPartition | undefined; replica: PartitionReplica | undefined; set: PartitionReplicas | undefined } {
    const { at, replica, set } = this.#where(group);
    const placement = at === undefined ? undefined : { replicas: at.placement.replicas, learners: at.placement.learners ?? [] };
    const raw = replica?.group.raw;
    const facts: LossFacts = {
      placement,
      member: at === undefined ? undefined : memberOnNode(at.placement, this.#o.self),
      open: replica !== undefined,
      damaged: raw?.status().damaged !== null && raw !== undefined,
      probing: raw?.probing ?? false,
    };
    return { facts, at, replica, set };
  }

  /** GET /cluster/partitions/{group}/replica. */
  report(rawGroup: string): ReplicaReportAnswer {
    const group = this.#group(rawGroup);
    const { facts, at, replica, set } = this.#facts(group);
    if (at === undefined) throw problems.notFound(`No partition is replicated by group ${group}; GET /cluster lists the groups`);
    if (facts.member === undefined) {
      const verdict = lossAcceptance(group, facts);
      throw problems.conflict(verdict.allowed ? `This node holds no replica of group ${group}` : verdict.detail);
    }
    if (replica === undefined || set === undefined) throw problems.conflict(`This node's replica of group ${group} is not open (it is still opening, or its open failed: the node's log says why)`);
    const raw = replica.group.raw;
    const storage = replica.group.store.storage;
    const d = replica.group.store.damage;
    const last = storage.lastIndex();
    return {
      group,
      event_type: at.event_type,
      partition: at.partition,
      node: this.#o.self,
      member: replica.group.self,
      damage: d === undefined ? null : d.reason,
      probing: raw.probing,
      term: raw.term,
      last_term: storage.term(last),
      last_index: last,
      term_floor: Math.max(raw.term, d?.term ?? 0, set.termCeiling()),
      ...(d === undefined ? {} : { damage_index: d.index, damage_term: d.term }),
      newest_offset: this.#o.formatCursor(at.event_type, at.partition, replica.bounds().newest),
    };
  }

  #group(rawGroup: string): number {
    const group = /^[1-9][0-9]{0,9}$/.test(rawGroup) ? Number(rawGroup) : NaN;
    if (!Number.isSafeInteger(group) || group >= 2 ** 32) throw problems.notFound(`No partition is replicated by group ${JSON.stringify(rawGroup)}; GET /cluster lists the groups`);
    return group;
  }

  /**
   * POST /cluster/partitions/{group}/accept-loss. A partition of several replicas, every one damaged,
   * goes to group-loss.ts: `replica` (the operator's --replica, a node id) names the one that keeps its
   * log, and `authorization` is passed on to the other nodes asked for their replicas' reports.
   */
  async accept(rawGroup: string, ctx: { replica?: string | undefined; authorization?: string | undefined } = {}): Promise<AcceptedLoss | GroupLossAnswer> {
    const group = this.#group(rawGroup);
    const named = ctx.replica === undefined ? undefined : /^[1-9][0-9]{0,9}$/.test(ctx.replica) ? Number(ctx.replica) : NaN;
    if (named !== undefined && !Number.isSafeInteger(named)) throw problems.badRequest(`replica must be a node id, not ${JSON.stringify(ctx.replica)}`);
    const { facts, at, replica, set } = this.#facts(group);
    if (at !== undefined && new Set([...at.placement.replicas, ...(at.placement.learners ?? [])]).size > 1) return this.#acceptGroup(at, named, ctx.authorization);
    const sole = at?.placement.replicas[0];
    if (named !== undefined && sole !== undefined && named !== nodeOfMember(sole)) throw problems.conflict(`Node ${named} holds no replica of group ${group}; its only replica is on node ${nodeOfMember(sole)}`);
    const verdict = lossAcceptance(group, facts);
    if (!verdict.allowed) throw verdict.status === 404 ? problems.notFound(verdict.detail) : problems.conflict(verdict.detail);
    return this.#accept(at!, replica!, set!);
  }

  async #acceptGroup(at: PlacedPartition, named: number | undefined, authorization: string | undefined): Promise<GroupLossAnswer> {
    const { askPeer, propose } = this.#o;
    if (askPeer === undefined || propose === undefined) throw problems.conflict(`Group ${at.placement.group} has several replicas; this node cannot ask the others`);
    const group = at.placement.group;
    return acceptGroupLoss(
      {
        ask: async (member) => {
          if (nodeOfMember(member) !== this.#o.self) return askPeer(nodeOfMember(member), group, authorization);
          try {
            return this.report(String(group));
          } catch {
            return undefined;
          }
        },
        propose,
        newId: this.#o.newId,
        nowMs: this.#o.nowMs,
        logger: this.#o.logger,
      },
      at,
      named,
    );
  }

  /** POST /cluster/accept-loss: every partition of this node whose only replica is damaged. */
  async acceptAll(): Promise<AcceptAllAnswer> {
    const out: AcceptAllAnswer = { accepted: [], refused: [] };
    const damaged: number[] = [];
    for (const set of this.#o.replicas()) for (const r of set.held()) if (r.group.raw.status().damaged !== null) damaged.push(r.groupId);
    for (const group of damaged) {
      const { facts, at, replica, set } = this.#facts(group);
      const verdict = lossAcceptance(group, facts);
      if (verdict.allowed) out.accepted.push(await this.#accept(at!, replica!, set!));
      else out.refused.push({ group, event_type: at?.event_type ?? '', partition: at?.partition ?? '', detail: verdict.detail });
    }
    return out;
  }

  async #accept(at: PlacedPartition, replica: PartitionReplica, set: PartitionReplicas): Promise<AcceptedLoss> {
    const group = at.placement.group;
    const d = replica.group.store.damage;
    const termBefore = replica.group.raw.term;
    const kept = { newest_offset: this.#o.formatCursor(at.event_type, at.partition, replica.bounds().newest), last_index: replica.group.store.storage.lastIndex() };
    const refused = set.acceptLoss(group);
    if (refused !== undefined) throw problems.conflict(`Group ${group}: ${refused}`);
    const leads = await this.#leads(replica);
    const record: AcceptedLoss = {
      id: this.#o.newId(),
      scope: 'partition',
      node: this.#o.self,
      event_type: at.event_type,
      partition: at.partition,
      group,
      at: new Date(this.#o.nowMs()).toISOString(),
      kept,
      damage: { index: d?.index ?? 0, term: d?.term ?? 0, reason: (d?.reason ?? '').slice(0, lossTextLengthMax) },
      term_before: termBefore,
      term: leads ? replica.group.raw.term : 0,
    };
    this.#o.logger.error(
      { lossAccepted: record },
      `ACCEPTED DATA LOSS on partition ${at.partition} of ${at.event_type} (group ${group}), at the operator's request: its only replica was damaged (${record.damage.reason}); ` +
        `it keeps what it holds (newest offset ${kept.newest_offset}, raft index ${kept.last_index}) and leads ${leads ? `at term ${record.term}` : '(not yet)'}; ` +
        'events acknowledged after that are gone, and their offsets will be given to new events',
    );
    // Logged first: the log line stands even when the metadata cannot take the record yet.
    await this.#record(record, this.#o.leadWaitMs ?? 5000);
    return record;
  }

  /**
   * Waits (bounded) until the replica leads and the removal of its damage mark is durable (the store
   * forgets the damage once the write that removes it, with the new term, has resolved): the answer
   * then names the term, and a crash after it does not bring the damage back.
   */
  async #leads(replica: PartitionReplica): Promise<boolean> {
    const until = this.#o.monotonicMs() + (this.#o.leadWaitMs ?? 5000);
    while (!replica.group.isLeader() || replica.group.store.damage !== undefined) {
      if (this.#o.monotonicMs() >= until) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }
}
