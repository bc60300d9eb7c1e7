/**
 * Adapts the partition store to the publishing port. Per-partition failures stay per item (they become
 * a 207); failures of the whole append (the bounded queue is full, the store is closing) become a 503
 * Problem, so a publisher under overload is told to retry instead of seeing an internal error.
 */
import { problems } from '../core/problem.js';
import { AppendQueueFullError, StoreClosedError } from '../log/index.js';
export class StorePartitionWriter {
    #store;
    /** The store, or the storage router in front of the stores (it has the same append). */
    constructor(store) {
        this.#store = store;
    }
    async append(items) {
        try {
            return await this.#store.append(items);
        }
        catch (err) {
            if (err instanceof AppendQueueFullError) {
                throw problems.unavailable('The broker is overloaded: too many events are waiting to be written; retry later');
            }
            if (err instanceof StoreClosedError)
                throw problems.unavailable('The broker is shutting down; retry on another node or later');
            throw err;
        }
    }
}
//# sourceMappingURL=partition-writer.js.map