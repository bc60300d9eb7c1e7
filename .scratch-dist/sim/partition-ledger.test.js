/**
 * Goal: each partition-level check of the host simulation fires on the history it names, and stays
 * quiet on a correct one. Method: feed the ledger small histories by hand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PartitionLedger } from './partition-ledger.js';
function violation(name) {
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
//# sourceMappingURL=partition-ledger.test.js.map