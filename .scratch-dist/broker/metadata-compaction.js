import { KvWriteError } from '../log/index.js';
const retryMaxMs = 2000;
export class MetadataCompaction {
    #o;
    #running = false;
    #closed = false;
    /** Compaction writes the KV refused in a row (a full disk), and the earliest time to try again. */
    #refusals = 0;
    #retryAtMs = 0;
    constructor(o) {
        this.#o = o;
    }
    /** Compacts in the background if enough entries were applied since the last snapshot. */
    maybe() {
        if (this.#running || this.#closed)
            return;
        const o = this.#o;
        if (o.applied() - o.store.storage.snapshot().metadata.index < o.snapshotEntries)
            return;
        if (o.nowMs() < this.#retryAtMs)
            return;
        this.#running = true;
        this.#run()
            .catch((err) => {
            if (!this.#closed)
                o.onFatal(err);
        })
            .finally(() => (this.#running = false));
    }
    async #run() {
        const o = this.#o;
        const log = o.logger;
        await o.pause();
        try {
            if (this.#closed)
                return;
            // Read after the pause: no turn applies entries to the group until it resumes.
            const applied = o.applied();
            if (applied - o.store.storage.snapshot().metadata.index < o.snapshotEntries)
                return; // a leader's snapshot came in between
            const keep = Math.floor(o.snapshotEntries / 4);
            await o.store.compact(applied, o.conf(), o.image(), applied - keep);
            if (this.#refusals > 0)
                log.warn({ raftId: o.raftId, attempts: this.#refusals + 1 }, 'metadata log compaction succeeded again');
            this.#refusals = 0;
            log.info({ raftId: o.raftId, index: applied, firstIndex: o.store.storage.firstIndex() }, 'metadata snapshot taken; log compacted');
        }
        catch (err) {
            if (!(err instanceof KvWriteError) || this.#closed)
                throw err;
            const retryInMs = Math.min(retryMaxMs, 50 * 2 ** Math.min(this.#refusals, 10));
            this.#retryAtMs = o.nowMs() + retryInMs;
            if (this.#refusals === 0)
                log.warn({ raftId: o.raftId, err: err.message, retryInMs }, 'metadata log compaction failed; the log stays uncompacted and compaction is tried again later');
            this.#refusals++;
        }
        finally {
            o.resume();
        }
    }
    close() {
        this.#closed = true;
    }
}
//# sourceMappingURL=metadata-compaction.js.map