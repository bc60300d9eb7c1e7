import { toOffset } from '../core/offset.js';
import { streamReadAheadBytesMax, timerDelayMsMax } from '../core/limits.js';
import { partitionKeyOf } from '../metadata/assignment.js';
import { StreamBatcher } from './batcher.js';
export class SubscriptionStream {
    id;
    #d;
    #progress = new Map();
    #batcher;
    #lastProgressMs;
    #linesSent = 0;
    #kick;
    #kicked = false;
    constructor(deps) {
        this.id = deps.id;
        this.#d = deps;
        this.#lastProgressMs = deps.monotonicMs();
        this.#batcher = new StreamBatcher(deps.params, [], deps.monotonicMs());
    }
    /** Something changed in the replicated state: re-check assignment, commits and liveness. */
    kick() {
        this.#kicked = true;
        this.#kick?.();
    }
    /** A commit request on this stream was accepted: the commit timeout restarts. */
    noteCommit() {
        this.#lastProgressMs = this.#d.monotonicMs();
        this.kick();
    }
    /** Highest offset sent on this stream for the partition, undefined if none was. */
    sentUpTo(p) {
        return this.#progress.get(partitionKeyOf(p))?.sentUpTo;
    }
    /** Events sent on this stream and not committed, over every partition (assigned or being handed over). */
    uncommitted() {
        let n = 0;
        for (const pr of this.#progress.values())
            n += this.#uncommittedOf(pr);
        return n;
    }
    #uncommittedOf(pr) {
        // A partition handed over (neither streamed nor being released) is no longer this stream's to commit.
        if (pr.sentUpTo === undefined || (!pr.active && pr.movedAtMs === undefined && !pr.releaseInFlight))
            return 0;
        const committed = this.#d.view.committed(pr.p) ?? -1;
        return Math.max(0, pr.sentUpTo - Math.max(committed, pr.base ?? -1));
    }
    async run(sink, signal) {
        return this.#loop(sink, signal);
    }
    async #loop(sink, signal) {
        const { params, view } = this.#d;
        while (!signal.aborted) {
            this.#kicked = false;
            if (!view.alive())
                return 'closed_by_service';
            const now = this.#d.monotonicMs();
            this.#syncAssignment(now);
            const uncommitted = this.uncommitted();
            if (uncommitted > 0 && now >= this.#lastProgressMs + params.commitTimeoutMs)
                return 'commit_timeout';
            this.#handOver(now);
            let window = params.maxUncommittedEvents - uncommitted - this.#batcher.buffered;
            let readSomething = false;
            const active = [...this.#progress.values()].filter((pr) => pr.active);
            const bytesPerPartition = Math.max(streamReadAheadBytesMax / Math.max(1, active.length), 1_000_000);
            for (const pr of active) {
                const key = partitionKeyOf(pr.p);
                const room = Math.min(this.#batcher.capacity(key), window);
                if (room <= 0)
                    continue;
                const events = await this.#d.reader.read(pr.p.topic, Number(pr.p.partition), pr.readAfter, room, bytesPerPartition);
                if (signal.aborted)
                    return 'client_closed';
                // The assignment may have changed while reading: a partition no longer ours is not offered.
                if (events.length === 0 || !pr.active)
                    continue;
                this.#batcher.offer(key, events);
                pr.readAfter = events[events.length - 1].offset;
                window -= events.length;
                readSomething = true;
            }
            const nowAfterRead = this.#d.monotonicMs();
            const { batches, done, wakeAtMs } = this.#batcher.poll(nowAfterRead, window <= 0 && this.#batcher.buffered > 0);
            for (const b of batches) {
                const pr = this.#progress.get(b.partition);
                if (b.events.length > 0) {
                    if (this.uncommitted() === 0)
                        this.#lastProgressMs = nowAfterRead; // the commit clock starts with the first uncommitted event
                    pr.base = Math.min(pr.base ?? Infinity, b.events[0].offset - 1);
                    pr.sentUpTo = Math.max(pr.sentUpTo ?? -1, b.cursor);
                }
                const line = this.#d.encode(pr.p, b, this.#linesSent === 0);
                this.#linesSent++;
                this.#d.onSent?.(pr.p, b.events.length, line.length);
                if (!sink.write(line)) {
                    const end = await this.#drain(sink, signal);
                    if (end !== undefined)
                        return end;
                }
                if (signal.aborted)
                    return 'client_closed';
            }
            if (done)
                return 'limit';
            if (readSomething || batches.length > 0 || this.#kicked)
                continue;
            const commitDeadline = this.uncommitted() > 0 ? this.#lastProgressMs + params.commitTimeoutMs : Infinity;
            const handOverDeadline = Math.min(Infinity, ...[...this.#progress.values()].filter((pr) => pr.movedAtMs !== undefined).map((pr) => pr.movedAtMs + params.commitTimeoutMs));
            const wakeAt = Math.min(wakeAtMs, commitDeadline, handOverDeadline);
            await this.#wait(window > 0 ? active : [], wakeAt - this.#d.monotonicMs(), signal);
        }
        return 'client_closed';
    }
    /** Brings the batcher's partitions in line with the replicated assignment. */
    #syncAssignment(now) {
        const want = new Map(this.#d.view.assigned().map((p) => [partitionKeyOf(p), p]));
        const added = [];
        const removed = [];
        for (const [key, pr] of this.#progress) {
            if (pr.active && !want.has(key)) {
                // Moved away: unsent buffered events are dropped (the next owner reads them after the commit).
                this.#batcher.removePartition(key);
                pr.active = false;
                pr.movedAtMs = now;
                removed.push(pr.p);
            }
        }
        for (const [key, p] of want) {
            const pr = this.#progress.get(key);
            if (pr?.active === true)
                continue;
            const committed = this.#d.view.committed(p) ?? -1;
            const oldest = this.#d.reader.bounds(p.topic, Number(p.partition)).oldest;
            // Resume after the committed cursor (or the oldest event, when retention removed the ones after it).
            const readAfter = toOffset(Math.max(committed, oldest - 1));
            if (pr === undefined) {
                this.#progress.set(key, { p, active: true, readAfter, sentUpTo: undefined, base: undefined, movedAtMs: undefined, releaseInFlight: false });
            }
            else {
                pr.active = true;
                pr.readAfter = readAfter;
                pr.movedAtMs = undefined;
            }
            this.#batcher.addPartition(key, readAfter, now);
            added.push(p);
        }
        if (added.length > 0 || removed.length > 0)
            this.#d.onPartitions?.({ added, removed });
    }
    /** Releases partitions moved away once nothing sent on them is uncommitted, or their hand-over time is up. */
    #handOver(now) {
        const releasing = this.#d.view.releasing();
        if (releasing.length === 0)
            return;
        const ready = [];
        const unknown = [];
        for (const p of releasing) {
            const pr = this.#progress.get(partitionKeyOf(p));
            if (pr === undefined) {
                unknown.push(p); // assigned to us and moved on before we ever streamed it: nothing to hand over
                continue;
            }
            if (pr.active || pr.releaseInFlight)
                continue;
            if (this.#uncommittedOf(pr) === 0 || now >= (pr.movedAtMs ?? now) + this.#d.params.commitTimeoutMs)
                ready.push(pr);
        }
        if (ready.length === 0 && unknown.length === 0)
            return;
        for (const pr of ready)
            pr.releaseInFlight = true;
        this.#d.view.release([...unknown, ...ready.map((pr) => pr.p)]).then(() => {
            for (const pr of ready) {
                pr.releaseInFlight = false;
                pr.movedAtMs = undefined;
            }
        }, () => {
            for (const pr of ready)
                pr.releaseInFlight = false;
            this.kick();
        });
    }
    /**
     * Waits until the client has taken what was written. A client that stopped reading must not keep its
     * session, and so its partitions, forever: meanwhile a reset, a delete or a close by the service
     * (kick, abort) and the commit timeout still end the stream. Undefined once drained.
     */
    async #drain(sink, signal) {
        const timeoutMs = this.#d.params.commitTimeoutMs;
        let drained = false;
        const done = sink.drain().then(() => {
            drained = true;
        });
        for (;;) {
            // The main loop re-reads the state after every written batch: a kick seen here is not lost.
            this.#kicked = false;
            const deadline = this.uncommitted() > 0 ? this.#lastProgressMs + timeoutMs : Infinity;
            await this.#wait([], deadline - this.#d.monotonicMs(), signal, done);
            if (signal.aborted)
                return 'client_closed';
            if (drained)
                return undefined;
            if (!this.#d.view.alive())
                return 'closed_by_service';
            if (this.uncommitted() > 0 && this.#d.monotonicMs() >= this.#lastProgressMs + timeoutMs)
                return 'commit_timeout';
        }
    }
    /** Sleeps until events arrive on a readable partition, the deadline passes, a kick, abort, or `also` settles. */
    async #wait(partitions, delayMs, signal, also) {
        const round = new AbortController();
        const onAbort = () => round.abort();
        signal.addEventListener('abort', onAbort, { once: true });
        this.#kick = () => round.abort();
        if (this.#kicked)
            round.abort();
        const waits = [];
        for (const pr of partitions) {
            if (this.#batcher.capacity(partitionKeyOf(pr.p)) === 0)
                continue;
            // A waiter that rejects after the race is decided must not become an unhandled rejection.
            waits.push(this.#d.reader.waitForEvents(pr.p.topic, Number(pr.p.partition), pr.readAfter, round.signal).catch(() => undefined));
        }
        let timer;
        if (Number.isFinite(delayMs))
            waits.push(new Promise((resolve) => (timer = setTimeout(resolve, Math.min(timerDelayMsMax, Math.max(0, delayMs))))));
        waits.push(new Promise((resolve) => round.signal.addEventListener('abort', () => resolve(), { once: true })));
        if (also !== undefined)
            waits.push(also);
        try {
            await Promise.race(waits);
        }
        finally {
            this.#kick = undefined;
            if (timer !== undefined)
                clearTimeout(timer);
            round.abort();
            signal.removeEventListener('abort', onAbort);
        }
    }
}
//# sourceMappingURL=subscription-stream.js.map