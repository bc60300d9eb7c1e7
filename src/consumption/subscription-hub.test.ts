// Goal: the node-side rules of subscription streams that the replicated state cannot see: a reset
// running through this node answers 409 to a second reset and to stream requests until it is done;
// a stream may commit only what it was sent; sessions of an earlier incarnation are closed at start.
// Method: a real metadata state machine behind a proposer the test can hold, an in-memory partition
// reader, and a stream driven through a sink.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toOffset, type Offset } from '../core/offset.js';
import { isProblem } from '../core/problem.js';
import type { MetadataCommand } from '../metadata/commands.js';
import { MetadataStateMachine, type ApplyResult } from '../metadata/state-machine.js';
import { CursorResolver } from './cursors.js';
import type { PartitionReader, StoredEvent } from './ports.js';
import { SubscriptionHub } from './subscription-hub.js';
import { storedEventType } from '../testing/metadata-fixtures.js';

const et = (name: string) => storedEventType(name);

/** Partition logs in memory: `counts` events per partition of topic 1. */
function memoryReader(counts: number[]): PartitionReader {
  return {
    bounds: (_topic, p) => ({ oldest: 0 as Offset, newest: toOffset((counts[p] ?? 0) - 1) }),
    read: async (_topic, p, after, max) => {
      const out: StoredEvent[] = [];
      for (let o = after + 1; o < (counts[p] ?? 0) && out.length < max; o++) out.push({ offset: toOffset(o), bytes: Buffer.from(`{"n":${o}}`) });
      return out;
    },
    waitForEvents: (_t, _p, _after, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
  };
}

function setup(opts: { partitions: number; events: number[]; incarnation?: string; sm?: MetadataStateMachine; failCloses?: number }) {
  let failCloses = opts.failCloses ?? 0;
  const sm = opts.sm ?? new MetadataStateMachine();
  if (opts.sm === undefined) {
    sm.apply(1, { op: 'event_type.create', eventType: et('orders'), partitionCount: opts.partitions });
    sm.apply(2, { op: 'subscription.create', subscription: { id: 'sub', owning_application: 'app', event_types: ['orders'], consumer_group: 'g', read_from: 'begin', created_at: 't0' } });
  }
  let hold: Promise<void> | undefined;
  const proposed: MetadataCommand[] = [];
  const propose = async (cmd: MetadataCommand): Promise<ApplyResult> => {
    proposed.push(cmd);
    if (hold !== undefined) await hold;
    if (cmd.op === 'stream.close' && failCloses > 0) {
      failCloses--;
      throw new Error('no metadata leader (test)');
    }
    const r = sm.apply(sm.appliedIndex + 1, cmd);
    hub.applied(cmd);
    return r;
  };
  let n = 0;
  const reader = memoryReader(opts.events);
  const hub = new SubscriptionHub({
    state: () => sm,
    propose,
    reader,
    cursors: new CursorResolver(reader),
    clock: { nowMs: () => 1_000_000, monotonicMs: () => performance.now() },
    newId: () => `${opts.incarnation ?? "inc-1"}-${++n}`,
    node: 1,
    incarnation: opts.incarnation ?? 'inc-1',
    logger: { info: () => undefined, warn: () => undefined },
  });
  return { sm, hub, proposed, holdProposals: (p: Promise<void> | undefined) => (hold = p) };
}

const status = (err: unknown) => (isProblem(err) ? err.status : -1);

/** Runs a stream until `lines` lines arrived; returns them and the stream's end. */
async function streamLines(hub: SubscriptionHub, query: Record<string, string>, lines: number) {
  const opened = await hub.open('sub', query);
  const got: Record<string, unknown>[] = [];
  const abort = new AbortController();
  let enough!: () => void;
  const reached = new Promise<void>((r) => (enough = r));
  const sink = {
    write: (line: Buffer) => {
      got.push(JSON.parse(line.toString()) as Record<string, unknown>);
      if (got.length >= lines) enough();
      return true;
    },
    drain: async () => undefined,
  };
  const ended = opened.run(sink, abort.signal);
  await reached;
  return { id: opened.id, got, abort, ended };
}

test('a reset running through this node answers 409 to another reset and to stream requests, then lets them through', async () => {
  const { hub, holdProposals } = setup({ partitions: 2, events: [3, 3] });
  let release!: () => void;
  holdProposals(new Promise<void>((r) => (release = r)));
  const body = { items: [{ event_type: 'orders', partition: '0', offset: 'BEGIN' }] };
  const first = hub.reset('sub', body);
  await assert.rejects(hub.reset('sub', body), (e) => status(e) === 409);
  await assert.rejects(hub.open('sub', {}), (e) => status(e) === 409);
  holdProposals(undefined);
  release();
  await first;
  const opened = await hub.open('sub', {});
  assert.ok(opened.id.length > 0);
});

test('a reset disconnects this node\'s streams of the subscription and answers after they ended', async () => {
  const { hub, sm } = setup({ partitions: 1, events: [5] });
  const s = await streamLines(hub, { batch_limit: '1', max_uncommitted_events: '2', batch_flush_timeout: '1' }, 2);
  await hub.reset('sub', { items: [{ event_type: 'orders', partition: '0', offset: '001-0001-000000000000000003' }] });
  assert.equal(await s.ended, 'closed_by_service');
  assert.equal(sm.runtime('sub')!.sessions.length, 0);
  assert.equal(sm.runtime('sub')!.committed.get('orders\u00000')!.offset, 3);
});

test('only what was sent on the stream can be committed; the window pauses the stream at max_uncommitted_events', async () => {
  const { hub } = setup({ partitions: 1, events: [10] });
  const s = await streamLines(hub, { batch_limit: '1', max_uncommitted_events: '2', batch_flush_timeout: '1' }, 2);
  assert.deepEqual(s.got.map((l) => (l['cursor'] as { offset: string }).offset), ['001-0001-000000000000000000', '001-0001-000000000000000001']);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(s.got.length, 2, 'paused: nothing beyond the window before a commit');
  const cursor = (offset: string) => ({ items: [{ event_type: 'orders', partition: '0', offset, cursor_token: 't' }] });
  await assert.rejects(hub.commit('sub', s.id, cursor('001-0001-000000000000000005')), (e) => status(e) === 422);
  await assert.rejects(hub.commit('sub', 'no-such-stream', cursor('001-0001-000000000000000000')), (e) => status(e) === 422);
  assert.equal(await hub.commit('sub', s.id, cursor('001-0001-000000000000000001')), undefined, 'all advanced: 204');
  const again = await hub.commit('sub', s.id, cursor('001-0001-000000000000000000'));
  assert.deepEqual(again?.map((r) => r.result), ['outdated']);
  // The commit opened the window again: two more events arrive.
  const deadline = Date.now() + 2000;
  while (s.got.filter((l) => l['events'] !== undefined).length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.equal(s.got.filter((l) => l['events'] !== undefined).length, 4);
  s.abort.abort();
  assert.equal(await s.ended, 'client_closed');
});

test('sessions a node held in an earlier incarnation are closed at start; other nodes\' and current ones are kept', async () => {
  const a = setup({ partitions: 3, events: [0, 0, 0], incarnation: 'old' });
  await a.hub.open('sub', {});
  a.sm.apply(a.sm.appliedIndex + 1, { op: 'stream.open', subscription: 'sub', session: { id: 'other-node', node: 2, incarnation: 'x', openedAtMs: 0, commitTimeoutMs: 60_000 }, starts: [] });
  const b = setup({ partitions: 3, events: [0, 0, 0], incarnation: 'new', sm: a.sm });
  await b.hub.open('sub', {});
  assert.equal(a.sm.runtime('sub')!.sessions.length, 3);
  assert.equal(await b.hub.closeStaleSessions(), 1);
  assert.deepEqual(a.sm.runtime('sub')!.sessions.map((s) => s.incarnation).sort(), ['new', 'x']);
  assert.equal(await b.hub.closeStaleSessions(), 0, 'nothing left to close: no command proposed');
});

test('a moved partition whose old owner keeps committing others but not it is handed over when its commit timeout has passed', async () => {
  const { hub, sm } = setup({ partitions: 2, events: [3, 3] });
  const a = await streamLines(hub, { batch_limit: '3', max_uncommitted_events: '100', batch_flush_timeout: '1', commit_timeout: '1' }, 2);
  const cursorOf = (p: string) => (a.got.find((l) => (l['cursor'] as { partition: string }).partition === p)!['cursor']) as Record<string, string>;
  const b = await hub.open('sub', { batch_flush_timeout: '1' });
  const rt = sm.runtime('sub')!;
  const moving = rt.slots.find((s) => s.releasingFrom === a.id)!;
  assert.ok(moving !== undefined, 'one partition is reassigning from a');
  const kept = moving.partition === '0' ? '1' : '0';
  // a commits its kept partition every 300 ms (so it is not closed), never the moving one.
  const started = Date.now();
  while (rt.slots.find((s) => s.partition === moving.partition)!.releasingFrom !== undefined && Date.now() - started < 4000) {
    await hub.commit('sub', a.id, { items: [cursorOf(kept)] }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
  }
  const waited = Date.now() - started;
  assert.equal(rt.slots.find((s) => s.partition === moving.partition)!.releasingFrom, undefined, 'released');
  assert.ok(waited >= 800, `not before the commit timeout (${waited} ms)`);
  assert.ok(rt.session(a.id) !== undefined, 'a is still open: its other partition was committed');
  assert.equal(rt.slots.find((s) => s.partition === moving.partition)!.session, b.id);
  a.abort.abort();
  await a.ended;
});

/** Opens a stream whose client stops reading after `lines` lines: write() answers false, drain() never resolves. */
async function stuckStream(hub: SubscriptionHub, query: Record<string, string>, lines: number) {
  const opened = await hub.open('sub', query);
  const got: unknown[] = [];
  let enough!: () => void;
  const reached = new Promise<void>((r) => (enough = r));
  const sink = {
    write: (line: Buffer) => {
      got.push(JSON.parse(line.toString()));
      if (got.length >= lines) enough();
      return got.length < lines;
    },
    drain: () => new Promise<void>(() => undefined),
  };
  const abort = new AbortController();
  const ended = opened.run(sink, abort.signal);
  await reached;
  return { id: opened.id, ended, abort };
}

async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

test('a stream whose client stopped reading (waiting for drain) is still ended by a reset, which then answers', async () => {
  const { hub, sm } = setup({ partitions: 1, events: [5] });
  const s = await stuckStream(hub, { batch_limit: '1', max_uncommitted_events: '100', batch_flush_timeout: '1' }, 2);
  await within(hub.reset('sub', { items: [{ event_type: 'orders', partition: '0', offset: 'BEGIN' }] }), 3000, 'the reset');
  assert.equal(await within(s.ended, 1000, 'the stream end'), 'closed_by_service');
  assert.equal(sm.runtime('sub')!.sessions.length, 0);
  await hub.open('sub', {}); // no 409: the reset is over
});

test('a stream whose client stopped reading with uncommitted events is closed at its commit timeout, or when the client leaves', async () => {
  const { hub, sm } = setup({ partitions: 1, events: [5] });
  const started = Date.now();
  const s = await stuckStream(hub, { batch_limit: '1', max_uncommitted_events: '100', batch_flush_timeout: '1', commit_timeout: '1' }, 2);
  assert.equal(await within(s.ended, 4000, 'the commit timeout'), 'commit_timeout');
  assert.ok(Date.now() - started >= 900, 'not before the commit timeout');
  await within(hub.drain(), 1000, 'the session close');
  assert.equal(sm.runtime('sub')!.sessions.length, 0, 'the partitions are free for the next stream');

  const t = await stuckStream(hub, { batch_limit: '1', max_uncommitted_events: '100', batch_flush_timeout: '1' }, 1);
  t.abort.abort(); // the service closes it (e.g. a blacklisted consumer), the socket still full
  assert.equal(await within(t.ended, 1000, 'the end after abort'), 'client_closed');
});

test('a stream session whose close could not be proposed (no metadata quorum) is closed by a retry', async () => {
  const { hub, sm, proposed } = setup({ partitions: 1, events: [5], failCloses: 2 });
  const s = await streamLines(hub, { batch_limit: '1', batch_flush_timeout: '1' }, 1);
  s.abort.abort();
  await s.ended;
  for (let i = 0; i < 100 && sm.runtime('sub')!.sessions.length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(sm.runtime('sub')!.sessions.length, 0, 'the session was closed in the end');
  assert.equal(proposed.filter((c) => c.op === 'stream.close').length, 3, 'two failures, then the retry that worked');
});

test('a retried stream close is tried again soon after this node applies a metadata command, not only after its backoff', async () => {
  // Found by the host simulation (seed 265, Liveness): a stream that ended while the metadata group
  // had no quorum kept its session; the close's fourth failure came just after the group was back,
  // and the next try waited its 4 s backoff while the session held a partition the next stream needed.
  const { hub, sm, proposed } = setup({ partitions: 1, events: [5], failCloses: 4 });
  const s = await streamLines(hub, { batch_limit: '1', batch_flush_timeout: '1' }, 1);
  s.abort.abort();
  await s.ended;
  const closes = () => proposed.filter((c) => c.op === 'stream.close').length;
  // The close and its first three retries fail (after 250, 500 and 1000 ms); the next waits 2 s.
  for (let i = 0; i < 300 && closes() < 4; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(closes(), 4, 'four failed closes');
  const failedAt = performance.now();
  // The metadata group applies again (any command) on this node.
  hub.applied({ op: 'feature.set', feature: 'f', enabled: true });
  for (let i = 0; i < 300 && sm.runtime('sub')!.sessions.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
  const took = performance.now() - failedAt;
  assert.equal(sm.runtime('sub')!.sessions.length, 0, 'the session was closed');
  assert.ok(took < 1000, `the close was tried again ${Math.round(took)} ms after the group applied again`);
});

test('a stream request whose stream.open had an unknown outcome does not leave a session holding the partitions', async () => {
  // Found by the host simulation (seed 3): a forwarded stream.open whose answer did not come in time
  // was applied anyway; no stream ran for that session and nothing closed it, so it held its
  // partitions for as long as the node ran, and every later stream request got 409 (no free slots).
  const sm = new MetadataStateMachine();
  sm.apply(1, { op: 'event_type.create', eventType: et('orders'), partitionCount: 1 });
  sm.apply(2, { op: 'subscription.create', subscription: { id: 'sub', owning_application: 'app', event_types: ['orders'], consumer_group: 'g', read_from: 'begin', created_at: 't0' } });
  const late: MetadataCommand[] = [];
  let mode: 'applyThenFail' | 'failThenApplyLater' | 'normal' = 'applyThenFail';
  let n = 0;
  const reader = memoryReader([3]);
  const apply = (cmd: MetadataCommand): ApplyResult => {
    const r = sm.apply(sm.appliedIndex + 1, cmd);
    hub.applied(cmd);
    return r;
  };
  const hub: SubscriptionHub = new SubscriptionHub({
    state: () => sm,
    propose: async (cmd) => {
      if (cmd.op === 'stream.open' && mode === 'applyThenFail') {
        apply(cmd);
        throw new Error('metadata write not confirmed (test)');
      }
      if (cmd.op === 'stream.open' && mode === 'failThenApplyLater') {
        late.push(cmd);
        throw new Error('metadata write not confirmed (test)');
      }
      return apply(cmd);
    },
    reader,
    cursors: new CursorResolver(reader),
    clock: { nowMs: () => 1_000_000, monotonicMs: () => performance.now() },
    newId: () => `id-${++n}`,
    node: 1,
    incarnation: 'inc-1',
    logger: { info: () => undefined, warn: () => undefined },
  });
  const settle = async () => {
    for (let i = 0; i < 50 && sm.runtime('sub')!.sessions.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
  };

  // Applied, and the answer lost: the session is closed at once.
  await assert.rejects(hub.open('sub', {}));
  await settle();
  assert.equal(sm.runtime('sub')!.sessions.length, 0, 'the session applied before the failure was closed');

  // Not applied yet when the request failed, applied later: closed when it shows up.
  mode = 'failThenApplyLater';
  await assert.rejects(hub.open('sub', {}));
  mode = 'normal';
  apply(late[0]!);
  assert.equal(sm.runtime('sub')!.sessions.length, 1);
  await settle();
  assert.equal(sm.runtime('sub')!.sessions.length, 0, 'the session applied after the failure was closed');

  // Not applied yet when the request failed, and this node learns of it through a snapshot of the
  // state (found by the host simulation, seed 129: a follower behind the leader's compacted log is sent
  // a snapshot that holds the session; `applied` never sees its stream.open).
  mode = 'failThenApplyLater';
  late.length = 0;
  await assert.rejects(hub.open('sub', {}));
  mode = 'normal';
  sm.apply(sm.appliedIndex + 1, late[0]!); // what installing the snapshot leaves, without hub.applied
  assert.equal(sm.runtime('sub')!.sessions.length, 1);
  hub.kickAll(); // as main.ts does when the metadata state is restored from a snapshot
  await settle();
  assert.equal(sm.runtime('sub')!.sessions.length, 0, 'the session that came with a snapshot was closed');

  // The next stream request gets the partition.
  const opened = await hub.open('sub', {});
  assert.equal(sm.runtime('sub')!.slots[0]!.session, opened.id);
});

test('a session of an earlier process of this node that this node learns of only after its start is closed', async () => {
  // Found by the host simulation (seed 7): a node whose data directory was wiped started with an empty
  // metadata copy, so closeStaleSessions found nothing to close; the session its previous process held
  // arrived later with the catch-up, and held its partitions for as long as the node ran.
  const { hub, sm, proposed } = setup({ partitions: 2, events: [3, 3], incarnation: 'new' });
  assert.equal(await hub.closeStaleSessions(), 0, 'nothing stale in this node\'s copy at start');
  const late: MetadataCommand = { op: 'stream.open', subscription: 'sub', session: { id: 'old-stream', node: 1, incarnation: 'old', openedAtMs: 0, commitTimeoutMs: 60_000 }, starts: [] };
  sm.apply(sm.appliedIndex + 1, late);
  hub.applied(late);
  for (let i = 0; i < 50 && sm.runtime('sub')!.sessions.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(sm.runtime('sub')!.sessions.length, 0, 'the stale session was closed');
  assert.ok(proposed.some((c) => c.op === 'stream.close_stale'));
  // Another node's session is not this node's to close.
  const other: MetadataCommand = { op: 'stream.open', subscription: 'sub', session: { id: 'elsewhere', node: 2, incarnation: 'x', openedAtMs: 0, commitTimeoutMs: 60_000 }, starts: [] };
  sm.apply(sm.appliedIndex + 1, other);
  hub.applied(other);
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(sm.runtime('sub')!.sessions.map((s) => s.id), ['elsewhere']);
});
