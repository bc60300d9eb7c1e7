// Goal: storages and timelines as interface.md's Administration section and docs/decisions.md state
// them (every status of /storages and /event-types/{name}/timelines), and a timeline switch under
// continuous publishing and reading: a low-level stream and a subscription stream cross from the old
// timeline to the new ones with nothing lost, repeated or reordered; a restart keeps it all.
// Method: a real broker over HTTP (auth off: the caller is the administrator).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, startTestBroker, type TestBroker } from '../testing/broker-harness.js';
import { eventually } from '../testing/stream-client.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';

let broker: TestBroker;
before(async () => {
  broker = await startTestBroker();
});
after(async () => {
  await broker.destroy();
});
const req = (method: string, path: string, body?: unknown) => call(broker.url, method, path, body);
const storage = (id: string, over: Record<string, unknown> = {}) => ({ id, storage_type: 'broker', broker_configuration: { coord_path: '/brook' }, ...over });

test('storages: 201 with the Storage, 409 duplicate, 422 bad ids and types, 404 unknown, 400 default or in use, 204 deleted', async () => {
  const created = await req('POST', '/storages', storage('st-a'));
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.body, storage('st-a'));
  assert.equal((await req('POST', '/storages', storage('st-a'))).status, 409);
  for (const bad of [storage('x'.repeat(37)), storage('../etc'), storage('st-b', { storage_type: 'kafka' }), { id: 'st-c', storage_type: 'broker' }, storage('st-d', { broker_configuration: { other: 'x' } }), storage('st-e', { broker_configuration: { coord_path: 1 } }), []]) {
    const r = await req('POST', '/storages', bad);
    assert.equal(r.status, 422, `${JSON.stringify(bad)}: ${r.text}`);
  }
  assert.equal((await req('POST', '/storages', '{oops')).status, 400);
  assert.equal((await req('POST', '/storages', storage('x'.repeat(36)))).status, 201, '36 characters are allowed');
  const list = await req('GET', '/storages');
  assert.deepEqual((list.body as { id: string }[]).map((s) => s.id), ['default', 'st-a', 'x'.repeat(36)]);
  assert.equal((await req('GET', '/storages/st-a')).status, 200);
  assert.equal((await req('GET', '/storages/nope')).status, 404);
  assert.equal((await req('DELETE', '/storages/nope')).status, 404);
  assert.equal((await req('DELETE', '/storages/default')).status, 400);
  assert.equal((await req('DELETE', `/storages/${'x'.repeat(36)}`)).status, 204);
  assert.equal((await req('GET', `/storages/${'x'.repeat(36)}`)).status, 404);
});

test('timelines: 404 unknown event type, 422 unknown storage or bad body, [] before a switch, 201 and two timelines after, DELETE 404/422; a storage in use cannot be deleted', async () => {
  assert.equal((await req('POST', '/event-types', businessEventType('tl.a'))).status, 201);
  assert.equal((await req('POST', '/storages', storage('st-tl'))).status, 201);
  assert.equal((await req('GET', '/event-types/tl.none/timelines')).status, 404);
  assert.equal((await req('POST', '/event-types/tl.none/timelines', { storage_id: 'st-tl' })).status, 404);
  assert.equal((await req('POST', '/event-types/tl.a/timelines', { storage_id: 'nope' })).status, 422);
  assert.equal((await req('POST', '/event-types/tl.a/timelines', {})).status, 422);
  assert.deepEqual((await req('GET', '/event-types/tl.a/timelines')).body, []);
  assert.equal((await req('POST', '/event-types/tl.a/events', [businessEvent('t0')])).status, 200);
  assert.equal((await req('POST', '/event-types/tl.a/timelines', { storage_id: 'st-tl' })).status, 201);
  const tls = (await req('GET', '/event-types/tl.a/timelines')).body as { id: string; order: number; storage_id: string; event_type: string; latest_position?: unknown }[];
  assert.deepEqual(tls.map((t) => [t.order, t.storage_id, t.event_type]), [[1, 'default', 'tl.a'], [2, 'st-tl', 'tl.a']]);
  assert.deepEqual(tls[0]!.latest_position, { offsets: [{ partition: '0', offset: '001-0001-000000000000000000' }] });
  assert.equal((await req('DELETE', `/event-types/tl.a/timelines/${crypto.randomUUID()}`)).status, 404);
  assert.equal((await req('DELETE', `/event-types/tl.none/timelines/${tls[1]!.id}`)).status, 404);
  assert.equal((await req('DELETE', `/event-types/tl.a/timelines/${tls[1]!.id}`)).status, 422);
  assert.equal((await req('DELETE', '/storages/st-tl')).status, 400, 'in use by a timeline');
  // The new timeline's offsets carry its order and follow the old ones.
  assert.equal((await req('POST', '/event-types/tl.a/events', [businessEvent('t1')])).status, 200);
  const parts = (await req('GET', '/event-types/tl.a/partitions')).body as { oldest_available_offset: string; newest_available_offset: string }[];
  assert.deepEqual(parts, [{ partition: '0', oldest_available_offset: '001-0001-000000000000000000', newest_available_offset: '001-0002-000000000000000001' }]);
  assert.ok('001-0002-000000000000000001' > '001-0001-000000000000000000');
  // Deleting the event type drops the logs in both storages; then the storage is free.
  assert.equal((await req('DELETE', '/event-types/tl.a')).status, 200);
  assert.equal((await req('DELETE', '/storages/st-tl')).status, 204);
});

