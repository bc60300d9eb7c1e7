/**
 * Where a partition of a log (topic) lives, as this node's applied metadata says: the placement the
 * partition replicas, the router and the forwarder ask for. Every publish asks for each of its items
 * at least twice (is it held here? which group?), so the answers are kept.
 *
 * Kept per event type record: the metadata state machine replaces a record (never changes it in
 * place) whenever its placement, timelines or partitions change, so an answer computed from a record
 * stays right for as long as that record is the current one, and a replaced record is noticed by
 * identity at the next lookup. Which event type a topic belongs to is kept too, until `topicsChanged`
 * (event types created or deleted, a timeline added) or a restored snapshot.
 */
import type { EventTypeRecord } from '../metadata/types.js';
import { placementOf } from '../metadata/placement-of.js';
import { timelinesOf } from '../metadata/timelines.js';
import type { GroupPlacement } from './partition-replicas.js';

/** What the lookup reads: the applied metadata (undefined until the metadata group has started). */
export interface PlacementSource {
  eventTypes(): Iterable<EventTypeRecord>;
  eventType(name: string): EventTypeRecord | undefined;
}

interface Kept {
  readonly rec: EventTypeRecord;
  /** Per partition index: its answer, once asked for. */
  readonly answers: (GroupPlacement | undefined)[];
}

export class AppliedPlacements {
  readonly #source: () => PlacementSource | undefined;
  readonly #legacyReplica: number;
  /** Log topic -> event type name; rebuilt after topicsChanged. */
  #topics: Map<number, string> | undefined;
  readonly #kept = new Map<number, Kept>();

  /** `legacyReplica`: the node that holds partitions created before placement existed (placement-of.ts). */
  constructor(source: () => PlacementSource | undefined, legacyReplica: number) {
    this.#source = source;
    this.#legacyReplica = legacyReplica;
  }

  /** The placement of a partition of a log, with its starting offset; undefined when no such partition exists. */
  lookup(topic: number, partition: number): GroupPlacement | undefined {
    const state = this.#source();
    if (state === undefined) return undefined;
    this.#topics ??= new Map([...state.eventTypes()].flatMap((r) => timelinesOf(r).map((t) => [t.topic, r.eventType.name] as const)));
    const name = this.#topics.get(topic);
    const rec = name === undefined ? undefined : state.eventType(name);
    if (rec === undefined || partition >= rec.storage.partitions.length) return undefined;
    let kept = this.#kept.get(topic);
    if (kept?.rec !== rec) {
      kept = { rec, answers: [] };
      this.#kept.set(topic, kept);
    }
    let answer = kept.answers[partition];
    if (answer === undefined) {
      // A group that never applied anything starts at its timeline's first offset (partition-replicas.ts).
      const start = timelinesOf(rec).find((t) => t.topic === topic)?.starts[partition] ?? 0;
      answer = { ...placementOf(rec, topic, partition, this.#legacyReplica), start };
      kept.answers[partition] = answer;
    }
    return answer;
  }

  /** Event types were created or deleted, or a timeline was added, or the metadata was restored from a snapshot. */
  topicsChanged(): void {
    this.#topics = undefined;
    this.#kept.clear();
  }
}
