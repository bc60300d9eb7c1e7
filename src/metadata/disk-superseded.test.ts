// Goal: a data directory learns from the registrations applied in its metadata that a later directory
// of its node registered (disk-registry.ts, supersededBy), and only then: its own registration, the
// registration of an earlier directory (it has not registered yet) and one of another node never
// stop it. Driven through the state machine, so the registrations are the ones node.disk really keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memberIdOf } from '../core/member-id.js';
import { MetadataStateMachine } from './state-machine.js';
import { diskToken, supersededBy, supersededByMessageTo } from './disk-registry.js';

const node = 3;
const founder = { node, diskId: 'disk-founder', member: node };
const wiped1 = { node, diskId: 'disk-w1', member: memberIdOf(node, 11) };
const wiped2 = { node, diskId: 'disk-w2', member: memberIdOf(node, 22) };

test('a founder directory (member = node id) is superseded once a wiped successor registers its new member, not before', () => {
  const sm = new MetadataStateMachine();
  let i = 0;
  assert.equal(supersededBy(sm.disk(node), founder), undefined, 'nothing registered');
  // The founder's own registration after a loss of raft writes (token with a loss count, no member).
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node, disk: diskToken(founder.diskId, 1) }), { ok: true });
  assert.equal(supersededBy(sm.disk(node), founder), undefined, 'its own registration');
  // Another node's directories change nothing here.
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node: 1, disk: 'disk-other', member: memberIdOf(1, 5) }), { ok: true });
  assert.equal(supersededBy(sm.disk(node), founder), undefined);
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node, disk: wiped1.diskId, member: wiped1.member }), { ok: true });
  assert.match(supersededBy(sm.disk(node), founder) ?? '', /later data directory of node 3 \(disk disk-w1, metadata member/);
  assert.equal(supersededBy(sm.disk(node), wiped1), undefined, 'the successor itself runs on');
  assert.equal(supersededBy(sm.disk(1), founder), undefined, 'a registration of another node is not ours');
});

test('a wiped directory that has not registered yet sees its predecessor registered and goes on; once it registers, the predecessor is superseded', () => {
  const sm = new MetadataStateMachine();
  let i = 0;
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node, disk: wiped1.diskId, member: wiped1.member }), { ok: true });
  assert.equal(supersededBy(sm.disk(node), wiped2), undefined, 'an earlier directory registered, not a later one');
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node, disk: wiped2.diskId, member: wiped2.member }), { ok: true });
  assert.ok(supersededBy(sm.disk(node), wiped1) !== undefined, 'wiped1 is a former member now');
  assert.ok(supersededBy(sm.disk(node), founder) !== undefined, 'and so is the founder directory');
  assert.equal(supersededBy(sm.disk(node), wiped2), undefined);
});

test('a directory that made a new member id after a loss is never its own former member', () => {
  const sm = new MetadataStateMachine();
  let i = 0;
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node, disk: wiped1.diskId, member: wiped1.member }), { ok: true });
  const again = { ...wiped1, member: memberIdOf(node, 12) };
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node, disk: diskToken(wiped1.diskId, 1), member: again.member }), { ok: true });
  assert.deepEqual(sm.disk(node)!.formerMembers, [wiped1.member]);
  assert.equal(supersededBy(sm.disk(node), again), undefined, 'same disk id: its own registration');
  // Before its second registration is applied here it still runs the first id: its own disk too.
  assert.equal(supersededBy(sm.disk(node), wiped1), undefined);
});

test('the rule holds after a snapshot of the state machine', () => {
  const sm = new MetadataStateMachine();
  assert.deepEqual(sm.apply(1, { op: 'node.disk', node, disk: wiped1.diskId, member: wiped1.member }), { ok: true });
  const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), 1);
  assert.ok(supersededBy(restored.disk(node), founder) !== undefined);
});

test('a message a peer addresses to a new member of this node tells a directory that runs the node id, and only it', () => {
  const to = memberIdOf(node, 11);
  assert.match(supersededByMessageTo(to, founder) ?? '', /a later data directory of node 3 runs it/);
  assert.equal(supersededByMessageTo(node, founder), undefined, 'its own id');
  assert.equal(supersededByMessageTo(memberIdOf(1, 11), founder), undefined, 'a member of another node');
  // A directory with a new member id cannot tell its predecessor's member (still addressed until
  // replaced) from a successor's.
  assert.equal(supersededByMessageTo(to, wiped2), undefined);
  assert.equal(supersededByMessageTo(memberIdOf(node, 33), wiped2), undefined);
});

test('a directory with a new member id whose own registration is applied here is told by a message to a member its registration does not list as former', () => {
  const sm = new MetadataStateMachine();
  let i = 0;
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node, disk: wiped1.diskId, member: wiped1.member }), { ok: true });
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node, disk: wiped2.diskId, member: wiped2.member }), { ok: true });
  const own = sm.disk(node);
  // wiped2 runs; its predecessor wiped1 is still addressed until replaced: not later.
  assert.equal(supersededByMessageTo(wiped1.member, wiped2, own), undefined);
  assert.equal(supersededByMessageTo(wiped2.member, wiped2, own), undefined, 'its own member');
  assert.equal(supersededByMessageTo(node, wiped2, own), undefined, 'the node id: the earliest');
  const wiped3 = memberIdOf(node, 33);
  assert.match(supersededByMessageTo(wiped3, wiped2, own) ?? '', /a later data directory of node 3 runs it/);
  // Without its own registration applied here (not registered yet, or another one's), it cannot tell.
  assert.equal(supersededByMessageTo(wiped3, wiped2, undefined), undefined);
  assert.equal(supersededByMessageTo(wiped3, wiped1, own), undefined, 'wiped1 is told by the registration instead');
});
