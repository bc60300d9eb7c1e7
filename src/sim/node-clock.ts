/**
 * A simulated node's clock: it runs at its own rate against simulated time (tick-rate skew, a node
 * slowed down 20x), and its timers are in the node's own time.
 *
 * Why timers are kept here: a timer armed while the clock runs slow must fire when the node's clock
 * reaches its due time, also after the rate changed back. Scheduled once in simulated time at the old
 * rate, a 500 ms sleep armed at x0.05 fired 10 s later, long after the node ran normally again: a
 * registration retry of a wiped node slept past the end of the run (host simulation seed 59, "the
 * wiped node is not yet added 6 s after healing"), something no real process does. So each timer is
 * armed again whenever the rate changes, and only its latest arming fires.
 */

export interface NodeTimerArm {
  /** Schedules `fire` after `simDelayMs` of simulated time (void when the node process crashed meanwhile). */
  (simDelayMs: number, fire: () => void): void;
}

interface Timer {
  readonly dueMs: number;
  readonly fn: () => void;
  readonly arm: NodeTimerArm;
}

export class NodeClock {
  readonly #simNow: () => number;
  /** Node milliseconds per simulated millisecond. */
  #rate = 1;
  #monoBase = 0;
  #simBase = 0;
  /** Bumped on every rate change: an arming of an earlier generation is void. */
  #generation = 0;
  readonly #timers = new Set<Timer>();

  constructor(simNow: () => number) {
    this.#simNow = simNow;
  }

  get rate(): number {
    return this.#rate;
  }

  monotonicMs(): number {
    return this.#monoBase + (this.#simNow() - this.#simBase) * this.#rate;
  }

  /** Changes how fast the clock runs from now on; every pending timer is armed again at the new rate. */
  setRate(rate: number): void {
    this.#monoBase = this.monotonicMs();
    this.#simBase = this.#simNow();
    this.#rate = rate;
    this.#generation++;
    for (const t of this.#timers) this.#arm(t);
  }

  /** Runs `fn` once the node's clock has advanced `ms`; `arm` puts it on the simulator's queue. */
  after(ms: number, fn: () => void, arm: NodeTimerArm): void {
    const t: Timer = { dueMs: this.monotonicMs() + Math.max(0, ms), fn, arm };
    this.#timers.add(t);
    this.#arm(t);
  }

  /** Forgets every pending timer (the process they belong to is gone: a crash, a restart). */
  forget(): void {
    this.#timers.clear();
  }

  #arm(t: Timer): void {
    const generation = this.#generation;
    t.arm(Math.max(0, (t.dueMs - this.monotonicMs()) / this.#rate), () => {
      if (generation !== this.#generation || !this.#timers.has(t)) return;
      this.#timers.delete(t);
      t.fn();
    });
  }
}
