/**
 * The metadata group's read leases on this node (docs/metadata-raft.md, "Read leases"): the adapter
 * around the pure rules of metadata-lease.ts. It stamps what the group sends and reads what it
 * receives (RaftGroup.outgoing / received), holds a leader's acknowledgements until the lease holders
 * applied them (gate), and tells a read whether it may be served from the applied state now.
 */
import { problems, type Problem } from '../core/problem.js';
import { noNode, type Message } from '../raft/index.js';
import { LeaseFollower, LeaseLeader, newLeaderWaitMs, type LeaseTiming } from './metadata-lease.js';
import type { RaftGroup } from './raft-host/raft-group.js';

export type { LeaseTiming } from './metadata-lease.js';

interface Gate {
  readonly index: number;
  readonly term: number;
  readonly deadlineMs: number;
  readonly resolve: () => void;
  readonly reject: (err: Problem) => void;
}

export interface MetadataLeasesOptions {
  readonly timing: LeaseTiming;
  readonly group: RaftGroup<unknown>;
  readonly nowMs: () => number;
  /** Where this process's lease asks start (random: see LeaseFollower). */
  readonly firstSeq: number;
  /** The last applied index whose entry changed the state (not a new leader's empty entry). */
  readonly lastChange: () => number;
}

interface ReleaseWaiter {
  readonly deadlineMs: number;
  readonly resolve: () => void;
  readonly reject: (err: Problem) => void;
}

/**
 * How a read may be served: now; once this node applied an index (then released, see waitReleased);
 * once what it applied is released; or not without a ReadIndex round (then released too).
 */
export type LeaseRead = { readonly kind: 'now' } | { readonly kind: 'apply'; readonly index: number } | { readonly kind: 'release' } | { readonly kind: 'none' };

export class MetadataLeases {
  readonly #o: MetadataLeasesOptions;
  readonly #follower: LeaseFollower;
  #leader: LeaseLeader | undefined;
  #leaderTerm = -1;
  #selfWantUntil = -Infinity;
  #gates: Gate[] = [];
  /** The highest released index this node knows of (metadata-lease.ts: for good, whichever leader said it). */
  #released = 0;
  #releaseWaiters: ReleaseWaiter[] = [];
  /** The group had another member while this process ran: someone may hold a lease of ours or of an earlier leader. */
  #shared = false;
  readonly stats = { leaseReads: 0, applyWaits: 0, releaseWaits: 0, noLease: 0, gated: 0, gatesFailed: 0 };

  constructor(o: MetadataLeasesOptions) {
    this.#o = o;
    this.#follower = new LeaseFollower(o.timing, o.firstSeq);
  }

  /** The group's role, leader or term changed. */
  changed(): void {
    const g = this.#o.group;
    if (!g.isSingleton()) this.#shared = true;
    if (g.isLeader()) {
      if (this.#leader === undefined || this.#leaderTerm !== g.term) {
        this.#leader = new LeaseLeader(this.#o.timing, g.self, this.#o.nowMs());
        this.#leaderTerm = g.term;
      }
    } else {
      this.#leader = undefined;
      this.#leaderTerm = -1;
    }
    this.#release();
  }

