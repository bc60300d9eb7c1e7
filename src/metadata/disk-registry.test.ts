// Goal: the registration of a data directory in the metadata, and the founding rule built on it
// (disk-registry.ts): a directory that did not found the cluster founds only the partition groups
// created after its registration, whatever order commands arrive in, across snapshots and restarts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memberIdOf } from '../core/member-id.js';
import { MetadataStateMachine } from './state-machine.js';
import { answersForFormerMember, diskToken, mayFoundGroup, registeredDisksMax } from './disk-registry.js';
import { legacyGroupIdBase } from './placement-types.js';
import type { EventType } from './types.js';

const et = (name: string): EventType => ({
  name, owning_application: 'app', category: 'business', enrichment_strategies: ['metadata_enrichment'],
  partition_strategy: 'random', compatibility_mode: 'forward',
  schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' },
  options: { retention_time: 1000 }, created_at: 't0', updated_at: 't0',
});
const placed = (name: string, partitions: number) => ({ op: 'event_type.create' as const, eventType: et(name), partitionCount: partitions, placement: { replicas: Array.from({ length: partitions }, () => [1, 2, 3]), members: [1, 2, 3] } });
const groupsOf = (sm: MetadataStateMachine, name: string) => sm.eventType(name)!.storage.placement!.map((p) => p.group);

test('a registration records the group counter at apply: groups created before are below it, groups created after at or above it', () => {
  const sm = new MetadataStateMachine();
  let i = 0;
  assert.deepEqual(sm.apply(++i, placed('before', 3)), { ok: true });
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node: 2, disk: 'disk-b' }), { ok: true });
  assert.deepEqual(sm.apply(++i, placed('after', 2)), { ok: true });
  const reg = sm.disk(2)!;
  assert.ok(groupsOf(sm, 'before').every((g) => g < reg.firstGroup), 'groups created before the registration are below its first group');
  assert.ok(groupsOf(sm, 'after').every((g) => g >= reg.firstGroup), 'groups created after are at or above it');
  const me = { token: 'disk-b', foundingDisk: false };
  assert.deepEqual(groupsOf(sm, 'before').map((g) => mayFoundGroup(g, me, reg)), [false, false, false]);
  assert.deepEqual(groupsOf(sm, 'after').map((g) => mayFoundGroup(g, me, reg)), [true, true]);
  assert.equal(sm.disk(1), undefined, 'other nodes are not registered');
});

test('the same registration again keeps its first group; a new directory (or a new loss) registers again from the counter of then', () => {
  const sm = new MetadataStateMachine();
  let i = 0;
  sm.apply(++i, { op: 'node.disk', node: 2, disk: 'disk-b' });
  const first = sm.disk(2)!.firstGroup;
  sm.apply(++i, placed('x', 4));
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node: 2, disk: 'disk-b' }), { ok: true });
  assert.equal(sm.disk(2)!.firstGroup, first, 'a retried registration does not move the first group (groups founded in between stay founded)');
  sm.apply(++i, { op: 'node.disk', node: 2, disk: diskToken('disk-b', 1) });
  assert.ok(sm.disk(2)!.firstGroup > Math.max(...groupsOf(sm, 'x')), 'after a loss, the groups created before it are not founded either');
  assert.equal(mayFoundGroup(groupsOf(sm, 'x')[0]!, { token: diskToken('disk-b', 1), foundingDisk: false }, sm.disk(2)), false);
  assert.equal(mayFoundGroup(groupsOf(sm, 'x')[0]!, { token: 'disk-b', foundingDisk: false }, sm.disk(2)), false, 'a registration of another token does not count');
});

test('registrations survive a snapshot, and a malformed or excessive one is refused alike everywhere', () => {
  const sm = new MetadataStateMachine();
  let i = 0;
  sm.apply(++i, placed('x', 2));
  sm.apply(++i, { op: 'node.disk', node: 3, disk: 'disk-c' });
  const restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), i);
  assert.deepEqual(restored.disk(3), sm.disk(3));
  assert.match(MetadataStateMachine.snapshotProblem({ ...sm.snapshot(), disks: [{ node: 3, disk: 'a', firstGroup: 1 }, { node: 3, disk: 'b', firstGroup: 2 }] }) ?? '', /disks/);
  for (const bad of [{ node: 0, disk: 'x' }, { node: 1, disk: '' }, { node: 1, disk: 'x'.repeat(200) }, { node: 1, disk: 'a b' }, { node: 1 }]) {
    const r = sm.apply(++i, { op: 'node.disk', ...bad } as never);
    assert.equal(r.ok, false, JSON.stringify(bad));
    assert.equal(!r.ok && r.malformed, true);
  }
  const full = new MetadataStateMachine();
  let j = 0;
  for (let n = 1; n <= registeredDisksMax; n++) assert.equal(full.apply(++j, { op: 'node.disk', node: n, disk: `d${n}` }).ok, true);
  const over = full.apply(++j, { op: 'node.disk', node: registeredDisksMax + 1, disk: 'one-more' });
  assert.equal(!over.ok && over.reason, 'limit');
  assert.equal(full.apply(++j, { op: 'node.disk', node: 1, disk: 'd1-new' }).ok, true, 'a registered node registers a new directory within the bound');
});

