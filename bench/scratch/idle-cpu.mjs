// Idle cost of partition groups (docs/benchmarks.md, "Idle groups quiesce"): three local nodes of each
// build in turn, N event types of 8 partitions each (RF 3: every node holds every group), nothing
// published; after the groups have elected (and, in a build with quiescence, gone quiet), the CPU of the
// three nodes over 20 s, and the messages the transport sent meanwhile are not counted: CPU only.
// Usage: npm run build:bench && node bench/scratch/idle-cpu.mjs OLD_ROOT [eventTypes] [rounds]
import { brokerEntryOf, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { startBrookCluster } from '../../dist-bench/bench/lib/clusters.js';
import { eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { loadavg } from 'node:os';

const [oldRoot, typesArg, roundsArg] = process.argv.slice(2);
const types = Number(typesArg ?? 25);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
for (let round = 1; round <= Number(roundsArg ?? 2); round++) {
  for (const label of round % 2 === 1 ? ['old', 'new'] : ['new', 'old']) {
    const c = await startBrookCluster(label === 'old' ? { entry: brokerEntryOf(oldRoot) } : {});
    try {
      const leader = await c.leader();
      for (let k = 0; k < types; k++) {
        const r = await http(leader.url, 'POST', '/event-types', eventTypeBody(`idle.t${k}`, 'random', 8));
        if (r.status !== 201) throw new Error(`create idle.t${k}: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
      }
      // Elections of the new groups, leadership balancing (every 5 s), then quiet.
      await sleep(15_000);
      const pids = c.members.map((m) => m.pid);
      const c0 = pids.map(cpuSeconds);
      const t0 = performance.now();
      await sleep(20_000);
      const wall = (performance.now() - t0) / 1000;
      const cores = pids.map((p, i) => (cpuSeconds(p) - c0[i]) / wall);
      console.log(
        `round ${round} ${label}: ${types} event types x 8 partitions (${types * 8} groups + metadata, 3 replicas each), idle 20 s: ` +
          `CPU per node ${cores.map((x) => x.toFixed(3)).join(' / ')} cores, cluster ${cores.reduce((a, b) => a + b, 0).toFixed(3)}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
      );
    } finally {
      await c.stop();
    }
  }
}