  outgoing = (m: Message): Message => {
    const g = this.#o.group;
    if (m.term !== g.term) return m;
    if ((m.type === 'app' || m.type === 'heartbeat') && this.#leader !== undefined && g.isLeader()) {
      return { ...m, lease: this.#leader.outgoing(m.to, this.#o.nowMs(), g.raw.commitIndex, g.raw.committedInTerm, g.conf.voters, g.applied) };
    }
    if ((m.type === 'appResp' || m.type === 'heartbeatResp') && !g.isLeader() && m.to === g.leader) {
      const lease = this.#follower.outgoing(m.term, m.to, this.#o.nowMs(), g.applied);
      return lease === undefined ? m : { ...m, lease };
    }
    return m;
  };

  received = (m: Message): void => {
    if (m.lease === undefined) {
      const g = this.#o.group;
      if ((m.type === 'app' || m.type === 'heartbeat') && m.term === g.term && !g.isLeader() && g.leader === m.from) this.#follower.plain(m.term, m.from);
      else if ((m.type === 'appResp' || m.type === 'heartbeatResp') && m.term === g.term && g.isLeader()) this.#leader?.plainAnswer(m.from);
      return;
    }
    // Only leaders send appends and heartbeats; what a leader released stays released.
    if ((m.type === 'app' || m.type === 'heartbeat') && m.lease.released > this.#released) {
      this.#released = m.lease.released;
      this.#releaseReads();
    }
    const g = this.#o.group;
    if (m.term !== g.term) return;
    if ((m.type === 'appResp' || m.type === 'heartbeatResp') && this.#leader !== undefined && g.isLeader()) {
      this.#leader.received(m.from, m.lease, this.#o.nowMs());
      this.#refresh();
      this.#release();
    } else if ((m.type === 'app' || m.type === 'heartbeat') && !g.isLeader() && g.leader === m.from) {
      this.#follower.received(m.term, m.from, m.lease, this.#o.nowMs());
    }
  };

  /**
   * Resolves once the write at `index`, proposed by this node as leader in `term` and applied here,
   * may be acknowledged: fails (outcome unknown) if this node stops leading that term first, or at
   * `deadlineMs`. A deposed leader cannot tell which leases a later leader granted, so it does not
   * acknowledge at all.
   */
  gate(index: number, term: number, deadlineMs: number): Promise<void> {
    const g = this.#o.group;
    if (!g.isSingleton()) this.#shared = true;
    // A group of one that never had another member since this process started: no one else can
    // hold a lease (a node alone acknowledges at once, as without leases).
    if (!this.#shared && g.isLeader() && g.term === term) return Promise.resolve();
    // The proposal's entry applied before the hook that tells of the new leadership ran.
    if (this.#leader === undefined && g.isLeader()) this.changed();
    const now = this.#o.nowMs();
    if (this.#leader !== undefined && this.#leaderTerm === term && this.#leader.mayAcknowledge(index, now)) return Promise.resolve();
    this.stats.gated++;
    return new Promise((resolve, reject) => {
      this.#gates.push({ index, term, deadlineMs, resolve, reject });
      this.#release();
    });
  }

  /** How a read may be served now (a read that found no lease makes this node ask for one). */
  read(): LeaseRead {
    const g = this.#o.group;
    const now = this.#o.nowMs();
    this.#refresh();
    const released = this.#released >= this.#o.lastChange();
    if (g.isLeader()) {
      this.#selfWantUntil = now + 2 * this.#o.timing.leaseMs;
      if (this.#leader !== undefined && this.#leader.selfRead(g.conf.voters, now, g.raw.commitIndex, g.raw.committedInTerm, g.applied)) {
        if (!released) {
          this.stats.releaseWaits++;
          return { kind: 'release' };
        }
        this.stats.leaseReads++;
        return { kind: 'now' };
      }
      this.stats.noLease++;
      return { kind: 'none' };
    }
    this.#follower.want(now);
    const index = this.#follower.lease(g.term, g.leader, now);
    if (index === undefined) {
      this.stats.noLease++;
      return { kind: 'none' };
    }
    if (g.applied >= index) {
      if (!released) {
        this.stats.releaseWaits++;
        return { kind: 'release' };
      }
      this.stats.leaseReads++;
      return { kind: 'now' };
    }
    this.stats.applyWaits++;
    return { kind: 'apply', index };
  }

  /**
   * The read lease this node holds as a follower now: the index it must have applied before it reads
   * under it; undefined on a leader or without a lease. Asks for nothing (unlike read()): for
   * observers (the simulation checks that no lease holder lags behind what another node shows).
   */
  heldLease(): number | undefined {
    const g = this.#o.group;
    if (g.isLeader()) return undefined;
    return this.#follower.lease(g.term, g.leader, this.#o.nowMs());
  }

  /**
   * Resolves once every entry this node applied that changed its state is released (checked when it
   * resolves, so the read that follows at once shows nothing unreleased); fails with 503 at `deadlineMs`
   * while this node knows no leader, and at `deadlineMs` plus a new leader's wait in any case (tick).
   */
  waitReleased(deadlineMs: number): Promise<void> {
    this.#refresh();
    if (this.#releaseDone()) return Promise.resolve();
    return new Promise((resolve, reject) => this.#releaseWaiters.push({ deadlineMs, resolve, reject }));
  }

  /**
   * Whether everything this node applied that changed its state is released now (waitReleased without
   * the wait). An answer built from the applied state is checked with this as it leaves (the HTTP
   * layer's onSend, metadata-group.ts answerBarrier): a barrier's check and a handler's read are not
   * one step, and an entry applied between them may not be released yet.
   */
  showable(): boolean {
    this.#refresh();
    return this.#releaseDone();
  }

  /**
   * The leader answered a proposal this node forwarded, applied at `index`: a leader acknowledges a
   * write only once it may release it (every member that may hold a lease of its term applied it, its
   * wait after election over: LeaseLeader.mayAcknowledge), so `index` is released, and released is
   * for good. Without this the write's own answer here (held until what this node applied is
   * released) would wait for the leader's next heartbeat to say so.
   */
  acknowledged(index: number): void {
    if (index <= this.#released) return;
    this.#released = index;
    this.#releaseReads();
  }

  /** Whether the group must stay awake: leases of ours may be held, reads here want them, or writes wait. */
  busy(): boolean {
    if (this.#gates.length > 0 || this.#releaseWaiters.length > 0) return true;
    if (this.#leader === undefined) return false;
    const now = this.#o.nowMs();
    return this.#leader.holding(now) || now < this.#selfWantUntil;
  }

  /**
   * A tick or an apply: release the writes that may be acknowledged now, fail late or orphaned ones.
   * Reads waiting for a release fail at their deadline while this node knows no leader (cut off: no
   * release comes, and a read must answer 503 by its deadline, not hang). While it follows (or is) a
   * leader they get a grace of one new leader's wait past the deadline: a new leader releases only
   * after waiting out older leases (about 1.5 s), which on a loaded machine can pass a short deadline
   * although the release is on its way. Past the grace they fail whatever the node knows: a leader
   * that never releases (a lease holder that answers but does not apply, a release lost to a group
   * gone quiet) must not keep a request, and what waits on it, for ever.
   */
  tick(): void {
    this.#refresh();
    this.#releaseReads();
    this.#release();
  }

  /** What this node applied is released, or its leader is of a build without leases (then nothing is). */
  #releaseDone(): boolean {
    const g = this.#o.group;
    if (!g.isLeader() && !this.#follower.releases(g.term, g.leader)) return true;
    return this.#released >= this.#o.lastChange();
  }

  /** On the leader: what it releases now. */
  #refresh(): void {
    const g = this.#o.group;
    if (this.#leader === undefined || !g.isLeader()) return;
    const r = this.#leader.released(this.#o.nowMs(), g.applied);
    if (r > this.#released) this.#released = r;
    this.#releaseReads();
  }

  /** Resolves the reads waiting for a release if it came; fails the late ones (tick). */
  #releaseReads(): void {
    if (this.#releaseWaiters.length === 0) return;
    const now = this.#o.nowMs();
    const ok = this.#releaseDone();
    const g = this.#o.group;
    const graceMs = !g.isLeader() && g.leader === noNode ? 0 : newLeaderWaitMs(this.#o.timing);
    const keep: ReleaseWaiter[] = [];
    for (const w of this.#releaseWaiters) {
      if (ok) w.resolve();
      else if (w.deadlineMs + graceMs <= now) w.reject(problems.unavailable('The metadata this node applied was not confirmed visible everywhere in time (is the metadata leader reachable?); retry.'));
      else keep.push(w);
    }
    this.#releaseWaiters = keep;
  }

  #release(): void {
    if (this.#gates.length === 0) return;
    const now = this.#o.nowMs();
    const keep: Gate[] = [];
    for (const w of this.#gates) {
      if (this.#leader === undefined || this.#leaderTerm !== w.term) {
        this.stats.gatesFailed++;
        w.reject(problems.unavailable('The metadata leader lost its leadership before the write could be acknowledged; it may or may not be applied; retry.'));
      } else if (this.#leader.mayAcknowledge(w.index, now)) w.resolve();
      else if (w.deadlineMs <= now) {
        this.stats.gatesFailed++;
        w.reject(problems.unavailable('The metadata write is applied on the leader but nodes holding read leases did not confirm it in time; it may be visible already; retry.'));
      } else keep.push(w);
    }
    this.#gates = keep;
  }

  close(err: Problem): void {
    for (const w of [...this.#gates, ...this.#releaseWaiters]) w.reject(err);
    this.#gates = [];
    this.#releaseWaiters = [];
  }
}

/**
 * The timing a node runs with: a lease of one election timeout (1 s by default; renewed on every
 * heartbeat answer), granted while a quorum answered a stamp at most half an election timeout old, and
 * clocks whose rate is within 1 % of real time (docs/metadata-raft.md, "Read leases").
 */
export function metadataReadLeases(electionMs: number): LeaseTiming {
  return { leaseMs: electionMs, freshMs: electionMs / 2, drift: 0.01 };
}
