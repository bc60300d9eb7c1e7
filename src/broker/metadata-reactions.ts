/**
 * What this node does when its metadata group applies a command or restores a snapshot, beyond the
 * state machine itself: caches that depend on the event types are forgotten, partition replicas
 * open and logs are dropped, subscription streams wake, streams whose readers changed end, and the
 * next step of a move or of a member replacement is taken at once instead of at the next round.
 */
import type { Logger } from 'pino';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult, MetadataStateMachine } from '../metadata/state-machine.js';
import type { SchemaValidatorCache } from '../registry/index.js';
import type { OpenStreams } from '../consumption/open-streams.js';
import type { SubscriptionHub } from '../consumption/subscription-hub.js';
import type { AppliedPlacements } from './placement-lookup.js';
import type { NodeReplicaSet } from './node-replica-set.js';
import type { TopicIndex } from './topic-index.js';
import type { StorageRouter } from './storage-router.js';
import type { ReplicaMover } from './replica-mover.js';
import type { MetadataMemberReplacer } from './metadata-members.js';
import type { PartitionMemberReplacer } from './partition-members.js';
import { closeStreamsAfterRuleChange } from './rule-change-streams.js';
import { groupLossApplied, lossOfRecord } from './group-loss-apply.js';
import { defaultStorageId as defaultStorage } from '../metadata/types.js';

export interface MetadataReactionParts {
  readonly topics: TopicIndex;
  readonly placements: AppliedPlacements;
  readonly replicas: NodeReplicaSet;
  readonly router: Pick<StorageRouter, 'ensureStorage' | 'timelineChanged'>;
  readonly validators: SchemaValidatorCache;
  readonly openStreams: OpenStreams;
  /** Parts that exist only once the metadata group is open (they read its state). */
  readonly state: () => MetadataStateMachine | undefined;
  readonly hub: () => SubscriptionHub | undefined;
  readonly mover: () => ReplicaMover | undefined;
  readonly replacer: () => MetadataMemberReplacer | undefined;
  /** Replaces the partition members of wiped directories (partition-members.ts). */
  readonly partitionReplacer?: () => PartitionMemberReplacer | undefined;
  readonly logger: Logger;
}

export interface MetadataReactions {
  onApplied(cmd: MetadataCommand, result: ApplyResult): void;
  onRestored(sm: MetadataStateMachine): void;
}

export function metadataReactions(p: MetadataReactionParts): MetadataReactions {
  return {
    onApplied(cmd, result) {
      p.hub()?.applied(cmd);
      const newTimeline = cmd.op === 'timeline.create' || cmd.op === 'timeline.commit';
      if (cmd.op === 'event_type.create' || cmd.op === 'event_type.delete') p.topics.invalidate();
      if (cmd.op === 'event_type.create' || cmd.op === 'event_type.delete' || newTimeline) p.placements.topicsChanged();
      if (!result.ok) return;
      // The replicas of new partitions start at once on every node that holds one, so the group can
      // elect a leader before the first publish.
      if (cmd.op === 'event_type.create') p.replicas.openSoonByName(cmd.eventType.name);
      if (newTimeline) p.replicas.openSoonByName(cmd.eventType);
      // The storage of a prepared switch opens now, so it is open when the switch commits.
      if (cmd.op === 'timeline.prepare') p.router.ensureStorage(cmd.storage_id).catch((err: unknown) => p.logger.error({ err, storage: cmd.storage_id }, 'opening a storage failed'));
      // Batches waiting for this switch go to the new timeline; streams waiting on the old log wake.
      if (newTimeline) {
        const topic = p.state()?.eventType(cmd.eventType)?.storage.topic;
        if (topic !== undefined) p.router.timelineChanged(topic);
      }
      closeStreamsAfterRuleChange(cmd, result, p.openStreams, p.logger);
      if (cmd.op === 'partition.move') {
        const mover = p.mover();
        if (mover !== undefined) p.replicas.openMoved(cmd.group, () => mover.round());
      }
      // An accepted loss of every replica of a partition: the kept replica leads alone, the others rejoin empty.
      if (cmd.op === 'partition.loss' && result.repeated !== true) {
        groupLossApplied({ stores: () => p.replicas.all(), reopen: (group) => p.replicas.openMoved(group, () => p.mover()?.round()), logger: p.logger }, cmd);
      }
      // A directory registered a new metadata member: the leader starts replacing the node's former
      // one, in the metadata group and in every partition group.
      if (cmd.op === 'node.disk' && cmd.member !== undefined) {
        setImmediate(() => {
          p.replacer()?.round();
          p.partitionReplacer?.()?.round();
        });
      }
      if (cmd.op !== 'event_type.delete') return;
      p.validators.forget(cmd.name);
      if (result.droppedLogs !== undefined) p.replicas.dropSoon(result.droppedLogs);
      else if (result.droppedTopic !== undefined) p.replicas.dropSoon([{ storage_id: defaultStorage, topic: result.droppedTopic }]);
    },
    onRestored(sm) {
      p.hub()?.kickAll();
      p.topics.invalidate();
      p.placements.topicsChanged();
      // The state jumped to a snapshot from the leader: every cached schema may be stale, and event
      // types deleted in between leave logs behind.
      for (const r of sm.eventTypes()) p.validators.forget(r.eventType.name);
      for (const topic of p.replicas.deletedTopics(sm)) p.replicas.dropSoon([{ storage_id: defaultStorage, topic }]);
      // Partitions placed here that the snapshot brought (a wiped node catching up, a follower far
      // behind): their replicas open now, as at start, so they take part in their groups at once
      // instead of on the first request that touches them.
      for (const r of sm.eventTypes()) p.replicas.openSoon(r);
      // Accepted losses of every replica of a partition that the snapshot carries: this node may not
      // have applied their commands (group-loss-apply.ts acts once, whichever way it learns of them).
      for (const loss of sm.acceptedLosses.records) {
        const cmd = lossOfRecord(loss);
        if (cmd !== undefined) groupLossApplied({ stores: () => p.replicas.all(), reopen: (group) => p.replicas.openMoved(group, () => p.mover()?.round()), logger: p.logger, openWaitMs: 60_000 }, cmd);
      }
    },
  };
}
