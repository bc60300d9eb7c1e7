/**
 * The appends in flight to one follower in replicate state, as a bounded FIFO of the last index each
 * carried (and its bytes). Bounding both the count and the bytes is what makes pipelining safe: a
 * slow follower costs the leader at most `countMax` messages or `bytesMax` bytes of buffering.
 */
import { assert } from '../core/assert.js';
export class Inflights {
    countMax;
    bytesMax;
    #indexes = [];
    #sizes = [];
    #start = 0;
    #bytes = 0;
    constructor(countMax, bytesMax) {
        assert(Number.isSafeInteger(countMax) && countMax > 0, `inflight count max ${countMax}`);
        assert(bytesMax > 0, `inflight bytes max ${bytesMax}`);
        this.countMax = countMax;
        this.bytesMax = bytesMax;
    }
    get count() {
        return this.#indexes.length - this.#start;
    }
    get bytes() {
        return this.#bytes;
    }
    /** Records an append whose last entry is `index`. Indexes must increase. */
    add(index, bytes) {
        assert(!this.full(), 'adding to a full inflight window');
        const last = this.#indexes[this.#indexes.length - 1];
        assert(this.count === 0 || last === undefined || index > last, `inflight index ${index} does not increase`);
        this.#indexes.push(index);
        this.#sizes.push(bytes);
        this.#bytes += bytes;
    }
    /** Frees every append whose last index is <= `index` (the follower acknowledged them). */
    freeLE(index) {
        while (this.#start < this.#indexes.length && this.#indexes[this.#start] <= index) {
            this.#bytes -= this.#sizes[this.#start];
            this.#start++;
        }
        if (this.#start > 64 && this.#start * 2 > this.#indexes.length) {
            this.#indexes = this.#indexes.slice(this.#start);
            this.#sizes = this.#sizes.slice(this.#start);
            this.#start = 0;
        }
        if (this.count === 0)
            this.#bytes = 0;
    }
    full() {
        return this.count >= this.countMax || this.#bytes >= this.bytesMax;
    }
    reset() {
        this.#indexes = [];
        this.#sizes = [];
        this.#start = 0;
        this.#bytes = 0;
    }
}
//# sourceMappingURL=inflights.js.map