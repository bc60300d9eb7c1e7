/**
 * Read leases of the metadata group (docs/metadata-raft.md, "Read leases"): the arithmetic and the
 * rule of who must have applied a write before the leader acknowledges it. Pure: no clock inside,
 * every method takes the caller's monotonic time; no I/O.
 *
 * The leader stamps what it sends a follower with its clock (`stamp`); the follower echoes the
 * latest stamp of its leader on its answers, with its applied index, and, while it wants a lease, an
 * ask (`seq`) that it remembers with its own clock at the time it sent it. The leader answers an ask
 * with a grant naming its commit index. The follower then serves reads from its applied state until
 * its own clock passes (time the ask was sent + leaseMs), once it has applied the grant's index.
 *
 * Why that is safe (drift: every clock's rate is within [1 - drift, 1 + drift] of real time):
 * - The follower's lease ends by real time T0 + leaseMs / (1 - drift), T0 the ask's sending, which is
 *   before the leader received it. The leader holds the follower as a lease holder until its own
 *   clock passes (receipt + holdMs), holdMs = leaseMs (1 + drift) / (1 - drift): never earlier in real
 *   time. Until then it acknowledges a write only once that follower reported it applied.
 * - A deposed leader must not grant: it grants only while a quorum of voters echoed one of its stamps
 *   at most freshMs ago (its clock). Those voters were in its term after the stamp left, so any later
 *   leader was elected after that stamp; every lease it grants ends by that stamp + (freshMs +
 *   leaseMs) / (1 - drift) in real time. A new leader acknowledges nothing before its own clock has
 *   run newLeaderWaitMs = (freshMs + leaseMs) (1 + drift) / (1 - drift) since it became leader.
 * - A grant names the leader's commit index, taken only once an entry of its term committed: every
 *   write acknowledged before the grant (by it or an earlier leader) is at or below it.
 * The leader reads its own state under the same freshness (a self-lease), once it has applied what
 * was committed when its term's first entry committed.
 *
 * Acknowledged writes are not all a read must show: once any read showed a write, every later read
 * must too (linearizability), and a write is applied on some nodes before others. So a write becomes
 * visible only once it is released: every member that may hold a lease of the leader has applied it
 * (the rule of acknowledgement), and the leader says so on what it sends (`released`). A read anywhere
 * is served only once the node knows a released index at or above the last entry that changed its
 * state (a new leader's empty entry changes nothing). Released is for good: a lease granted later
 * names a commit index at or above it, and a later leader's first commit covers it.
 */
import type { Index, NodeId } from '../raft/index.js';

export interface LeaseTiming {
  /** How long a follower's lease lasts on its own clock, from when it sent the ask it answers. */
  readonly leaseMs: number;
  /** How old the leader's latest stamp echoed by a quorum may be for it to grant (or read itself). */
  readonly freshMs: number;
  /** Bound on any clock's rate error (0.01: 1 %). Beyond it, leases are not safe. */
  readonly drift: number;
}

/** What rides on a metadata group message (leader → follower, or follower → leader). */
export interface LeaseField {
  /** Leader → follower: the leader's clock when sent. Follower → leader: the latest such stamp it got (echo). */
  readonly stamp: number;
  /** Leader → follower: the ask this grants (0: none). Follower → leader: an ask (0: none). */
  readonly seq: number;
  /** Leader → follower: its commit index, with a grant. Follower → leader: its applied index. */
  readonly index: Index;
  /** Leader → follower: the highest index released (visible to reads anywhere). Follower → leader: 0. */
  readonly released: Index;
}

/** How long the leader holds a follower as a lease holder after receiving its ask (its own clock). */
export function holdMs(t: LeaseTiming): number {
  return (t.leaseMs * (1 + t.drift)) / (1 - t.drift);
}

/** How long a new leader waits out the leases an earlier one may have granted before it acknowledges. */
export function newLeaderWaitMs(t: LeaseTiming): number {
  return ((t.freshMs + t.leaseMs) * (1 + t.drift)) / (1 - t.drift);
}

interface Holder {
  /** The latest stamp of ours it echoed. */
  echoed: number;
  /** What it reported applied. */
  applied: Index;
  /** An ask not yet granted: its seq and when we received it. */
  ask: { seq: number; receivedMs: number } | undefined;
  /** Until when (our clock) it may hold a lease of ours. */
  holdUntil: number;
}

