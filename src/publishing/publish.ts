/**
 * The publish pipeline: parse -> validate -> enrich -> partition -> serialize -> append.
 *
 * The three checking phases each run over the whole batch in turn (interface.md: "Validation runs in
 * defined order and the event is rejected at the first failure ... A validation, enrichment or
 * partitioning failure rejects the whole batch"). Item steps follow the original service: when item k
 * fails in a phase, items before it carry that phase's step, items after it the previous phase's
 * (`none` when failing in validation), and all but k are `aborted`. Nothing is appended unless the
 * whole batch passed. Storage is per partition: one atomic record batch each, so a storage failure
 * fails exactly that partition's items (207) and never half of one.
 */
import { problems } from '../core/problem.js';
import { eventBytesMax, eventNestingDepthMax, publishBatchEventsMax } from '../core/limits.js';
import type { Clock, Random } from '../core/ports.js';
import type { EventTypeRecord } from '../metadata/types.js';
import type { BatchItemResponse, PublishingStep } from './batch-item.js';
import { topLevelElementAt, topLevelElementSizes } from './body-scan.js';
import { firstInvalidUtf8 } from './utf8.js';
import { enrichMetadata, EnrichmentError } from './enrich.js';
import { makePartitioner, PartitioningError, type Partitioner } from './partitioner.js';
import { spliceElements } from './splice.js';
import { firstRepeatedKey, keyCount } from './repeated-keys.js';
import type { EventTypeLookup, PartitionAppend, PartitionWriter, ValidatorSource } from './ports.js';

export type PublishOutcome =
  | { status: 200; eventCount: number }
  | { status: 207 | 422; items: BatchItemResponse[]; eventCount: number };

export interface PublisherDeps {
  eventTypes: EventTypeLookup;
  validators: ValidatorSource;
  writer: PartitionWriter;
  clock: Clock;
  random: Random;
  /** Feature toggles that change publishing (absent: all off). */
  features?: { isEnabled(name: 'check_partitions_keys'): boolean };
  /**
   * Lets other work run (main: setImmediate). Called between chunks of `validationChunkEvents` events,
   * so validating a large batch against a complex schema never holds the event loop for long. Absent:
   * validation runs in one go.
   */
  pause?: () => Promise<void>;
}

/** Events validated between two pauses: at the schema bounds' worst (about 50 µs an event), 25 ms. */
export const validationChunkEvents = 500;
/** How often validation starts over when the event type changes during its pauses, before 503. */
const revalidationsMax = 3;

type Phase = 'validating' | 'enriching' | 'partitioning';
const previousStep: Record<Phase, PublishingStep> = {
  validating: 'none',
  enriching: 'validating',
  partitioning: 'enriching',
};

/**
 * JSON.parse is iterative and accepts any depth, but the schema validator and JSON.stringify recurse:
 * an event nested deeper than the stack allows makes them throw RangeError. Such an event is refused
 * as invalid (422 for the batch) instead of failing the request with a 500.
 */
const tooDeeplyNested = 'The event is nested too deeply to be processed';

/** Why event `i` of the body is refused for a repeated key, naming the key when it can be found. */
function repeatedKeyDetail(body: Buffer, i: number): string {
  const sizes = topLevelElementSizes(body);
  let start = body.indexOf(0x5b /* [ */) + 1;
  for (let k = 0; k < i; k++) start += sizes[k]! + 1;
  const key = sizes[i] === undefined ? undefined : firstRepeatedKey(body.subarray(start, start + sizes[i]!));
  return `The event repeats a key in one object${key === undefined ? '' : ` (${key})`}: JSON parsers differ on which value they keep`;
}

function eidOf(event: unknown): string | undefined {
  if (event === null || typeof event !== 'object') return undefined;
  const md = (event as Record<string, unknown>)['metadata'];
  if (md === null || typeof md !== 'object') return undefined;
  const eid = (md as Record<string, unknown>)['eid'];
  return typeof eid === 'string' ? eid : undefined;
}

