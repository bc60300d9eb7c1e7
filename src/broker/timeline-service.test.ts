// Goal: a new timeline's log gets partitions of its own, so timeline.create carries a placement for
// them, balanced against every log that exists, and the state machine gives them new group ids.
// Method: TimelineService and the TimelineSwitcher over a real MetadataStateMachine, with seals that
// answer offset 0 (the partition groups are not part of this test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProblem } from '../core/problem.js';
import { MetadataStateMachine } from '../metadata/state-machine.js';
import type { MetadataCommand } from '../metadata/commands.js';
import type { EventType } from '../metadata/types.js';
import type { MembersSource } from '../metadata/placement.js';
import pino from 'pino';
import { TimelineService } from './timeline-service.js';
import { TimelineSwitcher } from './timeline-switch.js';

function et(name: string): EventType {
  return {
    name, owning_application: 'app', category: 'business', enrichment_strategies: [], partition_strategy: 'random', compatibility_mode: 'forward',
    schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' }, options: { retention_time: 1000 }, created_at: 't0', updated_at: 't0',
  };
}

function setup(members: MembersSource) {
  const sm = new MetadataStateMachine();
  const proposed: MetadataCommand[] = [];
  const propose = async (cmd: MetadataCommand) => {
    proposed.push(cmd);
    return sm.apply(sm.appliedIndex + 1, cmd);
  };
  const clock = { nowMs: () => 0, monotonicMs: () => 0 };
  const switcher = new TimelineSwitcher({ state: () => sm, propose, seal: async () => 0, clock, logger: pino({ level: 'silent' }), sealTimeoutMs: 1000, staleAfterMs: 1000 });
  const svc = new TimelineService({ state: () => sm, propose, switcher, members });
  return { sm, svc, proposed, propose };
}

test('timeline.create carries a placement for the new log, balanced against the logs that exist', async () => {
  const { sm, svc, proposed, propose } = setup({ members: () => [1, 2, 3], replicationFactor: 2, legacyReplica: 1 });
  await propose({ op: 'event_type.create', eventType: et('a'), partitionCount: 2, placement: { replicas: [[1, 2], [2, 3]], members: [1, 2, 3] } });
  const t = await svc.createTimeline('a', { storage_id: 'default' });
  const cmd = proposed[1]!;
  assert.deepEqual(proposed.map((c) => c.op), ['event_type.create', 'timeline.prepare', 'timeline.commit']);
  // Loads before: leaders 1 and 2 once, replicas 1:1, 2:2, 3:1. Node 3 leads (it leads none), with node 1
  // (fewest replicas); then every node leads one and holds two, so the lowest ids win.
  assert.deepEqual(cmd.op === 'timeline.prepare' && cmd.placement, { replicas: [[3, 1], [1, 2]], members: [1, 2, 3] });
  assert.deepEqual(t.placement, [{ group: 3, replicas: [3, 1] }, { group: 4, replicas: [1, 2] }]);
  assert.deepEqual(sm.eventType('a')!.storage.timelines![1]!.placement, t.placement);
});

test('a node that knows no members refuses the switch with 503', async () => {
  const { svc, proposed, propose } = setup({ members: () => [], legacyReplica: 1 });
  await propose({ op: 'event_type.create', eventType: et('a'), partitionCount: 1 });
  await assert.rejects(svc.createTimeline('a', { storage_id: 'default' }), (err: unknown) => isProblem(err) && err.status === 503);
  assert.equal(proposed.length, 1);
});

test('a switch beyond timelinesMax is answered 422 naming the bound, before anything is proposed; the state machine refuses one that got past', async () => {
  const { sm, svc, proposed, propose } = setup({ members: () => [1, 2, 3], replicationFactor: 1, legacyReplica: 1 });
  await propose({ op: 'limits.set', limits: { ...sm.limits, timelinesMax: 2 } });
  await propose({ op: 'event_type.create', eventType: et('a'), partitionCount: 1, placement: { replicas: [[1]], members: [1, 2, 3] } });
  await svc.createTimeline('a', { storage_id: 'default' });
  const before = proposed.length;
  await assert.rejects(svc.createTimeline('a', { storage_id: 'default' }), (err: unknown) => isProblem(err) && err.status === 422 && /has 2 timelines.*timelinesMax 2/.test(err.detail ?? ''));
  assert.equal(proposed.length, before, 'refused at the API: nothing proposed');
  // A node whose API did not check (an older or buggy member): the switch is refused where it is applied.
  const r = await propose({ op: 'timeline.prepare', eventType: 'a', id: 'T-extra', storage_id: 'default', at: 't', placement: { replicas: [[2]], members: [1, 2, 3] } });
  assert.ok(!r.ok && r.reason === 'limit' && /timelinesMax 2/.test(r.detail), JSON.stringify(r));
  assert.equal(sm.eventType('a')!.storage.timelines!.length, 2);
});
