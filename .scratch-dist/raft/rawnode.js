/**
 * The host's handle on one Raft group member: inputs go in through methods, effects come out as
 * Ready values (etcd's RawNode). A Ready is a batch of work the host must carry out in order:
 *
 *   1. Persist, durably (fsync) when `mustSync`: install `snapshot` if present, then append
 *      `entries` (discarding any stored entry at or after the first new index), then record
 *      `hardState`. Entries must be durable no later than the hard state that refers to them (in
 *      one atomic batch is best). Several groups' Readies may share one fsync.
 *   2. Send `messages`, only after step 1 is durable: votes, append acknowledgements and the
 *      leader's appends all promise durability of what step 1 wrote. Messages may be dropped,
 *      duplicated or reordered by the transport; Raft tolerates that.
 *   3. Apply: restore the state machine from `snapshot` if present, then apply `committedEntries`
 *      in order. For an entry of type 'confChange', call `applyConfChange(entry)` and record the
 *      returned ConfState with the applied index. `readStates` answer earlier readIndex() calls:
 *      a read for a context is served once the applied index reaches its `index`.
 *   4. Call `advance(ready)`.
 *
 * Between ready() and advance() the host may keep calling step(), tick(), propose() etc. (for
 * example while an fsync is in flight); their effects show in the next Ready. Only one Ready may be
 * outstanding at a time. If the process crashes at any point, the host restarts from what step 1
 * made durable, constructing a new RawNode over the same storage.
 */