function item(event: unknown, status: BatchItemResponse['publishing_status'], step: PublishingStep, detail?: string): BatchItemResponse {
  const eid = eidOf(event);
  const r: BatchItemResponse = detail === undefined ? { publishing_status: status, step } : { publishing_status: status, step, detail };
  if (eid !== undefined) r.eid = eid;
  return r;
}

function rejectBatch(events: unknown[], failedAt: number, phase: Phase, detail: string): PublishOutcome {
  const items = events.map((ev, i) => {
    if (i === failedAt) return item(ev, 'failed', phase, detail);
    // No detail: the status says it, and a batch of 100,000 tiny events must not get a reply many
    // times its size.
    return item(ev, 'aborted', i < failedAt ? phase : previousStep[phase]);
  });
  return { status: 422, items, eventCount: events.length };
}

/**
 * The body as parsed JSON (a Problem 400 when it is not JSON). Its own function so the text of the body,
 * a string as large as the body on V8's heap, dies with this frame instead of waiting in publish's.
 */
function parseBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw problems.malformedJson(`Malformed JSON: ${(err as Error).message}`);
  }
}

export class Publisher {
  readonly #deps: PublisherDeps;
  /**
   * The partitioner of each event type record in use (its key paths split, its partition ids sorted),
   * built once instead of per request. A changed event type is a new record (publish relies on that
   * too), so an entry never outlives what it was built from, and a record no longer held drops its entry.
   */
  readonly #partitioners = new WeakMap<EventTypeRecord, { strictKeys: boolean; partitioner: Partitioner }>();

  constructor(deps: PublisherDeps) {
    this.#deps = deps;
  }

  /**
   * Publishes a batch given as the raw request body. Throws Problems for requests that are not a
   * batch at all (unknown event type 404, malformed JSON 400); answers 422/207 per item otherwise.
   */
  async publish(name: string, body: Buffer, flowId: string): Promise<PublishOutcome> {
    let rec = this.#deps.eventTypes.eventType(name);
    if (rec === undefined) throw problems.eventTypeNotFound(`EventType "${name}" does not exist.`);

    let events: unknown = parseBody(body);
    if (!Array.isArray(events)) throw problems.badRequest('The body must be a JSON array of events');
    if (events.length === 0) return { status: 200, eventCount: 0 };
    if (events.length > publishBatchEventsMax) {
      throw problems.payloadTooLarge(`A batch holds at most ${publishBatchEventsMax} events, got ${events.length}`);
    }
    // A batch is an array of event objects (the original service answered anything else 400 too);
    // refused whole, so a batch of 100,000 numbers does not get 100,000 items back.
    const notObject = events.findIndex((e) => e === null || typeof e !== 'object' || Array.isArray(e));
    if (notObject >= 0) {
      const e: unknown = events[notObject];
      throw problems.badRequest(`The body must be a JSON array of event objects; element ${notObject} is ${e === null ? 'null' : Array.isArray(e) ? 'an array' : `a ${typeof e}`}`);
    }

    // Phase 1: validating (size on the submitted text, shape, schema). It may pause; if the event type
    // changed meanwhile (a new schema, deleted), the batch is checked again against what it is now, so
    // the appends below always follow a validation against the record they use, with no pause between.
    const sizes = body.length > eventBytesMax ? topLevelElementSizes(body) : undefined;
    const invalidAt = firstInvalidUtf8(body);
    const notUtf8 = invalidAt < 0 ? -1 : topLevelElementAt(body, invalidAt);
    for (let attempt = 1; ; attempt++) {
      // A batch that needs no pause is checked without an await (and so without a resumption).
      const refused = events.length <= validationChunkEvents || this.#deps.pause === undefined ? this.#check(events, sizes, notUtf8, rec, 0, events.length) : await this.#validate(events, sizes, notUtf8, rec);
      if (refused !== undefined) return refused;
      const now: EventTypeRecord | undefined = this.#deps.eventTypes.eventType(name);
      if (now === rec) break;
      if (now === undefined) throw problems.eventTypeNotFound(`EventType "${name}" does not exist.`);
      if (attempt >= revalidationsMax) throw problems.unavailable(`EventType "${name}" kept changing while the batch was validated; retry`);
      rec = now;
    }
    const prepared = this.#prepare(rec, events, body, flowId);
    if (!('appends' in prepared)) return prepared;
    const eventCount = events.length;
    // The parsed events are not needed while the appends wait for their entries to commit, but an async
    // function keeps every local it had across an await (V8 saves its whole register file, dead or not):
    // they would live as long as the wait, be promoted to old space when requests queue, and die there,
    // which is what full collections are made of. So they are dropped here (the text of the body and the
    // per-phase work live in parseBody and #prepare, whose frames are gone), and the rare 207 below parses
    // the body again for its eids.
    events = undefined;
    const { order } = prepared;
    const results = await this.#deps.writer.append(prepared.appends);
    if (results.every((r) => r.ok)) return { status: 200, eventCount };

    const again = parseBody(body) as unknown[];
    const items: BatchItemResponse[] = new Array(eventCount);
    order.forEach((idx, g) => {
      const r = results[g]!;
      for (const i of idx) {
        items[i] = r.ok
          ? item(again[i], 'submitted', 'publishing', '')
          : item(again[i], 'failed', 'publishing', `storage failed: ${r.error.message}`);
      }
    });
    return { status: 207, items, eventCount };
  }