test('the founding rule: a founding directory founds any group; others only registered, at or above their first group, never a legacy group', () => {
  const reg = { node: 2, disk: 't', firstGroup: 50 };
  assert.equal(mayFoundGroup(1, { token: 'x', foundingDisk: true }, undefined), true);
  assert.equal(mayFoundGroup(60, { token: 't', foundingDisk: false }, undefined), false, 'not registered yet');
  assert.equal(mayFoundGroup(49, { token: 't', foundingDisk: false }, reg), false);
  assert.equal(mayFoundGroup(50, { token: 't', foundingDisk: false }, reg), true);
  assert.equal(mayFoundGroup(legacyGroupIdBase + 5, { token: 't', foundingDisk: false }, reg), false, 'legacy groups may have lived on the former directory');
  assert.equal(diskToken('d', 0), 'd');
  assert.notEqual(diskToken('d', 1), diskToken('d', 2));
});

test('a registration names the directory\'s new metadata member; a member id an earlier directory of the node used is refused', () => {
  const sm = new MetadataStateMachine();
  let i = 0;
  const m1 = memberIdOf(3, 11);
  const m2 = memberIdOf(3, 12);
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node: 3, disk: 'disk-x', member: m1 }), { ok: true });
  assert.equal(sm.disk(3)!.member, m1);
  // The same directory after a loss keeps its member (its raft state was not all lost).
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node: 3, disk: diskToken('disk-x', 1), member: m1 }), { ok: true });
  // Another directory of node 3 drawing the same incarnation: refused, it would be taken for the first.
  const clash = sm.apply(++i, { op: 'node.disk', node: 3, disk: 'disk-y', member: m1 });
  assert.equal(clash.ok, false);
  assert.match(!clash.ok ? clash.detail : '', /used by an earlier data directory/);
  assert.deepEqual(sm.apply(++i, { op: 'node.disk', node: 3, disk: 'disk-y', member: m2 }), { ok: true });
  assert.deepEqual(sm.disk(3)!.formerMembers, [m1]);
  // A later directory may not take the first one's id either, also across a snapshot.
  const copy = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), i);
  assert.equal(MetadataStateMachine.snapshotProblem(sm.snapshot()), undefined);
  assert.equal(copy.apply(i + 1, { op: 'node.disk', node: 3, disk: 'disk-z', member: m1 }).ok, false);
  assert.deepEqual(copy.disk(3), sm.disk(3));
  // A member of another node is malformed.
  const other = sm.apply(++i, { op: 'node.disk', node: 3, disk: 'disk-z', member: memberIdOf(4, 1) });
  assert.equal(other.ok, false);
});

test('a new member answers term probes for its node\'s original member and the former members its registration lists, nothing else', () => {
  const a = memberIdOf(2, 5);
  const b = memberIdOf(2, 9);
  const reg = { node: 2, disk: 'd2', firstGroup: 1, member: b, formerMembers: [a] };
  assert.equal(answersForFormerMember(reg, 2, b, 2), true, 'the node id: its original member');
  assert.equal(answersForFormerMember(reg, 2, b, a), true, 'a former member recorded');
  assert.equal(answersForFormerMember(reg, 2, b, memberIdOf(2, 7)), false, 'a member id of the node never registered');
  assert.equal(answersForFormerMember(reg, 2, b, 3), false, 'another node\'s');
  assert.equal(answersForFormerMember(reg, 2, b, b), false, 'itself');
  assert.equal(answersForFormerMember(reg, 2, a, 2), false, 'a member the registration does not name (not applied here yet, or replaced since)');
  assert.equal(answersForFormerMember(undefined, 2, b, 2), false, 'no registration applied here');
  assert.equal(answersForFormerMember({ node: 2, disk: 'd2', firstGroup: 1 }, 2, 2, a), false, 'an original member answers for nobody');
});
