/**
 * The leader's view of one follower (etcd's tracker.Progress).
 *
 * - probe: the leader does not know where the follower's log matches; it sends one append at a time
 *   and waits for the answer (or the next heartbeat answer) before sending another.
 * - replicate: the follower is known to match up to `match`; the leader streams appends optimistically
 *   (advancing `next` as it sends), bounded by the inflight window.
 * - snapshot: the follower needs entries the leader has compacted; a snapshot is on its way and
 *   nothing else is sent until the follower answers (or the attempt times out).
 */
import { assert } from '../core/assert.js';
import { Inflights } from './inflights.js';
import type { Index } from './types.js';

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

export class Progress {
  match: Index;
  next: Index;
  state: ProgressState = 'probe';
  /** In snapshot state: the index of the snapshot being sent. */
  pendingSnapshot: Index = 0;
  /** Ticks spent in snapshot state; a snapshot that is never answered is retried. */
  snapshotTicks = 0;
  /** Heartbeat answers received while the inflight window stayed full (see Raft.#handleHeartbeatResponse). */
  stalledHeartbeats = 0;
  /** Heard from since the last CheckQuorum round. */
  recentActive = false;
  /** The member said in its latest accepted append answer that it is incomplete (types.ts incompleteAck). */
  incomplete = false;
  /** In probe state: an append is outstanding, so send no more until an answer or heartbeat. */
  msgAppFlowPaused = false;
  /** An append was sent to the member since the leader's last heartbeat round (Raft.#tickHeartbeat). */
  sentSinceHeartbeat = false;
  /** The member accepted an append since the leader's last heartbeat round. */
  ackedSinceHeartbeat = false;
  isLearner: boolean;
  readonly inflights: Inflights;

  constructor(next: Index, inflightCountMax: number, inflightBytesMax: number, isLearner: boolean) {
    this.match = 0;
    this.next = next;
    this.isLearner = isLearner;
    this.inflights = new Inflights(inflightCountMax, inflightBytesMax);
  }

  #resetState(state: ProgressState): void {
    this.msgAppFlowPaused = false;
    this.pendingSnapshot = 0;
    this.snapshotTicks = 0;
    this.stalledHeartbeats = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    if (this.state === 'snapshot') {
      // The snapshot may or may not have arrived: probe from just after it, the follower will say.
      const pending = this.pendingSnapshot;
      this.#resetState('probe');
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.#resetState('probe');
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.#resetState('replicate');
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: Index): void {
    this.#resetState('snapshot');
    this.pendingSnapshot = snapshotIndex;
  }

  /**
   * The follower lost entries it had acknowledged (a damaged member, types.ts damagedReject): `match`
   * no longer holds. Forget it and probe from the follower's hint, as for a follower never heard from.
   * Lowering a match never advances the commit index.
   */
  forgetMatch(matchHint: Index): void {
    this.match = 0;
    this.#resetState('probe');
    this.next = Math.max(1, matchHint + 1);
  }

  /** The follower acknowledged up to n. Returns whether `match` moved. */
  maybeUpdate(n: Index): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.msgAppFlowPaused = false;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /**
   * The follower rejected an append after `rejected`, hinting that its log may match at `matchHint`.
   * Returns false if the rejection is stale (an answer to an append sent before a newer decision).
   */
  maybeDecrTo(rejected: Index, matchHint: Index): boolean {
    if (this.state === 'replicate') {
      // In replicate state every append after `match` is speculative; a rejection at or below match
      // is from an old round. Otherwise fall back to just after match and probe from there.
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    // In probe state only the answer to the latest probe (sent at next - 1) counts.
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1);
    assert(this.next >= 1, 'next index below 1');
    this.msgAppFlowPaused = false;
    return true;
  }

  /** Records that an append with `count` entries ending at `lastIndex` was sent. */
  sentEntries(count: number, lastIndex: Index, bytes: number): void {
    switch (this.state) {
      case 'replicate':
        if (count > 0) {
          this.next = lastIndex + 1;
          this.inflights.add(lastIndex, bytes);
        }
        break;
      case 'probe':
        this.msgAppFlowPaused = true;
        break;
      case 'snapshot':
        assert(false, 'sending entries to a follower in snapshot state');
    }
  }

  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.msgAppFlowPaused;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }
}
