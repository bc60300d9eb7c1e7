// Goal: the cursor side of subscriptions as interface.md states it ("Subscription cursors",
// "SubscriptionEventTypeStats", the "Subscriptions" endpoints and commit rules, "States and transitions",
// "Errors") with compatibility.md's choices (400 without the stream id, 422 for an unknown or closed
// stream): POST cursors (204/200 with committed|outdated, the alias header, every rejection, all or
// nothing, a closed stream's commit window), GET cursors, PATCH cursors (disconnects streams, the next
// stream starts at the reset position, 422/404), GET stats (states, stream ids, unconsumed events), and
// a restart, clean and kill -9, while a stream is open: new streams open and resume after the last commit.
// Method: real brokers over HTTP on temporary RocksDB directories (one for the file; the restart tests
// start their own, the kill -9 one as a child process); user_defined event types so every delivery is
// known; asynchronous effects are polled with deadlines.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startTestBroker, type JsonResponse, type TestBroker } from '../testing/broker-harness.js';
import { freePort, spawnBroker } from '../testing/child-broker.js';
import { assertProblem, off, sleep } from '../testing/stream-client.js';
import { createSubscription, orderRange, putEvents, subscriptionStats, userDefinedEventType, waitUntil } from '../testing/subscription-fixtures.js';
import { SubscriptionStreamClient, type SubscriptionCursor, type SubscriptionLine } from '../testing/subscription-client.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const T = { timeout: 40_000 };

let broker: TestBroker;
const clients: SubscriptionStreamClient[] = [];

before(async () => {
  broker = await startTestBroker();
});
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await broker.destroy();
});

let seq = 0;

const eventType = (base: string, partitions: number) => userDefinedEventType(base, `scu.t${++seq}`, partitions);
const put = putEvents;
const range = orderRange;
const subscription = (base: string, eventTypes: string[], over: Record<string, unknown> = {}) => createSubscription(base, `scu-app-${++seq}`, eventTypes, over);

async function stream(base: string, id: string, query = 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100'): Promise<SubscriptionStreamClient> {
  const c = await SubscriptionStreamClient.open(base, id, query);
  clients.push(c);
  return c;
}

const stats = subscriptionStats;

async function committed(base: string, id: string): Promise<SubscriptionCursor[]> {
  const r = await call(base, 'GET', `/subscriptions/${id}/cursors`);
  assert.equal(r.status, 200, r.text);
  const items = (r.body as { items: SubscriptionCursor[] }).items;
  for (const c of items) assert.match(c.cursor_token, UUID);
  return items;
}

/** The committed offset per partition ("event_type/partition" -> offset). */
async function committedOffsets(base: string, id: string): Promise<Record<string, string>> {
  return Object.fromEntries((await committed(base, id)).map((c) => [`${c.event_type}/${c.partition}`, c.offset]));
}

const until = waitUntil;

async function allUnassigned(base: string, id: string): Promise<void> {
  await until('every partition unassigned', async () => (await stats(base, id)).every((p) => p.state === 'unassigned' && p.stream_id === undefined));
}

const commitRaw = (base: string, id: string, body: unknown, headers: Record<string, string>): Promise<JsonResponse> =>
  call(base, 'POST', `/subscriptions/${id}/cursors`, body, headers);
const cursor = (et: string, partition: string, offset: string): SubscriptionCursor => ({ event_type: et, partition, offset, cursor_token: crypto.randomUUID() });
const ofPartition = (c: SubscriptionStreamClient, p: string) => c.batches().filter((l) => l.cursor.partition === p);

// ------------------------------------------------------------------------------------------ commits

