// Throwaway diagnosis (docs/benchmarks.md, "Partition replication"): (b) of `npm run bench` (open loop,
// 500 batches of 10 /s, 2 s + 10 s) on a fresh broker of each build in turn, with the WAL fdatasyncs the
// broker counted over the phase (/metrics/prometheus). Usage: node bench/scratch/latency-vs-fsync.mjs OLD_ROOT [rounds]
import { startBroker, brokerEntryOf, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { openLoop, publishPool } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { loadavg } from 'node:os';
const [oldRoot, roundsArg] = process.argv.slice(2);
const fsyncs = async (url) => {
  const t = await (await fetch(`${url}/metrics/prometheus`)).text();
  const num = (n) => Number(new RegExp(`^${n} ([0-9.e+-]+)$`, 'm').exec(t)?.[1] ?? NaN);
  return { count: num('brook_wal_fsync_duration_seconds_count'), sum: num('brook_wal_fsync_duration_seconds_sum') };
};
const bodies = batchBodies(10, 500, 1_000_000);
for (let round = 1; round <= Number(roundsArg ?? 2); round++) {
  for (const label of round % 2 === 1 ? ['old', 'new'] : ['new', 'old']) {
    const b = await startBroker(label === 'old' ? { entry: brokerEntryOf(oldRoot) } : {});
    try {
      await http(b.url, 'POST', '/event-types', eventTypeBody('lat.x', 'hash'));
      const pool = publishPool(b.url, 32);
      const f0 = await fsyncs(b.url);
      const c0 = cpuSeconds(b.pid);
      const t0 = performance.now();
      const r = await openLoop({ pool, path: '/event-types/lat.x/events', bodies, requestsPerS: 500, warmupMs: 2000, durationMs: 10_000 });
      const wall = (performance.now() - t0) / 1000;
      const f1 = await fsyncs(b.url);
      await pool.close();
      const n = f1.count - f0.count;
      console.log(
        `round ${round} ${label}: p50 ${r.latency.p50.toFixed(2)} ms p99 ${r.latency.p99.toFixed(2)} ms max ${r.latency.max.toFixed(1)} ms, in flight max ${r.inFlightMax}; ` +
          `fdatasync ${(n / wall).toFixed(0)}/s mean ${((1000 * (f1.sum - f0.sum)) / n).toFixed(2)} ms; broker CPU ${((cpuSeconds(b.pid) - c0) / wall).toFixed(2)} cores; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
      );
    } finally {
      await b.stop();
    }
  }
}
