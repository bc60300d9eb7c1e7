/**
 * Scripted schedules aimed at the metadata group's read leases (host simulation, seeds that run
 * leases; docs/metadata-raft.md, "Read leases"). The random metadata clients (host-metadata.ts) read
 * and write through random nodes; a bug of the lease rules shows only when a read lands on a lease
 * holder in a window of a few tens of milliseconds that those clients hit in no seed of forty. Each
 * episode here warms a lease on a follower F (reads there make it ask), makes one of these windows
 * and reads on F through it, while the other faults go on:
 *
 * - handover: the leader L hands leadership to X while X cannot reach F (F goes on following L, under
 *   L's lease); a write through X, then reads on F. A new leader must wait out the leases its
 *   predecessor granted before it acknowledges (mutant lease-new-leader-no-wait);
 * - lateGrant: what L sends F arrives 100 to 400 ms late; reads on F, a pause of a bit over three
 *   lease lengths (F stops asking, then L stops holding it), a write through L, then reads on F. A lease counts
 *   from the ask, not from the grant's arrival (mutant lease-from-grant);
 * - lagging: what L sends F arrives 10 to 50 ms late (F holds leases but applies late); a write
 *   through L while reads on L go on until one shows it, then at once a read on F. A read shows only
 *   what every lease holder applied (mutant lease-read-unreleased).
 *
 * Its operations go to a register of its own, a new one each episode (the linearizability check sees them as any other: a
 * read that misses a write acknowledged, or shown by a read, before it began fails the run), and its
 * choices come from a stream of their own. The cuts and slow links it makes are its own, made again
 * at each step (the other faults heal the network meanwhile) and undone at the end of the episode.
 */
import type { LeaseTiming } from '../broker/metadata-lease.js';
import type { HostSimContext } from './host-context.js';
import type { MetadataClients } from './host-metadata.js';
import type { SimHostNode } from './host-node.js';
import type { Prng } from './prng.js';

/**
 * The probe's registers: a new one each episode (the random clients use k0 to k2). Each register is
 * checked for linearizability on its own, and a write of unknown outcome stays open in its history
 * for good: on one register for the whole run, the check's search grew with every such write (a
 * process of seeds 1-50 reached 766 MB, three times the others).
 */
const keyOf = (episode: number): string => `lease.${episode}`;
/** Its client ids in the history: a writer and a reader (ops of one may overlap the other's). */
const writer = 90;
const reader = 91;

type Kind = 'handover' | 'lateGrant' | 'lagging';

export class LeaseProbe {
  readonly #ctx: HostSimContext;
  readonly #clients: MetadataClients;
  readonly #rng: Prng;
  readonly #lease: LeaseTiming;
  /** The register of the episode under way. */
  #key = keyOf(0);
  /** Undoes the episode's cuts and slow links. */
  #undo: (() => void) | undefined;

  constructor(ctx: HostSimContext, clients: MetadataClients, rng: Prng, lease: LeaseTiming) {
    this.#ctx = ctx;
    this.#clients = clients;
    this.#rng = rng;
    this.#lease = lease;
  }

  start(): void {
    this.#ctx.at(this.#rng.between(150, 400), () => this.#episode());
  }

