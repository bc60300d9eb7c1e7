// Goal: GET /metrics answers compatibility.md's JSON object filled with real figures, and
// GET /metrics/prometheus the Prometheus text exposition with the publish and commit latency
// histograms; the figures move with real traffic (publishing, streams, commits).
// Method: a real broker; traffic through HTTP; the metrics read before and after.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, readLines, startTestBroker, type TestBroker } from '../testing/broker-harness.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';

let broker: TestBroker;
before(async () => {
  broker = await startTestBroker();
  assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('mx.orders'))).status, 201);
});
after(async () => {
  await broker.destroy();
});

interface Json {
  version: string;
  gauges: Record<string, { value: number }>;
  counters: Record<string, { count: number }>;
  histograms: Record<string, Record<string, number>>;
  meters: Record<string, { count: number; mean_rate: number }>;
  timers: Record<string, Record<string, number>>;
}
async function metrics(): Promise<Json> {
  const r = await call(broker.url, 'GET', '/metrics');
  assert.equal(r.status, 200, r.text);
  return r.body as Json;
}
const count = (m: Json, name: string) => m.counters[name]?.count ?? 0;

test('the JSON has the shape of compatibility.md and real gauges', async () => {
  const m = await metrics();
  assert.deepEqual(Object.keys(m).sort(), ['counters', 'gauges', 'histograms', 'meters', 'timers', 'version']);
  assert.match(m.version, /^\d+\.\d+\.\d+/);
  assert.ok(m.gauges['brook.storage.bytes']!.value > 0, 'the RocksDB directory has bytes');
  assert.equal(m.gauges['brook.metadata.raft.is.leader']!.value, 1, 'a single node leads its metadata group');
  assert.ok(m.gauges['brook.metadata.raft.applied.index']!.value >= 1);
  assert.ok(m.gauges['brook.process.resident.memory.bytes']!.value > 10_000_000, 'process figures read at scrape time');
  assert.ok(m.gauges['brook.process.cpu.seconds']!.value > 0);
  assert.equal(m.gauges['brook.nodejs.heap.size.used.bytes'], undefined, "prom-client's process metrics are off by default");
});

test("processMetrics: true adds prom-client's Node process metrics", async () => {
  const b = await startTestBroker({ processMetrics: true });
  try {
    const text = await (await fetch(`${b.url}/metrics/prometheus`)).text();
    assert.match(text, /^brook_nodejs_heap_size_used_bytes \d+/m);
    assert.match(text, /^brook_nodejs_eventloop_lag_seconds /m);
  } finally {
    await b.destroy();
  }
});

test('publishing moves the per-event-type counter, the meter and the publish timer', async () => {
  const before = await metrics();
  const r = await call(broker.url, 'POST', '/event-types/mx.orders/events', [businessEvent('m1'), businessEvent('m2'), businessEvent('m3')]);
  assert.equal(r.status, 200);
  const bad = await call(broker.url, 'POST', '/event-types/mx.orders/events', [{ nope: true }]);
  assert.equal(bad.status, 422);
  const after = await metrics();
  assert.equal(count(after, 'brook.events.published.mx.orders') - count(before, 'brook.events.published.mx.orders'), 3);
  assert.equal(count(after, 'brook.publish.requests.422') - count(before, 'brook.publish.requests.422'), 1);
  assert.equal(after.meters['brook.events.published.mx.orders']!.count, count(after, 'brook.events.published.mx.orders'));
  assert.equal((after.timers['brook.publish']!['count'] ?? 0) - (before.timers['brook.publish']!['count'] ?? 0), 1);
  assert.ok(after.timers['brook.publish']!['p99']! > 0);
  const perType = (m: typeof after) => m.timers['brook.publish.mx.orders'] ?? { count: 0, sum: 0 };
  assert.equal((perType(after)['count'] as number) - (perType(before)['count'] as number), 1, 'the per-event-type timer counts the publish');
  assert.ok((perType(after)['sum'] as number) > (perType(before)['sum'] as number));
  assert.equal(after.timers['brook.publish.mx.orders']!['duration_units'], 'milliseconds');
});