test('commits: 204 when every cursor advances, the X-Nakadi-StreamId alias, a later cursor commits earlier batches, 200 with committed/outdated items otherwise', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 2);
  await put(base, et, '0', range('a', 3));
  await put(base, et, '1', range('b', 2));
  const id = await subscription(base, [et]);
  const s = await stream(base, id);
  await s.waitFor((c) => c.events().length >= 5, 5000, 'five events');
  const p0 = ofPartition(s, '0');
  const p1 = ofPartition(s, '1');
  assert.equal(p0.length, 3);
  assert.equal(p1.length, 2);

  // The alias header of the original service.
  const alias = await commitRaw(base, id, { items: [p0[0]!.cursor] }, { 'X-Nakadi-StreamId': s.streamId });
  assert.equal(alias.status, 204, alias.text);
  assert.equal(alias.text, '');
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(0), [`${et}/1`]: 'BEGIN' });

  // The last batch of partition 0 commits the second one too; both partitions advance: 204.
  const both = await s.commit([p0[2]!.cursor, p1[0]!.cursor]);
  assert.equal(both.status, 204, both.text);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(2), [`${et}/1`]: off(0) });

  // An earlier cursor of partition 0 and a newer one of partition 1: 200 with one result per cursor.
  const mixed = await s.commit([p0[1]!.cursor, p1[1]!.cursor]);
  assert.equal(mixed.status, 200, mixed.text);
  assert.match(mixed.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(mixed.body, {
    items: [
      { cursor: p0[1]!.cursor, result: 'outdated' },
      { cursor: p1[1]!.cursor, result: 'committed' },
    ],
  });
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(2), [`${et}/1`]: off(1) }, 'an outdated cursor does not move back');

  // The same cursor again: equal to the committed one, so outdated.
  const same = await s.commit([p1[1]!.cursor]);
  assert.equal(same.status, 200, same.text);
  assert.deepEqual((same.body as { items: { result: string }[] }).items.map((i) => i.result), ['outdated']);
  // A keep-alive cursor (BEGIN of a partition already committed further) is outdated too, not an error.
  const ka = await s.commit([cursor(et, '0', 'BEGIN')]);
  assert.equal(ka.status, 200, ka.text);
  assert.deepEqual((ka.body as { items: { result: string }[] }).items.map((i) => i.result), ['outdated']);
});

test('commit rejections: no stream id 400, unknown stream 422, a cursor not sent on the stream 422 (all or nothing), foreign or unknown event type 422, malformed bodies 400/422, unknown subscription 404', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 1);
  const foreign = await eventType(base, 1);
  await put(base, et, '0', range('e', 4));
  await put(base, foreign, '0', ['f0']);
  const id = await subscription(base, [et]);
  const s = await stream(base, id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=2');
  await s.waitFor((c) => c.events().length >= 2, 5000, 'two events (the window holds the rest back)');
  await sleep(300);
  assert.equal(s.events().length, 2);
  const hdr = { 'X-Svc-StreamId': s.streamId };
  const good = s.batches()[0]!.cursor;

  assertProblem(await commitRaw(base, id, { items: [good] }, {}), 400);
  assertProblem(await commitRaw(base, id, { items: [good] }, { 'X-Svc-StreamId': crypto.randomUUID() }), 422);
  assertProblem(await commitRaw(base, id, { items: [good] }, { 'X-Svc-StreamId': 'not-a-stream' }), 422);

  // Offset 2 exists but was not sent (window); offset 9 does not exist at all.
  assertProblem(await s.commit([cursor(et, '0', off(2))]), 422);
  assertProblem(await s.commit([cursor(et, '0', off(9))]), 422);
  // A valid cursor with an invalid one: nothing is committed.
  assertProblem(await s.commit([good, cursor(et, '0', off(3))]), 422);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: 'BEGIN' }, 'all or nothing');

  assertProblem(await s.commit([cursor(foreign, '0', off(0))]), 422);
  assertProblem(await s.commit([cursor('scu.no-such-type', '0', off(0))]), 422);
  assertProblem(await s.commit([cursor(et, '5', off(0))]), 422);
  assertProblem(await s.commit([cursor(et, '0', 'garbage')]), 422);

  for (const body of ['{"items": [', 'not json']) assertProblem(await commitRaw(base, id, body, hdr), 400);
  for (const body of [[], { cursors: [good] }, { items: 'x' }, { items: [] }, { items: [{ partition: '0', offset: off(0) }] }, { items: [{ ...good, offset: 0 }] }]) {
    const r = await commitRaw(base, id, body, hdr);
    assert.ok(r.status === 400 || r.status === 422, `${JSON.stringify(body)}: ${r.status} ${r.text}`);
    assertProblem(r, r.status);
  }
  assertProblem(await commitRaw(base, crypto.randomUUID(), { items: [good] }, hdr), 404);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: 'BEGIN' }, 'no rejected request moved a cursor');

  // After all that the stream still commits normally and the window moves.
  assert.equal((await s.commit([s.batches()[1]!.cursor])).status, 204);
  await s.waitFor((c) => c.events().length >= 4, 5000, 'the rest after the commit');
  assert.deepEqual(s.orders(), range('e', 4));
});