  /**
   * Phases 2 to 4 for a validated batch, none of which pauses: the appends, one per partition, with the
   * batch indexes each holds (in the order of `appends`), or the 422 outcome of the first event refused.
   */
  #prepare(rec: EventTypeRecord, events: unknown[], body: Buffer, flowId: string): PublishOutcome | { appends: PartitionAppend[]; order: number[][] } {
    const et = rec.eventType;
    // Keys as parsed, before enrichment adds any (compared with the members written, phase 4).
    const keys = events.map(keyCount);

    // Phase 2: enriching. `adds[i]` is what enrichment adds to event i's metadata, as JSON text, for
    // the stored copy of the submitted text (phase 4); null: store the re-serialized object instead.
    const adds: (string | undefined | null)[] = new Array<string | undefined | null>(events.length).fill(undefined);
    if (et.enrichment_strategies.includes('metadata_enrichment')) {
      const ctx = {
        eventTypeName: et.name,
        receivedAt: new Date(this.#deps.clock.nowMs()).toISOString(),
        schemaVersion: et.schema.version,
        flowId,
      };
      const eventTypeField = `"event_type":${JSON.stringify(ctx.eventTypeName)},`;
      const always = `"received_at":${JSON.stringify(ctx.receivedAt)},"version":${JSON.stringify(ctx.schemaVersion)}`;
      const flowIdField = `,"flow_id":${JSON.stringify(flowId)}`;
      for (let i = 0; i < events.length; i++) {
        try {
          const e = enrichMetadata(events[i] as Record<string, unknown>, ctx);
          adds[i] = (e.addedEventType ? eventTypeField : '') + always + (e.addedFlowId ? flowIdField : '');
        } catch (err) {
          if (err instanceof EnrichmentError) return rejectBatch(events, i, 'enriching', err.message);
          throw err;
        }
      }
    }

    // Phase 3: partitioning; events are grouped per partition in their batch order.
    const partitioner = this.#partitionerOf(rec);
    const writesMetadataPartition = et.category !== 'undefined';
    const groups = new Map<string, number[]>();
    for (let i = 0; i < events.length; i++) {
      const ev = events[i] as Record<string, unknown>;
      let p: string;
      try {
        p = partitioner.partitionOf(ev);
      } catch (err) {
        if (err instanceof PartitioningError) return rejectBatch(events, i, 'partitioning', err.message);
        throw err;
      }
      if (writesMetadataPartition) {
        const md = ev['metadata'] as Record<string, unknown>;
        if (md['partition'] === undefined) adds[i] = (adds[i] === undefined ? '' : adds[i] + ',') + `"partition":${JSON.stringify(p)}`;
        else if (md['partition'] !== p) adds[i] = null; // the producer's value is replaced: no splice
        md['partition'] = p;
      }
      let g = groups.get(p);
      if (g === undefined) groups.set(p, (g = []));
      g.push(i);
    }

    // Phase 4: publishing, one atomic append per partition. Events are stored as submitted (compacted,
    // enrichment spliced in, every digit kept); those that cannot be spliced are re-serialized.
    const members: number[] = [];
    const spliced = spliceElements(body, adds.map((a) => (a === null ? undefined : a)), eventNestingDepthMax, members);
    const tooDeep = spliced.indexOf('too_deep');
    if (tooDeep >= 0) return rejectBatch(events, tooDeep, 'validating', tooDeeplyNested);
    const repeated = keys.findIndex((n, i) => members[i] !== n);
    if (repeated >= 0) return rejectBatch(events, repeated, 'validating', repeatedKeyDetail(body, repeated));
    const order: number[][] = [];
    const appends: PartitionAppend[] = [];
    for (const [p, idx] of groups) {
      order.push(idx);
      const serialized: Buffer[] = [];
      for (const i of idx) {
        const stored = spliced.length !== events.length ? 'unspliceable' : spliced[i]!;
        if (typeof stored !== 'string' && adds[i] !== null) {
          serialized.push(stored);
          continue;
        }
        let text: string;
        try {
          text = JSON.stringify(events[i]);
        } catch (err) {
          // Nesting deeper than the stack: the event passed the schema (undeclared parts are not
          // descended into) but cannot be stored, so it is an invalid event and the batch is refused.
          if (!(err instanceof RangeError)) throw err;
          return rejectBatch(events, i, 'validating', tooDeeplyNested);
        }
        serialized.push(Buffer.from(text));
      }
      appends.push({ topic: rec.storage.topic, partition: Number(p), events: serialized });
    }
    return { appends, order };
  }

