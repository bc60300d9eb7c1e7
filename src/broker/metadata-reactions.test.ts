// Goal: what a node does when its metadata group applies a command or restores a snapshot (the
// reactions the composition root wires): caches forgotten, replicas opened, logs dropped, streams
// ended, the next move or replacement step taken; and nothing of that for a command that failed.
// Method: metadataReactions over recording fakes of its parts; the real OpenStreams and
// closeStreamsAfterRuleChange.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult, MetadataStateMachine } from '../metadata/state-machine.js';
import type { EventType, EventTypeRecord } from '../metadata/types.js';
import { OpenStreams } from '../consumption/open-streams.js';
import { metadataReactions, type MetadataReactionParts } from './metadata-reactions.js';
import { closeStreamsAfterRuleChange } from './rule-change-streams.js';

const logger = pino({ level: 'silent' });

function record(name: string, topic: number): EventTypeRecord {
  return { eventType: { name, created_at: 't0' } as EventType, schemas: [], storage: { topic, partitions: ['0'], timeline: 1 } };
}

function parts(calls: string[], openStreams = new OpenStreams(), deleted: number[] = []): MetadataReactionParts {
  const note = (what: string) => () => void calls.push(what);
  return {
    topics: { invalidate: note('topics.invalidate') } as unknown as MetadataReactionParts['topics'],
    placements: { topicsChanged: note('placements.topicsChanged') } as unknown as MetadataReactionParts['placements'],
    replicas: {
      openSoonByName: (n: string) => calls.push(`open ${n}`),
      openSoon: (r: EventTypeRecord) => calls.push(`open ${r.eventType.name}`),
      openMoved: (g: number, then: () => void) => { calls.push(`openMoved ${g}`); then(); },
      dropSoon: (logs: { storage_id: string; topic: number }[]) => calls.push(`drop ${logs.map((l) => `${l.storage_id}/${l.topic}`).join(',')}`),
      deletedTopics: () => deleted,
      // Node 3's only store: it holds no open replica; emptying for a loss is noted.
      all: () => [{ self: () => 3, hostedGroup: () => undefined, emptyForLoss: async (g: number, id: string) => { calls.push(`emptyForLoss ${g} ${id}`); return true; } }],
    } as unknown as MetadataReactionParts['replicas'],
    router: { ensureStorage: async (id: string) => { calls.push(`ensureStorage ${id}`); return undefined as never; }, timelineChanged: (t: number) => calls.push(`timelineChanged ${t}`) },
    validators: { forget: (n: string) => calls.push(`forget ${n}`) } as unknown as MetadataReactionParts['validators'],
    openStreams,
    state: () => ({ eventType: (n: string) => (n === 'orders' ? record('orders', 7) : undefined) }) as unknown as MetadataStateMachine,
    hub: () => ({ applied: (c: MetadataCommand) => calls.push(`hub ${c.op}`), kickAll: note('hub.kickAll') }) as unknown as ReturnType<MetadataReactionParts['hub']>,
    mover: () => ({ round: note('mover.round') }) as unknown as ReturnType<MetadataReactionParts['mover']>,
    replacer: () => ({ round: note('replacer.round') }) as unknown as ReturnType<MetadataReactionParts['replacer']>,
    logger,
  };
}

const failed: ApplyResult = { ok: false, reason: 'conflict', detail: 'no' } as ApplyResult;

test('an event type deleted: its caches are forgotten and every log of its timelines dropped', () => {
  const calls: string[] = [];
  metadataReactions(parts(calls)).onApplied({ op: 'event_type.delete', name: 'orders' } as MetadataCommand, { ok: true, droppedTopic: 7, droppedLogs: [{ storage_id: 'default', topic: 7 }, { storage_id: 's2', topic: 9 }] });
  assert.deepEqual(calls, ['hub event_type.delete', 'topics.invalidate', 'placements.topicsChanged', 'forget orders', 'drop default/7,s2/9']);
});

test('a command that failed changes nothing beyond waking the hub and forgetting the caches', () => {
  const calls: string[] = [];
  const r = metadataReactions(parts(calls));
  r.onApplied({ op: 'event_type.delete', name: 'orders' } as MetadataCommand, failed);
  r.onApplied({ op: 'partition.move', group: 3 } as MetadataCommand, failed);
  r.onApplied({ op: 'event_type.create', eventType: { name: 'orders' } } as MetadataCommand, failed);
  assert.deepEqual(calls, ['hub event_type.delete', 'topics.invalidate', 'placements.topicsChanged', 'hub partition.move', 'hub event_type.create', 'topics.invalidate', 'placements.topicsChanged']);
});