import { assert } from '../core/assert.js';
import { decodeConfChange, isConfStateEqual } from './confchange.js';
import { validateConfig, withDefaults } from './config.js';
import { Raft } from './raft.js';
import { isHardStateEqual } from './types.js';
export class RawNode {
    #raft;
    #prevSoftState;
    #prevHardState;
    #outstanding = undefined;
    /** Conf change entries of the outstanding Ready that the host has not yet applied, in order. */
    #confChangesToApply = [];
    constructor(config) {
        const cfg = withDefaults(config);
        validateConfig(cfg);
        this.#raft = new Raft(cfg);
        this.#prevSoftState = { lead: this.#raft.lead, state: this.#raft.state };
        this.#prevHardState = this.#raft.hardState();
    }
    get id() {
        return this.#raft.id;
    }
    /** Advances logical time by one tick (the host calls this at a fixed interval, e.g. every 100 ms). */
    tick() {
        this.#raft.tick();
    }
    /** Feeds a message received from a peer. The host validates untrusted input before this point. */
    step(m) {
        this.#raft.step(m);
    }
    /** Forces an election now (tests and operator tooling); Pre-Vote still applies if enabled. */
    campaign() {
        this.#raft.hup(false);
    }
    /**
     * Proposes one entry. On success the entry is at (term, index): once an entry with that index is
     * applied, the proposal committed if and only if the applied entry has that term.
     */
    propose(data) {
        return this.#raft.propose([data]);
    }
    /** Proposes several entries at once (contiguous indexes firstIndex..lastIndex, same term). */
    proposeMany(datas) {
        return this.#raft.propose(datas);
    }
    /** Proposes a single-server membership change; refused while another is pending. */
    proposeConfChange(cc) {
        return this.#raft.proposeConfChange(cc);
    }
    /**
     * Applies a committed 'confChange' entry from the outstanding Ready's committedEntries; the host
     * must call it for each such entry, in order, while applying. Returns the new configuration.
     */
    applyConfChange(entry) {
        const expected = this.#confChangesToApply.shift();
        assert(expected !== undefined, `applyConfChange(${entry.index}) without a pending conf change entry`);
        assert(expected.index === entry.index && expected.term === entry.term, `applyConfChange(${entry.index}) out of order: expected ${expected.index}`);
        return this.#raft.applyConfChange(decodeConfChange(entry.data));
    }
    /** Asks the leader to hand leadership to `to` (a voter). Returns false if this node is not the leader. */
    transferLeadership(to) {
        return this.#raft.transferLeadership(to);
    }
    /**
     * Quiesces this leader if its group is idle (see Raft.quiesce): it stops ticking and heartbeating,
     * and tells its followers so in the next Ready. Returns whether it is quiesced.
     */
    quiesce() {
        return this.#raft.quiesce();
    }
    /**
     * Wakes a quiesced member; `electionElapsed`: ticks since its leader was last heard from (its host
     * knows that from the leader's node). Messages and requests wake it by themselves.
     */
    wake(electionElapsed = 0) {
        this.#raft.wake(electionElapsed);
    }
    /** Whether this member is quiesced (its ticks do nothing until it wakes). */
    get quiesced() {
        return this.#raft.quiesced;
    }
    /** Requests a linearizable read; see Raft.readIndex. `context` must be unique cluster-wide. */
    readIndex(context) {
        return this.#raft.readIndex(context);
    }
    reportUnreachable(id) {
        this.#raft.reportUnreachable(id);
    }
    reportSnapshot(id, delivered) {
        this.#raft.reportSnapshot(id, delivered);
    }
    #softState() {
        return { lead: this.#raft.lead, state: this.#raft.state };
    }
    hasReady() {
        if (this.#outstanding !== undefined)
            return false;
        const r = this.#raft;
        const ss = this.#softState();
        return (ss.lead !== this.#prevSoftState.lead ||
            ss.state !== this.#prevSoftState.state ||
            !isHardStateEqual(r.hardState(), this.#prevHardState) ||
            r.pendingBroadcast ||
            r.msgs.length > 0 ||
            r.readStates.length > 0 ||
            r.repaired ||
            r.newlyDamaged !== null ||
            r.log.unstable.entries.length > 0 ||
            r.log.unstable.snapshot !== undefined ||
            r.log.hasNextCommittedEntries());
    }
    /** Collects the work accumulated since the last Ready. Call advance() when it is done. */
    ready() {
        assert(this.#outstanding === undefined, 'ready() called again before advance()');
        const r = this.#raft;
        r.flushBroadcast();
        const ss = this.#softState();
        const hs = r.hardState();
        const softChanged = ss.lead !== this.#prevSoftState.lead || ss.state !== this.#prevSoftState.state;
        const hardChanged = !isHardStateEqual(hs, this.#prevHardState);
        const entries = [...r.log.unstable.entries];
        const committedEntries = r.log.hasNextCommittedEntries()
            ? r.log.nextCommittedEntries(r.cfg.readyCommittedBytesMax)
            : [];
        const rd = {
            softState: softChanged ? ss : undefined,
            hardState: hardChanged ? hs : undefined,
            readStates: r.readStates,
            entries,
            snapshot: r.log.unstable.snapshot,
            committedEntries,
            messages: r.msgs,
            mustSync: entries.length > 0 ||
                r.log.unstable.snapshot !== undefined ||
                r.repaired ||
                r.newlyDamaged !== null ||
                hs.term !== this.#prevHardState.term ||
                hs.vote !== this.#prevHardState.vote,
            repaired: r.repaired,
            damaged: r.newlyDamaged ?? undefined,
        };
        r.repaired = false;
        r.newlyDamaged = null;
        r.msgs = [];
        r.readStates = [];
        this.#prevSoftState = ss;
        this.#prevHardState = hs;
        this.#confChangesToApply = committedEntries.filter((e) => e.type === 'confChange');
        this.#outstanding = rd;
        return rd;
    }
    /** Acknowledges that the host has persisted, sent and applied everything in `rd`. */
    advance(rd) {
        assert(this.#outstanding === rd, 'advance() with a Ready that is not the outstanding one');
        assert(this.#confChangesToApply.length === 0, `advance() before applying conf change entry ${this.#confChangesToApply[0]?.index}`);
        const r = this.#raft;
        this.#outstanding = undefined;
        if (rd.snapshot !== undefined) {
            r.log.unstable.stableSnapTo(rd.snapshot.metadata.index);
            r.log.appliedTo(rd.snapshot.metadata.index);
        }
        const last = rd.entries[rd.entries.length - 1];
        if (last !== undefined)
            r.onPersisted(last.index, last.term);
        const lastApplied = rd.committedEntries[rd.committedEntries.length - 1];
        if (lastApplied !== undefined) {
            r.log.appliedTo(lastApplied.index);
            r.reduceUncommittedBytes(rd.committedEntries);
        }
    }
    status() {
        const r = this.#raft;
        let progress;
        if (r.state === 'leader') {
            progress = new Map();
            for (const [id, pr] of r.trk.progress) {
                progress.set(id, {
                    match: pr.match,
                    next: pr.next,
                    state: pr.state,
                    isLearner: pr.isLearner,
                    recentActive: pr.recentActive,
                });
            }
        }
        return {
            id: r.id,
            term: r.term,
            vote: r.vote,
            commit: r.log.committed,
            applied: r.log.applied,
            lastIndex: r.log.lastIndex(),
            lead: r.lead,
            state: r.state,
            leadTransferee: r.leadTransferee,
            confState: r.trk.confState(),
            progress,
            damaged: r.damaged,
            votes: r.state === 'candidate' || r.state === 'preCandidate' ? new Map(r.trk.votes) : undefined,
        };
    }
    /** Whether this node would currently be counted as a leader by peers (convenience for hosts). */
    isLeader() {
        return this.#raft.state === 'leader' && this.#raft.lead === this.#raft.id;
    }
    /** Test and simulator access to the log's term lookup (e.g. for invariant checks). */
    termAt(i) {
        return this.#raft.log.term(i);
    }
    /** The first index still held (in storage or unstable). */
    firstIndex() {
        return this.#raft.log.firstIndex();
    }
    /** Whether `conf` is exactly this node's current configuration (assertions in hosts). */
    hasConfState(conf) {
        return isConfStateEqual(conf, this.#raft.trk.confState());
    }
}
//# sourceMappingURL=rawnode.js.map