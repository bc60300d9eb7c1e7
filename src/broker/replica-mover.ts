/**
 * Carries out replica moves on this node, around the pure plan (metadata/replica-move-plan.ts).
 *
 * Every round (a timer in main.ts, and after each applied partition.move):
 * - for each group this node leads, the plan's next action is taken: a configuration change of the
 *   group, a metadata step recorded (partition.move promote / remove, proposed to the metadata group),
 *   or leadership handed to another voter when this node is the one leaving;
 * - each replica open here whose placement no longer names this node is dropped with its data (the
 *   metadata records `remove` only after the group removed the node, so the others hold everything);
 * The node opens the replicas the placement gives it (a new learner starts empty, see
 * partition-replicas.ts) when it applies a partition.move (main.ts). Every storage's partition groups
 * (the default one and those of operator-created storages) are driven alike.
 *
 * Nothing here is remembered across rounds except the proposals under way: the stored placement and
 * the group's configuration are the state, so a restart or a new leader resumes where the move stood.
 */
import type { Logger } from 'pino';
import { nextMoveAction, type MoveAction, type MoveProgress } from '../metadata/replica-move-plan.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { noNode } from '../raft/index.js';
import type { PartitionReplica } from './partition-replica.js';
import { placedOn, type PartitionReplicas, type PlacementLookup } from './partition-replicas.js';

export interface ReplicaMoverOptions {
  readonly self: number;
  /** The member id this node's directory runs as in partition groups (partition-replicas.ts; absent: the node id). */
  readonly member?: () => number;
  /** The partition groups of every storage open on this node. */
  readonly stores: () => Iterable<PartitionReplicas>;
  readonly placement: PlacementLookup;
  /**
   * Whether a member is a former one (its node's directory was wiped and runs a new member:
   * partition-member-replacement.ts isFormerMember over the applied registrations). Nobody runs it,
   * so a move away from it removes it from the group first (replica-move-plan.ts). Absent: none is.
   */
  readonly formerMember?: (member: number) => boolean;
  /** Proposes a metadata command (forwarded to the metadata leader); resolves with its outcome. */
  readonly propose: (cmd: Extract<MetadataCommand, { op: 'partition.move' }>) => Promise<{ ok: boolean; detail?: string }>;
  readonly logger: Logger;
}

export class ReplicaMover {
  readonly #o: ReplicaMoverOptions;
  /** Groups with a metadata step proposed and not answered yet. */
  readonly #recording = new Set<number>();
  /** Groups being dropped here. */
  readonly #dropping = new Set<number>();
  /** The last action logged per group (a waiting step is logged once, not every round). */
  readonly #said = new Map<number, string>();

  constructor(o: ReplicaMoverOptions) {
    this.#o = o;
  }

  /** One round over the replicas open here. Returns the actions taken (for tests and logs). */
  round(): MoveAction[] {
    const taken: MoveAction[] = [];
    for (const store of this.#o.stores()) {
      for (const r of [...store.held()]) {
        const placement = this.#o.placement(r.topic, r.partition);
        if (placement === undefined || placement.group !== r.groupId) continue;
        // A replica runs as a member id: one the placement no longer lists (moved away, or the former
        // member of this node that a replacement removed) is dropped.
        if (!placedOn(placement, r.group.self)) {
          this.#drop(store, r);
          continue;
        }
        const a = this.#step(store, r, placement);
        if (a.kind !== 'idle' && a.kind !== 'wait') taken.push(a);
      }
    }
    return taken;
  }

