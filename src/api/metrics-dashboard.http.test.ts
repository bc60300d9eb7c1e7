// Goal: the Grafana dashboard in deploy/ (issue 11) shows the figures the issue names (publish and
// consume rates, latency percentiles, open streams, subscription lag, Raft term and leader changes,
// fsync latency, storage bytes), queries only metrics a real node exports, and the
// metrics it needs beyond the first set are real: WAL fsync latency (one observation per group
// commit), metadata leader changes, and the unconsumed events of each subscription.
// Method: a real broker with traffic (publishing, a low-level stream, a subscription stream with a
// commit); every brook_* series named in any panel query of deploy/grafana/brook-dashboard.json must
// have at least one sample in GET /metrics/prometheus; the new figures are compared with what the API
// says.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { businessEvent, businessEventType, call, readLines, startTestBroker, type TestBroker } from '../testing/broker-harness.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';

const dashboardFile = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'grafana', 'brook-dashboard.json');

let broker: TestBroker;
before(async () => {
  broker = await startTestBroker();
});
after(async () => {
  await broker.destroy();
});

const prometheus = async () => (await call(broker.url, 'GET', '/metrics/prometheus')).text;
/** The value of one sample line, e.g. sample(text, 'brook_wal_fsync_duration_seconds_count'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

type Panel = { title: string; type: string; targets?: { expr: string }[]; panels?: Panel[] };

test('every metric the dashboard queries has samples in a real node’s Prometheus exposition', async () => {
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as { panels: Panel[]; templating: { list: { query?: unknown }[] } };
  const exprs: string[] = [];
  const walk = (ps: Panel[]) => {
    for (const p of ps) {
      for (const t of p.targets ?? []) exprs.push(t.expr);
      walk(p.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating.list) if (typeof v.query === 'object' && v.query !== null) exprs.push((v.query as { query: string }).query);
  const names = new Set(exprs.flatMap((e) => [...e.matchAll(/\bbrook_[a-z0-9_]+/g)].map((m) => m[0])));
  assert.ok(names.size >= 15, `only ${names.size} metrics queried?`);
  // The figures the dashboard is for (issue 11): each has a panel that queries it.
  const wanted: [string, RegExp][] = [
    ['publish rate', /rate\(brook_events_published_total/],
    ['consume rate', /rate\(brook_events_consumed_total/],
    ['publish latency percentiles', /histogram_quantile\(0\.99, .*brook_publish_duration_seconds_bucket/],
    ['open streams', /brook_streams_open\b/],
    ['subscription lag', /brook_subscription_unconsumed_events\b/],
    ['Raft term', /brook_metadata_raft_term\b/],
    ['leader changes', /brook_metadata_raft_leader_changes_total\b/],
    ['fsync latency', /histogram_quantile\(.*brook_wal_fsync_duration_seconds_bucket/],
    ['storage bytes', /brook_storage_bytes\b/],
  ];
  for (const [what, re] of wanted) assert.ok(exprs.some((e) => re.test(e)), `no panel queries the ${what}`);

  // Traffic, so that every labelled series has a sample: publishing, a low-level stream, a subscription stream and a commit.
  assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('dash.orders'))).status, 201);
  assert.equal((await call(broker.url, 'POST', '/event-types/dash.orders/events', [businessEvent('D-1'), businessEvent('D-2')])).status, 200);
  const low = await fetch(`${broker.url}/event-types/dash.orders/events?stream_limit=2&batch_limit=2`, { headers: { 'X-Svc-Cursors': '[{"partition":"0","offset":"BEGIN"}]' } });
  await readLines(low, (l) => l.length >= 1);
  const sub = (await call(broker.url, 'POST', '/subscriptions', { owning_application: 'dash', event_types: ['dash.orders'], read_from: 'begin' })).body as { id: string };
  const s = await SubscriptionStreamClient.open(broker.url, sub.id, 'batch_limit=1&batch_flush_timeout=1');
  try {
    await s.waitFor((x) => x.events().length >= 1);
    const first = s.lines.find((l) => l.events !== undefined)!;
    assert.equal((await call(broker.url, 'POST', `/subscriptions/${sub.id}/cursors`, { items: [first.cursor] }, { 'X-Svc-StreamId': s.streamId })).status, 204);
    const text = await prometheus();
    const missing = [...names].filter((n) => !new RegExp(`^${n}(\\{| )`, 'm').test(text));
    assert.deepEqual(missing, [], 'queried by the dashboard, without a sample in /metrics/prometheus');
  } finally {
    await s.close();
  }
});

test('WAL fsync latency: every acknowledged publish is behind an fsync that the histogram and the JSON timer count', async () => {
  const before = await prometheus();
  const count0 = sample(before, 'brook_wal_fsync_duration_seconds_count') ?? 0;
  const json0 = ((await call(broker.url, 'GET', '/metrics')).body as { timers: Record<string, { count: number }> }).timers['brook.wal.fsync']!.count;
  await call(broker.url, 'POST', '/event-types', businessEventType('dash.fsync'));
  for (let i = 0; i < 3; i++) assert.equal((await call(broker.url, 'POST', '/event-types/dash.fsync/events', [businessEvent(`W-${i}`)])).status, 200);
  const after = await prometheus();
  const count1 = sample(after, 'brook_wal_fsync_duration_seconds_count')!;
  assert.ok(count1 >= count0 + 3, `three sequential publishes need three fsyncs at least: ${count0} -> ${count1}`);
  const sum = sample(after, 'brook_wal_fsync_duration_seconds_sum')!;
  assert.ok(sum > 0 && sum < count1 * 5, `fsyncs take some time, not seconds each: ${sum} s over ${count1}`);
  const json1 = ((await call(broker.url, 'GET', '/metrics')).body as { timers: Record<string, { count: number; p99: number }> }).timers['brook.wal.fsync']!;
  assert.ok(json1.count >= json0 + 3);
  assert.ok(json1.p99 > 0);
});

test('leader changes: a single node counts its own election; the counter is monotonic', async () => {
  const text = await prometheus();
  assert.match(text, /^# TYPE brook_metadata_raft_leader_changes_total counter$/m);
  assert.equal(sample(text, 'brook_metadata_raft_leader_changes_total'), 1, 'no leader -> itself');
  assert.equal(sample(await prometheus(), 'brook_metadata_raft_leader_changes_total'), 1, 'a scrape does not count again');
});

test('subscription lag: the gauge per subscription equals the sum of unconsumed_events of its stats', async () => {
  await call(broker.url, 'POST', '/event-types', businessEventType('dash.lag'));
  await call(broker.url, 'POST', '/event-types/dash.lag/events', [businessEvent('L-1'), businessEvent('L-2'), businessEvent('L-3')]);
  const sub = (await call(broker.url, 'POST', '/subscriptions', { owning_application: 'dash-lag', event_types: ['dash.lag'], read_from: 'begin' })).body as { id: string };
  const s = await SubscriptionStreamClient.open(broker.url, sub.id, 'batch_limit=1&max_uncommitted_events=1&batch_flush_timeout=1');
  try {
    await s.waitFor((x) => x.events().length >= 1);
    const first = s.lines.find((l) => l.events !== undefined)!;
    assert.equal((await call(broker.url, 'POST', `/subscriptions/${sub.id}/cursors`, { items: [first.cursor] }, { 'X-Svc-StreamId': s.streamId })).status, 204);
    const stats = (await call(broker.url, 'GET', `/subscriptions/${sub.id}/stats`)).body as { items: { partitions: { unconsumed_events?: number }[] }[] };
    const expected = stats.items.flatMap((i) => i.partitions).reduce((n, p) => n + (p.unconsumed_events ?? 0), 0);
    assert.equal(expected, 2, 'three published, one committed');
    assert.equal(sample(await prometheus(), `brook_subscription_unconsumed_events{subscription="${sub.id}"}`), expected);
  } finally {
    await s.close();
  }
});
