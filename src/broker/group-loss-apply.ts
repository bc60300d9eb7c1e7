/**
 * What a node does when it applies `partition.loss` (an operator accepted the loss of a partition whose
 * every replica is damaged; group-loss.ts proposed it): the kept replica, if it is here, becomes the
 * group's only voter above the command's term floor (src/raft RawNode.acceptLossAsOnlyVoter); a replica
 * here that does not keep its log is dropped and opened again empty, as a learner (the placement now
 * lists it so; partition-replica-open.ts starts a learner empty and damaged, so nothing it held or
 * acknowledged counts), and the kept replica's leader copies its log to it. Empty, not repaired in
 * place: what it applied from its own tail (events in its partition log) is not the kept log's.
 *
 * The kept replica may be healthy (two of three damaged: the healthy one cannot be elected alone).
 *
 * The metadata log is applied again after a restart, so this must do nothing the second time. A
 * replica's term says whether it has acted already: the kept one moves above the floor when it
 * accepts, and a rejoined one takes the kept leader's term (above the floor) from its first message.
 * So only a replica at or below the floor acts.
 */
import type { Logger } from 'pino';
import type { MetadataCommand } from '../metadata/commands.js';
import type { PartitionReplicas } from './partition-replicas.js';

export interface GroupLossApplyDeps {
  readonly stores: () => Iterable<PartitionReplicas>;
  /** Opens the replicas the placement of `group` gives this node (NodeReplicaSet.openMoved). */
  readonly reopen: (group: number) => void;
  readonly logger: Logger;
  /** How long the kept replica retries while the core refuses for a passing reason (still learning its floor, a change not applied). */
  readonly retryForMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export function groupLossApplied(d: GroupLossApplyDeps, cmd: Extract<MetadataCommand, { op: 'partition.loss' }>): void {
  for (const store of d.stores()) {
    const r = store.hostedGroup(cmd.group);
    if (r === undefined) continue;
    const log = d.logger.child({ topic: r.topic, partition: r.partition, group: cmd.group, lossId: cmd.loss.id });
    // Acted on already (see above).
    if (r.group.raw.term > cmd.floor) return;
    if (r.group.self === cmd.keep) {
      void keep(d, store, cmd, log);
      return;
    }
    log.warn({ floor: cmd.floor, keep: cmd.keep }, 'accepted loss of every replica of the partition: this replica does not keep its log; dropping it to rejoin empty as a learner');
    store
      .dropReplica(r.topic, r.partition, cmd.group)
      .then(() => d.reopen(cmd.group))
      .catch((err: unknown) => log.error({ err }, 'dropping the replica to rejoin empty failed'));
    return;
  }
  // Not open here (yet): the placement lists this node as a learner, opened empty.
  d.reopen(cmd.group);
}

async function keep(d: GroupLossApplyDeps, store: PartitionReplicas, cmd: Extract<MetadataCommand, { op: 'partition.loss' }>, log: Logger): Promise<void> {
  const sleep = d.sleep ?? ((ms: number) => new Promise<void>((res) => setTimeout(res, ms)));
  const until = Date.now() + (d.retryForMs ?? 10_000);
  for (;;) {
    const r = store.hostedGroup(cmd.group);
    if (r === undefined || r.group.raw.term > cmd.floor) return;
    // Healthy too: the choice allows a healthy replica to keep its log when the healthy ones are too
    // few to elect a leader (group-loss-choice.ts); the floor check above keeps it to once.
    const refused = r.group.raw.acceptLossAsOnlyVoter(cmd.floor, { healthy: true });
    if (refused === undefined) {
      store.kick(cmd.group);
      log.error({ floor: cmd.floor, term: r.group.raw.term }, 'ACCEPTED DATA LOSS: this replica keeps its log and is the only voter of its group; the others rejoin empty');
      return;
    }
    if (Date.now() >= until) {
      log.warn({ refused }, 'accepted loss of every replica of the partition: the kept replica was not made the only voter');
      return;
    }
    await sleep(100);
  }
}
