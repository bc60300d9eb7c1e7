// Goal: a timeline switch is two metadata commands (docs/decisions.md "Storages and timelines"):
// timeline.prepare records one pending switch per event type (a second one is a conflict, the same one
// again is harmless) and allocates the new log's groups; timeline.commit turns exactly that pending
// switch into the current timeline (again: the same answer; another id: a conflict). The one-step
// timeline.create of older logs still applies, but not while a switch is pending. Snapshots keep the
// pending switch.
// Method: examples on the pure state machine, and a restore from its snapshot at every step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MetadataStateMachine } from './state-machine.js';
import type { MetadataCommand } from './commands.js';
import type { EventType } from './types.js';

function et(name: string): EventType {
  return {
    name, owning_application: 'app', category: 'business', enrichment_strategies: [], partition_strategy: 'random', compatibility_mode: 'forward',
    schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: 't0' }, options: { retention_time: 1000 }, created_at: 't0', updated_at: 't0',
  };
}

/** Applies commands one by one to a machine and to one restored from its snapshot before each, and checks both agree. */
function machines() {
  let sm = new MetadataStateMachine();
  return {
    get sm() {
      return sm;
    },
    apply(cmd: MetadataCommand) {
      const twin = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())) as ReturnType<MetadataStateMachine['snapshot']>, sm.appliedIndex);
      const r = sm.apply(sm.appliedIndex + 1, cmd);
      assert.deepEqual(twin.apply(twin.appliedIndex + 1, cmd), r, `a restored machine answers ${cmd.op} alike`);
      assert.deepEqual(twin.snapshot(), sm.snapshot());
      sm = twin;
      return r;
    },
  };
}

const placement = { replicas: [[1, 2], [2, 1]], members: [1, 2] };

test('prepare then commit: one pending switch per event type, the new groups allocated at prepare, the timeline appended at commit', () => {
  const m = machines();
  m.apply({ op: 'event_type.create', eventType: et('a'), partitionCount: 2, placement });
  m.apply({ op: 'storage.create', storage: { id: 's', storage_type: 'broker', broker_configuration: {} } });
  const prep = m.apply({ op: 'timeline.prepare', eventType: 'a', id: 'T1', storage_id: 's', at: 'at-prepare', placement });
  assert.deepEqual(prep, { ok: true, pending: { id: 'T1', storage_id: 's', at: 'at-prepare', placement: [{ group: 3, replicas: [1, 2] }, { group: 4, replicas: [2, 1] }] } });
  assert.deepEqual(m.apply({ op: 'timeline.prepare', eventType: 'a', id: 'T1', storage_id: 's', at: 'later', placement }), prep, 'the same switch again: the same answer, no new groups');
  const other = m.apply({ op: 'timeline.prepare', eventType: 'a', id: 'T2', storage_id: 'default', at: 'x', placement });
  assert.ok(!other.ok && other.reason === 'conflict' && /in progress/.test(other.detail), JSON.stringify(other));
  const legacy = m.apply({ op: 'timeline.create', eventType: 'a', id: 'T3', storage_id: 'default', starts: [5, 5], at: 'x' });
  assert.ok(!legacy.ok && legacy.reason === 'conflict', 'the one-step switch waits for the pending one too');
  assert.equal(m.sm.eventType('a')!.storage.timelines, undefined, 'nothing switched yet');

  const wrong = m.apply({ op: 'timeline.commit', eventType: 'a', id: 'T2', starts: [4, 7], at: 'at-commit' });
  assert.ok(!wrong.ok && wrong.reason === 'conflict', 'only the pending switch commits');
  const short = m.apply({ op: 'timeline.commit', eventType: 'a', id: 'T1', starts: [4], at: 'at-commit' });
  assert.ok(!short.ok && short.reason === 'invalid');
  const done = m.apply({ op: 'timeline.commit', eventType: 'a', id: 'T1', starts: [4, 7], at: 'at-commit' });
  assert.ok(done.ok && done.timeline !== undefined);
  const rec = m.sm.eventType('a')!;
  assert.equal(rec.storage.pendingTimeline, undefined);
  assert.equal(rec.storage.timeline, 2);
  assert.deepEqual(rec.storage.timelines!.map((t) => [t.id, t.order, t.storage_id, t.starts]), [
    ['00000000-0000-4000-8000-000000000001', 1, 'default', [0, 0]],
    ['T1', 2, 's', [4, 7]],
  ]);
  assert.deepEqual(done.timeline, { id: 'T1', order: 2, storage_id: 's', topic: 2, starts: [4, 7], created_at: 'at-prepare', switched_at: 'at-commit', placement: [{ group: 3, replicas: [1, 2] }, { group: 4, replicas: [2, 1] }] });
  assert.deepEqual(m.apply({ op: 'timeline.commit', eventType: 'a', id: 'T1', starts: [9, 9], at: 'again' }), done, 'committing again answers the timeline as committed');
  // The next switch may start now; its starts may not go below the current timeline's.
  assert.equal(m.apply({ op: 'timeline.prepare', eventType: 'a', id: 'T2', storage_id: 'default', at: 'y', placement }).ok, true);
  const back = m.apply({ op: 'timeline.commit', eventType: 'a', id: 'T2', starts: [3, 7], at: 'z' });
  assert.ok(!back.ok && back.reason === 'invalid');
  assert.equal(m.apply({ op: 'timeline.commit', eventType: 'a', id: 'T2', starts: [4, 7], at: 'z' }).ok, true, 'a partition that took no events starts where it started');
  assert.equal(m.sm.eventType('a')!.storage.timelines!.length, 3);
});

test('prepare refuses an unknown event type or storage and a timeline id in use, without handing out groups', () => {
  const m = machines();
  assert.equal(m.apply({ op: 'timeline.prepare', eventType: 'nope', id: 'T', storage_id: 'default', at: 'x' }).ok, false);
  m.apply({ op: 'event_type.create', eventType: et('a'), partitionCount: 2, placement });
  const noStorage = m.apply({ op: 'timeline.prepare', eventType: 'a', id: 'T', storage_id: 'missing', at: 'x', placement });
  assert.ok(!noStorage.ok && noStorage.reason === 'invalid');
  const first = m.sm.eventType('a')!.storage;
  const used = m.apply({ op: 'timeline.prepare', eventType: 'a', id: '00000000-0000-4000-8000-000000000001', storage_id: 'default', at: 'x', placement });
  assert.ok(!used.ok && used.reason === 'exists');
  assert.deepEqual(m.sm.eventType('a')!.storage, first, 'unchanged');
  // The next allocation still gets the next group ids: the refusals handed out none.
  const ok = m.apply({ op: 'timeline.prepare', eventType: 'a', id: 'T', storage_id: 'default', at: 'x', placement });
  assert.deepEqual(ok.ok && ok.pending?.placement?.map((p) => p.group), [3, 4]);
  // Deleting the event type drops the pending switch with it.
  assert.equal(m.apply({ op: 'event_type.delete', name: 'a' }).ok, true);
  assert.equal(m.apply({ op: 'timeline.commit', eventType: 'a', id: 'T', starts: [0, 0], at: 'x' }).ok, false);
});