test('a stream closed by its client can still commit what it was sent within commit_timeout, not afterwards', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 1);
  await put(base, et, '0', range('c', 3));
  const id = await subscription(base, [et]);
  const s = await stream(base, id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100&commit_timeout=2');
  await s.waitFor((c) => c.events().length >= 3, 5000, 'three events');
  const [b0, b1, b2] = s.batches() as [SubscriptionLine, SubscriptionLine, SubscriptionLine];
  await s.close();
  await allUnassigned(base, id);
  const closedAt = Date.now();

  const late = await s.commit([b0.cursor]);
  assert.equal(late.status, 204, `a commit right after the close is accepted: ${late.text}`);
  assert.equal((await s.commit([b1.cursor], 'X-Nakadi-StreamId')).status, 204);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(1) });

  await sleep(Math.max(0, closedAt + 3000 - Date.now()));
  const tooLate = await s.commit([b2.cursor]);
  assertProblem(tooLate, 422);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(1) }, 'the late commit moved nothing');

  const next = await stream(base, id);
  await next.waitFor((c) => c.events().length >= 1, 5000, 'c2');
  await sleep(300);
  assert.deepEqual(next.orders(), ['c2']);
});

test('a stream may commit only partitions it was given (422 for a partition of another stream)', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 2);
  await put(base, et, '0', ['x0']);
  await put(base, et, '1', ['y0']);
  const id = await subscription(base, [et]);
  const a = await stream(base, id);
  await a.waitFor((c) => c.events().length >= 2, 5000, 'both events');
  assert.equal((await a.commitAll())!.status, 204);
  const b = await stream(base, id);
  let ofA = '';
  let ofB = '';
  await until('1 + 1', async () => {
    const st = await stats(base, id);
    ofA = st.find((p) => p.stream_id === a.streamId && p.state === 'assigned')?.partition ?? '';
    ofB = st.find((p) => p.stream_id === b.streamId && p.state === 'assigned')?.partition ?? '';
    return ofA !== '' && ofB !== '';
  });
  assertProblem(await b.commit([cursor(et, ofA, off(0))]), 422);
  // a no longer owns ofB: an outdated cursor of it is still refused, as not its partition.
  assertProblem(await a.commit([cursor(et, ofB, off(0))]), 422);
});

// --------------------------------------------------------------------------------- GET/PATCH cursors

test('GET cursors: empty before the first stream, the starting positions once a stream opened, the committed cursors afterwards; 404 for an unknown subscription', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 2);
  await put(base, et, '0', range('g', 3));
  const id = await subscription(base, [et]);
  assert.deepEqual(await committed(base, id), []);
  const s = await stream(base, id);
  await s.waitFor((c) => c.events().length >= 3, 5000, 'three events');
  const start = await committed(base, id);
  assert.deepEqual(start.map((c) => [c.event_type, c.partition, c.offset]), [[et, '0', 'BEGIN'], [et, '1', 'BEGIN']], 'read_from begin: before the oldest event');
  assert.equal((await s.commit([ofPartition(s, '0')[1]!.cursor])).status, 204);
  const after = await committed(base, id);
  assert.deepEqual(after.map((c) => [c.event_type, c.partition, c.offset]), [[et, '0', off(1)], [et, '1', 'BEGIN']]);
  assert.equal(new Set(after.map((c) => c.cursor_token)).size, 2);
  for (const unknown of [crypto.randomUUID(), 'nope']) assertProblem(await call(base, 'GET', `/subscriptions/${unknown}/cursors`), 404);
});

