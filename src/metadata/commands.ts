/**
 * Metadata commands: the only way replicated metadata changes. A command is decided by the node that
 * proposes it (timestamps, validated bodies) and then applied, identically and deterministically, by
 * every node's state machine. The op names are a wire and on-disk format: only ever add new ones.
 */
import type { PartitionKey } from './assignment.js';
import type { CommittedCursor, StreamSession } from './subscription-runtime.js';
import type { PlacementProposal } from './placement-types.js';
import type { BlacklistType, EventType, Storage, Subscription, SubscriptionAuthorization } from './types.js';
import type { MetadataLimits } from './limits.js';
import type { LossRecord } from './accepted-losses.js';

/**
 * The steps of moving one replica of a partition from node `from` to node `to`, each one configuration
 * change of the partition's group: add `to` as a learner, promote it to voter, remove `from` (`to`
 * takes `from`'s place in the replica order, so a preferred leader stays preferred). `cancel` drops a
 * learner that was not promoted (it could not catch up). One move per partition at a time.
 */
export type PartitionMoveStep = 'add_learner' | 'promote' | 'remove' | 'cancel' | 'rejoin';
/**
 * `rejoin` is not a move: it makes a learner left by an accepted loss of the whole group (partition.loss)
 * a voter again, `from` and `to` both naming it, while no move is in flight.
 */
export const partitionMoveSteps: readonly PartitionMoveStep[] = ['add_learner', 'promote', 'remove', 'cancel', 'rejoin'];

