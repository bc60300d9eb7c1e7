// Goal (issue 10, defence in depth): a member that is buggy (or an outsider, were the port open)
// cannot stop a node through the metadata group.
// - A malformed command that a leader committed is refused where it is applied (on every node alike),
//   logged, never applied and never fatal; the node goes on, and replays it as refused after a restart.
// - A snapshot from a peer is decoded and checked whole before anything of it is stored: a malformed
//   one (not JSON, unknown format, or a state that cannot be restored) is dropped with a log line and
//   leaves no trace, so the node does not stop now nor at its next start; a good one is installed.
// - A message whose term is far ahead of the receiver's (a buggy peer's heartbeat at the highest term
//   the transport lets through) is dropped: taken, every node would follow it to a term after which no
//   election could succeed, since the next one's messages would be refused for their term.
// Method: RaftMetadataGroup over MemoryKv. Malformed commands go through the leader's own propose()
// (which trusts its callers: only forwarded proposals are checked before proposing), so they are
// committed and reach apply as a buggy leader's would. Snapshots are `snap` messages handed to the
// group's transport handler as if a peer with a higher term sent them. Logs are read from a pino stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { MemoryKv, type OrderedKv } from '../log/index.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { MetadataStateMachine } from '../metadata/state-machine.js';
import type { EventType } from '../metadata/types.js';
import { makeMessage, type Message, type NodeId } from '../raft/index.js';
import { encodeImage } from './metadata-codec.js';
import { termMax } from '../transport/limits.js';
import type { RaftMetadataGroup } from './metadata-group.js';
import { closeMember, fastMemberTimings, openMember, startMember, type MemberTransport } from '../testing/metadata-member.js';

function eventType(name: string): EventType {
  return {
    name,
    owning_application: 'app',
    category: 'undefined',
    enrichment_strategies: [],
    partition_strategy: 'random',
    compatibility_mode: 'forward',
    schema: { type: 'json_schema', schema: '{}', version: '1.0.0', created_at: '2026-01-01T00:00:00Z' },
    options: { retention_time: 1000 },
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  };
}

const create = (name: string): MetadataCommand => ({ op: 'event_type.create', eventType: eventType(name), partitionCount: 1 });

/** A logger whose lines the test reads, and the fatal errors the group reported. */
function watched(): { logger: pino.Logger; lines: { msg: string }[]; fatal: unknown[] } {
  const lines: { msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as { msg: string });
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines, fatal: [] };
}