test('PATCH cursors: open streams are disconnected, stats unassigned, the old stream can no longer commit, the next stream starts at the reset position (also for one partition of two, and back to BEGIN)', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 2);
  await put(base, et, '0', range('r', 4));
  await put(base, et, '1', range('q', 2));
  const id = await subscription(base, [et]);
  const a = await stream(base, id);
  await a.waitFor((c) => c.events().length >= 6, 5000, 'six events');
  assert.equal((await a.commitAll())!.status, 204);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(3), [`${et}/1`]: off(1) });

  const reset = await call(base, 'PATCH', `/subscriptions/${id}/cursors`, { items: [{ event_type: et, partition: '0', offset: off(1) }] });
  assert.equal(reset.status, 204, reset.text);
  await a.waitEnded(5000);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(1), [`${et}/1`]: off(1) }, 'only the named partition moved');
  const st = await stats(base, id);
  assert.ok(st.every((p) => p.state === 'unassigned' && p.stream_id === undefined), JSON.stringify(st));
  assert.equal(st.find((p) => p.partition === '0')!.unconsumed_events, 2);
  assert.equal(st.find((p) => p.partition === '1')!.unconsumed_events, 0);
  assertProblem(await a.commit([ofPartition(a, '0').at(-1)!.cursor]), 422);

  const b = await stream(base, id);
  await b.waitFor((c) => c.events().length >= 2, 5000, 'r2, r3 again');
  await sleep(300);
  assert.deepEqual(b.orders(), ['r2', 'r3'], 'events after the reset cursor are delivered again');
  assert.equal((await b.commitAll())!.status, 204);

  const toBegin = await call(base, 'PATCH', `/subscriptions/${id}/cursors`, { items: [{ event_type: et, partition: '1', offset: 'BEGIN' }] });
  assert.equal(toBegin.status, 204, toBegin.text);
  await b.waitEnded(5000);
  const c = await stream(base, id);
  await c.waitFor((x) => x.events().length >= 2, 5000, 'q0, q1 again');
  await sleep(300);
  assert.deepEqual(c.orders(), ['q0', 'q1']);
});

test('PATCH cursors before any stream: the first stream starts there, not at read_from', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 1);
  await put(base, et, '0', range('v', 4));
  const id = await subscription(base, [et], { read_from: 'end' });
  const r = await call(base, 'PATCH', `/subscriptions/${id}/cursors`, { items: [{ event_type: et, partition: '0', offset: off(0) }] });
  assert.equal(r.status, 204, r.text);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(0) });
  const s = await stream(base, id);
  await s.waitFor((c) => c.events().length >= 3, 5000, 'v1..v3');
  await sleep(300);
  assert.deepEqual(s.orders(), ['v1', 'v2', 'v3']);
});

test('PATCH cursors errors: unknown partition, malformed or future offset, foreign event type, bad bodies 422 (malformed JSON 400); unknown subscription 404; nothing changes', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 1);
  const foreign = await eventType(base, 1);
  await put(base, et, '0', range('p', 2));
  const id = await subscription(base, [et]);
  const s = await stream(base, id);
  await s.waitFor((c) => c.events().length >= 2, 5000, 'two events');
  assert.equal((await s.commitAll())!.status, 204);
  const patch = (body: unknown, sub = id) => call(base, 'PATCH', `/subscriptions/${sub}/cursors`, body);
  for (const body of [
    { items: [{ event_type: et, partition: '3', offset: off(0) }] },
    { items: [{ event_type: et, partition: '0', offset: 'nope' }] },
    { items: [{ event_type: et, partition: '0', offset: '001-0001-00000000000000000x' }] },
    { items: [{ event_type: et, partition: '0', offset: off(50) }] },
    { items: [{ event_type: foreign, partition: '0', offset: 'BEGIN' }] },
    { items: [{ event_type: et, partition: '0' }] },
    { items: [{ event_type: et, partition: '0', offset: off(0) }, { event_type: et, partition: '0', offset: off(1) }] },
    { items: [] },
    { nothing: true },
  ]) {
    assertProblem(await patch(body), 422);
  }
  assertProblem(await patch('{"items":'), 400);
  for (const sub of [crypto.randomUUID(), 'nope']) assertProblem(await patch({ items: [{ event_type: et, partition: '0', offset: 'BEGIN' }] }, sub), 404);
  assert.deepEqual(await committedOffsets(base, id), { [`${et}/0`]: off(1) });
  assert.equal(s.isEnded, false, 'a refused reset does not disconnect the stream');
  assert.equal((await stats(base, id))[0]!.stream_id, s.streamId);
});

