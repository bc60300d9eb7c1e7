/**
 * What a node does when it applies `partition.loss` (an operator accepted the loss of a partition whose
 * every replica is damaged; group-loss.ts proposed it): the kept replica, if it is here, becomes the
 * group's only voter above the command's term floor (src/raft RawNode.acceptLossAsOnlyVoter); a replica
 * here that does not keep its log is emptied and marked damaged, then opened again, as a learner (the
 * placement now lists it so), and the kept replica's leader copies its log to it. Empty, not repaired in
 * place: what it applied from its own tail (events in its partition log) is not the kept log's.
 *
 * The kept replica may be healthy (two of three damaged: the healthy one cannot be elected alone).
 *
 * Once only, and whenever the node applies the command (the metadata log is applied again after a
 * restart, and a node's metadata may lag the kept node's by any time):
 * - The kept replica has acted when its term is above the floor: the floor is at or above every term
 *   any replica had used when the loss was accepted, damaged members neither campaign nor vote, and a
 *   healthy one only pre-votes (it wins no pre-vote without the damaged ones), so no term above the
 *   floor exists in the group before the kept replica moves there itself.
 * - A replica to empty cannot tell by its term: the kept replica, leading, reaches it as a learner of
 *   its configuration as soon as it leads, whether or not this node has applied the command, and it
 *   then takes the leader's term and is repaired in place (its partition log keeping what it applied
 *   from its own tail). So the node records, in the same durable write that empties the replica, the
 *   loss it acted on (PartitionDrops.emptyForLoss): a later apply of the same loss finds it and does
 *   nothing, and an apply that comes after the leader reached the replica empties it all the same. What
 *   the replica did meanwhile counts for nothing: the leader is the only voter, so no acknowledgement
 *   of the replica committed anything, and the replica starts over damaged up to whatever it may have
 *   acknowledged under the leader's term (it may have been made a voter again meanwhile), neither voting
 *   nor campaigning until the leader has brought it past that.
 */
import type { Logger } from 'pino';
import type { LossRecord } from '../metadata/accepted-losses.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { PartitionReplicas } from './partition-replicas.js';
import type { DamageRecord } from './raft-records.js';

type PartitionLoss = Extract<MetadataCommand, { op: 'partition.loss' }>;

export interface GroupLossApplyDeps {
  readonly stores: () => Iterable<PartitionReplicas>;
  /** Opens the replicas the placement of `group` gives this node (NodeReplicaSet.openMoved). */
  readonly reopen: (group: number) => void;
  readonly logger: Logger;
  /** How long the kept replica retries while the core refuses for a passing reason (still learning its floor, a change not applied). */
  readonly retryForMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** How long the kept replica's node waits for its replica to open (after a restart) before giving up on acting. */
  readonly openWaitMs?: number;
}

export function groupLossApplied(d: GroupLossApplyDeps, cmd: PartitionLoss): void {
  const members = [...cmd.seen.replicas, ...cmd.seen.learners];
  const keeping: PartitionReplicas[] = [];
  for (const store of d.stores()) {
    const self = store.self();
    if (!members.includes(self)) continue;
    const log = d.logger.child({ group: cmd.group, lossId: cmd.loss.id });
    if (self === cmd.keep) keeping.push(store);
    else void rejoin(d, store, cmd, log);
  }
  if (keeping.length === 0) return;
  // Not open yet (a restart applies the metadata log again before the replicas open): it acts once
  // open, by the same rule (its term says whether it acted).
  if (!keeping.some((s) => s.hostedGroup(cmd.group) !== undefined)) d.reopen(cmd.group);
  void keep(d, keeping, cmd, d.logger.child({ group: cmd.group, lossId: cmd.loss.id }));
}

/**
 * The command a record of `partition.loss` stands for (it keeps the floor and the nodes that rejoin), for
 * a node that got the record within a metadata snapshot instead of applying the command: it acts on
 * it alike, by the same once-only rules. Undefined for other records (a sole replica's, one written
 * before the floor was kept).
 */
export function lossOfRecord(r: LossRecord): PartitionLoss | undefined {
  if (r.scope !== 'partition' || r.floor === undefined || r.rejoin === undefined) return undefined;
  return { op: 'partition.loss', group: r.group, keep: r.node, seen: { replicas: [r.node, ...r.rejoin], learners: [] }, floor: r.floor, loss: r };
}

/** What the emptied replica may have acknowledged: nothing that counts below the floor; under the kept leader's term, up to its last index. */
export function rejoinDamage(cmd: PartitionLoss, held: { term: number; lastIndex: number } | undefined): DamageRecord {
  const reason = `emptied to rejoin after the accepted loss ${cmd.loss.id} (node ${cmd.keep} keeps its log)`;
  if (held !== undefined && held.term > cmd.floor) return { term: held.term, index: held.lastIndex, reason };
  return { term: cmd.floor, index: 0, reason };
}

async function rejoin(d: GroupLossApplyDeps, store: PartitionReplicas, cmd: PartitionLoss, log: Logger): Promise<void> {
  try {
    const emptied = await store.emptyForLoss(cmd.group, cmd.loss.id, (held) => {
      log.warn({ floor: cmd.floor, keep: cmd.keep, held }, 'accepted loss of every replica of the partition: this replica does not keep its log; emptied to rejoin as a learner');
      return rejoinDamage(cmd, held);
    });
    if (emptied) d.reopen(cmd.group);
  } catch (err) {
    log.error({ err }, 'emptying the replica to rejoin failed');
  }
}

async function keep(d: GroupLossApplyDeps, stores: readonly PartitionReplicas[], cmd: PartitionLoss, log: Logger): Promise<void> {
  const sleep = d.sleep ?? ((ms: number) => new Promise<void>((res) => setTimeout(res, ms)));
  const start = Date.now();
  let openAt: number | undefined;
  for (;;) {
    // A node shutting down acts no more (the loss is acted on again when the metadata is applied at the
    // next start); without this the wait for the replica to open kept polling for openWaitMs after
    // close, and its timer kept the process (an in-process test broker's test file) alive as long.
    if (stores.every((s) => s.isClosed)) return;
    const at = stores.map((s) => ({ store: s, r: s.hostedGroup(cmd.group) })).find((x) => x.r !== undefined);
    if (at !== undefined) {
      const { store, r } = at as { store: PartitionReplicas; r: NonNullable<typeof at.r> };
      openAt ??= Date.now();
      if (r.group.raw.term > cmd.floor) return;
      // Healthy too: the choice allows a healthy replica to keep its log when the healthy ones are too
      // few to elect a leader (group-loss-choice.ts); the floor check above keeps it to once.
      const refused = r.group.raw.acceptLossAsOnlyVoter(cmd.floor, { healthy: true });
      if (refused === undefined) {
        store.kick(cmd.group);
        log.error({ topic: r.topic, partition: r.partition, floor: cmd.floor, term: r.group.raw.term }, 'ACCEPTED DATA LOSS: this replica keeps its log and is the only voter of its group; the others rejoin empty');
        return;
      }
      if (Date.now() - openAt >= (d.retryForMs ?? 10_000)) {
        log.warn({ refused }, 'accepted loss of every replica of the partition: the kept replica was not made the only voter');
        return;
      }
    } else if (Date.now() - start >= (d.openWaitMs ?? 600_000)) {
      log.warn('accepted loss of every replica of the partition: the kept replica did not open here; it was not made the only voter');
      return;
    }
    await sleep(100);
  }
}
