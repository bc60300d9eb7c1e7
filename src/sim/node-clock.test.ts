/**
 * Goal: a simulated node's timers run on the node's own clock, also across a change of its rate: a
 * sleep armed while the node ran 20x slow ends when the node's clock reaches it, not 20x later in
 * simulated time (host simulation seed 59: a wiped node's registration retry slept past the end of
 * the run). Method: a small event queue in simulated time; arm timers, change the rate, and read when
 * they fire.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NodeClock } from './node-clock.js';

class Queue {
  now = 0;
  readonly #events: { at: number; seq: number; fn: () => void }[] = [];
  #seq = 0;
  at(delay: number, fn: () => void): void {
    this.#events.push({ at: this.now + delay, seq: this.#seq++, fn });
  }
  runUntil(t: number): void {
    for (;;) {
      this.#events.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const e = this.#events[0];
      if (e === undefined || e.at > t) break;
      this.#events.shift();
      this.now = e.at;
      e.fn();
    }
    this.now = t;
  }
}

test('a timer armed on a slow clock fires on the node clock once the rate is back to normal', () => {
  const q = new Queue();
  const clock = new NodeClock(() => q.now);
  const fired: number[] = [];
  clock.setRate(0.05);
  clock.after(500, () => fired.push(q.now), (d, fire) => q.at(d, fire));
  q.runUntil(100); // 5 ms of node time
  assert.deepEqual(fired, []);
  clock.setRate(1);
  q.runUntil(20_000);
  assert.equal(fired.length, 1, 'fired once (the arming of the slow rate is void)');
  assert.ok(Math.abs(fired[0]! - 595) < 1e-6, `fired at ${fired[0]} simulated ms, expected 595 (495 node ms after the rate change)`);
  assert.ok(Math.abs(clock.monotonicMs() - (5 + 19_900)) < 1e-6);
});

test('a fast clock fires its timers sooner in simulated time, and a forgotten timer never fires', () => {
  const q = new Queue();
  const clock = new NodeClock(() => q.now);
  const fired: string[] = [];
  clock.setRate(4);
  clock.after(400, () => fired.push(`a@${q.now}`), (d, fire) => q.at(d, fire));
  clock.after(800, () => fired.push(`b@${q.now}`), (d, fire) => q.at(d, fire));
  q.runUntil(150);
  clock.forget();
  q.runUntil(1000);
  assert.deepEqual(fired, ['a@100']);
});
