// Goal: the state machine stores the placement a create command carries only when it is valid, and it
// alone allocates group ids: in log order, from a counter kept in snapshots, never reused (also after
// deletes); commands without a placement (written before placement existed) keep the legacy layout.
// Method: examples through MetadataStateMachine.apply, and a fast-check property that group ids stay
// unique and increasing over random create/delete/timeline sequences, with snapshots restored midway.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MetadataStateMachine } from './state-machine.js';
import { admitPlacement } from './placement-admission.js';
import { placedPartitions } from './placement-of.js';
import { groupIdAllocatedMax } from './placement-types.js';
import type { MetadataCommand } from './commands.js';
import { storedEventType as et } from '../testing/metadata-fixtures.js';

const create = (name: string, replicas?: number[][], members = [1, 2, 3]): MetadataCommand =>
  replicas === undefined
    ? { op: 'event_type.create', eventType: et(name), partitionCount: 2 }
    : { op: 'event_type.create', eventType: et(name), partitionCount: replicas.length, placement: { replicas, members } };

test('a create with a placement stores it with group ids from 1, in log order', () => {
  const sm = new MetadataStateMachine();
  assert.deepEqual(sm.apply(1, create('a', [[1, 2], [2, 3]])), { ok: true });
  assert.deepEqual(sm.apply(2, create('b', [[3, 1]])), { ok: true });
  assert.deepEqual(sm.eventType('a')!.storage.placement, [{ group: 1, replicas: [1, 2] }, { group: 2, replicas: [2, 3] }]);
  assert.deepEqual(sm.eventType('b')!.storage.placement, [{ group: 3, replicas: [3, 1] }]);
  assert.equal(sm.snapshot().nextGroup, 4);
});

test('a create without a placement (written before placement existed) keeps the legacy layout and no group id', () => {
  const sm = new MetadataStateMachine();
  assert.deepEqual(sm.apply(1, create('old')), { ok: true });
  assert.equal(sm.eventType('old')!.storage.placement, undefined);
  assert.equal(sm.snapshot().nextGroup, 1);
  const [p0] = [...placedPartitions(sm.eventTypes(), 4)];
  assert.equal(p0!.legacy, true);
  assert.deepEqual(p0!.placement.replicas, [4]);
});

test('invalid placements are refused, create nothing and consume no group id', () => {
  const bad: unknown[] = [
    null,
    [],
    { replicas: [[1]] },
    { replicas: [[1], [2]], members: [] },
    { replicas: [[1], [2]], members: [1, 1, 2] },
    { replicas: [[1]], members: [1, 2] },
    { replicas: [[1], [2], [3]], members: [1, 2, 3] },
    { replicas: [[1], []], members: [1, 2] },
    { replicas: [[1], [2, 2]], members: [1, 2] },
    { replicas: [[1], [0]], members: [0, 1] },
    { replicas: [[1], [1.5]], members: [1, 1.5] },
    { replicas: [[1], ['2']], members: [1, '2'] },
    { replicas: [[1], [2 ** 31]], members: [1, 2 ** 31] },
    { replicas: [[1], [4]], members: [1, 2, 3] },
    { replicas: [[1], 2], members: [1, 2] },
  ];
  const sm = new MetadataStateMachine();
  let index = 0;
  for (const placement of bad) {
    const r = sm.apply(++index, { op: 'event_type.create', eventType: et('a'), partitionCount: 2, placement } as MetadataCommand);
    assert.equal(r.ok, false, JSON.stringify(placement));
    assert.equal(!r.ok && r.reason, 'invalid', JSON.stringify(placement));
    assert.equal(sm.eventType('a'), undefined);
  }
  assert.equal(sm.snapshot().nextGroup, 1);
  assert.deepEqual(sm.apply(++index, create('a', [[1], [2, 3]])), { ok: true });
  assert.deepEqual(sm.eventType('a')!.storage.placement!.map((p) => p.group), [1, 2]);
});

test('group ids run out before they reach the legacy range: no_slots, nothing stored', () => {
  const r = admitPlacement({ replicas: [[1], [1]], members: [1] }, 2, groupIdAllocatedMax);
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.reason, 'no_slots');
  const last = admitPlacement({ replicas: [[1]], members: [1] }, 1, groupIdAllocatedMax);
  assert.deepEqual(last, { ok: true, placement: [{ group: groupIdAllocatedMax, replicas: [1] }], nextGroup: groupIdAllocatedMax + 1 });
});

