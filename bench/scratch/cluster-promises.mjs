// Promises created per publish request on three nodes, summed over the nodes, build against build: a
// count the machine's load does not move the way it moves CPU time, as long as requests go one at a
// time (no batching shared between requests). For each build in turn (order alternating by round), a
// fresh three-node cluster (RF 3, 4 partitions, hash) whose nodes run bench/scratch/promise-count.cjs;
// WARM s of one producer publishing batches of 10 round-robin over the nodes; then SECONDS s idle and
// SECONDS s of the same one producer, counted. Per request: (promises while publishing - promises while
// idle) / requests, so timers, heartbeats and lease renewals are not counted.
//   npm run build:bench && WARM=10 SECONDS=10 node bench/scratch/cluster-promises.mjs [rounds] LABEL=ROOT ...
import { brokerEntryOf } from '../../dist-bench/bench/lib/broker.js';
import { startBrookCluster } from '../../dist-bench/bench/lib/clusters.js';
import { batchBodies, eventTypeBody } from '../../dist-bench/bench/lib/events.js';
import { closedLoop, publishPool, RoundRobin } from '../../dist-bench/bench/lib/load.js';
import { http } from '../../dist-bench/bench/lib/http.js';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const rounds = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 1;
const builds = args.map((a) => ({ label: a.slice(0, a.indexOf('=')), root: a.slice(a.indexOf('=') + 1) }));
const warmS = Number(process.env.WARM ?? 10);
const seconds = Number(process.env.SECONDS ?? 10);
const preload = fileURLToPath(new URL('./promise-count.cjs', import.meta.url));
// PROMISE_STACKS=N: every Nth promise's site is sampled; the TOP (30) sites per request are printed.
const stacksEvery = Number(process.env.PROMISE_STACKS ?? 0);
const topSites = Number(process.env.TOP ?? 30);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const typeName = 'cpu.orders';
const path = `/event-types/${typeName}/events`;
const bodies = batchBodies(10, 500, 1_000_000);

async function settled(c) {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const views = await Promise.all(c.members.map((m) => fetch(`${m.url}/cluster`).then((r) => r.json()).catch(() => undefined)));
    if (views.every((v) => v !== undefined && v.under_replicated_partitions === 0 && v.leaderless_partitions === 0 && v.partitions.filter((p) => p.event_type === typeName).every((p) => p.leader === p.preferred_leader))) return true;
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
}

async function measure(label, root, round) {
  const dir = mkdtempSync(join(tmpdir(), 'brook-promises-'));
  const c = await startBrookCluster({ env: { BROOK_REPLICATION_FACTOR: '3', PROMISE_DIR: dir }, entry: brokerEntryOf(root), nodeArgs: ['-r', preload] });
  try {
    await http(c.members[0].url, 'POST', '/event-types', eventTypeBody(typeName, 'hash', 4));
    const ok = await settled(c);
    const pools = c.members.map((m) => publishPool(m.url, 1));
    const pool = new RoundRobin(pools);
    const snapshot = async () => {
      for (const m of c.members) process.kill(m.pid, 'SIGUSR2');
      await sleep(300);
      const s = { promises: 0, posts: 0, sites: new Map() };
      for (const m of c.members) {
        const r = JSON.parse(readFileSync(join(dir, `${m.pid}.json`), 'utf8'));
        s.promises += r.promises;
        s.posts += r.posts;
        for (const [k, v] of Object.entries(r.sites ?? {})) s.sites.set(k, (s.sites.get(k) ?? 0) + v);
      }
      return s;
    };
    const run = (ms) => closedLoop({ pool, path, bodies, eventsPerBody: 10, producers: 1, warmupMs: 0, durationMs: ms });
    if (warmS > 0) await run(warmS * 1000);
    const a = await snapshot();
    await sleep(seconds * 1000);
    const b = await snapshot();
    const r = await run(seconds * 1000);
    const z = await snapshot();
    await pool.close();
    const requests = z.posts - b.posts;
    const idle = b.promises - a.promises;
    const busy = z.promises - b.promises;
    if (stacksEvery > 0) {
      // Where the promises of a request are made: sampled sites, idle subtracted, per request.
      const at = (x, k) => x.sites.get(k) ?? 0;
      const rows = [...z.sites.keys()].map((k) => [k, ((at(z, k) - at(b, k) - (at(b, k) - at(a, k))) * stacksEvery) / requests]).sort((x, y) => y[1] - x[1]);
      for (const [k, v] of rows.slice(0, topSites)) console.log(`  ${v.toFixed(1).padStart(6)} ${k}`);
    }
    return `round ${round} ${label}: ${((busy - idle) / requests).toFixed(1)} promises per request (${requests} requests, ${busy} promises publishing, ${idle} idle over as long; p50 ${r.latency.p50.toFixed(1)} ms, errors ${r.errors})${ok ? '' : ' (leaders not preferred)'}`;
  } finally {
    await c.stop();
  }
}

for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? builds : [...builds].reverse();
  for (const { label, root } of order) console.log(await measure(label, root, round));
}
