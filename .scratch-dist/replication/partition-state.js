/**
 * The state machine of one partition's Raft group (pure): what applying the committed log does.
 *
 * The Raft log is the partition log. A committed entry is one of:
 * - an event batch: it takes the next `count` dense offsets, in log order, when it is applied (not
 *   when it is proposed), so no-ops, configuration changes and refused duplicates never show as gaps
 *   and every replica assigns the same offsets to the same batch;
 * - anything else (a new leader's no-op, a configuration change, a control command): no offsets.
 *
 * Duplicates. A publish forwarded to a leader that is deposed before it answers is retried by the
 * forwarder with the same request id. If the first attempt did commit, applying the retry must not
 * append the events twice: the state remembers the offsets of the last `dedupWindow` request ids and
 * answers a repeated one with the offsets of its first application. The window is part of the image,
 * so a replica restored from a snapshot de-duplicates exactly as the others.
 *
 * Offsets are plain safe integers here (src/core/offset.ts brands them at the edges).
 */
import { assert } from '../core/assert.js';
/** Request ids remembered for de-duplication, per partition. */
export const dedupWindow = 512;
/**
 * Why a value is not an image a replica can start from at Raft index `index` (a snapshot from the
 * leader), or undefined. Checked before anything of the snapshot is stored: the state asserts these
 * (offsets exact and in order, applied at the snapshot's index), so an image that breaks them would stop
 * the node when installed and again at every start.
 */
export function partitionImageProblem(img, index) {
    if (typeof img !== 'object' || img === null || Array.isArray(img))
        return 'not an object';
    const o = img;
    const offset = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
    if (o['applied'] !== index)
        return `applied ${String(o['applied'])} is not the snapshot's index ${index}`;
    if (!offset(o['next']) || !offset(o['oldest']))
        return 'next and oldest must be offsets';
    if (o['oldest'] > o['next'])
        return `oldest ${String(o['oldest'])} beyond next ${String(o['next'])}`;
    const recent = o['recent'];
    if (!Array.isArray(recent) || recent.length > dedupWindow)
        return `recent must be a list of at most ${dedupWindow} request ids`;
    for (const r of recent) {
        if (!Array.isArray(r) || r.length !== 3 || typeof r[0] !== 'string' || !offset(r[1]) || !offset(r[2]) || r[1] > r[2] || r[2] >= o['next']) {
            return 'recent holds an entry that is not [request id, first, last] below next';
        }
    }
    return undefined;
}
export class PartitionState {
    #applied;
    #next;
    #oldest;
    /** id -> [first, last]; Map keeps insertion order, which is the eviction order. */
    #recent = new Map();
    constructor(image = { applied: 0, next: 0, oldest: 0, recent: [] }) {
        this.#applied = image.applied;
        this.#next = image.next;
        this.#oldest = image.oldest;
        for (const [id, first, last] of image.recent)
            this.#recent.set(id, [first, last]);
        assert(this.#oldest <= this.#next, `oldest ${this.#oldest} beyond next ${this.#next}`);
    }
    get applied() {
        return this.#applied;
    }
    /** The newest offset written, -1 when none ever was. */
    get newest() {
        return this.#next - 1;
    }
    get oldest() {
        return this.#oldest;
    }
    /** Applies an event batch committed at `index`. An empty request id is never de-duplicated. */
    applyBatch(index, requestId, count) {
        this.#advance(index);
        return this.#batch(requestId, count);
    }
    /**
     * Applies the event batches of one entry committed at `index`, in order, each de-duplicated on its
     * own (a retried batch may share an entry with its own first attempt: the first one counts).
     */
    applyBatches(index, batches) {
        this.#advance(index);
        return batches.map((b) => this.#batch(b.requestId, b.count));
    }
    #batch(requestId, count) {
        assert(Number.isSafeInteger(count) && count > 0, `batch of ${count} events`);
        if (requestId !== '') {
            const seen = this.#recent.get(requestId);
            if (seen !== undefined)
                return { kind: 'duplicate', first: seen[0], last: seen[1] };
        }
        const first = this.#next;
        const last = first + count - 1;
        this.#next = last + 1;
        if (requestId !== '') {
            this.#recent.set(requestId, [first, last]);
            if (this.#recent.size > dedupWindow)
                this.#recent.delete(this.#recent.keys().next().value);
        }
        return { kind: 'appended', first, last };
    }
    /** Applies an entry that carries no events (no-op, configuration change, control command). */
    applyOther(index) {
        this.#advance(index);
    }
    /**
     * Sets where offsets start on an empty log (the first offset of a new timeline, or the base that
     * migrated data ends at), applied as a command of the group so every replica agrees.
     */
    applyBase(index, base) {
        this.#advance(index);
        if (this.#next !== this.#oldest || base < this.#next)
            return false;
        this.#next = base;
        this.#oldest = base;
        return true;
    }
    /** Retention removed every event before `oldest` (a local decision: retention runs on every replica). */
    truncateBefore(oldest) {
        assert(oldest <= this.#next, `truncating to ${oldest} beyond next ${this.#next}`);
        if (oldest > this.#oldest)
            this.#oldest = oldest;
    }
    image() {
        return {
            applied: this.#applied,
            next: this.#next,
            oldest: this.#oldest,
            recent: [...this.#recent].map(([id, [first, last]]) => [id, first, last]),
        };
    }
    #advance(index) {
        assert(index === this.#applied + 1, `partition entry ${index} applied after ${this.#applied}`);
        this.#applied = index;
    }
}
//# sourceMappingURL=partition-state.js.map