test('a new timeline gets its own groups; a re-created event type never gets old ids back', () => {
  const sm = new MetadataStateMachine();
  sm.apply(1, create('a', [[1, 2], [2, 1]]));
  const r = sm.apply(2, { op: 'timeline.create', eventType: 'a', id: 't2', storage_id: 'default', starts: [0, 0], at: 't1', placement: { replicas: [[2, 3], [3, 1]], members: [1, 2, 3] } });
  assert.equal(r.ok, true);
  assert.deepEqual(r.ok && r.timeline?.placement, [{ group: 3, replicas: [2, 3] }, { group: 4, replicas: [3, 1] }]);
  // The first timeline keeps its placement on the event type's storage.
  assert.deepEqual(sm.eventType('a')!.storage.placement!.map((p) => p.group), [1, 2]);
  const bad = sm.apply(3, { op: 'timeline.create', eventType: 'a', id: 't3', storage_id: 'default', starts: [0, 0], at: 't1', placement: { replicas: [[1]], members: [1] } });
  assert.equal(!bad.ok && bad.reason, 'invalid');
  assert.equal(sm.eventType('a')!.storage.timelines!.length, 2, 'a refused timeline is not created');
  sm.apply(4, { op: 'event_type.delete', name: 'a' });
  sm.apply(5, create('a', [[1]]));
  assert.deepEqual(sm.eventType('a')!.storage.placement, [{ group: 5, replicas: [1] }]);
});

test('property: group ids are unique and increase in log order, across deletes and snapshot restores', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('create' as const), name: fc.constantFrom('a', 'b', 'c'), count: fc.integer({ min: 1, max: 5 }), placed: fc.boolean() }),
    fc.record({ kind: fc.constant('delete' as const), name: fc.constantFrom('a', 'b', 'c') }),
    fc.record({ kind: fc.constant('timeline' as const), name: fc.constantFrom('a', 'b', 'c') }),
    fc.record({ kind: fc.constant('restore' as const) }),
  );
  fc.assert(
    fc.property(fc.array(op, { minLength: 10, maxLength: 60 }), (ops) => {
      let sm = new MetadataStateMachine();
      const handedOut: number[] = [];
      for (const o of ops) {
        if (o.kind === 'restore') {
          sm = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
          continue;
        }
        const index = sm.appliedIndex + 1;
        if (o.kind === 'delete') {
          sm.apply(index, { op: 'event_type.delete', name: o.name });
          continue;
        }
        if (o.kind === 'timeline') {
          const rec = sm.eventType(o.name);
          const n = rec?.storage.partitions.length ?? 1;
          const r = sm.apply(index, { op: 'timeline.create', eventType: o.name, id: `t${index}`, storage_id: 'default', starts: Array(n).fill(0), at: 't', placement: { replicas: Array(n).fill([1]), members: [1] } });
          if (r.ok) handedOut.push(...r.timeline!.placement!.map((p) => p.group));
          continue;
        }
        const cmd: MetadataCommand = o.placed
          ? { op: 'event_type.create', eventType: et(o.name), partitionCount: o.count, placement: { replicas: Array(o.count).fill([2, 1]), members: [1, 2] } }
          : { op: 'event_type.create', eventType: et(o.name), partitionCount: o.count };
        if (sm.apply(index, cmd).ok && o.placed) handedOut.push(...sm.eventType(o.name)!.storage.placement!.map((p) => p.group));
      }
      for (let i = 1; i < handedOut.length; i++) assert.ok(handedOut[i]! > handedOut[i - 1]!, `group ids ${JSON.stringify(handedOut)} do not increase`);
      const live = [...placedPartitions(sm.eventTypes(), 1)].map((p) => p.placement.group);
      assert.equal(new Set(live).size, live.length, `live groups repeat: ${JSON.stringify(live)}`);
      assert.equal(sm.snapshot().nextGroup, (handedOut.at(-1) ?? 0) + 1);
    }),
    { numRuns: 300 },
  );
});
