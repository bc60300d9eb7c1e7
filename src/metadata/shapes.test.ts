// Goal (issue 10, defence in depth): whatever a member commits, the state machine neither throws nor
// takes a malformed command, and a snapshot state either fails the check or restores into a machine
// that works. Valid commands and states are never refused by the checks.
// Method: a corpus of valid commands of every op against a state that has an event type, a
// subscription with an open stream, a storage and a placed partition; fast-check replaces one value
// anywhere in a command (or a snapshot) by another JSON value, or removes it, and applies the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MetadataStateMachine, type MetadataSnapshot } from './state-machine.js';
import type { MetadataCommand } from './commands.js';
import { commandProblem, metadataOps, snapshotProblem } from './shapes.js';
import { defaultMetadataLimits } from './limits.js';
import type { EventType } from './types.js';

function et(name: string): EventType {
  return {
    name,
    owning_application: 'app',
    category: 'business',
    enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: 'hash',
    partition_key_fields: ['id'],
    compatibility_mode: 'forward',
    schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' },
    default_statistic: { messages_per_minute: 1, message_size: 1, read_parallelism: 2, write_parallelism: 2 },
    options: { retention_time: 1000 },
    authorization: { admins: [{ data_type: 'user', value: 'a' }], readers: [{ data_type: '*', value: '*' }], writers: [{ data_type: 'user', value: 'w' }] },
    created_at: 't0',
    updated_at: 't0',
  };
}

const session = { id: 'st1', node: 1, incarnation: 'i1', openedAtMs: 10, commitTimeoutMs: 60_000 };
const sub = { id: 's1', owning_application: 'app', event_types: ['a'], consumer_group: 'g', read_from: 'end' as const, created_at: 't0' };

/** A state with something for every op to work on. */
function base(): MetadataStateMachine {
  const sm = new MetadataStateMachine();
  const setup: MetadataCommand[] = [
    { op: 'event_type.create', eventType: et('a'), partitionCount: 2, placement: { members: [1, 2, 3], replicas: [[1, 2, 3], [2, 3, 1]] } },
    { op: 'subscription.create', subscription: sub },
    { op: 'stream.open', subscription: 's1', session, starts: [{ event_type: 'a', partition: '0', offset: -1 }, { event_type: 'a', partition: '1', offset: -1 }] },
    { op: 'storage.create', storage: { id: 'st', storage_type: 'broker', broker_configuration: {} } },
    // A timeline switch in progress, so snapshots carry a pending one.
    { op: 'timeline.prepare', eventType: 'a', id: 't-pending', storage_id: 'st', at: 't1', placement: { members: [1, 2, 3], replicas: [[1, 2, 3], [1, 2, 3]] } },
    // A recorded loss, so snapshots carry one.
    { op: 'loss.accepted', loss: { id: 'l0', scope: 'partition', node: 1, event_type: 'a', partition: '1', group: 2, at: 't0', kept: { newest_offset: 'BEGIN', last_index: 3 }, damage: { index: 5, term: 1, reason: 'lost' }, term_before: 1, term: 3 } },
  ];
  setup.forEach((c, i) => assert.equal(sm.apply(i + 1, c).ok, true, JSON.stringify(c)));
  return sm;
}

