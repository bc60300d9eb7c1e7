// The broker's CPU per publish request (batches of 10 events, 526 B each, hashed over 8 partitions) with
// a fixed number of requests in flight, for builds side by side. With 1 producer every publish is alone
// in its turn of the node host whatever the machine's load (the case of (b) at a moderate rate on a quiet
// machine: nothing shares the per-turn and per-group work), so the CPU it takes is a property of the
// build, not of the load; with more producers, publishes share turns as the timing lets them.
// CPU: user + system time of the broker process (/proc/PID/stat, 10 ms ticks) over the measured window.
//   npm run build:bench
//   node bench/scratch/cpu-per-publish.mjs [ROUNDS] [SECONDS] [PRODUCERS,...] LABEL=ROOT ...
// Rounds alternate the order of the builds (forward, then backward).
import { join } from 'node:path';
import { startBroker, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool, closedLoop } from '../../dist-bench/bench/lib/load.js';

const args = process.argv.slice(2);
const builds = args.filter((a) => a.includes('=')).map((a) => a.split('='));
const [rounds = '2', seconds = '8', producersArg = '1,8'] = args.filter((a) => !a.includes('='));
const producerCounts = producersArg.split(',').map(Number);
const bodies = batchBodies(10, 500, 0);
const results = new Map(); // `${label} ${producers}` -> [ms per request, ...]

async function measure(label, root) {
  const b = await startBroker({ entry: join(root, 'dist', 'main.js') });
  try {
    const res = await fetch(`${b.url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('scratch.orders', 'hash')) });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    const path = '/event-types/scratch.orders/events';
    for (const np of producerCounts) {
      const pool = publishPool(b.url, np);
      await closedLoop({ pool, path, bodies, eventsPerBody: 10, producers: np, warmupMs: 0, durationMs: 2000 });
      const c0 = cpuSeconds(b.pid);
      const r = await closedLoop({ pool, path, bodies, eventsPerBody: 10, producers: np, warmupMs: 0, durationMs: Number(seconds) * 1000 });
      const c1 = cpuSeconds(b.pid);
      await pool.close();
      const ms = ((c1 - c0) * 1000) / r.requests;
      const key = `${label} ${np}`;
      (results.get(key) ?? results.set(key, []).get(key)).push(ms);
      console.log(`${label} producers ${np}: ${r.requests} requests (${(r.requests / r.seconds).toFixed(0)}/s, errors ${r.errors}), broker CPU ${(c1 - c0).toFixed(2)} s = ${ms.toFixed(3)} ms per request`);
    }
  } finally {
    await b.stop();
  }
}

for (let round = 0; round < Number(rounds); round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const [label, root] of order) await measure(label, root);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log('\nbroker CPU per request (ms), median of rounds; ratio to the first build');
for (const np of producerCounts) {
  const base = median(results.get(`${builds[0][0]} ${np}`));
  console.log(`  producers ${np}: ${builds.map(([l]) => { const m = median(results.get(`${l} ${np}`)); return `${l} ${m.toFixed(3)} (${(m / base).toFixed(2)})`; }).join(', ')}`);
}
