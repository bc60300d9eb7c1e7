/**
 * Log compaction of the metadata group: every `snapshotEntries` applied entries, the state machine's
 * image becomes the group's snapshot and the entries up to a quarter of that behind it are deleted
 * (so a slightly lagging follower gets entries, not a snapshot), in one write.
 *
 * The group is paused on the node host meanwhile (no turn handles it), so the compaction's write and
 * the mirror it updates never interleave with a turn that installs a leader's snapshot or appends to
 * the same group. Other groups go on.
 *
 * A compaction write the KV refused without applying it (a full disk) stores nothing:
 * RaftLogStore.compact changes its mirror only after the write, so the log stays whole, only longer.
 * That is no reason to stop the node (unlike a failed fsync, whose error is fatal as elsewhere): it is
 * logged and tried again after a backoff (50 ms doubling to 2 s), with the next entries applied.
 */
import type { Logger } from 'pino';
import { KvWriteError } from '../log/index.js';
import type { ConfState, Index } from '../raft/index.js';
import type { RaftLogStore } from './raft-log-store.js';

const retryMaxMs = 2000;

export interface MetadataCompactionOptions {
  readonly store: RaftLogStore;
  readonly snapshotEntries: number;
  /** What is applied now, its configuration, and the state machine's image at it. */
  readonly applied: () => Index;
  readonly conf: () => ConfState;
  readonly image: () => Uint8Array;
  /** Stops the node host from handling the group, until resume (resolves once a turn handling it ended). */
  readonly pause: () => Promise<void>;
  readonly resume: () => void;
  readonly nowMs: () => number;
  readonly logger: Logger;
  readonly raftId: number;
  /** A failure that must stop the node (a lost fsync, a broken invariant). */
  readonly onFatal: (err: unknown) => void;
}

export class MetadataCompaction {
  readonly #o: MetadataCompactionOptions;
  #running = false;
  #closed = false;
  /** Compaction writes the KV refused in a row (a full disk), and the earliest time to try again. */
  #refusals = 0;
  #retryAtMs = 0;

  constructor(o: MetadataCompactionOptions) {
    this.#o = o;
  }

  /** Compacts in the background if enough entries were applied since the last snapshot. */
  maybe(): void {
    if (this.#running || this.#closed) return;
    const o = this.#o;
    if (o.applied() - o.store.storage.snapshot().metadata.index < o.snapshotEntries) return;
    if (o.nowMs() < this.#retryAtMs) return;
    this.#running = true;
    this.#run()
      .catch((err: unknown) => {
        if (!this.#closed) o.onFatal(err);
      })
      .finally(() => (this.#running = false));
  }

  async #run(): Promise<void> {
    const o = this.#o;
    const log = o.logger;
    await o.pause();
    try {
      if (this.#closed) return;
      // Read after the pause: no turn applies entries to the group until it resumes.
      const applied = o.applied();
      if (applied - o.store.storage.snapshot().metadata.index < o.snapshotEntries) return; // a leader's snapshot came in between
      const keep = Math.floor(o.snapshotEntries / 4);
      await o.store.compact(applied, o.conf(), o.image(), applied - keep);
      if (this.#refusals > 0) log.warn({ raftId: o.raftId, attempts: this.#refusals + 1 }, 'metadata log compaction succeeded again');
      this.#refusals = 0;
      log.info({ raftId: o.raftId, index: applied, firstIndex: o.store.storage.firstIndex() }, 'metadata snapshot taken; log compacted');
    } catch (err) {
      if (!(err instanceof KvWriteError) || this.#closed) throw err;
      const retryInMs = Math.min(retryMaxMs, 50 * 2 ** Math.min(this.#refusals, 10));
      this.#retryAtMs = o.nowMs() + retryInMs;
      if (this.#refusals === 0) log.warn({ raftId: o.raftId, err: err.message, retryInMs }, 'metadata log compaction failed; the log stays uncompacted and compaction is tried again later');
      this.#refusals++;
    } finally {
      o.resume();
    }
  }

  close(): void {
    this.#closed = true;
  }
}
