/**
 * Linearizable reads of the metadata group on this node (Raft thesis §6.4, ReadIndex), and waits for
 * this node to have applied an index.
 *
 * readBarrier() resolves once a read of the local state machine reflects every write acknowledged
 * anywhere before the call: the leader confirms its leadership with a heartbeat round and names its
 * commit index; the read is served once this node has applied that far. Concurrent reads share one
 * round; reads that arrive during a round share the next, started as soon as that one is answered
 * (not at the next tick). A round whose request or answer was lost, or whose leader changed, is asked
 * again. The rounds go through the group's RawNode, so they travel with the node host's turns.
 */
import { problems } from '../core/problem.js';
export class MetadataReads {
    #o;
    #applyWaiters = [];
    #queue = [];
    #round;
    #seq = 0;
    #closed = false;
    constructor(o) {
        this.#o = o;
    }
    /** Resolves once this node has applied `index` (fails with 503 at `deadlineMs`). */
    waitApplied(index, deadlineMs) {
        if (this.#o.applied() >= index)
            return Promise.resolve();
        return new Promise((resolve, reject) => this.#applyWaiters.push({ index, deadlineMs, resolve, reject }));
    }
    /** Resolves once a local read reflects every write acknowledged before the call. */
    barrier() {
        if (this.#closed)
            return Promise.reject(problems.unavailable('The node is shutting down; retry on another node.'));
        return new Promise((resolve, reject) => {
            this.#queue.push({ deadlineMs: this.#o.nowMs() + this.#o.timeoutMs, resolve, reject });
            this.startRound();
        });
    }
    /** Whether reads or apply waits are under way (the group must keep ticking for them). */
    busy() {
        return this.#queue.length > 0 || this.#round !== undefined || this.#applyWaiters.length > 0;
    }
    /** Entries were applied: release the waits they satisfy. */
    applied() {
        if (this.#applyWaiters.length === 0)
            return;
        const applied = this.#o.applied();
        const keep = [];
        for (const w of this.#applyWaiters) {
            if (w.index <= applied)
                w.resolve();
            else
                keep.push(w);
        }
        this.#applyWaiters = keep;
    }
    /** Answers of the leader to readIndex requests (a Ready's readStates, after it is applied). */
    answered(states) {
        for (const rs of states) {
            const round = this.#round;
            if (round === undefined || rs.context !== round.ctx)
                continue; // an abandoned round's late answer
            this.#round = undefined;
            for (const w of round.waiters)
                this.#applyWaiters.push({ index: rs.index, deadlineMs: w.deadlineMs, resolve: w.resolve, reject: w.reject });
            this.applied();
            // Reads that arrived during this round were queued (they need an index confirmed after they
            // arrived, so they cannot share it): start their round now rather than at the next tick, which
            // would add up to a tick period to each of them.
            this.startRound();
        }
    }
    /** The leader changed: a round sent to the old one may never be answered; ask the new one. */
    leaderChanged() {
        this.#retryRound();
        // Not now: this runs while the node host handles the Ready that says so.
        queueMicrotask(() => this.startRound());
    }
    /** A tick: rounds unanswered for too long are asked again, late waits fail, queued reads start. */
    tick(nowMs) {
        const round = this.#round;
        if (round !== undefined && nowMs - round.startedMs > this.#o.roundTimeoutMs)
            this.#retryRound();
        this.#expire(nowMs);
        this.startRound();
    }
    startRound() {
        if (this.#round !== undefined || this.#queue.length === 0 || this.#closed)
            return;
        const ctx = `${this.#o.incarnation}/${++this.#seq}`;
        // False when no leader is known (or too many reads wait on it): the next tick tries again.
        if (!this.#o.raw().readIndex(ctx))
            return;
        this.#round = { ctx, waiters: this.#queue.splice(0), startedMs: this.#o.nowMs() };
        this.#o.kick();
    }
    #retryRound() {
        const round = this.#round;
        if (round === undefined)
            return;
        this.#round = undefined;
        this.#queue.unshift(...round.waiters);
    }
    #expire(now) {
        const late = (w) => w.deadlineMs <= now;
        if (this.#queue.some(late)) {
            for (const w of this.#queue.filter(late))
                w.reject(problems.unavailable('No metadata leader confirmed the read in time (is a majority of the cluster reachable?); retry.'));
            this.#queue = this.#queue.filter((w) => !late(w));
        }
        if (this.#applyWaiters.some(late)) {
            for (const w of this.#applyWaiters.filter(late))
                w.reject(problems.unavailable('This node has not caught up with the metadata leader in time; retry.'));
            this.#applyWaiters = this.#applyWaiters.filter((w) => !late(w));
        }
    }
    close(err) {
        this.#closed = true;
        for (const w of [...this.#applyWaiters, ...this.#queue, ...(this.#round?.waiters ?? [])])
            w.reject(err);
        this.#applyWaiters = [];
        this.#queue = [];
        this.#round = undefined;
    }
}
//# sourceMappingURL=metadata-reads.js.map