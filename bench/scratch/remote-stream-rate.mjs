// Three local nodes, replication factor 1 (so two nodes hold no replica of a partition), one event type
// of one partition with a backlog of N events; then low-level streams from BEGIN on the node holding
// the replica and on one that holds none, batch_limit 1 and the default, stream_limit = the backlog
// (or LIMIT1 for batch_limit=1), timed to the last line; events/s.
//   node bench/scratch/remote-stream-rate.mjs [N=10000] [LIMIT1=10000] [DIST=dist-bench dir of a build]
import { startBrookCluster } from '../../dist-bench/bench/lib/clusters.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { countingStream, beginCursors } from '../../dist-bench/bench/lib/consume.js';
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
  console.log(`backlog ${N} events, holder guess node ${holder}`);
  for (const m of cluster.members) {
    for (const bl of (process.env.BLS ?? '1,default,1000').split(',')) {
      const limit = bl === '1' ? LIMIT1 : N;
      const path = `/event-types/${name}/events?stream_limit=${limit}&batch_flush_timeout=1${bl !== 'default' ? `&batch_limit=${bl}` : ''}`;
      const res = await countingStream(m.url, path, beginCursors(1));
      console.log(`node ${m.id}${m.id === holder ? ' (replica)' : ''} batch_limit ${bl}: ${res.events} events in ${res.seconds.toFixed(2)} s = ${Math.round(res.eventsPerS)} ev/s (${res.lines} lines)`);
    }
  }
} finally {
  await cluster.stop(true);
  console.log('logs in', cluster.dir);
}
