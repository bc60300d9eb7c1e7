/**
 * Bounds simultaneous low-level connections per partition (compatibility.md: more than 5, configurable,
 * gets 429). All-or-nothing: a stream over several partitions takes a slot on each or on none.
 */
import { problems } from '../core/problem.js';
export class ConnectionLimiter {
    #max;
    #open = new Map();
    constructor(maxPerPartition) {
        this.#max = maxPerPartition;
    }
    acquire(eventType, partitions) {
        const keys = partitions.map((p) => `${eventType}\u0000${p}`);
        for (let i = 0; i < keys.length; i++) {
            if ((this.#open.get(keys[i]) ?? 0) >= this.#max) {
                throw problems.tooManyConnections(`Too many simultaneous connections to partition "${partitions[i]}" of event type "${eventType}" (at most ${this.#max})`);
            }
        }
        for (const k of keys)
            this.#open.set(k, (this.#open.get(k) ?? 0) + 1);
        let released = false;
        return () => {
            if (released)
                return;
            released = true;
            for (const k of keys) {
                const n = (this.#open.get(k) ?? 1) - 1;
                if (n === 0)
                    this.#open.delete(k);
                else
                    this.#open.set(k, n);
            }
        };
    }
    openCount() {
        let n = 0;
        for (const v of this.#open.values())
            n += v;
        return n;
    }
}
//# sourceMappingURL=connection-limiter.js.map