function open(kv: OrderedKv, self: NodeId, founders: NodeId[], w: ReturnType<typeof watched>): Promise<RaftMetadataGroup> {
  return openMember({
    self,
    incarnation: `inc-${self}-${Math.random()}`,
    kv,
    founders,
    directory: founders.map((id) => ({ id })),
    ...fastMemberTimings,
    logger: w.logger,
    onFatal: (err) => w.fatal.push(err),
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Commands no service would propose, each of which a state machine without checks trips over. */
const malformed: unknown[] = [
  { op: 'event_type.create', eventType: null, partitionCount: 1 },
  { op: 'event_type.create', eventType: { name: 'x', schema: { schema: 42 }, updated_at: 'now' }, partitionCount: 1 },
  { op: 'event_type.update', eventType: { name: 'm.good' }, basedOnUpdatedAt: 'x', schemaChanged: true },
  { op: 'subscription.create', subscription: { id: 's', event_types: 'm.good' } },
  { op: 'stream.open', subscription: 's', session: null, starts: 3 },
  { op: 'cursor.commit', subscription: 's', session: 'x', atMs: 1, cursors: [{}] },
  { op: 'timeline.create', eventType: 'm.good', id: 't', storage_id: 'default', at: 'now', starts: null },
  { op: 'limits.set', limits: { eventTypesMax: -1 } },
  { op: 'blacklist.set', type: 'NOT_A_TYPE', name: 'x', blocked: true },
  'not even an object',
  null,
];

test('malformed commands committed by a buggy leader are refused where they are applied: logged, not applied, not fatal, and not fatal at restart', async () => {
  const kv = new MemoryKv();
  const w = watched();
  let g = await open(kv, 1, [1], w);
  startMember(g, undefined);
  try {
    assert.equal((await g.propose(create('m.good'))).ok, true);
    for (const bad of malformed) {
      const r = await g.propose(bad as MetadataCommand);
      assert.equal(r.ok, false, JSON.stringify(bad));
      assert.ok(!r.ok && r.reason === 'invalid' && /Malformed metadata command/.test(r.detail), `${JSON.stringify(bad)}: ${JSON.stringify(r)}`);
    }
    assert.deepEqual(w.fatal, []);
    assert.equal(w.lines.filter((l) => l.msg === 'dropped a malformed metadata command (refused on every node)').length, malformed.length);
    assert.equal((await g.propose(create('m.after'))).ok, true, 'the node goes on');
    assert.deepEqual([...g.state.eventTypes()].map((r) => r.eventType.name), ['m.good', 'm.after']);
  } finally {
    await closeMember(g);
  }
  // The restart replays the same log: the same refusals, the same state, nothing fatal.
  g = await open(kv, 1, [1], w);
  startMember(g, undefined);
  try {
    assert.deepEqual([...g.state.eventTypes()].map((r) => r.eventType.name), ['m.good', 'm.after']);
    assert.equal((await g.propose(create('m.restarted'))).ok, true);
    assert.deepEqual(w.fatal, []);
  } finally {
    await closeMember(g);
  }
});

function snapFrom(from: NodeId, to: NodeId, term: number, index: number, data: Uint8Array): Message {
  return makeMessage({ type: 'snap', from, to, term, snapshot: { metadata: { index, term, confState: { voters: [1, 2], learners: [] } }, data } });
}

test('a malformed snapshot from a peer is dropped before anything of it is stored; a good one is installed', async () => {
  const kv = new MemoryKv();
  const w = watched();
  const sent: Message[] = [];
  const transport: MemberTransport = { send: (groups) => void sent.push(...groups.flatMap((x) => x.messages)), forward: async () => ({ status: 'unavailable' as const, detail: 'none' }), reachable: () => false };
  let g = await open(kv, 2, [1, 2], w);
  startMember(g, transport);
  const goodState = new MetadataStateMachine();
  goodState.apply(1, create('from.snapshot'));
  const badImages: [string, Uint8Array][] = [
    ['not JSON', Buffer.from('{"v":1,')],
    ['an unknown format', Buffer.from(JSON.stringify({ v: 9, commands: 1, state: goodState.snapshot() }))],
    ['a state that cannot be restored', Buffer.from(JSON.stringify({ v: 1, commands: 1, state: { eventTypes: [{ eventType: null }], nextTopic: 2 } }))],
    ['a subscription on a missing event type', Buffer.from(JSON.stringify({ v: 1, commands: 1, state: { ...goodState.snapshot(), subscriptions: [{ id: 's', owning_application: 'a', consumer_group: 'g', created_at: 'x', read_from: 'end', event_types: ['gone'] }] } }))],
  ];
  try {
    let term = 40;
    for (const [what, data] of badImages) {
      g.transportHandler().receive(snapFrom(1, 2, ++term, 100, data));
      await sleep(30);
      assert.deepEqual(w.fatal, [], what);
      assert.equal(g.view().metadata.snapshot_index, 0, `${what}: nothing stored`);
      assert.ok(g.view().metadata.term < 40, `${what}: not even the term was taken`);
    }
    assert.equal(w.lines.filter((l) => l.msg === 'dropped a malformed snapshot from a peer').length, badImages.length);
    // A good image is installed: the checks do not refuse what a leader really sends.
    g.transportHandler().receive(snapFrom(1, 2, 50, 100, encodeImage(goodState)));
    for (let i = 0; i < 100 && g.state.eventType('from.snapshot') === undefined; i++) await sleep(10);
    assert.ok(g.state.eventType('from.snapshot'), 'the good snapshot was installed');
    assert.equal(g.view().metadata.snapshot_index, 100);
  } finally {
    await closeMember(g);
  }
  assert.deepEqual(w.fatal, []);
  // Nothing of the dropped ones was stored: the node starts from the good one.
  g = await open(kv, 2, [1, 2], w);
  try {
    assert.ok(g.state.eventType('from.snapshot'));
  } finally {
    await closeMember(g);
  }
});

test('a heartbeat with the highest term the transport lets through does not leave the group unable to elect a leader', async () => {
  const ids = [1, 2, 3];
  const w = watched();
  const handlers = new Map<NodeId, ReturnType<RaftMetadataGroup['transportHandler']>>();
  const cut = new Set<NodeId>();
  // Delivers as the transport does: a message with a term above termMax is refused at decoding.
  const deliver = (m: Message) => {
    if (m.term > termMax || cut.has(m.from) || cut.has(m.to)) return;
    setImmediate(() => handlers.get(m.to)?.receive(m));
  };
  const transportFor = (self: NodeId): MemberTransport => ({
    send: (groups) => groups.forEach((x) => x.messages.forEach(deliver)),
    forward: async (to: NodeId, req: { command: Buffer; flowId: string; deadlineMs: number }) => handlers.get(to)!.propose({ from: self, ...req }),
    reachable: (id: NodeId) => !cut.has(id) && !cut.has(self),
  });
  const groups = await Promise.all(ids.map((id) => open(new MemoryKv(), id, ids, w)));
  groups.forEach((g, i) => handlers.set(ids[i]!, g.transportHandler()));
  groups.forEach((g, i) => startMember(g, transportFor(ids[i]!)));
  const leader = async () => {
    for (let i = 0; i < 300; i++) {
      const l = groups.find((g) => g.isLeader() && !cut.has(g.self));
      if (l !== undefined) return l;
      await sleep(10);
    }
    return undefined;
  };
  try {
    const first = await leader();
    assert.ok(first !== undefined, 'a first leader');
    // A buggy member (here: whichever is not the leader) sends heartbeats at the top term to the others.
    const liar = groups.find((g) => g !== first)!.self;
    for (const to of ids.filter((id) => id !== liar)) deliver(makeMessage({ type: 'heartbeat', from: liar, to, term: termMax }));
    await sleep(100);
    // The group still has a leader, elects a new one when that one is cut off, and takes writes.
    cut.add(first.self);
    const second = await leader();
    assert.ok(second !== undefined, 'a leader is elected after the top-term heartbeat');
    assert.equal((await second.propose(create('after.liar'))).ok, true);
    assert.ok(w.lines.some((l) => l.msg === 'dropped a message whose term is implausibly far ahead'));
  } finally {
    await Promise.all(groups.map((g) => closeMember(g)));
  }
});
