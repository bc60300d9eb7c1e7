/** What the HTTP layer receives from the composition root: services only, never adapters. */
import type { Logger } from 'pino';
import type { ResourceAccess } from '../auth/resource-access.js';
import type { OpenStreams } from '../consumption/open-streams.js';
import type { AuthDeps } from './auth-hooks.js';
import type { Clock } from '../core/ports.js';
import type { ConnectionLimiter } from '../consumption/connection-limiter.js';
import type { CursorResolver } from '../consumption/cursors.js';
import type { SubscriptionHub } from '../consumption/subscription-hub.js';
import type { PartitionReader } from '../consumption/ports.js';
import type { Publisher } from '../publishing/publish.js';
import type { EventTypeService } from '../registry/event-type-service.js';
import type { FeatureService } from '../settings/feature-service.js';
import type { BlacklistService } from '../settings/blacklist-service.js';
import type { SubscriptionService } from '../subscriptions/subscription-service.js';

/** Bounds on requests as they arrive (config; see README). */
export interface HttpLimits {
  /** Largest publish body, decoded (413 above). */
  publishBodyBytesMax: number;
  /** Largest body of every other route, decoded (413 above). */
  bodyBytesMax: number;
  /** Headers and body of a request must arrive within this (408 after). */
  requestTimeoutMs: number;
  /** A body that sends nothing for this long gets 408 at once. */
  bodyIdleTimeoutMs: number;
}

export interface AppDeps {
  logger: Logger;
  clock: Clock;
  http: HttpLimits;
  /** Authentication and route permissions. */
  auth: AuthDeps;
  /** Per-resource authorization and the blacklist. */
  access: ResourceAccess;
  /** Streams open on this node, so rule changes can end them. */
  openStreams: OpenStreams;
  eventTypes: EventTypeService;
  features: FeatureService;
  blacklist: BlacklistService;
  subscriptions: SubscriptionService;
  /** Subscription streams, cursors and stats on this node. */
  hub: SubscriptionHub;
  publisher: Publisher;
  reader: PartitionReader;
  cursors: CursorResolver;
  limiter: ConnectionLimiter;
  /** The node's place in the cluster (GET /cluster, linearizable reads, what it serves); optional so tests can omit it. */
  cluster?: ClusterPort;
  /** Replica moves (POST/DELETE /cluster/partitions/{group}/move, administrator-only); absent in tests that omit it. */
  moves?: MoveAdmin;
  /** Accepting the loss of a partition whose only replica is damaged (POST /cluster/.../accept-loss, administrator-only); absent in tests that omit it. */
  losses?: LossAdmin;
  /** Observes publish and stream activity for metrics; optional so tests can omit it. */
  observer?: ApiObserver;
  /** The metrics views (GET /metrics, /metrics/prometheus). */
  metrics: MetricsView;
  timelines: TimelineAdmin;
}

/** Storages and timelines (administrator-only). */
export interface TimelineAdmin {
  createStorage(body: unknown): Promise<object>;
  listStorages(): object[];
  getStorage(id: string): object;
  deleteStorage(id: string): Promise<void>;
  createTimeline(name: string, body: unknown): Promise<unknown>;
  listTimelines(name: string): object[];
  deleteTimeline(name: string, id: string): void;
}

export interface MetricsView {
  json(): Promise<object>;
  prometheus(): Promise<string>;
  readonly contentType: string;
}

export interface ApiObserver {
  published(eventType: string, events: number, durationMs: number, status: number): void;
  streamed(eventType: string, events: number, bytes: number): void;
  streamOpened(): void;
  streamClosed(): void;
}

/** Replica moves (broker/move-service.ts): answers are the partition and its placement; errors are Problems. */
export interface MoveAdmin {
  start(group: string, body: unknown): Promise<object>;
  cancel(group: string): Promise<object>;
}

/** Accepting lost data (broker/loss-service.ts): answers are the losses accepted; errors are Problems. */
export interface LossAdmin {
  report(group: string): object;
  /** `replica`: the node whose replica keeps its log (several replicas, every one damaged); `authorization` is passed on to the nodes asked. */
  accept(group: string, ctx?: { replica?: string | undefined; authorization?: string | undefined }): Promise<object>;
  acceptAll(): Promise<object>;
}

/** What the HTTP layer needs from the node's cluster module (the metadata Raft group implements it). */
export interface ClusterPort {
  /** GET /cluster: this node's view, as JSON. */
  view(): object;
  /**
   * Waits until a local read of metadata is linearizable; undefined when it already is (a single
   * node). Rejects with a 503 Problem when no leader confirms in time.
   */
  readBarrier(): Promise<void> | undefined;
  /**
   * readBarrier() for publishing: served under a metadata read lease when this node holds one
   * (docs/metadata-raft.md, "Read leases"). Absent: publishing takes readBarrier().
   */
  publishBarrier?(): Promise<void> | undefined;
  /**
   * Waits until an answer built from this node's metadata may leave (everything it applied is visible
   * everywhere: docs/metadata-raft.md, "Read leases"); undefined when it may now. Checked as the answer
   * of a request that read metadata leaves, since the barriers above are checked before the handler
   * reads. Rejects with a 503 Problem when that is not confirmed in time. Absent: answers leave at once.
   */
  answerBarrier?(): Promise<void> | undefined;
  /**
   * How long a stream's cursor may wait for this node's copy of its partition to reach it before it is
   * refused as not existing yet (0 on a single node: its copy is the only one).
   */
  cursorCatchUpMs(): number;
}
