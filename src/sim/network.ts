/**
 * The simulated network between nodes: which links are cut (symmetric partitions, one-way cuts,
 * bridges), and how a message that does get through is treated (dropped, delayed, duplicated).
 * Reordering falls out of independent random delays. A cut is checked when a message would be
 * delivered, so a partition also swallows messages already in flight, as a real one would.
 */
import type { NodeId } from '../raft/index.js';
import type { Prng } from './prng.js';

export interface LinkFaults {
  /** Probability that a message is lost. */
  dropRate: number;
  /** Probability that a message is delivered twice. */
  duplicateRate: number;
  /** Delivery delay bounds in virtual milliseconds. */
  delayMsMin: number;
  delayMsMax: number;
  /** Probability that a message takes a long detour (up to 10x delayMsMax): strong reordering. */
  slowRate: number;
  /**
   * Probability that a stale copy of a message arrives much later (up to `replayMsMax`), as a
   * retransmission stuck in a queue would: answers to an old campaign reach a later one, appends of a
   * deposed leader reach a follower of the next.
   */
  replayRate?: number;
  replayMsMax?: number;
}

export const calmLinks: LinkFaults = { dropRate: 0, duplicateRate: 0, delayMsMin: 1, delayMsMax: 5, slowRate: 0 };

export class Network {
  faults: LinkFaults = { ...calmLinks };
  /**
   * Extra delay (virtual ms) of everything a node sends: an overloaded or badly connected node whose
   * answers arrive late, e.g. its vote for an election the candidate has already given up.
   */
  readonly slowSenders = new Map<NodeId, number>();
  /**
   * Extra delay (virtual ms) of what one node sends another ("from>to"): one slow direction of one
   * link, e.g. a metadata leader's grants of read leases reaching one follower late (host-lease-probe.ts).
   */
  readonly #slowLinks = new Map<string, number>();
  /** Directed cuts "from>to". */
  readonly #cut = new Set<string>();

  #key(from: NodeId, to: NodeId): string {
    return `${from}>${to}`;
  }

  canDeliver(from: NodeId, to: NodeId): boolean {
    return !this.#cut.has(this.#key(from, to));
  }

  cutOneWay(from: NodeId, to: NodeId): void {
    this.#cut.add(this.#key(from, to));
  }

  /** Restores what `from` sends `to` (the other direction stays as it is). */
  uncutOneWay(from: NodeId, to: NodeId): void {
    this.#cut.delete(this.#key(from, to));
  }

  /** What `from` sends `to` arrives `lagMs` late (0: no longer). */
  slowLink(from: NodeId, to: NodeId, lagMs: number): void {
    if (lagMs > 0) this.#slowLinks.set(this.#key(from, to), lagMs);
    else this.#slowLinks.delete(this.#key(from, to));
  }

  /** Splits `nodes` into groups that cannot talk to each other (both directions). */
  partition(groups: readonly (readonly NodeId[])[]): void {
    for (let i = 0; i < groups.length; i++) {
      for (let j = 0; j < groups.length; j++) {
        if (i === j) continue;
        for (const a of groups[i]!) for (const b of groups[j]!) this.cutOneWay(a, b);
      }
    }
  }

  /** Two sides that cannot talk directly, and a bridge node that talks to both. */
  bridge(left: readonly NodeId[], bridgeNode: NodeId, right: readonly NodeId[]): void {
    this.partition([left, right]);
    void bridgeNode; // the bridge keeps every link: nothing to cut
  }

  /** Cuts a node off from everyone else. */
  isolate(node: NodeId, others: readonly NodeId[]): void {
    for (const o of others) {
      if (o === node) continue;
      this.cutOneWay(node, o);
      this.cutOneWay(o, node);
    }
  }

  /** Restores the link between `a` and `b` (both directions). */
  link(a: NodeId, b: NodeId): void {
    this.#cut.delete(this.#key(a, b));
    this.#cut.delete(this.#key(b, a));
  }

  /** Restores every link of `node` (in both directions). */
  rejoin(node: NodeId): void {
    for (const k of [...this.#cut]) {
      const [a, b] = k.split('>');
      if (Number(a) === node || Number(b) === node) this.#cut.delete(k);
    }
  }

  heal(): void {
    this.#cut.clear();
    this.slowSenders.clear();
    this.#slowLinks.clear();
    this.faults = { ...calmLinks };
  }

  describeCuts(): string {
    return [...this.#cut].sort().join(' ');
  }

  /** The delivery delays for one message: [] when dropped, more than one when duplicated or replayed. */
  delays(rng: Prng, from?: NodeId, to?: NodeId): number[] {
    const f = this.faults;
    if (f.dropRate > 0 && rng.chance(f.dropRate)) return [];
    const lag = from === undefined ? 0 : (this.slowSenders.get(from) ?? 0);
    // Drawn only while a link is slow, so that runs without one draw as before.
    const linkLag = from === undefined || to === undefined || this.#slowLinks.size === 0 ? 0 : (this.#slowLinks.get(this.#key(from, to)) ?? 0);
    const one = (): number => {
      const base = rng.between(f.delayMsMin, f.delayMsMax) + (lag > 0 ? rng.between(lag / 2, lag) : 0) + (linkLag > 0 ? rng.between(Math.round(linkLag * 0.8), linkLag) : 0);
      return f.slowRate > 0 && rng.chance(f.slowRate) ? base + rng.between(f.delayMsMax, 10 * f.delayMsMax) : base;
    };
    const out = [one()];
    if (f.duplicateRate > 0 && rng.chance(f.duplicateRate)) out.push(one());
    const replay = f.replayRate ?? 0;
    if (replay > 0 && rng.chance(replay)) out.push(rng.between(10 * f.delayMsMax, Math.max(10 * f.delayMsMax, f.replayMsMax ?? 1000)));
    return out;
  }
}