  #partitionerOf(rec: EventTypeRecord): Partitioner {
    const strictKeys = this.#deps.features?.isEnabled('check_partitions_keys') === true;
    const built = this.#partitioners.get(rec);
    if (built !== undefined && built.strictKeys === strictKeys) return built.partitioner;
    const partitioner = makePartitioner(rec.eventType, rec.storage.partitions, this.#deps.random, strictKeys);
    this.#partitioners.set(rec, { strictKeys, partitioner });
    return partitioner;
  }

  /**
   * Phase 1 for one record: the 422 outcome of the first invalid event, or undefined when all pass.
   * Pauses between chunks of `validationChunkEvents` events.
   */
  async #validate(events: unknown[], sizes: (number | undefined)[] | undefined, notUtf8: number, rec: EventTypeRecord): Promise<PublishOutcome | undefined> {
    for (let from = 0; from < events.length; from += validationChunkEvents) {
      if (from > 0) await this.#deps.pause?.();
      const refused = this.#check(events, sizes, notUtf8, rec, from, Math.min(events.length, from + validationChunkEvents));
      if (refused !== undefined) return refused;
    }
    return undefined;
  }

  /** Phase 1 for events `from` to `to` (excluded) without a pause: the 422 outcome of the first invalid one. */
  #check(events: unknown[], sizes: (number | undefined)[] | undefined, notUtf8: number, rec: EventTypeRecord, from: number, to: number): PublishOutcome | undefined {
    const validate = this.#deps.validators.validatorFor(rec);
    for (let i = from; i < to; i++) {
      const ev: unknown = events[i];
      const size = sizes?.[i];
      if (size !== undefined && size > eventBytesMax) {
        return rejectBatch(events, i, 'validating', `Event too large: ${size} bytes, the limit is ${eventBytesMax}`);
      }
      // Stored and streamed as sent, so it would make every stream carrying it invalid UTF-8.
      if (i === notUtf8) return rejectBatch(events, i, 'validating', 'The event is not valid UTF-8');
      if (ev === null || typeof ev !== 'object' || Array.isArray(ev)) {
        return rejectBatch(events, i, 'validating', 'An event must be a JSON object');
      }
      let error: string | null;
      try {
        error = validate(ev);
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        error = tooDeeplyNested;
      }
      if (error !== null) return rejectBatch(events, i, 'validating', error);
    }
    return undefined;
  }
}
