/**
 * What a publish's part waited for when its partition's leader did not take it at once: the answers
 * that sent it round again (a forward answered "not leader" or left unanswered, the node's own
 * coalescer giving it back because leadership moved, no leader known to forward to). Each is retried
 * after a short pause (partition-appends.ts) and normally gone in one; a run of them is a stall of
 * every publish that has a part in that partition (a batch of 10 events touches most partitions), and
 * this is where it says so.
 *
 * Logged at info, at most one line per partition per `everyMs` (the first at once), with how many
 * retries of each kind came since the last line, to whom, and what the last answer said. Totals are
 * kept (`totals`; not exported as a metric yet). No I/O of its own: the caller's clock and logger.
 */
import type { Logger } from 'pino';

export type RetryKind = 'notLeader' | 'unavailable' | 'moved' | 'noLeader';

interface Pending {
  readonly topic: number;
  readonly partition: number;
  readonly counts: Record<RetryKind, number>;
  to: number | undefined;
  detail: string | undefined;
  /** When the first retry held back came. */
  readonly firstMs: number;
}

export class ForwardRetries {
  readonly #logger: Logger;
  readonly #nowMs: () => number;
  readonly #everyMs: number;
  /** Per group: when it last logged. */
  readonly #loggedMs = new Map<number, number>();
  /** Per group: retries not logged yet. */
  readonly #pending = new Map<number, Pending>();
  /** Every retry so far, by kind. */
  readonly totals: Record<RetryKind, number> = { notLeader: 0, unavailable: 0, moved: 0, noLeader: 0 };

  constructor(logger: Logger, nowMs: () => number, everyMs = 1000) {
    this.#logger = logger;
    this.#nowMs = nowMs;
    this.#everyMs = everyMs;
  }

  /** A part of `group` goes round again because of `kind` (`to`: the node asked, `detail`: its answer). */
  note(group: number, topic: number, partition: number, kind: RetryKind, to?: number, detail?: string): void {
    this.totals[kind]++;
    const now = this.#nowMs();
    let p = this.#pending.get(group);
    if (p === undefined) {
      p = { topic, partition, counts: { notLeader: 0, unavailable: 0, moved: 0, noLeader: 0 }, to, detail, firstMs: now };
      this.#pending.set(group, p);
    }
    p.counts[kind]++;
    p.to = to;
    p.detail = detail;
    const last = this.#loggedMs.get(group);
    if (last !== undefined && now - last < this.#everyMs) return;
    this.#log(group, p, now);
  }

  /**
   * Logs the retries held back whose second has passed (called on every publish: a run that ended
   * within the second of its last line is told of by the next publish, not by the next retry, which
   * may never come). Nothing held back: returns at once.
   */
  flush(): void {
    if (this.#pending.size === 0) return;
    const now = this.#nowMs();
    for (const [group, p] of this.#pending) {
      if (now - (this.#loggedMs.get(group) ?? -Infinity) >= this.#everyMs) this.#log(group, p, now);
    }
  }

  #log(group: number, p: Pending, now: number): void {
    this.#loggedMs.set(group, now);
    this.#pending.delete(group);
    const retries = Object.fromEntries(Object.entries(p.counts).filter(([, n]) => n > 0));
    this.#logger.info({ group, topic: p.topic, partition: p.partition, retries, to: p.to, answer: p.detail, overMs: Math.round(now - p.firstMs) }, 'publish parts retried: the partition leader did not take them');
  }
}