export type MetadataCommand =
  | {
      op: 'event_type.create';
      eventType: EventType;
      partitionCount: number;
      /**
       * Where the partitions go, chosen by the proposer (absent in commands written before placement
       * existed: the event type then has the legacy layout). Group ids are allocated at apply.
       */
      placement?: PlacementProposal;
    }
  | {
      op: 'event_type.update';
      eventType: EventType;
      /** The updated_at the proposer validated against: a concurrent update in between makes this one fail (optimistic concurrency). */
      basedOnUpdatedAt: string;
      schemaChanged: boolean;
    }
  | {
      op: 'event_type.delete';
      name: string;
    }
  | {
      op: 'feature.set';
      feature: string;
      enabled: boolean;
    }
  | {
      /** id and created_at are decided by the proposer; a subscription with the same key triple wins (the result names it). */
      op: 'subscription.create';
      subscription: Subscription;
    }
  | {
      op: 'subscription.delete';
      id: string;
    }
  | {
      /** PUT /subscriptions/{id}: only the authorization section changes (the rest is the key). */
      op: 'subscription.update';
      id: string;
      authorization: SubscriptionAuthorization;
    }
  | {
      /**
       * A stream session joins (partitions are rebalanced). `starts`: where reading begins for partitions
       * without a committed cursor, resolved by the proposer from read_from (the first stream decides).
       */
      op: 'stream.open';
      subscription: string;
      session: StreamSession;
      starts: CommittedCursor[];
    }
  | {
      op: 'stream.close';
      subscription: string;
      session: string;
      atMs: number;
    }
  | {
      /** Closes the sessions a node held in an earlier incarnation (the process restarted; its streams are gone). */
      op: 'stream.close_stale';
      node: number;
      incarnation: string;
      atMs: number;
    }
  | {
      /** The previous owner hands partitions over to their new session (reassigning -> assigned). */
      op: 'stream.release';
      subscription: string;
      session: string;
      partitions: PartitionKey[];
    }
  | {
      op: 'cursor.commit';
      subscription: string;
      session: string;
      atMs: number;
      cursors: CommittedCursor[];
    }
  | {
      /** PUT/DELETE /settings/blacklist/{type}/{name}. */
      op: 'blacklist.set';
      type: BlacklistType;
      name: string;
      blocked: boolean;
    }
  | {
      op: 'storage.create';
      storage: Storage;
    }
  | {
      op: 'storage.delete';
      id: string;
    }
  | {
      /**
       * The one-step switch of versions before timeline switches were commands of the partition groups
       * (the proposer held appends on its own node and read the newest offsets). Still applied, for logs
       * that hold it; never proposed any more (timeline.prepare and timeline.commit replace it).
       * `starts`: per partition, the first offset of the new timeline. The order and the log's topic id
       * are decided at apply time.
       */
      op: 'timeline.create';
      eventType: string;
      id: string;
      storage_id: string;
      starts: number[];
      at: string;
      /** Where the new timeline's partitions go (absent in commands written before placement existed). */
      placement?: PlacementProposal;
    }
  | {
      /**
       * Step 1 of a timeline switch (docs/decisions.md "Storages and timelines"): records the switch to
       * timeline `id` on `storage_id` as the event type's one pending switch (refused while another is
       * pending) and allocates the new log's partition groups. Then every partition of the current
       * timeline is sealed for `id` in its own group, which answers where the new timeline starts.
       */
      op: 'timeline.prepare';
      eventType: string;
      id: string;
      storage_id: string;
      at: string;
      /** Where the new timeline's partitions go (absent only without placement, in unit tests). */
      placement?: PlacementProposal;
    }
  | {
      /**
       * Step 2: the pending switch `id` becomes the event type's current timeline, starting per partition
       * at `starts` (the offsets the seals answered). Applying it again for the current timeline is a
       * no-op, so a retry, or a second node finishing the same switch, is harmless.
       */
      op: 'timeline.commit';
      eventType: string;
      id: string;
      starts: number[];
      at: string;
    }
  | {
      /** PATCH cursors: sets them and disconnects every stream of the subscription. */
      op: 'cursor.reset';
      subscription: string;
      cursors: CommittedCursor[];
    }
  | {
      /** One step of moving a replica of the partition replicated by `group` (see PartitionMoveStep). */
      op: 'partition.move';
      group: number;
      step: PartitionMoveStep;
      from: number;
      to: number;
    }
  | {
      /** Records `leader` (a voter of `group`) as the partition's preferred leader, after balancing leadership. */
      op: 'partition.leader';
      group: number;
      leader: number;
    }
  | {
      /** The metadata bounds every later command is applied against (a node proposes its configured ones). */
      op: 'limits.set';
      limits: MetadataLimits;
    }
  | {
      /**
       * Registers the data directory `disk` (its disk id, and how many raft-state losses it has recorded)
       * as node `node`'s, from the partition group counter's value at apply on (disk-registry.ts). A
       * node whose directory did not found the cluster proposes it; its partition groups created before
       * are not founded there (a former directory of the node may have been a member), only repaired.
       * The same registration again changes nothing.
       *
       * `member`: the directory's member id in the metadata group when it is a new member
       * (core/member-id.ts): the metadata leader then replaces the node's former member by it, one
       * configuration change at a time (metadata-replacement.ts). Refused when an earlier directory of
       * the node registered the same member id (two directories must never be one member).
       */
      op: 'node.disk';
      node: number;
      disk: string;
      member?: number;
    }
  | {
      /**
       * Records that an operator accepted the loss of what a damaged replica lacked (a partition's, or
       * the metadata group's own): kept in the metadata, bounded (accepted-losses.ts), so that every
       * node lists it for good. The same record (by id) again changes nothing.
       */
      op: 'loss.accepted';
      loss: LossRecord;
    }
  | {
      /**
       * An operator accepted the loss of a partition whose every replica is damaged (placement-loss.ts):
       * `keep` (a member of the placement `seen`, which the proposer saw; refused when the placement
       * changed since) keeps its log and becomes the only voter, every other member a learner that
       * rejoins empty; the move in flight is dropped; `loss` is recorded as loss.accepted records it.
       * `floor` is the highest term floor any replica reported: the kept member leads above it, and a
       * member whose term is above it has heard from that leader (what makes the reaction run once).
       * The same loss id again changes nothing (a retried proposal applies once).
       */
      op: 'partition.loss';
      group: number;
      keep: number;
      seen: { replicas: number[]; learners: number[] };
      floor: number;
      loss: LossRecord;
    };

export type MetadataOp = MetadataCommand['op'];