test('a switch under continuous publishing and reading: low-level and subscription consumers cross timelines with nothing lost or repeated; a restart keeps it', async (t) => {
  const stat = { messages_per_minute: 1, message_size: 1, read_parallelism: 2, write_parallelism: 2 };
  assert.equal((await req('POST', '/event-types', businessEventType('tl.live', { partition_strategy: 'user_defined', default_statistic: stat }))).status, 201);
  assert.equal((await req('POST', '/storages', storage('st-live'))).status, 201);
  const sub = await req('POST', '/subscriptions', { owning_application: 'tl', event_types: ['tl.live'], read_from: 'begin' });
  const subId = (sub.body as { id: string }).id;

  const published: string[][] = [[], []];
  let stop = false;
  let consumed = false;
  let seq = 0;
  // The timeline a publish lands in is only known for a publish that started after a switch was
  // answered and was answered before the next switch began: `inTimeline[k][p]` counts those events of
  // partition p for the k-th timeline (0-based). `phase` is 2k while timeline k is current and nothing
  // switches, odd while a switch is asked; a publish counts when no phase change happened meanwhile.
  const inTimeline = [
    [0, 0],
    [0, 0],
    [0, 0],
  ];
  let phase = 0;
  const publisher = (async () => {
    while (!stop) {
      const p = seq % 2;
      const startedIn = phase;
      const batch = [`n${seq++}`, `n${seq++}`, `n${seq++}`];
      const r = await req('POST', '/event-types/tl.live/events', batch.map((o) => businessEvent(o, { metadata: { eid: crypto.randomUUID(), occurred_at: '2026-11-22T10:00:00Z', partition: String(p) } })));
      assert.equal(r.status, 200, r.text);
      published[p]!.push(...batch);
      if (startedIn === phase && phase % 2 === 0) inTimeline[phase / 2]![p]! += batch.length;
    }
  })();
  // The low-level consumer reads batch_limit=7: its batches split each partition's offsets into runs of
  // at most 7, so a timeline holding 7 events of a partition in a row has a batch that ends in it, whose
  // cursor names that timeline. Each timeline gets that many before the next switch (a fixed sleep let
  // no publish through under load: a publish there takes longer than 300 ms).
  const batchLimit = 7;
  let publishFailed: unknown;
  publisher.catch((err: unknown) => (publishFailed = err));
  const filled = (k: number) =>
    eventually(
      () => {
        if (publishFailed !== undefined) throw publishFailed;
        return inTimeline[k]!.every((n) => n >= batchLimit);
      },
      30_000,
      `${batchLimit} events of each partition in timeline ${k + 1}`,
    );
  const switchTo = async (storageId: string, what: string) => {
    phase++;
    const r = await req('POST', '/event-types/tl.live/timelines', { storage_id: storageId });
    assert.equal(r.status, 201, `${what}: ${r.text}`);
    phase++;
  };

  // A low-level consumer from BEGIN on both partitions.
  const low: string[][] = [[], []];
  const lowOffsets: string[] = [];
  const ac = new AbortController();
  const lowRes = await fetch(`${broker.url}/event-types/tl.live/events?batch_limit=${batchLimit}&batch_flush_timeout=1`, {
    headers: { 'X-Svc-Cursors': JSON.stringify([{ partition: '0', offset: 'BEGIN' }, { partition: '1', offset: 'BEGIN' }]) },
    signal: ac.signal,
  });
  const lowDone = (async () => {
    const reader = lowRes.body!.getReader();
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = JSON.parse(buf.slice(0, nl)) as { cursor: { partition: string; offset: string }; events?: { order_number: string }[] };
          buf = buf.slice(nl + 1);
          for (const e of line.events ?? []) low[Number(line.cursor.partition)]!.push(e.order_number);
          if (line.events !== undefined) lowOffsets.push(line.cursor.offset);
        }
      }
    } catch {
      // aborted at the end
    }
  })();
  // A subscription consumer that commits every batch.
  const s = await SubscriptionStreamClient.open(broker.url, subId, 'batch_limit=5&batch_flush_timeout=1&max_uncommitted_events=50');
  // A failed assertion must not leave the publisher and the streams running: the process would never
  // end (the publisher loops until told to stop).
  t.after(async () => {
    stop = true;
    consumed = true;
    ac.abort();
    await s.close().catch(() => undefined);
  });

  await filled(0);
  await switchTo('st-live', 'a second timeline');
  let committedUpTo = 0;
  // Commits keep the subscription's window (max_uncommitted_events=50) open until everything arrived.
  const committer = (async () => {
    while (!consumed) {
      const batches = s.batches();
      if (batches.length > committedUpTo) {
        const r = await s.commit(batches.slice(committedUpTo).map((l) => l.cursor));
        assert.ok(r.status === 204 || r.status === 200, r.text);
        committedUpTo = batches.length;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await filled(1);
  await switchTo('default', 'a third timeline, back on the default storage');
  await filled(2);
  stop = true;
  await publisher;
  const total = published[0]!.length + published[1]!.length;
  assert.ok(total > 30, `enough traffic (${total} events)`);
  const deadline = Date.now() + 10_000;
  while ((low[0]!.length + low[1]!.length < total || s.events().length < total) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  consumed = true;
  await committer;
  if (s.batches().length > committedUpTo) assert.equal((await s.commit(s.batches().slice(committedUpTo).map((l) => l.cursor))).status, 204);
  ac.abort();
  await lowDone;
  for (const p of [0, 1]) {
    assert.deepEqual(low[p], published[p], `low-level partition ${p}: every event once, in order`);
    const viaSub = s.events().filter((e) => e.metadata['partition'] === String(p)).map((e) => e.order_number);
    assert.deepEqual(viaSub, published[p], `subscription partition ${p}: every event once, in order`);
  }
  assert.ok(lowOffsets.some((o) => o.startsWith('001-0001-')) && lowOffsets.some((o) => o.startsWith('001-0002-')) && lowOffsets.some((o) => o.startsWith('001-0003-')), `cursors of all three timelines were seen: ${lowOffsets.join(' ')}`);
  await s.close();

  // A restart: everything is still readable from BEGIN, and the cursors committed across timelines hold.
  broker = await broker.restart();
  const again = await fetch(`${broker.url}/event-types/tl.live/events?batch_limit=1000&batch_flush_timeout=1&stream_timeout=1`, {
    headers: { 'X-Svc-Cursors': JSON.stringify([{ partition: '0', offset: 'BEGIN' }, { partition: '1', offset: 'BEGIN' }]) },
  });
  const lines = (await again.text()).trim().split('\n').map((l) => JSON.parse(l) as { cursor: { partition: string }; events?: { order_number: string }[] });
  for (const p of [0, 1]) {
    assert.deepEqual(lines.filter((l) => l.cursor.partition === String(p)).flatMap((l) => (l.events ?? []).map((e) => e.order_number)), published[p]);
  }
  const stats = await call(broker.url, 'GET', `/subscriptions/${subId}/stats`);
  const unconsumed = (stats.body as { items: { partitions: { unconsumed_events: number }[] }[] }).items[0]!.partitions.map((p) => p.unconsumed_events);
  assert.deepEqual(unconsumed, [0, 0], 'everything committed, across three timelines');
  assert.equal((await req('POST', '/event-types/tl.live/events', [businessEvent('after', { metadata: { eid: crypto.randomUUID(), occurred_at: '2026-11-22T10:00:00Z', partition: '0' } })])).status, 200);
  const parts = (await req('GET', '/event-types/tl.live/partitions')).body as { newest_available_offset: string }[];
  assert.match(parts[0]!.newest_available_offset, /^001-0003-/);
});
