// Goal: partition.move walks a replica from one node to another one configuration change at a time
// (add learner, promote, remove old), refuses a second move of the same partition and steps out of
// order, and partition.leader records a voter as the preferred leader; legacy partitions can be moved.
// Method: examples through MetadataStateMachine.apply, plus a fast-check property that any sequence
// of steps changes the placement's members by at most one node per accepted step and keeps replicas
// distinct.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MetadataStateMachine, type ApplyResult } from './state-machine.js';
import type { MetadataCommand, PartitionMoveStep } from './commands.js';
import { legacyGroupId, type PartitionPlacement } from './placement-types.js';
import { placementOf } from './placement-of.js';
import { storedEventType as et } from '../testing/metadata-fixtures.js';

function cluster(): { sm: MetadataStateMachine; apply: (cmd: MetadataCommand) => ApplyResult } {
  const sm = new MetadataStateMachine();
  const apply = (cmd: MetadataCommand) => sm.apply(sm.appliedIndex + 1, cmd);
  apply({ op: 'event_type.create', eventType: et('a'), partitionCount: 2, placement: { replicas: [[1, 2, 3], [2, 3, 1]], members: [1, 2, 3, 4] } });
  return { sm, apply };
}

const move = (group: number, step: PartitionMoveStep, from: number, to: number): MetadataCommand => ({ op: 'partition.move', group, step, from, to });
const reason = (r: ApplyResult) => (r.ok ? 'ok' : r.reason);

test('a move: add learner, promote, remove old; the new node takes the old one\'s slot', () => {
  const { sm, apply } = cluster();
  assert.deepEqual(apply(move(1, 'add_learner', 1, 4)), { ok: true, placement: { group: 1, replicas: [1, 2, 3], learners: [4], moving: { from: 1, to: 4 }, founders: [1, 2, 3] } });
  assert.deepEqual(apply(move(1, 'promote', 1, 4)), { ok: true, placement: { group: 1, replicas: [1, 2, 3, 4], moving: { from: 1, to: 4 }, founders: [1, 2, 3] } });
  assert.deepEqual(apply(move(1, 'remove', 1, 4)), { ok: true, placement: { group: 1, replicas: [4, 2, 3], founders: [1, 2, 3] } });
  // The founders stay: a node holding nothing for the group writes the founding configuration only if it founded it.
  assert.deepEqual(sm.eventType('a')!.storage.placement, [{ group: 1, replicas: [4, 2, 3], founders: [1, 2, 3] }, { group: 2, replicas: [2, 3, 1] }]);
});

test('one move per partition at a time; another partition may move meanwhile', () => {
  const { apply } = cluster();
  assert.equal(reason(apply(move(1, 'add_learner', 1, 4))), 'ok');
  assert.equal(reason(apply(move(1, 'add_learner', 2, 4))), 'conflict');
  assert.equal(reason(apply(move(1, 'add_learner', 3, 5))), 'conflict');
  assert.equal(reason(apply(move(1, 'promote', 2, 4))), 'conflict', 'a step of a different move');
  assert.equal(reason(apply(move(2, 'add_learner', 3, 4))), 'ok');
  assert.equal(reason(apply(move(1, 'cancel', 1, 4))), 'ok');
  assert.equal(reason(apply(move(1, 'add_learner', 2, 4))), 'ok', 'after a cancel, a new move may start');
});

test('steps out of order are refused and change nothing', () => {
  const { sm, apply } = cluster();
  const before = JSON.stringify(sm.snapshot());
  assert.equal(reason(apply(move(1, 'promote', 1, 4))), 'invalid', 'promote without a move');
  assert.equal(reason(apply(move(1, 'remove', 1, 4))), 'invalid', 'remove without a move');
  assert.equal(reason(apply(move(1, 'add_learner', 4, 1))), 'invalid', 'from must be a replica');
  assert.equal(reason(apply(move(1, 'add_learner', 1, 2))), 'invalid', 'to must not be a replica yet');
  assert.equal(reason(apply(move(1, 'add_learner', 1, 1))), 'invalid', 'from and to differ');
  assert.equal(reason(apply(move(99, 'add_learner', 1, 4))), 'not_found');
  assert.equal(reason(apply({ op: 'partition.move', group: 1, step: 'jump', from: 1, to: 4 } as unknown as MetadataCommand)), 'invalid');
  assert.equal(reason(apply(move(1, 'add_learner', 1, 0))), 'invalid', 'node ids are positive');
  assert.equal(JSON.stringify(sm.snapshot()).replace(/"nextGroup":\d+/, ''), before.replace(/"nextGroup":\d+/, ''));
  apply(move(1, 'add_learner', 1, 4));
  assert.equal(reason(apply(move(1, 'remove', 1, 4))), 'invalid', 'remove before promote');
  apply(move(1, 'promote', 1, 4));
  assert.equal(reason(apply(move(1, 'promote', 1, 4))), 'invalid', 'promote twice');
  assert.equal(reason(apply(move(1, 'cancel', 1, 4))), 'invalid', 'cancel after promote');
});

