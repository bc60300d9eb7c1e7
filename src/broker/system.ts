/** The real clock and randomness: the only place outside adapters that reads time or entropy. */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Clock, Random } from '../core/ports.js';

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};

export const systemRandom: Random = {
  next: () => Math.random(),
  int: (n) => Math.floor(Math.random() * n),
  uuid: () => randomUUID(),
};
