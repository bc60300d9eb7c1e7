/**
 * Goal: each partition-level check of the host simulation fires on the history it names, and stays
 * quiet on a correct one. Method: feed the ledger small histories by hand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PartitionLedger } from './partition-ledger.js';

function violation(name: string): RegExp {
  return new RegExp(`\\b(${name}):`);
}

test('a correct history passes: acknowledged batches at their offsets on every replica, in order', () => {
  const l = new PartitionLedger(1);
  const a = l.newBatch('b0', 0, 2);
  const b = l.newBatch('b1', 0, 1);
  l.stored('n1', 0, -1, 0, 'b0.0');
  l.acked(a, 0, 1);
  l.stored('n1', 0, 0, 1, 'b0.1');
  l.stored('n2', 0, -1, 0, 'b0.0');
  l.stored('n2', 0, 0, 1, 'b0.1');
  l.stored('n2', 0, 1, 2, 'b1.0');
  l.acked(b, 2, 2);
  const c = l.newBatch('b2', 0, 1);
  assert.equal(c.floor, 2);
  l.unknown(c);
  assert.deepEqual(l.counts(), { acked: 2, failed: 0, unknown: 1, pending: 0 });
});

test('an acknowledged batch found elsewhere than its offsets is lost', () => {
  const l = new PartitionLedger(1);
  const a = l.newBatch('b0', 0, 1);
  const b = l.newBatch('b1', 0, 1);
  l.acked(a, 0, 0);
  assert.throws(() => l.stored('n1', 0, -1, 0, 'b1.0'), violation('AckedBatchLost'));
  assert.throws(() => l.acked(b, 0, 0), violation('Reordered|AckedBatchLost'));
});

test('an event stored at two offsets is a duplicate; a retry acknowledged at other offsets too', () => {
  const l = new PartitionLedger(1);
  const a = l.newBatch('b0', 0, 1);
  l.stored('n1', 0, -1, 0, 'b0.0');
  assert.throws(() => l.stored('n1', 0, 0, 1, 'b0.0'), violation('Duplicate'));
  const m = new PartitionLedger(1);
  const x = m.newBatch('b0', 0, 1);
  m.acked(x, 0, 0);
  assert.throws(() => m.acked(x, 1, 1), violation('Duplicate'));
  void a;
});

test('offsets with a gap are not dense; replicas holding different events at an offset do not converge', () => {
  const l = new PartitionLedger(1);
  l.newBatch('b0', 0, 2);
  l.newBatch('b1', 0, 1);
  assert.throws(() => l.stored('n1', 0, -1, 1, 'b0.1'), violation('Dense'));
  l.stored('n1', 0, -1, 0, 'b0.0');
  assert.throws(() => l.stored('n2', 0, -1, 0, 'b1.0'), violation('Converge'));
});

test('a batch acknowledged at offsets below one acknowledged before it was sent is reordered', () => {
  const l = new PartitionLedger(1);
  const a = l.newBatch('b0', 0, 1);
  l.acked(a, 5, 5);
  const b = l.newBatch('b1', 0, 1);
  assert.throws(() => l.acked(b, 3, 3), violation('Reordered'));
});

test('a batch told failed for certain must never be stored', () => {
  const l = new PartitionLedger(1);
  const a = l.newBatch('b0', 0, 1);
  l.failed(a);
  assert.throws(() => l.stored('n1', 0, -1, 0, 'b0.0'), violation('FailedBatchAppeared'));
  const m = new PartitionLedger(1);
  const b = m.newBatch('b0', 0, 1);
  m.stored('n1', 0, -1, 0, 'b0.0');
  assert.throws(() => m.failed(b), violation('FailedBatchAppeared'));
});

test('retention may remove acknowledged batches appended before the largest cutoff, and no other', () => {
  let wall = 1000;
  const l = new PartitionLedger(1, () => wall);
  const a = l.newBatch('b0', 0, 2);
  l.stamped(0, 'b0', 1005);
  l.acked(a, 0, 1);
  wall = 2000;
  const b = l.newBatch('b1', 0, 1);
  l.stamped(0, 'b1', 2003);
  l.acked(b, 2, 2);
  // Nothing may go yet: no node used a cutoff.
  assert.throws(() => l.retained('n1', 0, 2, 2), violation('RetainedLost'));
  l.retention(0, 1500);
  l.retained('n1', 0, 2, 2);
  assert.throws(() => l.retained('n1', 0, 3, 2), violation('RetainedLost'));
  // A replica that has not applied that far yet reads from where it is.
  l.retained('n2', 0, 2, 1);
  // A smaller cutoff of another node changes nothing; a larger one lets b1 go too.
  l.retention(0, 1200);
  assert.throws(() => l.retained('n1', 0, 3, 2), violation('RetainedLost'));
  l.retention(0, 2004);
  l.retained('n1', 0, 3, 2);
});

test('without an append time seen, a batch is kept from when it was sent (the slowest clock then)', () => {
  let wall = 1000;
  const l = new PartitionLedger(1, () => wall);
  const a = l.newBatch('b0', 0, 1);
  l.acked(a, 0, 0);
  l.retention(0, 1000);
  assert.throws(() => l.retained('n1', 0, 1, 0), violation('RetainedLost'));
  wall = 3000;
  // An append time before the batch was sent is a clock or stamping bug.
  l.newBatch('b1', 0, 1);
  assert.throws(() => l.stamped(0, 'b1', 2999), violation('AppendTime'));
});

test('a reader that skips to a replica\'s oldest offset may skip only what retention could remove', () => {
  let wall = 1000;
  const l = new PartitionLedger(1, () => wall);
  const a = l.newBatch('b0', 0, 1);
  l.stamped(0, 'b0', 1000);
  l.acked(a, 0, 0);
  wall = 2000;
  const b = l.newBatch('b1', 0, 1);
  l.stamped(0, 'b1', 2000);
  l.acked(b, 1, 1);
  assert.throws(() => l.skipped('n1', 0, -1, 1, 1), violation('RetainedLost'));
  l.retention(0, 1500);
  assert.throws(() => l.skipped('n1', 0, -1, 2, 1), violation('RetainedLost'));
  assert.throws(() => l.skipped('n1', 0, 0, 1, 1), violation('Dense'));
  assert.throws(() => l.skipped('n1', 0, -1, 3, 1), violation('Dense'));
  // While the replica fetches the log before its snapshot (from offset 0), nothing is missing yet.
  l.skipped('n1', 0, -1, 2, 1, 0);
  l.skipped('n2', 0, -1, 1, 1);
  // No replica reported offset 0 before it went: the reader goes on at 1, and another replica's
  // copy of offset 0 is still compared with what is acknowledged there.
  l.stored('n2', 0, 0, 1, 'b1.0');
  assert.throws(() => l.stored('n3', 0, -1, 0, 'b1.0'), violation('AckedBatchLost|Duplicate'));
  l.stored('n3', 0, -1, 0, 'b0.0');
});

test('a replica started again with the snapshot it held reads from no later than before it stopped', () => {
  const l = new PartitionLedger(1);
  // Stopped while fetching offsets 3.. before the snapshot at index 40 (its start counts the fetch);
  // started again holding it and reading from its next offset (20): it dropped the log before it.
  l.stopped('n1', 0, 9, 40, 3);
  assert.throws(() => l.reopened('n1', 0, 9, 40, 20), violation('RetainedForgotten'));
  l.stopped('n1', 0, 9, 40, 3);
  assert.throws(() => l.reopened('n1', 0, 9, 47, 4), violation('RetainedForgotten'));
  // Fetching it again, or reading from earlier (a retention pass lost with the crash), or started
  // without the snapshot (the write that installed it was lost: it is sent again), or a replica of
  // another group (moved away and back): nothing dropped.
  l.stopped('n1', 0, 9, 40, 3);
  l.reopened('n1', 0, 9, 41, 3);
  l.stopped('n1', 0, 9, 40, 8);
  l.reopened('n1', 0, 9, 41, 5);
  l.stopped('n1', 0, 9, 40, 3);
  l.reopened('n1', 0, 9, 39, 20);
  l.stopped('n1', 0, 9, 40, 3);
  l.reopened('n1', 0, 11, 50, 20);
  // A record is used once; other replicas are not concerned.
  l.reopened('n1', 0, 9, 50, 20);
  l.stopped('n1', 0, 9, 40, 3);
  l.reopened('n2', 0, 9, 50, 20);
  assert.throws(() => l.reopened('n1', 0, 9, 50, 20), violation('RetainedForgotten'));
});

test('a replica started again with a snapshot stored while it ran on an older one may read from where that snapshot starts, no later', () => {
  // Host seed 1339: stopped while its state was the snapshot at index 47, fetching the log before it
  // from offset 88; the leader's snapshot at index 65, whose log (its retention) starts at offset 121,
  // was durable but not installed yet. Started again, it installs that one without the log before it
  // and reads from 121, as it would have without the stop.
  const l = new PartitionLedger(1);
  l.stopped('n2', 0, 100, 47, 88);
  l.reopened('n2', 0, 100, 65, 121, { index: 65, start: 121 });
  // Past where that snapshot starts: it dropped the log its snapshot names (a fetch not resumed).
  l.stopped('n2', 0, 100, 47, 88);
  assert.throws(() => l.reopened('n2', 0, 100, 65, 156, { index: 65, start: 121 }), violation('RetainedForgotten'));
  // The snapshot of the stop record itself moves nothing: its start was counted then.
  l.stopped('n2', 0, 100, 47, 88);
  assert.throws(() => l.reopened('n2', 0, 100, 47, 111, { index: 47, start: 111 }), violation('RetainedForgotten'));
  l.stopped('n2', 0, 100, 47, 88);
  assert.throws(() => l.reopened('n2', 0, 100, 60, 111, { index: 40, start: 111 }), violation('RetainedForgotten'));
  // A newer snapshot naming an earlier start than the stop (a compaction of its own log) allows no later start.
  l.stopped('n2', 0, 100, 47, 88);
  assert.throws(() => l.reopened('n2', 0, 100, 65, 90, { index: 65, start: 80 }), violation('RetainedForgotten'));
  l.stopped('n2', 0, 100, 47, 88);
  l.reopened('n2', 0, 100, 65, 88, { index: 65, start: 80 });
});
