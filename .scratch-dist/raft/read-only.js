export class ReadOnly {
    #pending = new Map();
    #queue = [];
    pendingMax;
    constructor(pendingMax) {
        this.pendingMax = pendingMax;
    }
    get size() {
        return this.#queue.length;
    }
    /** Registers a request; false if its context is already pending or the queue is full. */
    addRequest(index, from, context) {
        if (this.#pending.has(context))
            return false;
        if (this.#queue.length >= this.pendingMax)
            return false;
        this.#pending.set(context, { index, from, context, acks: new Set() });
        this.#queue.push(context);
        return true;
    }
    /** Records a heartbeat answer carrying `context`; returns the acknowledgers so far, if pending. */
    recvAck(from, context) {
        const rs = this.#pending.get(context);
        if (rs === undefined)
            return undefined;
        rs.acks.add(from);
        return rs.acks;
    }
    /** Removes and returns every request up to and including the one with `context`. */
    advance(context) {
        const at = this.#queue.indexOf(context);
        if (at < 0)
            return [];
        const done = this.#queue.slice(0, at + 1);
        this.#queue = this.#queue.slice(at + 1);
        const out = [];
        for (const ctx of done) {
            const rs = this.#pending.get(ctx);
            if (rs !== undefined)
                out.push(rs);
            this.#pending.delete(ctx);
        }
        return out;
    }
    lastPendingContext() {
        return this.#queue[this.#queue.length - 1];
    }
    reset() {
        this.#pending.clear();
        this.#queue = [];
    }
}
//# sourceMappingURL=read-only.js.map