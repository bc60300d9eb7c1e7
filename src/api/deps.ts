/** What the HTTP layer receives from the composition root: services only, never adapters. */
import type { Logger } from 'pino';
import type { Clock } from '../core/ports.js';
import type { ConnectionLimiter } from '../consumption/connection-limiter.js';
import type { CursorResolver } from '../consumption/cursors.js';
import type { PartitionReader } from '../consumption/ports.js';
import type { Publisher } from '../publishing/publish.js';
import type { EventTypeService } from '../registry/event-type-service.js';

export interface AppDeps {
  logger: Logger;
  clock: Clock;
  eventTypes: EventTypeService;
  publisher: Publisher;
  reader: PartitionReader;
  cursors: CursorResolver;
  limiter: ConnectionLimiter;
  /** Observes publish and stream activity for metrics; optional so tests can omit it. */
  observer?: ApiObserver;
}

export interface ApiObserver {
  published(eventType: string, events: number, durationMs: number, status: number): void;
  streamed(eventType: string, events: number, bytes: number): void;
  streamOpened(): void;
  streamClosed(): void;
}
