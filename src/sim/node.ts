/**
 * One simulated server: the real RawNode over a MemoryStorage that stands for its disk, plus the
 * volatile state a crash loses (the RawNode itself, the state machine, a Ready whose write has not
 * finished, pending reads). The host logic follows the Ready contract of src/raft/rawnode.ts.
 */
import { assert } from '../core/assert.js';
import type { ConfState, Entry, NodeId, Ready, Term } from '../raft/index.js';
import { bootstrapState, MemoryStorage, RawNode } from '../raft/index.js';
import { KvStateMachine } from './kv.js';
import type { Prng } from './prng.js';

export interface NodeTuning {
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  readonly appendEntriesMax: number;
  readonly appendBytesMax: number;
  readonly inflightAppendsMax: number;
  readonly readyCommittedBytesMax: number;
  readonly uncommittedBytesMax: number;
  /** Entries applied between snapshots. */
  readonly snapshotEvery: number;
  /** Entries kept in the log behind a snapshot (so that slightly lagging followers need none). */
  readonly keepEntries: number;
  /** Production runs with both; Raft must be safe without them, and elections are far busier then. */
  readonly preVote: boolean;
  readonly checkQuorum: boolean;
  /** False as partition groups run (no heartbeat to a member appends reach), true as the metadata group does. */
  readonly heartbeatWhileReplicating: boolean;
}

export class SimNode {
  readonly id: NodeId;
  readonly storage = new MemoryStorage();
  readonly #tuning: NodeTuning;
  readonly #rng: Prng;
  raw: RawNode | undefined;
  kv = new KvStateMachine();
  conf: ConfState = { voters: [], learners: [] };
  /** Bumped on every crash: events scheduled for an older incarnation are void. */
  incarnation = 0;
  /** The Ready whose write is in flight. */
  outstanding: Ready | undefined;
  /** Removed from the group and shut down for good. */
  destroyed = false;
  /** The term it led at its last observation; undefined when it was not leader. */
  ledTerm: Term | undefined;

  constructor(id: NodeId, tuning: NodeTuning, rng: Prng, founders: readonly NodeId[] | undefined) {
    this.id = id;
    this.#tuning = tuning;
    this.#rng = rng;
    if (founders !== undefined) {
      const { entries, hardState } = bootstrapState(founders);
      this.storage.append(entries);
      this.storage.setHardState(hardState);
    }
    this.start();
  }

  get running(): boolean {
    return this.raw !== undefined;
  }

  /** Boots from whatever the disk holds: the snapshot restores the state machine, the log the rest. */
  start(): void {
    assert(this.raw === undefined, `node ${this.id} started twice`);
    const snap = this.storage.snapshot();
    this.kv = new KvStateMachine();
    this.kv.restore(snap.data, snap.metadata.index);
    this.conf = snap.metadata.confState;
    const t = this.#tuning;
    this.raw = new RawNode({
      id: this.id,
      storage: this.storage,
      applied: snap.metadata.index,
      electionTicks: t.electionTicks,
      heartbeatTicks: t.heartbeatTicks,
      random: this.#rng,
      appendEntriesMax: t.appendEntriesMax,
      appendBytesMax: t.appendBytesMax,
      inflightAppendsMax: t.inflightAppendsMax,
      inflightBytesMax: Math.max(t.appendBytesMax, t.appendBytesMax * t.inflightAppendsMax),
      readyCommittedBytesMax: t.readyCommittedBytesMax,
      uncommittedBytesMax: t.uncommittedBytesMax,
      preVote: t.preVote,
      checkQuorum: t.checkQuorum,
      heartbeatWhileReplicating: t.heartbeatWhileReplicating,
    });
    this.ledTerm = undefined;
  }

  /** Loses everything not on disk. */
  crash(): void {
    this.raw = undefined;
    this.outstanding = undefined;
    this.incarnation++;
  }

  /** Step 1 of the Ready contract: make the Ready durable. */
  persist(rd: Ready): void {
    if (rd.snapshot !== undefined) this.storage.applySnapshot(rd.snapshot);
    this.storage.append(rd.entries);
    if (rd.hardState !== undefined) {
      assert(
        rd.hardState.commit <= this.storage.lastIndex(),
        `node ${this.id}: hard state commit ${rd.hardState.commit} beyond durable log ${this.storage.lastIndex()}`,
      );
      this.storage.setHardState(rd.hardState);
    }
  }

  /** Step 3 for one committed entry; returns the entry for the caller's bookkeeping. */
  applyEntry(e: Entry): void {
    const raw = this.raw;
    assert(raw !== undefined, 'applying on a crashed node');
    this.kv.apply(e);
    if (e.type === 'confChange') this.conf = raw.applyConfChange(e);
  }

  installSnapshot(rd: Ready): void {
    const s = rd.snapshot;
    if (s === undefined) return;
    this.kv.restore(s.data, s.metadata.index);
    this.conf = s.metadata.confState;
  }

  /** Snapshot and compact the disk now and then, as a real host would to bound its log. */
  maybeCompact(): void {
    const t = this.#tuning;
    const snapIndex = this.storage.snapshot().metadata.index;
    if (this.kv.applied - snapIndex < t.snapshotEvery) return;
    if (this.kv.applied > this.storage.lastIndex()) return;
    this.storage.createSnapshot(this.kv.applied, this.conf, this.kv.snapshotData());
    const compactTo = this.kv.applied - t.keepEntries;
    if (compactTo > this.storage.firstIndex() - 1) this.storage.compact(compactTo);
  }
}
