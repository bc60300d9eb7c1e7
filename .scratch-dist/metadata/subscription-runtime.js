/**
 * The replicated runtime of subscriptions: stream sessions, the assignment of partitions to them and
 * the committed cursors. PURE, part of the metadata state machine: every node applies the same
 * commands and holds the same sessions, assignment and cursors (DESIGN.md, "Replication model").
 * Times in commands are decided by the proposer, so validity windows are deterministic too.
 *
 * A partition moving from a live session A to a session B (rebalance) keeps `releasingFrom = A` until
 * A's node releases it (A committed everything it sent, or A's commit timeout passed, or A closed):
 * meanwhile the partition is `reassigning`, B does not stream it yet and A may still commit it. B then
 * starts after the committed cursor, so nothing A sent and did not commit is lost.
 *
 * A closed session may still commit, for its commit timeout after closing, the partitions it held when
 * it closed (interface.md, "States and transitions"). A cursor reset forgets every session, live and
 * closed, so no stream that read before the reset can move a cursor afterwards.
 */
import { partitionKeyOf, rebalance, sortPartitions } from './assignment.js';
export class SubscriptionRuntime {
    id;
    /** In join order: the rebalance gives ties to earlier sessions. */
    sessions = [];
    /** Every partition of the subscription's event types, sorted (sortPartitions). */
    slots;
    #slotByKey = new Map();
    committed = new Map();
    closed = [];
    constructor(id, partitions) {
        this.id = id;
        this.slots = sortPartitions(partitions).map((p) => ({ event_type: p.event_type, partition: p.partition }));
        for (const s of this.slots)
            this.#slotByKey.set(partitionKeyOf(s), s);
    }
    slot(p) {
        return this.#slotByKey.get(partitionKeyOf(p));
    }
    session(id) {
        return this.sessions.find((s) => s.id === id);
    }
    /** Opens a session: refused when every partition already has one (slots = partitions). */
    open(session, starts) {
        if (this.session(session.id) !== undefined)
            return { ok: false, reason: 'exists', detail: `Stream ${session.id} is already open` };
        if (this.sessions.length >= this.slots.length) {
            return { ok: false, reason: 'no_slots', detail: `No free slots for streaming available. Total slots: ${this.slots.length}` };
        }
        // Where reading starts, fixed once: the first stream decides (read_from applies when a client starts reading).
        for (const c of starts) {
            const key = partitionKeyOf(c);
            if (this.#slotByKey.has(key) && !this.committed.has(key))
                this.committed.set(key, { event_type: c.event_type, partition: c.partition, offset: c.offset });
        }
        this.sessions.push(session);
        this.#rebalance();
        return { ok: true };
    }
    /** Closes a live session; its partitions go to the others at once (nothing to hand over). */
    close(id, atMs) {
        const s = this.session(id);
        if (s === undefined)
            return false;
        this.sessions = this.sessions.filter((x) => x.id !== id);
        const held = [];
        for (const slot of this.slots) {
            if (slot.session === id) {
                held.push(partitionKeyOf(slot));
                slot.session = undefined;
            }
            if (slot.releasingFrom === id) {
                held.push(partitionKeyOf(slot));
                slot.releasingFrom = undefined;
            }
        }
        // Closed sessions past their window can never commit again: drop them as new ones close.
        this.closed = this.closed.filter((c) => c.closedAtMs + c.commitTimeoutMs >= atMs);
        this.closed.push({ id, closedAtMs: atMs, commitTimeoutMs: s.commitTimeoutMs, partitions: held });
        // Streams that reconnect quickly leave many closed sessions: keep at most as many as there are
        // partitions, listing at most twice the partitions (the oldest go first, and can no longer commit),
        // so what a subscription holds stays within what limits.ts counts for it.
        let listed = this.closed.reduce((n, c) => n + c.partitions.length, 0);
        while (this.closed.length > 1 && (this.closed.length > this.slots.length || listed > 2 * this.slots.length))
            listed -= this.closed.shift().partitions.length;
        this.#rebalance();
        return true;
    }
    /** The old owner hands partitions over; a no-op for partitions it no longer holds. */
    release(session, partitions) {
        for (const p of partitions) {
            const slot = this.slot(p);
            if (slot !== undefined && slot.releasingFrom === session)
                slot.releasingFrom = undefined;
        }
    }
    /**
     * Commits cursors of one session: all or nothing on validity (a cursor of a partition the session
     * may not commit rejects the request), then per cursor committed (advanced) or outdated.
     */
    commit(session, atMs, cursors) {
        const live = this.session(session) !== undefined;
        const closed = live ? undefined : this.closed.find((c) => c.id === session && atMs <= c.closedAtMs + c.commitTimeoutMs);
        if (!live && closed === undefined) {
            return { ok: false, reason: 'invalid', detail: `Stream ${session} of subscription ${this.id} is not open (it never was, was closed more than its commit timeout ago, or the cursors were reset)` };
        }
        for (const c of cursors) {
            const slot = this.slot(c);
            if (slot === undefined)
                return { ok: false, reason: 'invalid', detail: `Partition "${c.partition}" of event type "${c.event_type}" is not part of subscription ${this.id}` };
            const allowed = live ? slot.session === session || slot.releasingFrom === session : closed.partitions.includes(partitionKeyOf(c));
            if (!allowed) {
                return { ok: false, reason: 'invalid', detail: `Stream ${session} does not own partition "${c.partition}" of event type "${c.event_type}"` };
            }
        }
        const outcomes = cursors.map((c) => {
            const key = partitionKeyOf(c);
            const prev = this.committed.get(key);
            if (prev !== undefined && prev.offset >= c.offset)
                return 'outdated';
            this.committed.set(key, { event_type: c.event_type, partition: c.partition, offset: c.offset });
            return 'committed';
        });
        return { ok: true, outcomes };
    }
    /** Sets cursors and forgets every session, live or closed (their streams are disconnected). */
    reset(cursors) {
        for (const c of cursors) {
            if (this.slot(c) === undefined)
                return { ok: false, reason: 'invalid', detail: `Partition "${c.partition}" of event type "${c.event_type}" is not part of subscription ${this.id}` };
        }
        for (const c of cursors)
            this.committed.set(partitionKeyOf(c), { event_type: c.event_type, partition: c.partition, offset: c.offset });
        this.sessions = [];
        this.closed = [];
        for (const slot of this.slots) {
            slot.session = undefined;
            slot.releasingFrom = undefined;
        }
        return { ok: true };
    }
    #rebalance() {
        const previous = new Map();
        for (const slot of this.slots)
            if (slot.session !== undefined)
                previous.set(partitionKeyOf(slot), slot.session);
        const next = rebalance(this.slots, this.sessions.map((s) => s.id), previous);
        next.forEach((a, i) => {
            const slot = this.slots[i];
            const before = slot.session;
            slot.session = a.session;
            if (before === a.session)
                return;
            if (slot.releasingFrom === a.session)
                slot.releasingFrom = undefined; // moved back to the one still holding it
            else if (slot.releasingFrom === undefined && before !== undefined && this.session(before) !== undefined)
                slot.releasingFrom = before;
        });
    }
    image() {
        return {
            id: this.id,
            sessions: this.sessions,
            slots: this.slots,
            committed: [...this.committed.values()],
            closed: this.closed,
        };
    }
    static restore(img) {
        const rt = new SubscriptionRuntime(img.id, img.slots);
        for (const s of img.slots)
            Object.assign(rt.slot(s), s);
        rt.sessions = [...img.sessions];
        for (const c of img.committed)
            rt.committed.set(partitionKeyOf(c), { ...c });
        rt.closed = [...img.closed];
        return rt;
    }
}
//# sourceMappingURL=subscription-runtime.js.map