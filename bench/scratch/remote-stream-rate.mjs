// Three local nodes, replication factor 1 (so two nodes hold no replica of a partition), one event type
// of one partition with a backlog of N events; then low-level streams from BEGIN on the node holding
// the replica and on one that holds none, batch_limit 1 and the default, stream_limit = the backlog
// (or LIMIT1 for batch_limit=1), timed to the last line; events/s. Each node first streams 2,000
// events unmeasured (warm-up). BLS: the batch_limits measured (default 1,1000; 'default' for none given, which is 1).
//   npm run build:bench && node bench/scratch/remote-stream-rate.mjs [N=10000] [LIMIT1=10000] [ENTRY=dist/main.js of another build]
import { startBrookCluster } from '../../dist-bench/bench/lib/clusters.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { countingStream, beginCursors } from '../../dist-bench/bench/lib/consume.js';
import { SubscriptionStreamClient } from '../../dist/testing/subscription-client.js';
const SUBN = Number(process.env.SUBN ?? 2000);
const [N = 10_000, LIMIT1 = 10_000] = process.argv.slice(2, 4).map(Number);
const entry = process.argv[4];
const cluster = await startBrookCluster({ n: 3, env: { BROOK_REPLICATION_FACTOR: '1' }, ...(entry ? { entry } : {}) });
try {
  const [m1] = cluster.members;
  const name = 'rr';
  const r = await http(m1.url, 'POST', '/event-types', eventTypeBody(name, 'random', 1));
  if (r.status >= 300) throw new Error(`create: ${r.status} ${JSON.stringify(r.json)}`);
  const bodies = batchBodies(1000, Math.ceil(N / 1000), 1);
  for (const b of bodies) {
    for (;;) {
      const res = await fetch(`${m1.url}/event-types/${name}/events`, { method: 'POST', body: b, headers: { 'content-type': 'application/json' } });
      await res.text();
      if (res.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  // Which node holds the replica: the one whose partitions answer says so, else ask /cluster.
  const views = await Promise.all(cluster.members.map(async (m) => (await http(m.url, 'GET', '/cluster')).json));
  let holder;
  for (const [k, v] of views.entries()) {
    const s = JSON.stringify(v);
    if (process.env.SHOW) console.log(k + 1, s.slice(0, 2000));
  }
  holder = views[0].partitions.find((p) => p.event_type === name).replica_nodes[0];
  console.log(`backlog ${N} events, replica on node ${holder}, build ${entry ?? 'this checkout'}`);
  // Warm-up, not measured: 2,000 events with batch_limit 100 on every node (the stream code compiled).
  for (const m of cluster.members) await countingStream(m.url, `/event-types/${name}/events?stream_limit=2000&batch_limit=100&batch_flush_timeout=1`, beginCursors(1));
  // REPEAT=n measures each stream n times; ONLY=replica measures the replica's node only.
  const measured = process.env.ONLY === 'replica' ? cluster.members.filter((m) => m.id === holder) : cluster.members;
  for (const m of measured.flatMap((m) => Array.from({ length: Number(process.env.REPEAT ?? 1) }, () => m))) {
    for (const bl of (process.env.BLS ?? '1,1000').split(',')) {
      const limit = bl === '1' ? LIMIT1 : N;
      const path = `/event-types/${name}/events?stream_limit=${limit}&batch_flush_timeout=1${bl !== 'default' ? `&batch_limit=${bl}` : ''}`;
      const res = await countingStream(m.url, path, beginCursors(1));
      console.log(`node ${m.id}${m.id === holder ? ' (replica)' : ''} batch_limit ${bl}: ${res.events} events in ${res.seconds.toFixed(2)} s = ${Math.round(res.eventsPerS)} ev/s (${res.lines} lines)${res.events < limit ? ` ENDED EARLY (${limit} asked)` : ''}`);
    }
  }
  // A subscription stream with a window of one event (max_uncommitted_events=1, batch_limit=1), from
  // the start, each event's cursor committed on the same node as it arrives: SUBN events.
  for (const m of SUBN > 0 ? cluster.members : []) {
    const sub = await http(m.url, 'POST', '/subscriptions', { owning_application: `bench-${m.id}`, event_types: [name], read_from: 'begin' });
    const id = sub.json.id;
    const t0 = performance.now();
    const c = await SubscriptionStreamClient.open(m.url, id, `max_uncommitted_events=1&batch_limit=1&stream_limit=${SUBN}&batch_flush_timeout=1`);
    for (let k = 1; k <= SUBN; k++) {
      await c.waitFor((x) => x.batches().length >= k || x.isEnded, 60_000, `event ${k}`);
      if (c.batches().length < k) break;
      const r = await c.commit([c.batches()[k - 1].cursor]);
      if (r.status >= 300) throw new Error(`commit ${r.status} ${r.text}`);
    }
    const got = c.events().length;
    const sec = (performance.now() - t0) / 1000;
    await c.close();
    console.log(`node ${m.id}${m.id === holder ? ' (replica)' : ''} subscription max_uncommitted_events 1: ${got} events in ${sec.toFixed(2)} s = ${Math.round(got / sec)} ev/s${got < SUBN ? ` ENDED EARLY (${SUBN} asked)` : ''}`);
  }
} finally {
  // KEEP=1 keeps the nodes' logs (the directory is printed).
  await cluster.stop(process.env.KEEP === '1');
  if (process.env.KEEP === '1') console.log('logs in', cluster.dir);
}
