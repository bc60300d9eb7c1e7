/**
 * The single-core floor of publishing: what one core does per event with no HTTP and no disk, using
 * the broker's own code: JSON.parse of the batch text (as the broker does: body.toString + parse),
 * the broker's compiled validator for the event type (SchemaValidatorCache, the same effective
 * schema: business category + compatibility mode), enrichMetadata, then JSON.stringify + Buffer.from
 * per event. Partitioning and the record-batch encoding are not included (they are cheap).
 */
import type { EventType } from '../../src/metadata/types.js';
import { SchemaValidatorCache } from '../../src/registry/index.js';
import { enrichMetadata } from '../../src/publishing/enrich.js';

export interface FloorResult {
  eventsPerS: number;
  mbPerS: number;
  events: number;
  seconds: number;
}

export function measureFloor(eventType: EventType, bodies: readonly Buffer[], warmupMs: number, durationMs: number): FloorResult {
  const validate = new SchemaValidatorCache().validatorFor(eventType, eventType.schema);
  let sink = 0;
  const once = (body: Buffer): number => {
    const events = JSON.parse(body.toString('utf8')) as Record<string, unknown>[];
    const ctx = { eventTypeName: eventType.name, receivedAt: new Date().toISOString(), schemaVersion: eventType.schema.version, flowId: 'bench-flow-id-0001' };
    for (let i = 0; i < events.length; i++) {
      const ev = events[i]!;
      const error = validate(ev);
      if (error !== null) throw new Error(`floor: event ${i} invalid: ${error}`);
      enrichMetadata(ev, ctx);
      sink += Buffer.from(JSON.stringify(ev)).length;
    }
    return events.length;
  };
  let k = 0;
  const warmEnd = performance.now() + warmupMs;
  while (performance.now() < warmEnd) once(bodies[k++ % bodies.length]!);
  let events = 0;
  let inBytes = 0;
  const t0 = performance.now();
  const tEnd = t0 + durationMs;
  let now = t0;
  while (now < tEnd) {
    const body = bodies[k++ % bodies.length]!;
    events += once(body);
    inBytes += body.length;
    now = performance.now();
  }
  const seconds = (now - t0) / 1000;
  if (sink < 0) console.log(sink); // keep the work observable
  return { eventsPerS: events / seconds, mbPerS: inBytes / seconds / 1e6, events, seconds };
}
