/**
 * Goal: a simulated node's timers behave as a real process's do when its clock's rate changes (the
 * nemesis's tick-rate skew): a timer is due at a point of the node's own clock, so one set while the
 * clock ran slow fires soon after it runs at its normal rate again. Method: a SimHostNode over a small
 * event queue of its own; only its clock and timers are used (the process is never started).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NodeId } from '../raft/index.js';
import { MinHeap } from './heap.js';
import { SimHostNode, type HostNodeEnv } from './host-node.js';
import { Prng } from './prng.js';
import type { SimDisk } from './sim-disk.js';

interface Scheduled {
  at: number;
  seq: number;
  fn: () => void;
  node: SimHostNode;
  inc: number;
}

/** A node and the virtual time it lives in: `run(untilMs)` fires what is due up to then. */
function setup(): { node: SimHostNode; now: () => number; run: (untilMs: number) => void } {
  let now = 0;
  let seq = 0;
  const queue = new MinHeap<Scheduled>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
  const env = {
    nowMs: () => now,
    at: (delayMs: number, node: SimHostNode, inc: number, fn: () => void) => queue.push({ at: now + Math.max(0, delayMs), seq: seq++, fn, node, inc }),
    // No read leases: setRate takes the rate as given (with leases it clamps it to their drift bound).
    tuning: { readLeases: undefined },
  } as unknown as HostNodeEnv;
  const node = new SimHostNode(1 as NodeId, env, new Prng(1), undefined as unknown as SimDisk);
  const run = (untilMs: number): void => {
    for (let e = queue.peek(); e !== undefined && e.at <= untilMs; e = queue.peek()) {
      queue.pop();
      now = e.at;
      if (e.node.incarnation === e.inc) e.fn();
    }
    now = untilMs;
  };
  return { node, now: () => now, run };
}

test('a timer set while the clock runs slow fires soon after the clock runs at its normal rate again', () => {
  const { node, now, run } = setup();
  node.setRate(0.05);
  run(100);
  let firedAt: number | undefined;
  // 1000 ms of the node's clock: 20 s of virtual time at this rate.
  node.after(1000, () => (firedAt = now()));
  run(300); // the node's clock moved 10 ms
  node.setRate(1);
  run(30_000);
  // The 990 ms left on the node's clock pass at its normal rate: due at 300 + 990, not at 20 100.
  assert.equal(firedAt, 1290);
});

test('a timer follows every change of rate, faster and slower, and fires once', () => {
  const { node, now, run } = setup();
  const fired: number[] = [];
  node.after(1000, () => fired.push(now()));
  run(400); // 400 ms of the node's clock
  node.setRate(2);
  run(500); // 200 more: 600
  node.setRate(0.5);
  run(30_000); // the last 400 take 800
  assert.deepEqual(fired, [1300]);
  assert.ok(Math.abs(node.clock.monotonicMs() - (1000 + (30_000 - 1300) * 0.5)) < 1e-6);
});

test('timers of a crashed process stay void when the rate changes', () => {
  const { node, run } = setup();
  let fired = 0;
  node.after(100, () => fired++);
  node.incarnation++; // what crash() does to the process's leftovers
  node.setRate(3);
  node.after(100, () => fired++);
  run(1000);
  assert.equal(fired, 1);
});
