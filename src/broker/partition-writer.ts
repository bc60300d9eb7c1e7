/**
 * Adapts the partition store to the publishing port. Per-partition failures stay per item (they become
 * a 207); failures of the whole append (the bounded queue is full, the store is closing) become a 503
 * Problem, so a publisher under overload is told to retry instead of seeing an internal error.
 */
import { problems } from '../core/problem.js';
import { AppendQueueFullError, StoreClosedError } from '../log/index.js';
import type { PartitionAppend, PartitionAppendResult, PartitionWriter } from '../publishing/ports.js';

export class StorePartitionWriter implements PartitionWriter {
  readonly #store: PartitionWriter;

  /** The store, or the storage router in front of the stores (it has the same append). */
  constructor(store: PartitionWriter) {
    this.#store = store;
  }

  // Not an async function: a publish waits on this once per request, and an async frame here would add
  // a promise and a resumption to every one of them for the rare failure.
  append(items: PartitionAppend[]): Promise<PartitionAppendResult[]> {
    let appended: Promise<PartitionAppendResult[]>;
    try {
      appended = this.#store.append(items);
    } catch (err) {
      return Promise.reject(asProblem(err));
    }
    return appended.catch((err: unknown) => {
      throw asProblem(err);
    });
  }
}

function asProblem(err: unknown): unknown {
  if (err instanceof AppendQueueFullError) return problems.unavailable('The broker is overloaded: too many events are waiting to be written; retry later');
  if (err instanceof StoreClosedError) return problems.unavailable('The broker is shutting down; retry on another node or later');
  return err;
}
