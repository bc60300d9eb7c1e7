/**
 * The configuration and, on a leader, the progress of every member (etcd's tracker package).
 * Every node keeps one: followers need the voter set to campaign and count votes; only the leader
 * uses the per-member Progress for replication.
 */
import { assert } from '../core/assert.js';
import { Progress } from './progress.js';
import { committedIndex, majority, voteResult } from './quorum.js';
export class ProgressTracker {
    voters = [];
    learners = [];
    progress = new Map();
    votes = new Map();
    #inflightCountMax;
    #inflightBytesMax;
    constructor(inflightCountMax, inflightBytesMax) {
        this.#inflightCountMax = inflightCountMax;
        this.#inflightBytesMax = inflightBytesMax;
    }
    confState() {
        return { voters: [...this.voters], learners: [...this.learners] };
    }
    /** Switches to `conf`, keeping the progress of members that stay and probing new ones from `lastIndex` + 1. */
    applyConf(conf, lastIndex) {
        for (const id of conf.voters)
            assert(!conf.learners.includes(id), `node ${id} is both voter and learner`);
        this.voters = [...conf.voters].sort((a, b) => a - b);
        this.learners = [...conf.learners].sort((a, b) => a - b);
        const members = new Set([...this.voters, ...this.learners]);
        for (const id of [...this.progress.keys()]) {
            if (!members.has(id))
                this.progress.delete(id);
        }
        for (const id of members) {
            const isLearner = this.learners.includes(id);
            const pr = this.progress.get(id);
            if (pr === undefined) {
                const fresh = new Progress(lastIndex + 1, this.#inflightCountMax, this.#inflightBytesMax, isLearner);
                // A new member starts "active" so that CheckQuorum does not count it against the leader
                // before it has had a chance to answer (etcd does the same).
                fresh.recentActive = true;
                this.progress.set(id, fresh);
            }
            else {
                pr.isLearner = isLearner;
            }
        }
    }
    /** Resets every member's progress, as a new leader (or a node stepping down) does. */
    resetProgress(lastIndex, selfId, selfMatch) {
        for (const [id, old] of [...this.progress.entries()]) {
            const pr = new Progress(lastIndex + 1, this.#inflightCountMax, this.#inflightBytesMax, old.isLearner);
            pr.recentActive = true;
            if (id === selfId)
                pr.match = selfMatch;
            this.progress.set(id, pr);
        }
    }
    isVoter(id) {
        return this.voters.includes(id);
    }
    isMember(id) {
        return this.progress.has(id);
    }
    isSingleton() {
        return this.voters.length === 1;
    }
    /** The largest index durable on a majority of voters. */
    committed() {
        return committedIndex(this.voters, (id) => this.progress.get(id)?.match);
    }
    resetVotes() {
        this.votes.clear();
    }
    /** Records a vote; only the first answer from each node counts (duplicates are ignored). */
    recordVote(id, granted) {
        if (!this.votes.has(id))
            this.votes.set(id, granted);
    }
    tallyVotes() {
        return voteResult(this.voters, this.votes);
    }
    /** Whether a majority of voters has been heard from recently (the leader counts itself). */
    quorumActive(selfId) {
        let active = 0;
        for (const id of this.voters) {
            if (id === selfId || this.progress.get(id)?.recentActive === true)
                active++;
        }
        return active >= majority(this.voters.length);
    }
    /** Whether `acks` holds a majority of voters. */
    hasQuorum(acks) {
        let n = 0;
        for (const id of this.voters)
            if (acks.has(id))
                n++;
        return n >= majority(this.voters.length);
    }
}
//# sourceMappingURL=tracker.js.map