const commands: MetadataCommand[] = [
  { op: 'event_type.create', eventType: et('b'), partitionCount: 1 },
  { op: 'event_type.update', eventType: { ...et('a'), updated_at: 't1', schema: { ...et('a').schema, version: '1.1.0' } }, basedOnUpdatedAt: 't0', schemaChanged: true },
  { op: 'event_type.delete', name: 'b' },
  { op: 'feature.set', feature: 'high_level_api', enabled: false },
  { op: 'subscription.create', subscription: { ...sub, id: 's2', consumer_group: 'other' } },
  { op: 'subscription.delete', id: 's2' },
  { op: 'subscription.update', id: 's1', authorization: { admins: [{ data_type: 'user', value: 'a' }], readers: [{ data_type: 'user', value: 'r' }] } },
  { op: 'stream.open', subscription: 's1', session: { ...session, id: 'st2' }, starts: [] },
  { op: 'stream.close', subscription: 's1', session: 'st1', atMs: 20 },
  { op: 'stream.close_stale', node: 1, incarnation: 'i0', atMs: 20 },
  { op: 'stream.release', subscription: 's1', session: 'st1', partitions: [{ event_type: 'a', partition: '0' }] },
  { op: 'cursor.commit', subscription: 's1', session: 'st1', atMs: 20, cursors: [{ event_type: 'a', partition: '0', offset: 3 }] },
  { op: 'cursor.reset', subscription: 's1', cursors: [{ event_type: 'a', partition: '1', offset: 0 }] },
  { op: 'blacklist.set', type: 'CONSUMER_APP', name: 'x', blocked: true },
  { op: 'storage.create', storage: { id: 'st2', storage_type: 'broker', broker_configuration: {} } },
  { op: 'storage.delete', id: 'st2' },
  { op: 'timeline.create', eventType: 'a', id: 't2', storage_id: 'st', starts: [0, 0], at: 't1', placement: { members: [1, 2, 3], replicas: [[1, 2, 3], [1, 2, 3]] } },
  { op: 'timeline.prepare', eventType: 'a', id: 't-pending', storage_id: 'st', at: 't1', placement: { members: [1, 2, 3], replicas: [[1, 2, 3], [1, 2, 3]] } },
  { op: 'timeline.commit', eventType: 'a', id: 't-pending', starts: [0, 0], at: 't2' },
  { op: 'partition.move', group: 1, step: 'add_learner', from: 1, to: 4 },
  { op: 'partition.leader', group: 1, leader: 2 },
  { op: 'limits.set', limits: { ...defaultMetadataLimits, eventTypesMax: 50 } },
  { op: 'node.disk', node: 2, disk: 'a3c1e0a2-disk/lost-1' },
  {
    op: 'loss.accepted',
    loss: { id: 'l1', scope: 'partition', node: 2, event_type: 'a', partition: '0', group: 1, at: 't1', kept: { newest_offset: '4', last_index: 9 }, damage: { index: 11, term: 2, reason: 'lost' }, term_before: 2, term: 5 },
  },
  { op: 'loss.accepted', loss: { id: 'l2', scope: 'metadata', node: 1, group: 0, at: 't1', kept: { last_index: 30 }, damage: { index: 0, term: 4, reason: 'marker gone' }, term_before: 4, term: 6 } },
  {
    op: 'partition.loss',
    group: 1,
    keep: 2,
    seen: { replicas: [1, 2, 3], learners: [] },
    floor: 5,
    loss: { id: 'l3', scope: 'partition', node: 2, event_type: 'a', partition: '0', group: 1, at: 't1', kept: { newest_offset: '4', last_index: 9 }, damage: { index: 11, term: 2, reason: 'lost' }, term_before: 2, term: 0 },
  },
  { op: 'partition.move', group: 1, step: 'rejoin', from: 1, to: 1 },
];

test('the corpus covers every op, and the checks refuse none of it', () => {
  assert.deepEqual(new Set(commands.map((c) => c.op)), metadataOps);
  for (const c of commands) {
    assert.equal(commandProblem(c), undefined, c.op);
    const sm = base();
    const r = sm.apply(sm.appliedIndex + 1, c);
    assert.ok(r.ok || r.malformed !== true, `${c.op}: ${JSON.stringify(r)}`);
  }
  assert.equal(snapshotProblem(base().snapshot()), undefined);
});

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value inside `v` (the root included). */
function paths(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

/** `v` with the value at `path` replaced by `by` (or removed when `by` is undefined). */
function mutate<T>(v: T, path: (string | number)[], by: Json | undefined): unknown {
  if (path.length === 0) return by;
  const copy = structuredClone(v) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (by === undefined) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = by;
  return copy;
}

const replacement: fc.Arbitrary<Json | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom<Json>(null, 0, -1, 1.5, 2 ** 53, '', 'x', true, [], {}, [null], { op: 'x' }),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);

test('property: any command with one value replaced or removed is applied or refused, never thrown, and a refused one changes nothing', () => {
  fc.assert(
    fc.property(fc.constantFrom(...commands), fc.nat(), replacement, (cmd, pick, by) => {
      const all = paths(cmd);
      const bad = mutate(cmd, all[pick % all.length]!, by) as MetadataCommand;
      const sm = base();
      const before = JSON.stringify(sm.snapshot());
      const r = sm.apply(sm.appliedIndex + 1, bad);
      if (!r.ok && r.malformed === true) assert.equal(JSON.stringify(sm.snapshot()), before, 'a malformed command changed the state');
      // Whatever was applied, the machine still works.
      JSON.stringify(sm.snapshot());
      for (const c of commands) sm.apply(sm.appliedIndex + 1, c);
    }),
    { numRuns: 3000, seed: 10 },
  );
});

test('property: a snapshot state with one value replaced or removed fails the check, or restores into a machine that works', () => {
  const snap = base().snapshot();
  fc.assert(
    fc.property(fc.nat(), replacement, (pick, by) => {
      const all = paths(snap);
      const bad = mutate(snap, all[pick % all.length]!, by) as MetadataSnapshot;
      if (snapshotProblem(bad) !== undefined) {
        assert.throws(() => MetadataStateMachine.restore(bad, 4), /malformed metadata snapshot/);
        return;
      }
      const sm = MetadataStateMachine.restore(bad, 4);
      JSON.stringify(sm.snapshot());
      for (const c of commands) sm.apply(sm.appliedIndex + 1, c);
    }),
    { numRuns: 3000, seed: 11 },
  );
});
