/**
 * Goal: each subscription check of the host simulation fires on the history it names, and stays quiet
 * on a correct one (the mutants of catalog.ts show them catching broken production code). Method: feed
 * the checks small histories by hand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PartitionLedger } from './partition-ledger.js';
import { SubscriptionLedger } from './subscription-ledger.js';

function violation(name: string): RegExp {
  return new RegExp(`\\b(${name}):`);
}

/** Partition 0 holding `n` acknowledged single-event batches at offsets 0..n-1. */
function ledgerWith(n: number): PartitionLedger {
  const l = new PartitionLedger(1);
  for (let i = 0; i < n; i++) {
    const b = l.newBatch(`b${i}`, 0, 1);
    l.stored('n1', 0, i - 1, i, `b${i}.0`);
    l.acked(b, i, i);
  }
  return l;
}

test('a correct history passes: streams start after committed cursors, cursors advance, acknowledged commits hold', () => {
  const s = new SubscriptionLedger(1, ledgerWith(10), false);
  s.committedValue(0, -1);
  s.observed('n1', 0, 5, -1, 9);
  s.starts('s0', 0, -1, 9);
  for (let o = 0; o <= 4; o++) s.delivered(0, o);
  s.committedValue(0, 4);
  s.observed('n1', 0, 7, 4, 9);
  s.acknowledged(0, 7, 4, 's0 commit', [{ node: 'n1', applied: 7, cursor: 4 }, { node: 'n2', applied: 6, cursor: -1 }]);
  s.observed('n2', 0, 6, -1, 9); // a node behind holds the older cursor at its older index
  s.observed('n2', 0, 7, 4, 9);
  s.starts('s1', 0, 4, 9); // the next stream resumes after the committed cursor
  s.starts('s2', 0, -1, 9); // or after a cursor committed earlier (its node's copy lagged): sent again, allowed
  assert.equal(s.coveredTo(0), 4);
});

test('a committed cursor that moves backwards along the metadata log is caught', () => {
  const s = new SubscriptionLedger(1, ledgerWith(10), false);
  for (let o = 0; o <= 6; o++) s.delivered(0, o);
  s.observed('n1', 0, 5, 6, 9);
  assert.throws(() => s.observed('n1', 0, 8, 3, 9), violation('SubscriptionCursorBackwards'));
  assert.throws(() => s.observed('n2', 0, 2, 7, 9), violation('SubscriptionCursorBackwards'), 'a later cursor at an earlier index');
  assert.throws(() => s.observed('n2', 0, 5, 5, 9), violation('SubscriptionCursorBackwards'), 'two cursors at one index');
});

test('an acknowledged commit that a node past its index does not hold is lost', () => {
  const s = new SubscriptionLedger(1, ledgerWith(10), false);
  for (let o = 0; o <= 6; o++) s.delivered(0, o);
  assert.throws(() => s.acknowledged(0, 7, 6, 's0 commit', [{ node: 'n1', applied: 7, cursor: 2 }]), violation('SubscriptionCommitLost'));
  const t = new SubscriptionLedger(1, ledgerWith(10), false);
  for (let o = 0; o <= 6; o++) t.delivered(0, o);
  t.acknowledged(0, 7, 6, 's0 commit', [{ node: 'n1', applied: 6, cursor: 2 }]);
  assert.throws(() => t.observed('n1', 0, 9, 5, 9), violation('SubscriptionCommitLost'), 'a node that applies past the index later');
});

test('a stream that starts after no committed cursor is caught', () => {
  const s = new SubscriptionLedger(1, ledgerWith(10), false);
  s.committedValue(0, 3);
  for (let o = 0; o <= 6; o++) s.delivered(0, o);
  assert.throws(() => s.starts('s0', 0, 4, 9), violation('SubscriptionResumedWrong'), 'one past the cursor');
  assert.throws(() => s.starts('s0', 0, 2, 9), violation('SubscriptionResumedWrong'), 'before the cursor');
});

test('a committed cursor or a stream start past an event no stream delivered is a skip (retention off)', () => {
  const s = new SubscriptionLedger(1, ledgerWith(10), false);
  for (let o = 0; o <= 3; o++) s.delivered(0, o);
  s.delivered(0, 5);
  assert.equal(s.coveredTo(0), 3);
  assert.throws(() => s.observed('n1', 0, 4, 5, 9), violation('SubscriptionSkipped'));
  const t = new SubscriptionLedger(1, ledgerWith(10), false);
  t.committedValue(0, 5);
  assert.throws(() => t.starts('s0', 0, 5, 9), violation('SubscriptionSkipped'));
});

test('with retention, a gap is allowed only where retention could remove the events', () => {
  // Nothing retention must keep (no cutoff yet keeps anything... every batch appended before the cutoff): allowed.
  const l = ledgerWith(10);
  l.retention(0, Number.MAX_SAFE_INTEGER);
  const s = new SubscriptionLedger(1, l, true);
  s.committedValue(0, -1);
  s.starts('s0', 0, 6, 9); // started at the oldest offset 7: 0..6 were removed before anyone read them
  assert.equal(s.coveredTo(0), 6);
  // Every batch kept (no cutoff): a stream past the committed cursor skipped kept events.
  const k = new SubscriptionLedger(1, ledgerWith(10), true);
  k.committedValue(0, 2);
  assert.throws(() => k.starts('s0', 0, 4, 9), violation('SubscriptionResumedWrong'));
  const g = new SubscriptionLedger(1, ledgerWith(10), true);
  g.committedValue(0, 4);
  assert.throws(() => g.starts('s0', 0, 4, 9), violation('RetainedLost'), 'a committed cursor past kept events nobody was sent');
});
