/**
 * A synchronous in-memory network of RawNodes for scripted scenario tests (etcd's raft_test.go
 * `network`, in our shape). Each node is a real RawNode over a MemoryStorage that stands for its
 * disk; `stabilize()` carries out every Ready (persist, send, apply, advance) and delivers messages
 * until the cluster is quiet. Links can be cut, nodes isolated, crashed (losing nothing durable,
 * since a synchronous Ready is persisted at once) and restarted, and a filter can drop chosen
 * messages, so a test can steer the cluster into exact situations such as figure 8 of the paper.
 */
import { assert } from '../core/assert.js';
import { bootstrapState, MemoryStorage, RawNode } from '../raft/index.js';
import { describeMessage } from './cluster.js';
import { Prng } from './prng.js';
function decodeTexts(data) {
    if (data.byteLength === 0)
        return [];
    return JSON.parse(new TextDecoder().decode(data));
}
export class Harness {
    nodes = new Map();
    #cut = new Set();
    #rng;
    #opts;
    /** Messages for which this returns false are dropped. */
    filter = () => true;
    /** One line per delivered message, for golden traces. */
    log = [];
    recording = false;
    constructor(ids, opts = {}, seed = 1) {
        this.#rng = new Prng(seed);
        this.#opts = opts;
        for (const id of ids) {
            const storage = new MemoryStorage();
            const { entries, hardState } = bootstrapState(ids);
            storage.append(entries);
            storage.setHardState(hardState);
            this.nodes.set(id, { id, storage, raw: undefined, applied: [], restored: [], readStates: [], conf: { voters: [], learners: [] } });
            this.start(id);
        }
        this.stabilize();
    }
    /** Adds a node with empty storage (to be joined through a membership change). */
    addEmpty(id) {
        const n = {
            id,
            storage: new MemoryStorage(),
            raw: undefined,
            applied: [],
            restored: [],
            readStates: [],
            conf: { voters: [], learners: [] },
        };
        this.nodes.set(id, n);
        this.start(id);
        return n;
    }
    node(id) {
        const n = this.nodes.get(id);
        assert(n !== undefined, `no node ${id}`);
        return n;
    }
    raw(id) {
        const r = this.node(id).raw;
        assert(r !== undefined, `node ${id} is down`);
        return r;
    }
    status(id) {
        return this.raw(id).status();
    }
    /** Starts a node that is down; `over` overrides the harness's options for this start only. */
    start(id, over = {}) {
        const n = this.node(id);
        assert(n.raw === undefined, `node ${id} is already up`);
        const snap = n.storage.snapshot();
        n.applied = [];
        n.restored = decodeTexts(snap.data);
        n.conf = snap.metadata.confState;
        n.raw = new RawNode({
            electionTicks: 10,
            heartbeatTicks: 1,
            ...this.#opts,
            ...over,
            id,
            storage: n.storage,
            applied: snap.metadata.index,
            random: this.#rng.fork(),
        });
    }
    /** Replaces a stopped node's disk with an empty one (a wiped data directory). */
    wipe(id) {
        const n = this.node(id);
        assert(n.raw === undefined, `node ${id} must be down to be wiped`);
        this.nodes.set(id, { id, storage: new MemoryStorage(), raw: undefined, applied: [], restored: [], readStates: [], conf: { voters: [], learners: [] } });
    }
    /** Stops a node. Synchronous Readies are persisted at once, so only volatile state is lost. */
    crash(id) {
        this.node(id).raw = undefined;
    }
    cut(a, b) {
        this.#cut.add(`${a}>${b}`);
        this.#cut.add(`${b}>${a}`);
    }
    isolate(id) {
        for (const other of this.nodes.keys())
            if (other !== id)
                this.cut(id, other);
    }
    heal() {
        this.#cut.clear();
        this.filter = () => true;
    }
    #deliverable(m) {
        return !this.#cut.has(`${m.from}>${m.to}`) && this.filter(m);
    }
    /** Carries out one node's Ready if it has one; returns the messages it would send. */
    #handleReady(n) {
        const raw = n.raw;
        if (raw === undefined || !raw.hasReady())
            return [];
        const rd = raw.ready();
        if (rd.snapshot !== undefined)
            n.storage.applySnapshot(rd.snapshot);
        n.storage.append(rd.entries);
        if (rd.hardState !== undefined)
            n.storage.setHardState(rd.hardState);
        if (rd.snapshot !== undefined) {
            n.conf = rd.snapshot.metadata.confState;
            n.applied = [];
            n.restored = decodeTexts(rd.snapshot.data);
        }
        for (const e of rd.committedEntries) {
            const last = n.applied[n.applied.length - 1];
            assert(last === undefined || e.index === last.index + 1, `node ${n.id} applies ${e.index} after ${last?.index}`);
            n.applied.push(e);
            if (e.type === 'confChange')
                n.conf = raw.applyConfChange(e);
        }
        n.readStates.push(...rd.readStates);
        raw.advance(rd);
        return [...rd.messages];
    }
    /** Runs Readies and delivers messages until nothing moves. Returns the number of messages delivered. */
    stabilize(maxRounds = 10_000) {
        let delivered = 0;
        for (let round = 0; round < maxRounds; round++) {
            const msgs = [];
            for (const n of this.nodes.values())
                msgs.push(...this.#handleReady(n));
            if (msgs.length === 0)
                return delivered;
            for (const m of msgs) {
                const to = this.nodes.get(m.to);
                if (to === undefined || to.raw === undefined || !this.#deliverable(m))
                    continue;
                if (this.recording)
                    this.log.push(`${m.from}->${m.to} ${describeMessage(m)}`);
                to.raw.step(m);
                delivered++;
            }
        }
        assert(false, `the harness did not stabilize within ${maxRounds} rounds`);
    }
    tick(id, times = 1) {
        for (let i = 0; i < times; i++)
            this.raw(id).tick();
    }
    /** Ticks every running node `times` times, stabilizing after each tick. */
    tickAll(times = 1) {
        for (let i = 0; i < times; i++) {
            for (const n of this.nodes.values())
                n.raw?.tick();
            this.stabilize();
        }
    }
    /** Makes `id` campaign and settles; returns its resulting status. */
    elect(id) {
        this.raw(id).campaign();
        this.stabilize();
        return this.status(id);
    }
    propose(id, text) {
        const r = this.raw(id).propose(new TextEncoder().encode(text));
        assert(r.ok, `proposal at ${id} refused: ${r.ok ? '' : r.reason}`);
        return { index: r.lastIndex, term: r.term };
    }
    /** The leader among running nodes, if exactly one claims the highest term. */
    leader() {
        let best;
        for (const n of this.nodes.values()) {
            if (n.raw === undefined)
                continue;
            const st = n.raw.status();
            if (st.state === 'leader' && (best === undefined || st.term > best.term))
                best = st;
        }
        return best?.id;
    }
    /** "index@term" for each index of a node's log from `from` to its last index. */
    logTerms(id, from = 1) {
        const raw = this.raw(id);
        const last = raw.status().lastIndex;
        const out = [];
        for (let i = from; i <= last; i++)
            out.push(String(raw.termAt(i) ?? '?'));
        return out.join(' ');
    }
    /** The applied payloads (normal, non-empty entries) of a node as text, including those restored from a snapshot. */
    appliedTexts(id) {
        const dec = new TextDecoder();
        const n = this.node(id);
        return [
            ...n.restored,
            ...n.applied.filter((e) => e.type === 'normal' && e.data.byteLength > 0).map((e) => dec.decode(e.data)),
        ];
    }
    /**
     * Takes a snapshot of a node's state machine at its applied index and discards its log up to
     * `keep` entries before it, as a host does to bound its log.
     */
    compact(id, keep = 0) {
        const n = this.node(id);
        const last = n.applied[n.applied.length - 1];
        assert(last !== undefined, `node ${id} has applied nothing since its last snapshot`);
        const data = new TextEncoder().encode(JSON.stringify(this.appliedTexts(id)));
        n.storage.createSnapshot(last.index, n.conf, data);
        n.storage.compact(last.index - keep);
        return last.index;
    }
    /** One line per running node: role, term, commit, and the term of every entry it holds. */
    describe() {
        const out = [];
        for (const n of this.nodes.values()) {
            if (n.raw === undefined) {
                out.push(`  n${n.id} down`);
                continue;
            }
            const st = n.raw.status();
            const first = n.raw.firstIndex();
            const terms = this.logTerms(n.id, first);
            out.push(`  n${n.id} ${st.state} term ${st.term} commit ${st.commit} log ${first > 1 ? `[..${first - 1}] ` : ''}${terms}`);
        }
        return out;
    }
}
//# sourceMappingURL=harness.js.map