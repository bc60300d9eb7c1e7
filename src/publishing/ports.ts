/** The ports the publishing service needs; the node runtime implements them. */
import type { EventTypeRecord } from '../metadata/types.js';

export interface PartitionAppend {
  topic: number;
  partition: number;
  events: Buffer[];
}

export type PartitionAppendResult = { ok: true } | { ok: false; error: Error };

export interface PartitionWriter {
  /** Appends each item as one atomic record batch; resolves when each is durable (or failed). */
  append(items: PartitionAppend[]): Promise<PartitionAppendResult[]>;
}

export interface EventTypeLookup {
  eventType(name: string): EventTypeRecord | undefined;
}

export type EventValidator = (event: unknown) => string | null;

export interface ValidatorSource {
  validatorFor(rec: EventTypeRecord): EventValidator;
}
