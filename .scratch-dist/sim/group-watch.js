import { bootstrapState } from '../raft/index.js';
import { Invariants, InvariantViolation } from './invariants.js';
import { chainHash } from './kv.js';
export class GroupWatch {
    group;
    #inv;
    /** Each member's durable log as its latest incarnation left it. */
    #durable = new Map();
    #leaderOf = new Map();
    #durableChecked = 0;
    /** Members whose disk lost fsynced data: the leader may count them from before the loss. */
    #lostData = new Set();
    elections = 0;
    /** See #countOldTermQuorum. */
    oldTermQuorums = 0;
    constructor(group, founders, rules = true) {
        this.group = group;
        this.#inv = new Invariants({ rules });
        this.#inv.bootstrapped(bootstrapState(founders).entries);
    }
    /** A member opened the group (at start or restart). */
    opened(node, g) {
        this.#durable.set(node, g.store.storage);
        this.#leaderOf.delete(node);
        this.#inv.notLeader(node);
    }
    /** The member's disk lost fsynced writes (a fault the damaged-replica rule must handle). */
    lostData(node) {
        this.#lostData.add(node);
    }
    /** The network delivered a granted vote. */
    voteGranted(candidate, voter, term) {
        this.#inv.voteGranted(candidate, voter, term);
    }
    /** A member's host is about to record `rd` as durable: its entries must match every other copy. */
    persisted(node, g, rd) {
        const first = rd.entries[0];
        if (first === undefined || rd.snapshot !== undefined)
            return;
        const st = g.store.storage;
        let prevTerm;
        try {
            prevTerm = first.index - 1 >= st.firstIndex() - 1 ? st.term(first.index - 1) : undefined;
        }
        catch {
            prevTerm = undefined;
        }
        const terms = new Map(rd.entries.map((e) => [e.index, e.term]));
        this.#inv.logMatching(node, rd.entries, {
            termAt: (i) => terms.get(i) ?? (i === first.index - 1 ? prevTerm : undefined),
            firstIndex: () => first.index,
        });
    }
    /** A member applied `e` (every member must apply the same entry at an index). */
    applied(node, e) {
        this.#inv.stateMachineSafety(node, e.index, chainHash(0, e));
    }
    /** After every event, for every running member; true when it has just become leader. */
    observe(node, g) {
        let elected = false;
        const raw = g.raw;
        const st = raw.status();
        if (st.state === 'leader') {
            this.#inv.electionSafety(node, st.term);
            if (this.#leaderOf.get(node) !== st.term) {
                this.#leaderOf.set(node, st.term);
                this.elections++;
                elected = true;
                this.#inv.leaderCompleteness(node, st.term, raw);
                this.#inv.voteQuorum(node, st.term, st.confState.voters);
            }
            if (st.progress !== undefined)
                this.#countOldTermQuorum(st.commit, st.term, st.confState.voters, st.progress, raw);
            this.#inv.leaderCommitRule(node, st.term, st.commit, raw);
            this.#inv.leaderCommitted(node, st.term, st.commit, raw);
            if (this.#inv.rules && st.commit > this.#durableChecked) {
                this.#durableChecked = st.commit;
                this.#durableQuorum(node, st.commit, raw.termAt(st.commit), st.confState.voters);
            }
        }
        else {
            this.#leaderOf.delete(node);
            this.#inv.notLeader(node);
            if (st.state === 'candidate' && st.votes !== undefined)
                this.#inv.voteTally(node, st.term, st.votes);
        }
        this.#inv.committedPrefix(node, st.commit, raw);
        return elected;
    }
    /**
     * Counts the moments a majority of the leader's voters (itself by what is durable) match an entry
     * above its commit index that is of an earlier term: where counting replicas would commit an old
     * entry (figure 8), the chances a broken §5.4.2 rule gets to show.
     */
    #countOldTermQuorum(commit, term, voters, progress, raw) {
        const matches = voters.map((v) => progress.get(v)?.match ?? 0).sort((a, b) => b - a);
        const q = matches[Math.floor(voters.length / 2)];
        if (q > commit && raw.termAt(q) !== term)
            this.oldTermQuorums++;
    }
    #durableQuorum(leader, index, term, voters) {
        if (term === undefined)
            return;
        const holders = [];
        for (const v of voters) {
            const st = this.#durable.get(v);
            if (st === undefined || st.lastIndex() < index)
                continue;
            if (index < st.firstIndex() || st.term(index) === term)
                holders.push(v);
        }
        if (2 * holders.length > voters.length)
            return;
        // A member that lost fsynced data may still be counted from before the loss; then this is the
        // fault's doing, and the other checks decide whether it did harm.
        if (voters.some((v) => this.#lostData.has(v)))
            return;
        throw new InvariantViolation('DurableQuorum', `group ${this.group}: leader ${leader} committed ${index}@${term} durable only on [${holders.join(',')}] of voters [${voters.join(',')}]`);
    }
}
//# sourceMappingURL=group-watch.js.map