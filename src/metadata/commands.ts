/**
 * Metadata commands: the only way replicated metadata changes. A command is decided by the node that
 * proposes it (timestamps, validated bodies) and then applied, identically and deterministically, by
 * every node's state machine. The op names are a wire and on-disk format: only ever add new ones.
 */
import type { EventType, Subscription } from './types.js';

export type MetadataCommand =
  | {
      op: 'event_type.create';
      eventType: EventType;
      partitionCount: number;
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
    };

export type MetadataOp = MetadataCommand['op'];
