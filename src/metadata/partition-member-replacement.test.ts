// Goal: a partition group that lists the member of a node's wiped directory is moved, through the
// state machine's partition.move steps, to the member the node's new directory registered, and
// nothing else is moved: placements that already list the registered member, nodes that registered
// no member (their member is the node id), and a move in flight (left to finish; cancelled when the
// member it adds was itself wiped). Placements hold member ids, and a node holds one member of a group
// except during such a replacement. Method: a MetadataStateMachine with a three-replica partition;
// the plan's commands applied to it until nothing is left to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memberIdOf } from '../core/member-id.js';
import { MetadataStateMachine, type ApplyResult } from './state-machine.js';
import type { MetadataCommand } from './commands.js';
import { isFormerMember, partitionReplacements } from './partition-member-replacement.js';
import { placedPartitions } from './placement-of.js';
import { memberOnNode } from './placement-types.js';
import { storedEventType as et } from '../testing/metadata-fixtures.js';

const m3 = memberIdOf(3, 17);

function cluster(): { sm: MetadataStateMachine; apply: (cmd: MetadataCommand) => ApplyResult; plan: () => MetadataCommand[] } {
  const sm = new MetadataStateMachine();
  const apply = (cmd: MetadataCommand) => sm.apply(sm.appliedIndex + 1, cmd);
  assert.ok(apply({ op: 'event_type.create', eventType: et('a'), partitionCount: 2, placement: { replicas: [[1, 2, 3], [2, 1, 4]], members: [1, 2, 3, 4] } }).ok);
  const plan = () => partitionReplacements(placedPartitions(sm.eventTypes(), 1), sm.disks());
  return { sm, apply, plan };
}

test('nothing to replace without registrations, nor for a node that registered no new member', () => {
  const { apply, plan } = cluster();
  assert.deepEqual(plan(), []);
  assert.ok(apply({ op: 'node.disk', node: 3, disk: 'disk-3' }).ok);
  assert.deepEqual(plan(), []);
});

test('a wiped node\'s member is replaced by a move on the same node: learner, promote, remove; then nothing is left to do', () => {
  const { sm, apply, plan } = cluster();
  assert.ok(apply({ op: 'node.disk', node: 3, disk: 'disk-3b', member: m3 }).ok);
  assert.deepEqual(plan(), [{ op: 'partition.move', group: 1, step: 'add_learner', from: 3, to: m3 }], 'only the group with a member on node 3');
  assert.deepEqual(apply(plan()[0]!), { ok: true, placement: { group: 1, replicas: [1, 2, 3], learners: [m3], moving: { from: 3, to: m3 }, founders: [1, 2, 3] } });
  const p = () => sm.eventType('a')!.storage.placement![0]!;
  assert.equal(memberOnNode(p(), 3), m3, 'while both are listed, the node runs the new member');
  assert.deepEqual(plan(), [], 'the move in flight is the partition leader\'s to carry out');
  assert.ok(apply({ op: 'partition.move', group: 1, step: 'promote', from: 3, to: m3 }).ok);
  assert.ok(apply({ op: 'partition.move', group: 1, step: 'remove', from: 3, to: m3 }).ok);
  assert.deepEqual(p(), { group: 1, replicas: [1, 2, m3], founders: [1, 2, 3] }, 'the new member takes the former one\'s slot');
  assert.deepEqual(plan(), []);
  assert.equal(memberOnNode(p(), 3), m3);
});

test('a move in flight is left to finish; one that adds a member wiped since is cancelled, then the replacement follows', () => {
  const { sm, apply, plan } = cluster();
  assert.ok(apply({ op: 'partition.move', group: 2, step: 'add_learner', from: 4, to: 3 }).ok);
  assert.ok(apply({ op: 'partition.move', group: 1, step: 'add_learner', from: 1, to: 4 }).ok);
  assert.ok(apply({ op: 'node.disk', node: 3, disk: 'disk-3b', member: m3 }).ok);
  // Group 1 moves 1 -> 4 and lists the former member 3 as a voter: the move finishes first.
  // Group 2 moves 4 -> 3, whose learner is the former member: cancelled.
  assert.deepEqual(plan(), [{ op: 'partition.move', group: 2, step: 'cancel', from: 4, to: 3 }]);
  for (const c of plan()) assert.ok(apply(c).ok);
  assert.ok(apply({ op: 'partition.move', group: 1, step: 'promote', from: 1, to: 4 }).ok);
  assert.ok(apply({ op: 'partition.move', group: 1, step: 'remove', from: 1, to: 4 }).ok);
  assert.deepEqual(plan(), [{ op: 'partition.move', group: 1, step: 'add_learner', from: 3, to: m3 }]);
  assert.deepEqual(sm.eventType('a')!.storage.placement![1], { group: 2, replicas: [2, 1, 4], founders: [1, 2, 4] });
});

test('placements hold member ids on distinct nodes: a second member of a node is refused, except a replacement\'s', () => {
  const { apply } = cluster();
  const created = apply({ op: 'event_type.create', eventType: et('b'), partitionCount: 1, placement: { replicas: [[1, m3, 2]], members: [1, 2, m3] } });
  assert.ok(created.ok, 'a placement over a later incarnation of node 3');
  const twice = apply({ op: 'event_type.create', eventType: et('c'), partitionCount: 1, placement: { replicas: [[1, 3, m3]], members: [1, 3, m3] } });
  assert.ok(!twice.ok && twice.reason === 'invalid' && /names a node twice/.test(twice.detail), JSON.stringify(twice));
  const toNodeHolding = apply({ op: 'partition.move', group: 1, step: 'add_learner', from: 1, to: memberIdOf(2, 5) });
  assert.ok(!toNodeHolding.ok && toNodeHolding.reason === 'invalid', 'a move to a node that holds a member of the group');
  assert.ok(apply({ op: 'partition.move', group: 1, step: 'add_learner', from: 2, to: memberIdOf(2, 5) }).ok, 'a replacement on the node itself');
});

test('a former member is one of a node whose registration names another member of it', () => {
  const { sm, apply } = cluster();
  assert.equal(isFormerMember(3, sm.disk(3)), false, 'no registration');
  assert.ok(apply({ op: 'node.disk', node: 3, disk: 'disk-3' }).ok);
  assert.equal(isFormerMember(3, sm.disk(3)), false, 'a registration without a member: the node id runs');
  assert.ok(apply({ op: 'node.disk', node: 3, disk: 'disk-3b', member: m3 }).ok);
  assert.equal(isFormerMember(3, sm.disk(3)), true);
  assert.equal(isFormerMember(m3, sm.disk(3)), false, 'the member it runs now');
  assert.equal(isFormerMember(2, sm.disk(3)), false, 'another node\'s registration says nothing of node 2');
});
