// RSS of a fresh, idle broker of each build (after 3 s), and after a short load of (b) (500 batches of
// 10 a second for 5 s): what reserving the memory tail's slabs at start costs in resident memory.
//   npm run build:bench && node bench/scratch/idle-rss.mjs LABEL=ROOT ...
import { startBroker, brokerEntryOf, rssBytes } from '../../dist-bench/bench/lib/broker.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { setTimeout as sleep } from 'node:timers/promises';

const bodies = batchBodies(10, 500, 1_000_000);
for (const a of process.argv.slice(2)) {
  const [label, root] = a.split('=');
  const b = await startBroker({ entry: brokerEntryOf(root) });
  try {
    await sleep(3000);
    const idle = rssBytes(b.pid);
    await http(b.url, 'POST', '/event-types', eventTypeBody('lat.x', 'hash'));
    const pool = publishPool(b.url, 32);
    await openLoop({ pool, path: '/event-types/lat.x/events', bodies, requestsPerS: 500, warmupMs: 0, durationMs: 5000 });
    await pool.close();
    console.log(`${label}: RSS idle ${(idle / 2 ** 20).toFixed(1)} MiB, after 5 s of (b) ${(rssBytes(b.pid) / 2 ** 20).toFixed(1)} MiB`);
  } finally {
    await b.stop();
  }
}