  /** Drops the data of groups stored here that the placement gives other nodes only (after a restart). */
  async dropStored(): Promise<number> {
    let dropped = 0;
    for (const store of this.#o.stores()) {
      for await (const g of store.storedGroups()) {
        const placement = this.#o.placement(g.topic, g.partition);
        if (placement === undefined || placement.group !== g.group || placedOn(placement, this.#o.member?.() ?? this.#o.self)) continue;
        this.#o.logger.info({ ...g }, 'dropping a partition replica moved to other nodes before the last stop');
        await store.dropReplica(g.topic, g.partition, g.group);
        dropped++;
      }
    }
    return dropped;
  }

  #step(store: PartitionReplicas, r: PartitionReplica, placement: NonNullable<ReturnType<PlacementLookup>>): MoveAction {
    const g = r.group;
    if (!g.isLeader()) return { kind: 'idle' };
    // The common case, checked before the leader's status is built: no move, no learner anywhere.
    if (placement.moving === undefined && g.conf.learners.length === 0 && (placement.learners?.length ?? 0) === 0) {
      this.#said.delete(g.id);
      return { kind: 'idle' };
    }
    const st = g.raw.status();
    const progress = st.progress === undefined ? undefined : new Map<number, MoveProgress>([...st.progress].map(([n, p]) => [n, { match: p.match, recentActive: p.recentActive || n === g.self, state: p.state, incomplete: p.incomplete }]));
    const a = nextMoveAction({
      self: g.self,
      placement: { replicas: placement.replicas, ...(placement.learners === undefined ? {} : { learners: placement.learners }), ...(placement.moving === undefined ? {} : { moving: placement.moving }) },
      conf: g.conf,
      commit: st.commit,
      ...(st.termStart === undefined ? {} : { termStart: st.termStart }),
      progress,
      leadTransferee: st.leadTransferee === noNode ? 0 : st.leadTransferee,
      ...(this.#o.formerMember === undefined ? {} : { former: this.#o.formerMember }),
    });
    const log = (msg: string, extra: object = {}) => {
      const said = `${a.kind}:${msg}`;
      if (this.#said.get(g.id) === said) return;
      this.#said.set(g.id, said);
      this.#o.logger.info({ topic: r.topic, partition: r.partition, group: g.id, term: st.term, ...extra }, msg);
    };
    switch (a.kind) {
      case 'idle':
        this.#said.delete(g.id);
        break;
      case 'wait':
        log(`replica move waits: ${a.why}`, { moving: placement.moving });
        break;
      case 'confChange': {
        const res = g.raw.proposeConfChange(a.change);
        if (res.ok) {
          store.kick(g.id);
          log(`replica move: proposing ${a.change.type} of node ${a.change.nodeId}`, { moving: placement.moving, index: res.lastIndex });
        } else log(`replica move: ${a.change.type} of node ${a.change.nodeId} not proposed (${res.reason})`);
        break;
      }
      case 'transfer':
        if (g.raw.transferLeadership(a.to)) {
          store.kick(g.id);
          log(`replica move: this node leaves the group; handing leadership to node ${a.to}`);
        }
        break;
      case 'record':
        this.#record(r, g.id, a);
        break;
    }
    return a;
  }

  #record(r: PartitionReplica, group: number, a: Extract<MoveAction, { kind: 'record' }>): void {
    if (this.#recording.has(group)) return;
    this.#recording.add(group);
    const cmd = { op: 'partition.move' as const, group, step: a.step, from: a.from, to: a.to };
    this.#o
      .propose(cmd)
      .then((res) => {
        // Refused means the step is already recorded or the move was cancelled: the next round looks again.
        if (res.ok) this.#o.logger.info({ topic: r.topic, partition: r.partition, group, step: a.step, from: a.from, to: a.to }, `replica move: ${a.step} recorded`);
        else this.#o.logger.info({ group, step: a.step, detail: res.detail }, 'replica move: metadata refused the step (already recorded or cancelled)');
      })
      .catch((err: unknown) => this.#o.logger.warn({ err, group, step: a.step }, 'replica move: recording the step failed; retried'))
      .finally(() => this.#recording.delete(group));
  }

  #drop(store: PartitionReplicas, r: PartitionReplica): void {
    const group = r.groupId;
    if (this.#dropping.has(group)) return;
    this.#dropping.add(group);
    this.#o.logger.info({ topic: r.topic, partition: r.partition, group }, 'partition replica moved to another node: dropping it here');
    store
      .dropReplica(r.topic, r.partition, group)
      .catch((err: unknown) => this.#o.logger.error({ err, group }, 'dropping a moved partition replica failed; retried'))
      .finally(() => this.#dropping.delete(group));
  }
}
