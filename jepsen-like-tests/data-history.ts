/**
 * What the data workload records (jepsen-like-tests/data.ts): every publish attempt with its outcome
 * per event, what every consumer was sent, every subscription commit and cursor read, and the final
 * contents of every partition on every node. Plain JSON, so a saved history is re-checked with
 * `data.js --check FILE` and corrupted copies of it prove that each checker can fail.
 *
 * Times are performance.now() of the test process (ms), the clock of the nemesis' fault records.
 * Offsets are the integers of the wire form `001-<timeline>-<offset>` (Brook's first timeline; a
 * multi-node cluster does not switch timelines); BEGIN, "before the first event", is -1.
 */

/** One event as the producer sent it. */
export interface SentEvent {
  eid: string;
  key: string;
  /** Per-key sequence number: a key has one producer, which publishes one batch at a time. */
  seq: number;
}

/**
 * What a publish response says about one event:
 * - acked: 200, or `submitted` in a 207: committed on a majority, must be stored;
 * - failed/aborted: the item of a 207 or 422, or a connection refused before any byte was sent: must
 *   not be stored (interface.md: failed "not possible, may be resubmitted", aborted "not attempted",
 *   422 "nothing submitted");
 * - unknown: 5xx, a reset connection, a client timeout: may or may not be stored.
 */
export type EventResult = 'acked' | 'failed' | 'aborted' | 'unknown';

export interface PublishOp {
  producer: number;
  /** The producer's n-th attempt. */
  n: number;
  node: number;
  /** X-Flow-Id sent with the request (it is on the node's log lines about it). */
  flow: string;
  invoke: number;
  /** null when no answer arrived (timeout, reset). */
  complete: number | null;
  /** HTTP status, or the error's code. */
  status: string;
  events: SentEvent[];
  /** Per event, in `events` order. */
  results: EventResult[];
  /** Problem detail or the first failed item's detail, for the report. */
  detail?: string;
  /** Content-Type of an error answer (interface: every error is a Problem, application/problem+json). */
  contentType?: string;
}

/** [offset, eid] */
export type Seen = [number, string];

/** A batch of events a consumer received (low-level stream or subscription stream). */
export interface ConsumedBatch {
  /** Consumer name: `s<k>` for low-level stream consumers, `sub` for the subscription consumer. */
  consumer: string;
  /** Connection (stream) number of that consumer. */
  conn: number;
  partition: string;
  /** Received at. */
  at: number;
  events: Seen[];
}

/** One connection of a consumer. */
export interface ConsumerConn {
  consumer: string;
  conn: number;
  node: number;
  opened: number;
  closed: number;
  /** HTTP status of the open, or the error's code. */
  status: string;
  /** Why it ended: eof (server closed), idle (no line for a while), stop, or an error code. */
  end: string;
  /** Low-level streams: the exclusive cursor each partition started after (-1 = BEGIN). */
  start?: Record<string, number>;
  /** Subscription streams: the X-Svc-StreamId. */
  streamId?: string;
}

export interface CommitOp {
  conn: number;
  streamId: string;
  node: number;
  invoke: number;
  complete: number | null;
  status: string;
  cursors: { partition: string; offset: number }[];
  /** 204: all committed; 200: per cursor committed/outdated; absent otherwise. */
  results?: string[];
}

export interface CursorRead {
  node: number;
  invoke: number;
  complete: number;
  /** Offsets per partition (-1 = BEGIN); partitions without a committed cursor are absent. */
  cursors: Record<string, number>;
  /** Taken after healing (the final read on every node). */
  final?: boolean;
}

/** A stored event as the final read returned it. */
export interface StoredEvent {
  offset: number;
  eid: string;
  key: string;
  seq: number;
  /** metadata.partition as stored (enriched by the broker). */
  partition?: string;
}

export interface FinalRead {
  node: number;
  /** partition -> events in stream order; absent partitions could not be read (see error). */
  partitions: Record<string, StoredEvent[]>;
  /** Offsets each partition's stream started at (oldest available) and ended at. */
  newest: Record<string, number>;
  error?: string;
}

export interface FaultLog {
  kind: string;
  nodes: number[];
  target: string;
  startMs: number;
  endMs: number;
  note?: string;
}

/** After healing: a subscription consumer ran until every committed cursor reached the newest offset. */
export interface SubscriptionDrain {
  newest: Record<string, number>;
  /** The last committed cursors read while it ran. */
  committed: Record<string, number>;
  seconds: number;
  /** GET /subscriptions/{id}/stats at the end (which stream holds which partition). */
  stats: unknown;
}

export interface DataHistory {
  seed: number;
  seconds: number;
  eventType: string;
  partitions: string[];
  subscription?: string;
  workload: [number, number];
  publishes: PublishOp[];
  consumed: ConsumedBatch[];
  conns: ConsumerConn[];
  commits: CommitOp[];
  cursorReads: CursorRead[];
  finals: FinalRead[];
  faults: FaultLog[];
  subDrain?: SubscriptionDrain;
}

const wireRe = /^001-([0-9a-f]{4})-([0-9]{18})$/;

/** The integer of a wire offset; BEGIN is -1. Throws on anything else (a malformed cursor is a finding). */
export function offsetOf(wire: string): number {
  if (wire.toUpperCase() === 'BEGIN') return -1;
  const m = wireRe.exec(wire);
  if (m === null) throw new Error(`not a Brook offset: ${JSON.stringify(wire)}`);
  if (m[1] !== '0001') throw new Error(`offset on timeline ${m[1]}, expected the first one: ${wire}`);
  return Number(m[2]);
}

/** The wire form of an exclusive cursor (-1 = BEGIN). */
export function wireOf(offset: number): string {
  return offset < 0 ? 'BEGIN' : `001-0001-${String(offset).padStart(18, '0')}`;
}