test('a created event type and a new timeline open their replicas; a committed switch wakes its topic', () => {
  const calls: string[] = [];
  const r = metadataReactions(parts(calls));
  r.onApplied({ op: 'event_type.create', eventType: { name: 'orders' } } as MetadataCommand, { ok: true });
  r.onApplied({ op: 'timeline.commit', eventType: 'orders' } as MetadataCommand, { ok: true });
  r.onApplied({ op: 'timeline.prepare', eventType: 'orders', storage_id: 's2' } as MetadataCommand, { ok: true });
  assert.deepEqual(calls, [
    'hub event_type.create', 'topics.invalidate', 'placements.topicsChanged', 'open orders',
    'hub timeline.commit', 'placements.topicsChanged', 'open orders', 'timelineChanged 7',
    'hub timeline.prepare', 'ensureStorage s2',
  ]);
});

test('a move step opens the moved replica and takes the next step; a new member starts its replacement', async () => {
  const calls: string[] = [];
  const r = metadataReactions(parts(calls));
  r.onApplied({ op: 'partition.move', group: 3 } as MetadataCommand, { ok: true });
  r.onApplied({ op: 'node.disk', node: 2, disk: 'd', member: 2 ** 31 + 2 } as MetadataCommand, { ok: true });
  r.onApplied({ op: 'node.disk', node: 2, disk: 'd' } as MetadataCommand, { ok: true });
  await new Promise((res) => setImmediate(res));
  assert.deepEqual(calls, ['hub partition.move', 'openMoved 3', 'mover.round', 'hub node.disk', 'hub node.disk', 'replacer.round']);
});

test('a restored snapshot: caches forgotten, logs of event types deleted meanwhile dropped, every replica opened; an accepted loss of every replica it carries acted on', async () => {
  const calls: string[] = [];
  const loss = (id: string, rejoin?: number[]) => ({ id, scope: 'partition', node: 1, event_type: 'orders', partition: '0', group: 10, at: '', kept: { last_index: 5 }, damage: { index: 9, term: 4, reason: 'r' }, term_before: 4, term: 0, ...(rejoin === undefined ? {} : { floor: 7, rejoin }) });
  // L1 names node 3 to rejoin; L0 is a sole replica's record (no floor): nothing to do for it.
  const sm = { eventTypes: () => [record('orders', 7), record('payments', 8)], acceptedLosses: { records: [loss('L0'), loss('L1', [2, 3])], older: 0 } } as unknown as MetadataStateMachine;
  metadataReactions(parts(calls, new OpenStreams(), [4, 5])).onRestored(sm);
  await new Promise((res) => setImmediate(res));
  assert.deepEqual(calls, ['hub.kickAll', 'topics.invalidate', 'placements.topicsChanged', 'forget orders', 'forget payments', 'drop default/4', 'drop default/5', 'open orders', 'open payments', 'emptyForLoss 10 L1', 'openMoved 10', 'mover.round']);
});

test('streams end when the readers of their event type change or their app is blacklisted, and only then', () => {
  const open = new OpenStreams();
  const closed: string[] = [];
  const stream = (app: string, eventTypes: string[], subscription?: string) => open.add({ kind: subscription === undefined ? 'low_level' : 'subscription', app, eventTypes, ...(subscription === undefined ? {} : { subscription }), close: (why) => closed.push(`${app}: ${why}`) });
  stream('a', ['orders']);
  stream('b', ['payments']);
  stream('c', ['payments'], 'sub-1');
  const update = { op: 'event_type.update', eventType: { name: 'orders' } } as MetadataCommand;
  assert.equal(closeStreamsAfterRuleChange(update, { ok: true }, open, logger), 0, 'readers unchanged');
  assert.equal(closeStreamsAfterRuleChange(update, failed, open, logger), 0);
  assert.equal(closeStreamsAfterRuleChange(update, { ok: true, readersChanged: true }, open, logger), 1);
  assert.equal(closeStreamsAfterRuleChange({ op: 'blacklist.set', type: 'CONSUMER_APP', name: 'b', blocked: false } as MetadataCommand, { ok: true }, open, logger), 0, 'unblocking ends nothing');
  assert.equal(closeStreamsAfterRuleChange({ op: 'blacklist.set', type: 'CONSUMER_APP', name: 'b', blocked: true } as MetadataCommand, { ok: true }, open, logger), 1);
  assert.equal(closeStreamsAfterRuleChange({ op: 'subscription.update', id: 'sub-1' } as MetadataCommand, { ok: true, readersChanged: true }, open, logger), 1);
  assert.deepEqual(closed, ['a: the readers of event type orders changed', 'b: application b was blacklisted (CONSUMER_APP)', 'c: the readers of subscription sub-1 changed']);
  assert.equal(open.count(), 0);
});

test('the reactions close streams of an update whose readers changed', () => {
  const open = new OpenStreams();
  let closedWhy = '';
  open.add({ kind: 'low_level', app: 'a', eventTypes: ['orders'], close: (why) => { closedWhy = why; } });
  metadataReactions(parts([], open)).onApplied({ op: 'event_type.update', eventType: { name: 'orders' } } as MetadataCommand, { ok: true, readersChanged: true });
  assert.equal(closedWhy, 'the readers of event type orders changed');
});