  #leader(): SimHostNode | undefined {
    let best: SimHostNode | undefined;
    let term = -1;
    for (const n of this.#ctx.running()) {
      const g = n.metadata?.raftGroup;
      if (g === undefined || !g.isLeader() || g.term <= term) continue;
      best = n;
      term = g.term;
    }
    return best;
  }

  #next(afterMs: number): void {
    this.#undo?.();
    this.#undo = undefined;
    this.#ctx.at(afterMs, () => this.#episode());
  }

  #episode(): void {
    const ctx = this.#ctx;
    const r = this.#rng;
    if (!ctx.chaos) return this.#next(r.between(50, 150));
    const l = this.#leader();
    const others = ctx.running().filter((n) => n !== l && n.metadata !== undefined && l?.metadata?.raftGroup.conf.voters.includes(n.member) === true);
    if (l === undefined || others.length < 2) return this.#next(r.between(20, 80));
    const f = r.pick(others);
    const x = r.pick(others.filter((n) => n !== f));
    const kind: Kind = r.pick(['handover', 'lateGrant', 'lagging']);
    ctx.stats.leaseProbes++;
    this.#key = keyOf(ctx.stats.leaseProbes);
    ctx.log(`LEASE PROBE ${kind}: leader n${l.id}, holder n${f.id}${kind === 'handover' ? `, new leader n${x.id}` : ''}`);
    const warmMs = r.between(60, 200);
    if (kind === 'handover') {
      this.#warm(f, warmMs, () => this.#handover(l, f, x));
    } else if (kind === 'lateGrant') {
      const lag = r.pick([100, 200, 400]);
      const slow = (): void => ctx.net.slowLink(l.id, f.id, lag);
      slow();
      this.#undo = () => ctx.net.slowLink(l.id, f.id, 0);
      this.#warm(f, warmMs, () => {
        // F stops reading: it asks for two more lease lengths (wanting), and L holds it for one hold
        // (1.1 leases here) after the last ask; the grant of that ask reaches F `lag` later.
        const pause = Math.ceil(3.2 * this.#lease.leaseMs) + r.between(0, lag / 2);
        ctx.at(pause, () => {
          if (!ctx.chaos) return this.#next(r.between(50, 150));
          slow();
          this.#writeThenRead(l, f, lag + this.#lease.leaseMs, slow);
        });
      }, slow);
    } else {
      const lag = r.between(10, 50);
      const slow = (): void => ctx.net.slowLink(l.id, f.id, lag);
      slow();
      this.#undo = () => ctx.net.slowLink(l.id, f.id, 0);
      this.#warm(f, warmMs, () => this.#lagging(l, f, slow), slow);
    }
  }

  /**
   * Reads on `f` a few ms apart for `ms` (at most eight under way: a read that found no lease waits
   * for a round, which a cut may hold up to its timeout), then `then`, whatever is still under way;
   * `again` remakes the episode's faults at each.
   */
  #warm(f: SimHostNode, ms: number, then: () => void, again?: () => void): void {
    const end = this.#ctx.nowMs() + ms;
    this.#readUntil(f, () => this.#ctx.nowMs() >= end, then, again);
  }

  /** Reads on `f` as #warm does until `done()` (looked at every 1 to 5 ms), then `then`. */
  #readUntil(f: SimHostNode, done: () => boolean, then: () => void, again?: () => void): void {
    const ctx = this.#ctx;
    let pending = 0;
    let nextRead = 0;
    let over = false;
    const step = (): void => {
      if (over) return;
      if (!ctx.chaos) {
        over = true;
        return this.#next(this.#rng.between(50, 150));
      }
      if (done()) {
        over = true;
        return then();
      }
      again?.();
      if (pending < 8 && ctx.nowMs() >= nextRead) {
        pending++;
        nextRead = ctx.nowMs() + this.#rng.between(2, 12);
        this.#clients.probe(reader, 'read', f, this.#key, () => pending--);
      }
      ctx.at(this.#rng.between(1, 5), step);
    };
    step();
  }

  /** L hands leadership to X, which F does not hear from; a write through X once it leads, then reads on F. */
  #handover(l: SimHostNode, f: SimHostNode, x: SimHostNode): void {
    const ctx = this.#ctx;
    const r = this.#rng;
    const cut = (): void => ctx.net.cutOneWay(x.id, f.id);
    cut();
    this.#undo = () => ctx.net.uncutOneWay(x.id, f.id);
    const md = l.metadata;
    if (!l.running || md === undefined || !md.isLeader() || !md.transferLeadership(x.member)) return this.#next(r.between(50, 200));
    // F goes on reading (asking for L's lease) while X takes over.
    const until = ctx.nowMs() + 300;
    let led = false;
    const wait = (): boolean => {
      if (x.running && x.metadata?.isLeader() === true) led = true;
      return led || ctx.nowMs() >= until;
    };
    const poll = (): void => {
      if (!ctx.chaos) return this.#next(r.between(50, 150));
      if (!led) return this.#next(r.between(50, 200));
      cut();
      this.#writeThenRead(x, f, this.#lease.leaseMs + r.between(20, 100), cut);
    };
    this.#readUntil(f, wait, poll, cut);
  }

  /** A write through `via`; once it is acknowledged, reads on `f` for `readMs`. */
  #writeThenRead(via: SimHostNode, f: SimHostNode, readMs: number, again: () => void): void {
    const ctx = this.#ctx;
    this.#clients.probe(writer, 'write', via, this.#key, (outcome) => {
      if (outcome !== 'ok') return this.#next(this.#rng.between(20, 100));
      this.#warm(f, readMs, () => this.#next(this.#rng.between(50, 300)), again);
    });
  }

  /**
   * A write through L while F (a lease holder) applies late; reads on L until one shows the write,
   * then at once a read on F (and more while the write is under way).
   */
  #lagging(l: SimHostNode, f: SimHostNode, again: () => void): void {
    const ctx = this.#ctx;
    const r = this.#rng;
    // What L shows now: the write is seen once a read on L shows something else.
    const before = l.metadata?.state.eventType(this.#key)?.eventType.owning_application;
    let writeDone = false;
    this.#clients.probe(writer, 'write', l, this.#key, () => (writeDone = true));
    const end = ctx.nowMs() + 400;
    const poll = (): void => {
      if (!ctx.chaos) return this.#next(r.between(50, 150));
      again();
      if (ctx.nowMs() >= end) return this.#next(r.between(50, 300));
      if (writeDone) return this.#warm(f, r.between(5, 30), () => this.#next(r.between(50, 300)), again);
      this.#clients.probe(reader, 'read', l, this.#key, (outcome, value) => {
        // Seen on L: now on F, at once, then a few more while F catches up.
        if (outcome === 'ok' && value !== before) return this.#warm(f, r.between(20, 80), () => this.#next(r.between(50, 300)), again);
        ctx.at(r.between(0, 3), poll);
      });
    };
    poll();
  }
}