/** The leader's side, for one term: created when it becomes leader, dropped when it stops. */
export class LeaseLeader {
  readonly #t: LeaseTiming;
  readonly #self: NodeId;
  readonly #ackFrom: number;
  readonly #members = new Map<NodeId, Holder>();
  /** The commit index when its term's first entry committed (its own reads need it applied). */
  #selfIndex: Index | undefined;

  constructor(t: LeaseTiming, self: NodeId, becameLeaderMs: number) {
    this.#t = t;
    this.#self = self;
    this.#ackFrom = becameLeaderMs + newLeaderWaitMs(t);
  }

  #holder(id: NodeId): Holder {
    let h = this.#members.get(id);
    if (h === undefined) {
      h = { echoed: -Infinity, applied: 0, ask: undefined, holdUntil: -Infinity };
      this.#members.set(id, h);
    }
    return h;
  }

  /** The stamp of ours a quorum of `voters` has echoed (this leader counting with `nowMs`); -Infinity if none. */
  quorumStamp(voters: readonly NodeId[], nowMs: number): number {
    if (voters.length === 0) return -Infinity;
    const stamps = voters.map((v) => (v === this.#self ? nowMs : (this.#members.get(v)?.echoed ?? -Infinity))).sort((a, b) => b - a);
    return stamps[Math.floor(voters.length / 2)]!;
  }

  /** Whether a quorum vouched for this leader recently enough to grant or read under a lease. */
  fresh(voters: readonly NodeId[], nowMs: number): boolean {
    return nowMs - this.quorumStamp(voters, nowMs) <= this.#t.freshMs;
  }

  /** A follower's answer carried `f` (call only for messages of this leader's term). */
  received(from: NodeId, f: LeaseField, nowMs: number): void {
    const h = this.#holder(from);
    this.#plain.delete(from);
    if (f.stamp > h.echoed && f.stamp <= nowMs) h.echoed = f.stamp;
    if (f.index > h.applied) h.applied = f.index;
    if (f.seq > 0) h.ask = { seq: f.seq, receivedMs: nowMs };
  }

  /** Members that answered us without a lease field: a build without leases. */
  readonly #plain = new Set<NodeId>();

  /** A member's answer in our term carried no lease field (a build without leases). */
  plainAnswer(from: NodeId): void {
    this.#plain.add(from);
  }

  /**
   * What to put on a message to `to`: our stamp, and a grant of its pending ask when we may grant
   * (`committedInTerm`: an entry of our term has committed, so `commit` covers every write
   * acknowledged before; a quorum vouched for us recently; and no member answered without a lease
   * field: a node of a build without leases reads by ReadIndex rounds alone and waits for no release,
   * so while we hear from one, we grant nothing).
   */
  outgoing(to: NodeId, nowMs: number, commit: Index, committedInTerm: boolean, voters: readonly NodeId[], applied: Index): LeaseField {
    const released = this.released(nowMs, applied);
    const h = this.#members.get(to);
    if (h?.ask === undefined || !committedInTerm || !this.fresh(voters, nowMs) || this.#plain.size > 0) return { stamp: nowMs, seq: 0, index: 0, released };
    const ask = h.ask;
    h.ask = undefined;
    h.holdUntil = Math.max(h.holdUntil, ask.receivedMs + holdMs(this.#t));
    return { stamp: nowMs, seq: ask.seq, index: commit, released };
  }

  /**
   * The highest index that may be shown to reads (`applied`: what this leader applied): one every
   * member that may hold a lease of ours applied; 0 while a new leader waits out older leases.
   */
  released(nowMs: number, applied: Index): Index {
    if (nowMs < this.#ackFrom) return 0;
    let r = applied;
    for (const h of this.#members.values()) if (h.holdUntil > nowMs && h.applied < r) r = h.applied;
    return r;
  }

  /**
   * Whether a write at `index` (committed and applied here) may be acknowledged now: the wait of a
   * new leader is over, and every member that may hold a lease of ours has applied it.
   */
  mayAcknowledge(index: Index, nowMs: number): boolean {
    if (nowMs < this.#ackFrom) return false;
    for (const h of this.#members.values()) if (h.holdUntil > nowMs && h.applied < index) return false;
    return true;
  }

  /** Some member may hold a lease of ours (the group must keep heartbeating to renew or release it). */
  holding(nowMs: number): boolean {
    for (const h of this.#members.values()) if (h.holdUntil > nowMs) return true;
    return false;
  }

  /** Whether this leader may read its applied state without a round (`applied` its applied index). */
  selfRead(voters: readonly NodeId[], nowMs: number, commit: Index, committedInTerm: boolean, applied: Index): boolean {
    if (!committedInTerm) return false;
    if (this.#selfIndex === undefined) this.#selfIndex = commit;
    return applied >= this.#selfIndex && this.fresh(voters, nowMs);
  }
}

/** The follower's side: it follows one leader in one term; anything else resets it. */
export class LeaseFollower {
  readonly #t: LeaseTiming;
  #term = -1;
  #leader: NodeId = 0;
  /** The latest stamp of the leader (undefined: this leader sent none yet). */
  #stamp: number | undefined;
  /** The leader sent an append or heartbeat without a stamp: a build without leases. */
  #plain = false;
  #seq = 0;
  /** Asks sent and not yet granted, with our clock when each left. */
  #asks: { seq: number; sentMs: number }[] = [];
  #until = -Infinity;
  #index: Index = 0;
  /** Until when (our clock) we ask for a lease: reads wanted one recently. */
  #wantUntil = -Infinity;

  /**
   * `firstSeq`: where this process's asks start, drawn at random by the host, so that a grant of an
   * ask sent by an earlier process of this node (still under way when it restarted) does not match an
   * ask of this one: that grant's lease was counted by the leader from the earlier ask.
   */
  constructor(t: LeaseTiming, firstSeq = 0) {
    this.#t = t;
    this.#seq = firstSeq;
  }

  #follow(term: number, leader: NodeId): void {
    if (term === this.#term && leader === this.#leader) return;
    this.#term = term;
    this.#leader = leader;
    this.#stamp = undefined;
    this.#plain = false;
    this.#asks = [];
    this.#until = -Infinity;
    this.#index = 0;
  }

  /** A message from `from` in `term`, our current term, whose leader is `from`, carried `f`. */
  received(term: number, from: NodeId, f: LeaseField, nowMs: number): void {
    this.#follow(term, from);
    if (this.#stamp === undefined || f.stamp > this.#stamp) this.#stamp = f.stamp;
    if (f.seq === 0) return;
    const ask = this.#asks.find((a) => a.seq === f.seq);
    if (ask === undefined) return;
    this.#asks = this.#asks.filter((a) => a.seq > f.seq);
    this.#until = Math.max(this.#until, ask.sentMs + this.#t.leaseMs);
    this.#index = Math.max(this.#index, f.index);
  }

  /** What to put on an answer to our leader `to` in `term` (undefined: it sent no stamp, a build without leases). */
  outgoing(term: number, to: NodeId, nowMs: number, applied: Index): LeaseField | undefined {
    this.#follow(term, to);
    if (this.#stamp === undefined) return undefined;
    if (nowMs >= this.#wantUntil) return { stamp: this.#stamp, seq: 0, index: applied, released: 0 };
    // Asks older than a lease could not give one any more.
    this.#asks = this.#asks.filter((a) => a.sentMs + this.#t.leaseMs > nowMs).slice(-15);
    const seq = ++this.#seq;
    this.#asks.push({ seq, sentMs: nowMs });
    return { stamp: this.#stamp, seq, index: applied, released: 0 };
  }

  /** An append or heartbeat of our leader `from` in `term` carried no lease field. */
  plain(term: number, from: NodeId): void {
    this.#follow(term, from);
    if (this.#stamp === undefined) this.#plain = true;
  }

  /**
   * Whether reads here must wait for released indexes: not under a leader of a build without leases
   * (it releases nothing, and with it a member nobody holds a lease); yes under one that stamps, and
   * while we do not know yet (its first heartbeat tells).
   */
  releases(term: number, leader: NodeId): boolean {
    return !(term === this.#term && leader === this.#leader && this.#plain);
  }

  /** A read wants a lease: ask for one on our answers for a while (two lease lengths). */
  want(nowMs: number): void {
    this.#wantUntil = nowMs + 2 * this.#t.leaseMs;
  }

  /** Whether we ask for a lease now (the group must stay awake for it). */
  wanting(nowMs: number): boolean {
    return nowMs < this.#wantUntil;
  }

  /**
   * Whether a read may be served from the applied state without a round, for leader `leader` in
   * `term` as we see them now: the index to have applied first, or undefined when we hold no lease.
   */
  lease(term: number, leader: NodeId, nowMs: number): Index | undefined {
    if (term !== this.#term || leader !== this.#leader || nowMs >= this.#until) return undefined;
    return this.#index;
  }
}