// ------------------------------------------------------------------------------------------- stats

test('stats: unassigned before any stream, assigned with the stream id while streaming, unconsumed_events = published - committed, unassigned again after the stream closes', T, async () => {
  const base = broker.url;
  const et = await eventType(base, 2);
  await put(base, et, '0', range('s', 5));
  await put(base, et, '1', range('t', 3));
  const id = await subscription(base, [et]);
  const before = await stats(base, id);
  assert.deepEqual(before.map((p) => [p.event_type, p.partition, p.state, p.stream_id]), [[et, '0', 'unassigned', undefined], [et, '1', 'unassigned', undefined]]);

  const s = await stream(base, id, 'batch_limit=10&batch_flush_timeout=1&max_uncommitted_events=100');
  await s.waitFor((c) => c.events().length >= 8, 5000, 'eight events');
  let st = await stats(base, id);
  assert.deepEqual(st.map((p) => [p.partition, p.state, p.stream_id, p.unconsumed_events]), [['0', 'assigned', s.streamId, 5], ['1', 'assigned', s.streamId, 3]]);

  assert.equal((await s.commit([cursor(et, '0', off(1))])).status, 204);
  st = await stats(base, id);
  assert.deepEqual(st.map((p) => p.unconsumed_events), [3, 3]);
  assert.equal((await s.commitAll())!.status, 204);
  st = await stats(base, id);
  assert.deepEqual(st.map((p) => p.unconsumed_events), [0, 0]);
  await put(base, et, '1', range('u', 2));
  st = await stats(base, id);
  assert.deepEqual(st.map((p) => p.unconsumed_events), [0, 2]);

  await s.close();
  await allUnassigned(base, id);
  st = await stats(base, id);
  assert.deepEqual(st.map((p) => [p.state, p.stream_id, p.unconsumed_events]), [['unassigned', undefined, 0], ['unassigned', undefined, 2]]);
  for (const unknown of [crypto.randomUUID(), 'nope']) assertProblem(await call(base, 'GET', `/subscriptions/${unknown}/stats`), 404);
});

// ----------------------------------------------------------------------------------------- restart

