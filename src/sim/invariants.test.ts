/**
 * Goal: the TermFloor rule check fires on the history it names and stays quiet on a correct one.
 * Method: feed Invariants a small history by hand (the other Raft checks are exercised by the
 * simulations and the mutant run).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Entry } from '../raft/index.js';
import { Invariants } from './invariants.js';

/** A log of entries 1..terms.length with those terms. */
function logOf(terms: readonly number[]) {
  return { termAt: (i: number) => (i === 0 ? 0 : terms[i - 1]), firstIndex: () => 1 };
}

const boot: Entry[] = [{ index: 1, term: 1, type: 'confChange', data: new Uint8Array() } as unknown as Entry];

test('a member started with its past term unknown takes no term below one committed before: TermFloor', () => {
  const inv = new Invariants();
  inv.bootstrapped(boot);
  // Node 1 led term 2 and committed 2; node 2 led term 3 and committed 3 (with node 3's former self).
  inv.leaderCommitted(1, 2, 2, logOf([1, 2]));
  inv.leaderCommitted(2, 3, 3, logOf([1, 2, 3]));
  // Node 3 is wiped and starts at term 0; node 1, deposed since, reaches it first.
  inv.termUnknown(3, 0);
  inv.termFloor(3, 0);
  assert.throws(() => inv.termFloor(3, 2), /TermFloor: node 3 started with its past term unknown at term 0 and took term 2, below term 3/);
});

test('a member that learns its floor first, or starts at a term high enough, passes; rules off, nothing is checked', () => {
  const inv = new Invariants();
  inv.bootstrapped(boot);
  inv.leaderCommitted(2, 3, 2, logOf([1, 3]));
  inv.termUnknown(3, 0);
  inv.termFloor(3, 3);
  // Checked once: the term it took first decides.
  inv.termFloor(3, 1);
  inv.termUnknown(1, 4);
  inv.termFloor(1, 2);
  // A member known to have no unknown past is not concerned.
  inv.termFloor(4, 1);
  const off = new Invariants({ rules: false });
  off.bootstrapped(boot);
  off.leaderCommitted(2, 3, 2, logOf([1, 3]));
  off.termUnknown(3, 0);
  off.termFloor(3, 2);
});
