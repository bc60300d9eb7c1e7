/**
 * The event type of a logical topic (EventTypeStorage.topic) in this node's applied metadata.
 * Publishing and consumption address partition logs by that topic (storage-router.ts); the index is
 * built on first use and forgotten whenever event types come or go or a snapshot replaces the state,
 * so a lookup never walks every event type on the publish path.
 */
import type { MetadataStateMachine } from '../metadata/state-machine.js';
import type { EventTypeRecord } from '../metadata/types.js';

export class TopicIndex {
  readonly #state: () => Pick<MetadataStateMachine, 'eventTypes' | 'eventType'> | undefined;
  #names: Map<number, string> | undefined;

  /** `state` is undefined until the metadata group is open: nothing is found then. */
  constructor(state: () => Pick<MetadataStateMachine, 'eventTypes' | 'eventType'> | undefined) {
    this.#state = state;
  }

  lookup(topic: number): EventTypeRecord | undefined {
    const state = this.#state();
    if (state === undefined) return undefined;
    this.#names ??= new Map([...state.eventTypes()].map((r) => [r.storage.topic, r.eventType.name]));
    const name = this.#names.get(topic);
    return name === undefined ? undefined : state.eventType(name);
  }

  /** Event types were created or deleted, or the state was restored from a snapshot. */
  invalidate(): void {
    this.#names = undefined;
  }
}
