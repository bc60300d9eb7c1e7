import { encodeBatchesEntry, PartitionEntryError, requestIdBytesMax } from '../log/partition-entry.js';
import { ProposalFailedError } from './raft-host/raft-group.js';
/** Event bytes merged into one entry at most (a batch larger than this is an entry of its own). */
export const entryEventBytesMax = 1024 * 1024;
/** Batches in one entry at most (the entry format counts them in 16 bits). */
const entryBatchesMax = 0xffff;
export class BatchCoalescer {
    #group;
    #clock;
    #kick;
    #queue = [];
    /** `kick` asks the node host for a turn of the group (which calls flush). */
    constructor(group, clock, kick) {
        this.#group = group;
        this.#clock = clock;
        this.#kick = kick;
    }
    /**
     * Appends a batch if this node leads the group (at `expectedTerm`, 0: any) and resolves once its
     * entry is applied here, with the batch's own outcome. Fails as RaftGroup.propose does.
     */
    add(requestId, events, deadlineMs, expectedTerm = 0) {
        if (events.length === 0)
            return Promise.reject(new PartitionEntryError('a batch holds at least one event'));
        const idBytes = Buffer.byteLength(requestId, 'utf8');
        if (idBytes > requestIdBytesMax)
            return Promise.reject(new PartitionEntryError(`request id of ${idBytes} bytes (at most ${requestIdBytesMax})`));
        const refused = this.#refuse(expectedTerm);
        if (refused !== undefined)
            return Promise.reject(refused);
        let bytes = 0;
        for (const e of events)
            bytes += e.length;
        return new Promise((resolve, reject) => {
            this.#queue.push({ requestId, events, bytes, expectedTerm, deadlineMs, resolve, reject });
            if (this.#queue.length === 1)
                this.#kick();
        });
    }
    /** Why a batch for `expectedTerm` cannot be proposed now, if it cannot. */
    #refuse(expectedTerm) {
        const g = this.#group;
        if (!g.isLeader())
            return new ProposalFailedError('notLeader', `node ${g.self} does not lead group ${g.id}`, g.leader, g.term);
        const term = g.raw.status().term;
        if (expectedTerm !== 0 && expectedTerm !== term)
            return new ProposalFailedError('notLeader', `group ${g.id} is at term ${term}, not ${expectedTerm}`, g.self, term);
        return undefined;
    }
    /** Proposes what waits, as few entries as the bounds allow (the node host calls this at a turn). */
    flush() {
        if (this.#queue.length === 0)
            return;
        const queue = this.#queue;
        this.#queue = [];
        const ready = [];
        for (const w of queue) {
            // Leadership or the term may have changed since the batch was queued.
            const refused = this.#refuse(w.expectedTerm);
            if (refused === undefined)
                ready.push(w);
            else
                w.reject(refused);
        }
        let from = 0;
        while (from < ready.length) {
            let to = from + 1;
            let bytes = ready[from].bytes;
            while (to < ready.length && to - from < entryBatchesMax && bytes + ready[to].bytes <= entryEventBytesMax)
                bytes += ready[to++].bytes;
            this.#propose(ready.slice(from, to));
            from = to;
        }
    }
    #propose(batch) {
        let deadlineMs = Infinity;
        for (const w of batch)
            deadlineMs = Math.min(deadlineMs, w.deadlineMs);
        let data;
        try {
            data = encodeBatchesEntry(this.#clock.nowMs(), batch);
        }
        catch (err) {
            for (const w of batch)
                w.reject(err);
            return;
        }
        this.#group.propose(data, deadlineMs).then((applied) => {
            const outcomes = applied.outcome;
            batch.forEach((w, i) => {
                const outcome = outcomes?.[i];
                if (outcome === undefined)
                    w.reject(new ProposalFailedError('overwritten', `group ${this.#group.id}: entry ${applied.index} holds no batch ${i}`));
                else
                    w.resolve({ term: applied.term, outcome });
            });
        }, (err) => {
            for (const w of batch)
                w.reject(err);
        });
    }
    /** Fails what waits (the replica is closing or leaving this node). */
    fail(err) {
        const queue = this.#queue;
        this.#queue = [];
        for (const w of queue)
            w.reject(err);
    }
}
//# sourceMappingURL=batch-coalescer.js.map