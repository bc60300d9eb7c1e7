// Goal: partition.loss (an operator accepted the loss of a partition whose every replica is damaged)
// places and records in one step: the kept member becomes the only voter, the others learners in
// placement order, the move in flight is dropped, the loss is recorded; a retried proposal (same loss
// id) applies once; a placement changed since the proposer saw it is refused; the `rejoin` step makes
// those learners voters again, one by one, and only them. Malformed commands are refused alike.
// Method: the state machine fed commands, as every node applies them; snapshots through JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MetadataStateMachine, type ApplyResult } from './state-machine.js';
import type { MetadataCommand } from './commands.js';
import type { LossRecord } from './accepted-losses.js';
import { storedEventType as et } from '../testing/metadata-fixtures.js';
import { commandProblem } from './shapes.js';

function cluster(): { sm: MetadataStateMachine; apply: (cmd: MetadataCommand) => ApplyResult } {
  const sm = new MetadataStateMachine();
  const apply = (cmd: MetadataCommand) => sm.apply(sm.appliedIndex + 1, cmd);
  apply({ op: 'event_type.create', eventType: et('a'), partitionCount: 2, placement: { replicas: [[1, 2, 3], [2, 3, 1]], members: [1, 2, 3, 4] } });
  return { sm, apply };
}

const record = (id: string, group = 1, node = 2): LossRecord => ({
  id,
  scope: 'partition',
  node,
  event_type: 'a',
  partition: '0',
  group,
  at: '2026-11-27T19:00:00.000Z',
  kept: { newest_offset: '001-0001-000000000004', last_index: 12 },
  damage: { index: 15, term: 3, reason: 'every replica damaged' },
  term_before: 3,
  term: 0,
});

const lossCmd = (over: Partial<Extract<MetadataCommand, { op: 'partition.loss' }>> = {}): MetadataCommand => ({
  op: 'partition.loss',
  group: 1,
  keep: 2,
  seen: { replicas: [1, 2, 3], learners: [] },
  floor: 7,
  loss: record('L1'),
  ...over,
});
const reason = (r: ApplyResult) => (r.ok ? 'ok' : r.reason);

test('partition.loss: the kept member is the only voter, the others learners in placement order; the loss is recorded', () => {
  const { sm, apply } = cluster();
  assert.deepEqual(apply(lossCmd()), { ok: true, placement: { group: 1, replicas: [2], learners: [1, 3], founders: [1, 2, 3] } });
  assert.deepEqual(sm.eventType('a')!.storage.placement?.[1], { group: 2, replicas: [2, 3, 1] }, 'the other partition is untouched');
  assert.deepEqual(sm.acceptedLosses.records.map((r) => r.id), ['L1']);
  // Retried (its answer was lost): applies once, and says so.
  assert.deepEqual(apply(lossCmd()), { ok: true, repeated: true });
  assert.equal(sm.acceptedLosses.records.length, 1);
  const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
  assert.deepEqual(restored.eventType('a')!.storage.placement?.[0], { group: 1, replicas: [2], learners: [1, 3], founders: [1, 2, 3] });
  assert.deepEqual(restored.acceptedLosses, sm.acceptedLosses);
});

// A node that gets the record within a snapshot acts on it as on the command (group-loss-apply.ts
// lossOfRecord): the record keeps the command's floor and the nodes that rejoin, through the snapshot.
test('partition.loss: its record keeps the floor and the nodes that rejoin, carried by a snapshot', () => {
  const { sm, apply } = cluster();
  apply(lossCmd());
  const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
  const r = restored.acceptedLosses.records[0]!;
  assert.equal(r.floor, 7);
  assert.deepEqual(r.rejoin, [1, 3]);
  // A record of a sole replica's loss (loss.accepted) has neither.
  apply({ op: 'loss.accepted', loss: record('S1', 2, 3) });
  const s = sm.acceptedLosses.records.find((x) => x.id === 'S1')!;
  assert.equal(s.floor, undefined);
  assert.equal(s.rejoin, undefined);
});

test('partition.loss drops the move in flight, its learner among those that rejoin', () => {
  const { apply } = cluster();
  assert.equal(reason(apply({ op: 'partition.move', group: 1, step: 'add_learner', from: 1, to: 4 })), 'ok');
  const r = apply(lossCmd({ keep: 4, seen: { replicas: [1, 2, 3], learners: [4] }, loss: record('L2', 1, 4) }));
  assert.deepEqual(r, { ok: true, placement: { group: 1, replicas: [4], learners: [1, 2, 3], founders: [1, 2, 3] } });
});

test('partition.loss is refused when the placement changed since the proposer saw it, or names no member of it', () => {
  const { sm, apply } = cluster();
  const before = JSON.stringify(sm.snapshot());
  assert.equal(reason(apply(lossCmd({ seen: { replicas: [1, 2], learners: [] } }))), 'conflict');
  assert.equal(reason(apply(lossCmd({ seen: { replicas: [2, 1, 3], learners: [] } }))), 'conflict', 'order counts: the preferred leader');
  assert.equal(reason(apply(lossCmd({ keep: 4 }))), 'invalid');
  assert.equal(reason(apply(lossCmd({ group: 99, loss: record('L3', 99) }))), 'not_found');
  assert.equal(reason(apply(lossCmd({ loss: record('L4', 2) }))), 'invalid', 'the record is of another group');
  assert.equal(JSON.stringify(sm.snapshot()), before, 'nothing changed');
  assert.equal(sm.acceptedLosses.records.length, 0, 'no record without the placement');
});

test('rejoin: each learner of an accepted loss becomes a voter again, appended; not while a move is in flight', () => {
  const { apply } = cluster();
  apply(lossCmd());
  assert.equal(reason(apply({ op: 'partition.move', group: 1, step: 'rejoin', from: 2, to: 2 })), 'invalid', 'a voter does not rejoin');
  assert.equal(reason(apply({ op: 'partition.move', group: 1, step: 'rejoin', from: 1, to: 3 })), 'invalid', 'from and to name the same member');
  assert.deepEqual(apply({ op: 'partition.move', group: 1, step: 'rejoin', from: 1, to: 1 }), { ok: true, placement: { group: 1, replicas: [2, 1], learners: [3], founders: [1, 2, 3] } });
  assert.equal(reason(apply({ op: 'partition.move', group: 1, step: 'rejoin', from: 1, to: 1 })), 'invalid', 'a second rejoin of the same member');
  assert.deepEqual(apply({ op: 'partition.move', group: 1, step: 'rejoin', from: 3, to: 3 }), { ok: true, placement: { group: 1, replicas: [2, 1, 3], founders: [1, 2, 3] } });
  const { apply: apply2 } = cluster();
  apply2(lossCmd());
  assert.equal(reason(apply2({ op: 'partition.move', group: 1, step: 'add_learner', from: 2, to: 4 })), 'ok');
  assert.equal(reason(apply2({ op: 'partition.move', group: 1, step: 'rejoin', from: 1, to: 1 })), 'conflict');
});

test('a malformed partition.loss is refused by its shape', () => {
  const good = lossCmd();
  assert.equal(commandProblem(JSON.parse(JSON.stringify(good))), undefined);
  for (const bad of [{ ...good, keep: 0 }, { ...good, seen: { replicas: [1] } }, { ...good, floor: -1 }, { ...good, loss: { ...record('x'), id: '' } }, { ...good, group: 0 }]) {
    assert.match(commandProblem(JSON.parse(JSON.stringify(bad))) ?? '', /malformed partition.loss/, JSON.stringify(bad));
  }
});
