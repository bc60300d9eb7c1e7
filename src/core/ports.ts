/**
 * The ports through which cores reach time and randomness. Pure code takes these as parameters so
 * tests and the simulator can drive it deterministically; only adapters read the real clock.
 */
export interface Clock {
  /** Wall-clock milliseconds since the epoch (timestamps such as received_at, created_at). */
  nowMs(): number;
  /** Monotonic milliseconds for timers and durations; never goes backwards. */
  monotonicMs(): number;
}

export interface Random {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  uuid(): string;
}