test('publish requests refused before publishing (403 blacklist, 404 unknown event type, 400 no body) are counted by status too', async () => {
  const before = await metrics();
  assert.equal((await call(broker.url, 'PUT', '/settings/blacklist/PRODUCER_ET/mx.orders')).status, 204);
  assert.equal((await call(broker.url, 'POST', '/event-types/mx.orders/events', [businessEvent('m4')])).status, 403);
  assert.equal((await call(broker.url, 'DELETE', '/settings/blacklist/PRODUCER_ET/mx.orders')).status, 204);
  assert.equal((await call(broker.url, 'POST', '/event-types/mx.none/events', [businessEvent('m5')])).status, 404);
  assert.equal((await call(broker.url, 'POST', '/event-types/mx.orders/events', '')).status, 400);
  const after = await metrics();
  for (const status of ['403', '404', '400']) {
    const name = `brook.publish.requests.${status}`;
    assert.equal(count(after, name) - count(before, name), 1, name);
  }
  assert.equal(after.timers['brook.publish']!['count'], before.timers['brook.publish']!['count'], 'refusals are not publish latencies');
});

test('streams: open streams gauge while open, consumed events counted per batch', async () => {
  const before = await metrics();
  const ac = new AbortController();
  const res = await fetch(`${broker.url}/event-types/mx.orders/events?batch_limit=10&batch_flush_timeout=1`, {
    headers: { 'X-Svc-Cursors': JSON.stringify([{ partition: '0', offset: 'BEGIN' }]) },
    signal: ac.signal,
  });
  await readLines(res, (lines) => lines.length >= 1, 5000).catch(() => undefined);
  const during = await metrics();
  assert.equal(during.gauges['brook.streams.open.low_level']!.value, 1);
  assert.ok(count(during, 'brook.events.consumed.mx.orders') - count(before, 'brook.events.consumed.mx.orders') >= 3);
  ac.abort();
  const deadline = Date.now() + 5000;
  while ((await metrics()).gauges['brook.streams.open.low_level']!.value !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal((await metrics()).gauges['brook.streams.open.low_level']!.value, 0);
});

test('a commit moves the commit timer and the Prometheus histogram; the text exposition parses', async () => {
  const sub = await call(broker.url, 'POST', '/subscriptions', { owning_application: 'mx', event_types: ['mx.orders'], read_from: 'begin' });
  const id = (sub.body as { id: string }).id;
  const s = await SubscriptionStreamClient.open(broker.url, id, 'batch_limit=10&batch_flush_timeout=1');
  try {
    await s.waitFor((x) => x.events().length >= 3);
    assert.equal((await metrics()).gauges['brook.streams.open.subscription']!.value, 1);
    const before = await metrics();
    assert.equal((await s.commitAll())!.status, 204);
    const after = await metrics();
    assert.equal((after.timers['brook.commit']!['count'] ?? 0) - (before.timers['brook.commit']!['count'] ?? 0), 1);
  } finally {
    await s.close();
  }
  const p = await fetch(`${broker.url}/metrics/prometheus`);
  assert.equal(p.status, 200);
  assert.match(p.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await p.text();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    assert.match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$/i, line); // prom-client writes "Nan"; Prometheus parses floats case-insensitively
  }
  const bucket = /brook_commit_duration_seconds_count (\d+)/.exec(text);
  assert.ok(bucket !== null && Number(bucket[1]) >= 1, 'commit histogram count');
  assert.match(text, /brook_publish_duration_seconds_bucket\{le="0\.005",event_type="mx\.orders"\} \d+/);
  assert.match(text, /brook_events_published_total\{event_type="mx\.orders"\} 3/);
  // The Raft host's counts: the publishes and the commit went through its turns and durable writes.
  const work = (what: string) => Number(new RegExp(`^brook_raft_host_work_total\\{what="${what}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  assert.ok(work('turns') >= 2 && work('readies') >= 2 && work('durableWrites') >= 2, `host work: turns ${work('turns')}, readies ${work('readies')}, durable writes ${work('durableWrites')}`);
  assert.ok(work('writes') >= work('durableWrites'));
  assert.equal(work('messagesSent'), 0, 'a single node sends no Raft messages');
});