test('restart (clean) while a stream is open: the stream ends, a new stream opens on the single slot and resumes after the last commit; the old stream id cannot commit any more (what it was sent is not known after the restart)', T, async () => {
  let tb = await startTestBroker();
  try {
    const et = await eventType(tb.url, 1);
    await put(tb.url, et, '0', range('m', 4));
    const id = await subscription(tb.url, [et]);
    const s = await SubscriptionStreamClient.open(tb.url, id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    try {
      await s.waitFor((c) => c.events().length >= 4, 5000, 'four events');
      assert.equal((await s.commit([s.batches()[1]!.cursor])).status, 204);
      tb = await tb.restart();
      await s.waitEnded(5000);
    } finally {
      await s.close();
    }
    // One partition, so a session left over from the previous process would make this 409.
    const n = await SubscriptionStreamClient.open(tb.url, id, 'batch_flush_timeout=1');
    try {
      await n.waitFor((c) => c.events().length >= 2, 5000, 'm2, m3');
      await sleep(300);
      assert.deepEqual(n.orders(), ['m2', 'm3'], 'm0 and m1 were committed before the restart');
      const st = await stats(tb.url, id);
      assert.deepEqual(st.map((p) => [p.state, p.stream_id]), [['assigned', n.streamId]]);
      // What the old stream was sent died with the old process, so it cannot commit (docs/decisions.md).
      const late = await s.commit([s.batches()[2]!.cursor]);
      assert.equal(late.status, 422, late.text);
      assert.deepEqual(await committedOffsets(tb.url, id), { [`${et}/0`]: off(1) });
    } finally {
      await n.close();
    }
  } finally {
    await tb.destroy();
  }
});

test('restart after kill -9 while a stream is open: the stale session of the dead process is closed, a new stream opens on the single slot and resumes after the last commit', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-subcrash-'));
  const port = await freePort();
  const child = await spawnBroker(dir, port);
  // Also at the test's timeout, when the finally below has not run (it waits for what the test awaits).
  t.after(() => {
    if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
  });
  let tb: TestBroker | undefined;
  try {
    const et = await eventType(child.url, 1);
    await put(child.url, et, '0', range('k', 4));
    const id = await subscription(child.url, [et]);
    const s = await SubscriptionStreamClient.open(child.url, id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    try {
      await s.waitFor((c) => c.events().length >= 4, 5000, 'four events');
      assert.equal((await s.commit([s.batches()[1]!.cursor])).status, 204);
      assert.deepEqual((await stats(child.url, id)).map((p) => [p.state, p.stream_id]), [['assigned', s.streamId]]);
      child.proc.kill('SIGKILL');
      await child.exited;
      await s.waitEnded(5000);
    } finally {
      await s.close();
    }
    tb = await startTestBroker({}, dir);
    const url = tb.url;
    // One partition: the dead process's session must be gone for this to be 200 and not 409.
    const n = await SubscriptionStreamClient.open(url, id, 'batch_flush_timeout=1');
    try {
      await n.waitFor((c) => c.events().length >= 2, 5000, 'k2, k3');
      await sleep(300);
      assert.deepEqual(n.orders(), ['k2', 'k3'], 'k0 and k1 were committed before the crash');
      assert.deepEqual((await stats(url, id)).map((p) => [p.state, p.stream_id]), [['assigned', n.streamId]], 'only the new stream holds the partition');
    } finally {
      await n.close();
    }
  } finally {
    if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
    await tb?.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('after a restart, a stream id of the previous process cannot commit a cursor that was never sent on it', T, async () => {
  let tb = await startTestBroker();
  try {
    const et = await eventType(tb.url, 1);
    await put(tb.url, et, '0', range('h', 2));
    const id = await subscription(tb.url, [et]);
    const s = await SubscriptionStreamClient.open(tb.url, id, 'batch_limit=1&batch_flush_timeout=1&max_uncommitted_events=100');
    try {
      await s.waitFor((c) => c.events().length >= 2, 5000, 'h0, h1');
      // Before the restart the rule holds: h2 does not exist yet, h1 was sent but is not committed.
      tb = await tb.restart();
      await s.waitEnded(5000);
    } finally {
      await s.close();
    }
    // Two events no stream was ever sent.
    await put(tb.url, et, '0', ['h2', 'h3']);
    const notSent = await s.commit([cursor(et, '0', off(3))]);
    assertProblem(notSent, 422);
    // Nor what it was sent: that is no longer known after the restart (docs/decisions.md).
    assertProblem(await s.commit([s.batches()[1]!.cursor]), 422);
    const n = await SubscriptionStreamClient.open(tb.url, id, 'batch_flush_timeout=1');
    try {
      await n.waitFor((c) => c.events().length >= 4, 5000, 'h0..h3: nothing was committed, so everything comes again');
      assert.deepEqual(n.orders(), ['h0', 'h1', 'h2', 'h3']);
    } finally {
      await n.close();
    }
  } finally {
    await tb.destroy();
  }
});