test('partition.leader puts a voter first and keeps the others in order; learners and strangers are refused', () => {
  const { apply } = cluster();
  assert.deepEqual(apply({ op: 'partition.leader', group: 2, leader: 1 }), { ok: true, placement: { group: 2, replicas: [1, 2, 3] } });
  assert.deepEqual(apply({ op: 'partition.leader', group: 2, leader: 1 }), { ok: true, placement: { group: 2, replicas: [1, 2, 3] } });
  apply(move(2, 'add_learner', 3, 4));
  assert.equal(reason(apply({ op: 'partition.leader', group: 2, leader: 4 })), 'invalid', 'a learner cannot lead');
  assert.equal(reason(apply({ op: 'partition.leader', group: 2, leader: 7 })), 'invalid');
  assert.equal(reason(apply({ op: 'partition.leader', group: 3, leader: 1 })), 'not_found');
});

test('placement changes reach timelines after the first, and survive a snapshot', () => {
  const { sm, apply } = cluster();
  apply({ op: 'timeline.create', eventType: 'a', id: 't2', storage_id: 'default', starts: [0, 0], at: 't', placement: { replicas: [[1], [2]], members: [1, 2] } });
  assert.equal(reason(apply(move(4, 'add_learner', 2, 3))), 'ok');
  const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
  const tl = restored.eventType('a')!.storage.timelines![1]!;
  assert.deepEqual(placementOf(restored.eventType('a')!, tl.topic, 1, 9), { group: 4, replicas: [2], learners: [3], moving: { from: 2, to: 3 }, founders: [2] });
  assert.equal(reason(restored.apply(restored.appliedIndex + 1, move(4, 'add_learner', 2, 1))), 'conflict', 'the move in flight survives the snapshot');
});

test('a legacy partition (no stored placement) is moved by its derived group; its first step stores the log\'s placement', () => {
  const sm = new MetadataStateMachine();
  const apply = (cmd: MetadataCommand) => sm.apply(sm.appliedIndex + 1, cmd);
  apply({ op: 'event_type.create', eventType: et('old'), partitionCount: 2 });
  const topic = sm.eventType('old')!.storage.topic;
  const g1 = legacyGroupId(topic, 1);
  assert.equal(reason(apply({ op: 'partition.leader', group: g1, leader: 1 })), 'invalid');
  assert.equal(reason(apply(move(g1, 'promote', 1, 2))), 'invalid');
  assert.equal(reason(apply(move(legacyGroupId(topic + 1, 0), 'add_learner', 1, 2))), 'not_found');
  assert.equal(reason(apply(move(legacyGroupId(topic, 5), 'add_learner', 1, 2))), 'not_found', 'no such partition');
  assert.equal(reason(apply(move(g1, 'add_learner', 1, 2))), 'ok');
  const stored: PartitionPlacement[] = [{ group: legacyGroupId(topic, 0), replicas: [1] }, { group: g1, replicas: [1], learners: [2], moving: { from: 1, to: 2 }, founders: [1] }];
  assert.deepEqual(sm.eventType('old')!.storage.placement, stored);
  assert.equal(reason(apply(move(g1, 'promote', 1, 2))), 'ok');
  assert.equal(reason(apply(move(g1, 'remove', 1, 2))), 'ok');
  assert.deepEqual(placementOf(sm.eventType('old')!, topic, 1, 1), { group: g1, replicas: [2], founders: [1] });
});

test('property: every accepted step changes the role of exactly one node (one configuration change); replicas stay distinct', () => {
  // A few (from, to) pairs, so that steps often continue the move in flight (and sometimes clash with it).
  const step = fc
    .record({
      group: fc.constantFrom(1, 2),
      step: fc.constantFrom<PartitionMoveStep>('add_learner', 'promote', 'remove', 'cancel'),
      pair: fc.constantFrom([1, 4], [2, 4], [3, 5], [4, 1], [2, 2], [5, 3], [2, 5]),
    })
    .map(({ group, step, pair }) => ({ group, step, from: pair[0]!, to: pair[1]! }));
  const leader = fc.record({ group: fc.constantFrom(1, 2), leader: fc.integer({ min: 1, max: 5 }) });
  // Accepted steps of each kind over all runs: the property must not hold only because nothing applied.
  const accepted = new Map<string, number>();
  fc.assert(
    fc.property(fc.array(fc.oneof(step, leader), { minLength: 20, maxLength: 120 }), (steps) => {
      const { sm, apply } = cluster();
      const placement = (g: number) => sm.eventType('a')!.storage.placement!.find((x) => x.group === g)!;
      const role = (p: PartitionPlacement, n: number) => (p.replicas.includes(n) ? 'voter' : (p.learners ?? []).includes(n) ? 'learner' : 'none');
      for (const s of steps) {
        const before = placement(s.group);
        const r = apply('leader' in s ? { op: 'partition.leader', ...s } : { op: 'partition.move', ...s });
        const after = placement(s.group);
        assert.equal(new Set(after.replicas).size, after.replicas.length);
        assert.ok(after.replicas.length >= 3, 'a move never shrinks the group below its factor');
        const changed = [1, 2, 3, 4, 5].filter((n) => role(before, n) !== role(after, n)).length;
        const moved = r.ok && !('leader' in s);
        if (r.ok) accepted.set('leader' in s ? 'leader' : s.step, (accepted.get('leader' in s ? 'leader' : s.step) ?? 0) + 1);
        assert.equal(changed, moved ? 1 : 0, `${JSON.stringify(s)}: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
      }
    }),
    { numRuns: 300 },
  );
  for (const kind of ['add_learner', 'promote', 'remove', 'cancel', 'leader']) assert.ok((accepted.get(kind) ?? 0) > 0, `no ${kind} step was ever accepted`);
});
