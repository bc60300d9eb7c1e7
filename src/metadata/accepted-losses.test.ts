// Goal: an accepted data loss, once recorded (`loss.accepted`), stays in the metadata for good: every
// node that applies the log holds it, a snapshot carries it, a retried proposal is kept once, and the
// list is bounded (the newest kept, the older counted). A malformed record is refused alike everywhere.
// Method: the state machine fed commands; snapshots through JSON, as the codec stores them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MetadataStateMachine } from './state-machine.js';
import { acceptedLossesKept, withLoss, noAcceptedLosses, type LossRecord } from './accepted-losses.js';

const loss = (id: string, over: Partial<LossRecord> = {}): LossRecord => ({
  id,
  scope: 'partition',
  node: 2,
  event_type: 'orders',
  partition: '0',
  group: 7,
  at: '2026-11-27T16:00:00.000Z',
  kept: { newest_offset: '001-0001-000000000004', last_index: 12 },
  damage: { index: 15, term: 3, reason: 'the raft marker is gone' },
  term_before: 3,
  term: 9,
  ...over,
});

test('a recorded loss is held, carried by a snapshot, and kept once when proposed again', () => {
  const sm = new MetadataStateMachine();
  assert.deepEqual(sm.apply(1, { op: 'loss.accepted', loss: loss('a') }), { ok: true });
  assert.deepEqual(sm.apply(2, { op: 'loss.accepted', loss: loss('a') }), { ok: true });
  const meta = loss('m', { scope: 'metadata', group: 0, node: 1, kept: { last_index: 40 } });
  delete meta.event_type;
  delete meta.partition;
  assert.deepEqual(sm.apply(3, { op: 'loss.accepted', loss: meta }), { ok: true });
  assert.deepEqual(sm.acceptedLosses, { records: [loss('a'), meta], older: 0 });
  const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
  assert.deepEqual(restored.acceptedLosses, sm.acceptedLosses, 'a snapshot carries them');
  // A snapshot of a version before the records existed restores with none.
  const { acceptedLosses: _none, ...older } = sm.snapshot();
  assert.deepEqual(MetadataStateMachine.restore(JSON.parse(JSON.stringify(older)), sm.appliedIndex).acceptedLosses, { records: [], older: 0 });
});

test('the list keeps the newest records and counts the older ones', () => {
  const sm = new MetadataStateMachine();
  const n = acceptedLossesKept + 5;
  for (let i = 1; i <= n; i++) assert.ok(sm.apply(i, { op: 'loss.accepted', loss: loss(`l${i}`, { group: i }) }).ok);
  assert.equal(sm.acceptedLosses.records.length, acceptedLossesKept);
  assert.equal(sm.acceptedLosses.older, 5);
  assert.equal(sm.acceptedLosses.records[0]!.id, 'l6', 'the oldest were let go');
  assert.equal(sm.acceptedLosses.records.at(-1)!.id, `l${n}`);
  assert.deepEqual(withLoss(withLoss(noAcceptedLosses, loss('x'), 1), loss('y'), 1), { records: [loss('y')], older: 1 });
});

test('a malformed record is refused alike, and a member\'s extra fields are not kept', () => {
  const sm = new MetadataStateMachine();
  const bad: [string, unknown][] = [
    ['no id', { ...loss('a'), id: '' }],
    ['a long id', { ...loss('a'), id: 'x'.repeat(129) }],
    ['no scope', { ...loss('a'), scope: 'disk' }],
    ['a partition without its name', { ...loss('a'), event_type: undefined }],
    ['the metadata group is group 0', { ...loss('a'), scope: 'metadata', group: 5 }],
    ['a long reason', { ...loss('a'), damage: { index: 1, term: 1, reason: 'x'.repeat(2000) } }],
    ['a negative term', { ...loss('a'), term: -1 }],
    ['no node', { ...loss('a'), node: 0 }],
  ];
  let i = 0;
  for (const [what, l] of bad) {
    const r = sm.apply(++i, { op: 'loss.accepted', loss: l as LossRecord });
    assert.ok(!r.ok && r.malformed === true, what);
  }
  assert.deepEqual(sm.acceptedLosses.records, []);
  assert.ok(sm.apply(++i, { op: 'loss.accepted', loss: { ...loss('b'), extra: 'x'.repeat(100) } as LossRecord }).ok);
  assert.deepEqual(sm.acceptedLosses.records, [loss('b')]);
  assert.match(MetadataStateMachine.snapshotProblem({ ...sm.snapshot(), acceptedLosses: { records: [{ id: 'x' }], older: 0 } }) ?? '', /acceptedLosses/);
});
