/**
 * Retention: periodically removes record batches older than each event type's
 * options.retention_time. Cleanup only moves oldest_available_offset; offsets are never renumbered.
 */
import type { Logger } from 'pino';
import type { Clock } from '../core/ports.js';
import type { EventTypeRecord } from '../metadata/types.js';

export interface RetentionTarget {
  applyRetention(topic: number, partition: number, cutoffMs: number): Promise<number>;
}

export async function runRetentionOnce(
  eventTypes: Iterable<EventTypeRecord>,
  store: RetentionTarget,
  clock: Clock,
  log: Logger,
): Promise<number> {
  let removed = 0;
  const now = clock.nowMs();
  for (const rec of [...eventTypes]) {
    const cutoff = now - rec.eventType.options.retention_time;
    for (const p of rec.storage.partitions) {
      try {
        const n = await store.applyRetention(rec.storage.topic, Number(p), cutoff);
        if (n > 0) log.info({ eventType: rec.eventType.name, partition: p, removed: n }, 'retention removed events');
        removed += n;
      } catch (err) {
        log.error({ err, eventType: rec.eventType.name, partition: p }, 'retention failed');
      }
    }
  }
  return removed;
}

export function startRetention(
  every: number,
  eventTypes: () => Iterable<EventTypeRecord>,
  store: RetentionTarget,
  clock: Clock,
  log: Logger,
): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() => runRetentionOnce(eventTypes(), store, clock, log));
  }, every);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
