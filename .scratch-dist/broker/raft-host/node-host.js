import { KvWriteError } from '../../log/index.js';
import { noNode } from '../../raft/index.js';
import { termJumpMax } from '../../transport/limits.js';
export const systemTicks = {
    every(ms, fn) {
        const t = setInterval(fn, ms);
        return () => clearInterval(t);
    },
};
export const systemScheduler = {
    soon: (fn) => void setImmediate(fn),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};
/** Message types only a leader sends; none promises anything about the leader's own disk. */
const leaderMessages = new Set(['app', 'heartbeat', 'snap', 'timeoutNow', 'readIndexResp']);
/** How long after a refused write new proposals fail at once, before one probes the disk again. */
const refusedRetryMs = 200;
const catchUpTicksMax = 3;
export class RaftNodeHost {
    #o;
    #groups = new Map();
    #dirty = new Set();
    /** Groups whose Readies wait (a follower fetching the log it lacks before it takes a snapshot). */
    #paused = new Set();
    #rows = [];
    #flushed = [];
    #transport;
    #looping = false;
    #loopDone = Promise.resolve();
    /** Resolves when the turn under way (if any) has finished: a busy loop may go on for long after it. */
    #turnDone = Promise.resolve();
    #stopTicks;
    #tickOriginMs = 0;
    #ticks = 0;
    #closed = false;
    /** Set while the KV refuses the node's writes (a full disk): the reason, for those who must fail. */
    #refusal;
    #refusedAtMs = 0;
    /** When each peer's node was last heard from (a message of any group, or a ping), monotonic ms. */
    #heardMs = new Map();
    /** Snapshots from peers that failed their state machine's check (dropped before the core saw them). */
    #droppedSnapshots = 0;
    /** Messages whose term was more than termJumpMax ahead of their group's. */
    #droppedTerms = 0;
    /** Turns and writes, for observation (and tests of "one write per turn"). */
    stats = { turns: 0, writes: 0, durableWrites: 0, readies: 0, quiesced: 0, woken: 0 };
    constructor(o) {
        this.#o = o;
    }
    start(transport) {
        this.#transport = transport;
        this.#tickOriginMs = this.#o.clock.monotonicMs();
        this.#stopTicks = this.#o.ticks.every(this.#o.tickMs, () => this.#onTick());
    }
    setTransport(t) {
        this.#transport = t;
    }
    add(g) {
        if (this.#groups.has(g.id))
            throw new Error(`group ${g.id} is already hosted`);
        this.#groups.set(g.id, g);
        g.onWork = () => this.kick(g.id);
        this.kick(g.id);
    }
    /** Stops hosting a group (its proposals fail); waits for a turn that may be handling it. */
    async remove(id) {
        const g = this.#groups.get(id);
        if (g === undefined)
            return;
        this.#groups.delete(id);
        this.#dirty.delete(id);
        this.#paused.delete(id);
        g.close();
        await this.#turnDone;
    }
    /**
     * The KV's reason while it refuses writes: a new proposal fails with it at once instead of waiting
     * for its deadline. After `refusedRetryMs` one is let through again to find out whether space came
     * back (its write is the probe).
     */
    get refusal() {
        if (this.#refusal !== undefined && this.#o.clock.monotonicMs() - this.#refusedAtMs >= refusedRetryMs)
            return undefined;
        return this.#refusal;
    }
    group(id) {
        return this.#groups.get(id);
    }
    groups() {
        return this.#groups.values();
    }
    /**
     * Stops handling a group's Readies (and ticking it) until resume(); resolves once a turn that may
     * be handling it has finished. Messages still step into it and show in its next Ready.
     */
    async pause(id) {
        this.#paused.add(id);
        await this.#turnDone;
    }
    resume(id) {
        this.#paused.delete(id);
        this.kick(id);
    }
    /** A group may have work (a proposal, a received message): handle it in the next turn. */
    kick(id) {
        this.#dirty.add(id);
        this.#schedule();
    }
    /** Rows a state machine wants written (not fsynced) with the next write, e.g. an offset index. */
    writeRows(fill) {
        this.#rows.push(fill);
        this.#schedule();
    }
    /** Resolves once every row asked for before the call is written (not fsynced). */
    flushRows() {
        if (this.#closed)
            return Promise.resolve();
        return new Promise((resolve) => {
            this.#flushed.push(resolve);
            this.#schedule();
        });
    }
    /** A batch or a message came from `peer`: its node is alive. */
    heard(peer) {
        this.#heardMs.set(peer, this.#o.clock.monotonicMs());
    }
    receive(group, m) {
        if (this.#closed)
            return true;
        this.heard(m.from);
        const g = this.#groups.get(group);
        if (g === undefined)
            return false;
        // A term far ahead of the group's is a buggy peer's: taken, it could leave no term to elect with.
        if (m.term > g.term + termJumpMax) {
            this.#droppedTerms++;
            if (this.#droppedTerms <= 10 || this.#droppedTerms % 100 === 0) {
                this.#o.logger.warn({ group, from: m.from, type: m.type, term: m.term, ownTerm: g.term, dropped: this.#droppedTerms }, 'dropped a message whose term is implausibly far ahead');
            }
            return true;
        }
        if (m.type === 'snap' && m.snapshot !== undefined) {
            const problem = g.snapshotProblem(m.snapshot);
            if (problem !== undefined) {
                this.#droppedSnapshots++;
                if (this.#droppedSnapshots <= 10 || this.#droppedSnapshots % 100 === 0) {
                    this.#o.logger.warn({ group, from: m.from, term: m.term, index: m.snapshot.metadata.index, problem, dropped: this.#droppedSnapshots }, 'dropped a malformed snapshot from a peer');
                }
                return true;
            }
        }
        try {
            // A message wakes a quiesced follower (the core does that itself), which must count how long
            // ago its leader was heard from; a leader decides itself (an answer to its heartbeat does not wake it).
            if (g.raw.quiesced && !g.raw.isLeader())
                this.#wake(g);
            g.step(m);
        }
        catch (err) {
            this.#fatal(err);
            return true;
        }
        this.kick(group);
        return true;
    }
    unreachable(peer) {
        for (const g of this.#groups.values())
            g.raw.reportUnreachable(peer);
    }
    snapshotStatus(group, peer, delivered) {
        const g = this.#groups.get(group);
        if (g === undefined)
            return;
        g.raw.reportSnapshot(peer, delivered);
        this.kick(group);
    }
    // ------------------------------------------------------------------ the loop
    #schedule() {
        if (this.#looping || this.#closed)
            return;
        this.#looping = true;
        this.#loopDone = new Promise((done) => {
            (this.#o.scheduler ?? systemScheduler).soon(() => {
                this.#loop().then(done, (err) => {
                    this.#fatal(err);
                    done();
                });
            });
        });
    }
    async #loop() {
        try {
            while (!this.#closed && (this.#hasWork() || this.#rows.length > 0 || this.#flushed.length > 0)) {
                const turn = this.#turn();
                this.#turnDone = turn.then(() => undefined, () => undefined);
                await turn;
            }
        }
        finally {
            this.#looping = false;
        }
    }
    #hasWork() {
        if (this.#paused.size === 0)
            return this.#dirty.size > 0;
        for (const id of this.#dirty)
            if (!this.#paused.has(id))
                return true;
        return false;
    }
    async #turn() {
        this.stats.turns++;
        const max = this.#o.groupsPerTurnMax ?? 256;
        const turns = [];
        for (const id of this.#dirty) {
            if (turns.length >= max)
                break;
            if (this.#paused.has(id))
                continue;
            const g = this.#groups.get(id);
            // What the group gathered since the last turn goes in now (before it leaves the dirty set, so
            // the proposal's kick does not add it back).
            g?.beforeReady?.();
            this.#dirty.delete(id);
            if (g === undefined || !g.raw.hasReady())
                continue;
            const stored = g.store.storage.lastIndex();
            const rd = g.raw.ready();
            g.observe(rd);
            // Entries this Ready writes replace what is stored from their first index on (a follower taking
            // a new leader's entries): only those before it are durable here as they are.
            const firstNew = rd.entries[0]?.index;
            const durableLast = firstNew === undefined ? stored : Math.min(stored, firstNew - 1);
            turns.push({ group: g, rd, durableLast: rd.snapshot === undefined ? durableLast : 0, early: 0 });
        }
        this.stats.readies += turns.length;
        const rows = this.#rows;
        this.#rows = [];
        const flushed = this.#flushed;
        this.#flushed = [];
        const mustSync = turns.some((t) => t.rd.mustSync);
        // A Ready that only repairs or marks damage writes too: the mark is what a restart goes by.
        const needsWrite = rows.length > 0 || turns.some((t) => t.rd.snapshot !== undefined || t.rd.entries.length > 0 || t.rd.hardState !== undefined || t.rd.repaired || t.rd.damaged !== undefined);
        // 1. One write for every group (started here, awaited below).
        const written = needsWrite ? this.#write(turns, rows, mustSync) : Promise.resolve(true);
        // 2. What a leader sends does not wait for its own disk.
        const early = [];
        const late = [];
        /** Per group, the last entry sent before the write: it may commit whatever becomes of the write. */
        const sentUpTo = new Map();
        for (const t of turns) {
            if (t.rd.messages.length === 0)
                continue;
            const e = t.rd.messages.filter((m) => leaderMessages.has(m.type));
            if (e.length > 0)
                early.push({ group: t.group.id, messages: e });
            for (const m of e)
                if (m.entries.length > 0)
                    sentUpTo.set(t.group.id, Math.max(sentUpTo.get(t.group.id) ?? 0, m.entries[m.entries.length - 1].index));
            if (e.length < t.rd.messages.length)
                late.push({ group: t.group.id, messages: t.rd.messages.filter((m) => !leaderMessages.has(m.type)) });
        }
        if (early.length > 0)
            this.#transport?.send(early);
        // 3a. Committed entries that were durable here before this turn need not wait for its write.
        for (const t of turns) {
            const ce = t.rd.committedEntries;
            while (t.early < ce.length && ce[t.early].index <= t.durableLast)
                t.group.applyEntry(ce[t.early++]);
        }
        if (!(await written)) {
            for (const t of turns) {
                // Entries durable here before the write, or sent to followers, may still commit.
                t.group.reset(this.#refusal, Math.max(t.group.store.storage.lastIndex(), sentUpTo.get(t.group.id) ?? 0));
                this.#dirty.add(t.group.id);
            }
            this.#flushed.unshift(...flushed);
            // Do not spin on a full disk: the next attempt comes with the next tick or proposal.
            await (this.#o.scheduler ?? systemScheduler).sleep(refusedRetryMs);
            return;
        }
        for (const f of flushed)
            f();
        for (const t of turns)
            t.group.store.persisted(t.rd);
        if (late.length > 0)
            this.#transport?.send(late);
        // 3b, 4. Apply the rest and advance.
        for (const t of turns) {
            const g = t.group;
            if (t.rd.snapshot !== undefined)
                g.installSnapshot(t.rd.snapshot);
            const ce = t.rd.committedEntries;
            for (let i = t.early; i < ce.length; i++)
                g.applyEntry(ce[i]);
            g.onReadyDone?.(t.rd);
            g.raw.advance(t.rd);
            if (ce.length > 0 || t.rd.snapshot !== undefined)
                g.onApplied?.();
            if (this.#groups.get(g.id) === g && g.raw.hasReady())
                this.#dirty.add(g.id);
        }
    }
    /**
     * The one write of a turn. A write the KV refused without storing any of it (a full disk) fails
     * the turn's Readies: each of their groups restarts from its disk (RaftGroup.reset) and its waiting
     * proposals fail with the KV's reason, exactly as if nothing had been asked — so a batch a client
     * is told failed never appears later. The state machines' rows go into the next write.
     */
    async #write(turns, rows, durable) {
        this.stats.writes++;
        if (durable)
            this.stats.durableWrites++;
        let seq = 0;
        try {
            await this.#o.kv.write((b) => {
                for (const fill of rows)
                    fill(b);
                for (const t of turns)
                    t.group.store.fill(b, t.rd);
                // One sequence number per turn, whatever the number of groups in it.
                if (this.#o.disk !== undefined)
                    seq = this.#o.disk.stamp(b);
            }, { durable });
            if (durable)
                this.#o.disk?.durable(seq);
        }
        catch (err) {
            if (!(err instanceof KvWriteError) || this.#closed)
                throw err;
            if (this.#refusal === undefined)
                this.#o.logger.error({ err: err.message, groups: turns.length }, 'raft log write refused (writes fail until it succeeds again)');
            this.#refusal = err;
            this.#refusedAtMs = this.#o.clock.monotonicMs();
            this.#rows.unshift(...rows);
            return false;
        }
        if (this.#refusal !== undefined)
            this.#o.logger.warn('raft log writes succeed again');
        this.#refusal = undefined;
        return true;
    }
    // ------------------------------------------------------------------ time
    #onTick() {
        if (this.#closed)
            return;
        const now = this.#o.clock.monotonicMs();
        const due = Math.floor((now - this.#tickOriginMs) / this.#o.tickMs) - this.#ticks;
        const n = Math.min(due, catchUpTicksMax);
        this.#ticks += due;
        const quiescence = this.#o.quiescence !== false;
        try {
            for (const g of this.#groups.values()) {
                if (this.#paused.has(g.id))
                    continue;
                if (g.raw.quiesced) {
                    // Asleep: costs nothing, unless its leader (or, on a leader, a majority) went silent or its
                    // owner needs it ticking. Proposals still expire (a follower's, made while it led in an
                    // earlier term, whose entries a newer leader replaced: nothing else will answer them).
                    g.expire(now);
                    if (!this.#mustWake(g, now))
                        continue;
                    this.#wake(g);
                }
                g.tick(n, now);
                if (quiescence && g.maybeQuiesce())
                    this.stats.quiesced++;
                if (g.raw.hasReady())
                    this.#dirty.add(g.id);
            }
        }
        catch (err) {
            this.#fatal(err);
            return;
        }
        // The node-level heartbeat: peers see this node alive while the groups they share are quiesced.
        if (quiescence)
            this.#transport?.ping?.(this.#o.tickMs);
        if (this.#hasWork())
            this.#schedule();
    }
    #livenessMs() {
        return this.#o.livenessMs ?? 10 * this.#o.tickMs;
    }
    #live(peer, now) {
        if (peer === this.#o.self)
            return true;
        const at = this.#heardMs.get(peer);
        return at !== undefined && now - at <= this.#livenessMs();
    }
    #mustWake(g, now) {
        if (g.busy?.() === true)
            return true;
        if (!g.raw.isLeader())
            return g.leader === noNode || !this.#live(g.leader, now);
        const voters = g.conf.voters;
        let live = 0;
        for (const v of voters)
            if (this.#live(v, now))
                live++;
        return 2 * live <= voters.length;
    }
    /** Wakes a quiesced group; a follower counts the ticks since its leader's node was last heard from. */
    #wake(g) {
        this.stats.woken++;
        const lead = g.leader;
        const at = lead === noNode || lead === this.#o.self ? undefined : this.#heardMs.get(lead);
        const now = this.#o.clock.monotonicMs();
        g.raw.wake(at === undefined ? 0 : Math.floor((now - at) / this.#o.tickMs));
    }
    #fatal(err) {
        if (this.#closed)
            return;
        this.#o.logger.fatal({ err }, 'raft host failed');
        void this.close();
        this.#o.onFatal(err);
    }
    async close() {
        if (this.#closed)
            return;
        this.#closed = true;
        this.#stopTicks?.();
        for (const g of this.#groups.values())
            g.close();
        await this.#loopDone;
        for (const f of this.#flushed.splice(0))
            f();
    }
}
//# sourceMappingURL=node-host.js.map