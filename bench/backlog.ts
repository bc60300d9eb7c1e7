/**
 * `npm run bench:backlog`: consumption of a mixed backlog as a user meets it (issue 9, section 5).
 *
 * A backlog is written first in batches of 1000 (4 producers) and then in batches of 10 (64
 * producers) into an event type of 4 partitions with hash partitioning (the business events of
 * `npm run bench`), then read once from BEGIN over HTTP: one low-level stream on all partitions
 * (X-Svc-Cursors), batch_limit 1000, stream_limit = the backlog, counted by cursor offsets as in
 * `npm run bench` (bench/lib/consume.ts). Figures: events/s of the whole read and per 2 s window, and
 * the broker's VmRSS (/proc/<pid>/status, every 200 ms) before, at its peak and at the end of the read.
 *
 *   npm run bench:backlog                               # single node, this build, 1M + 300k events
 *   npm run bench:backlog -- --ab DIR --rounds 2        # and the build in DIR (DIR/dist/main.js), alternating
 *   npm run bench:backlog -- --cluster                  # three local nodes (RF 3), read from the node that
 *                                                       # leads the fewest of the partitions
 *   npm run bench:backlog -- --big 1000000 --small 300000 --no-build
 *   npm run bench:backlog -- --cpu-prof DIR             # brokers run with --cpu-prof (profiles per pid in DIR)
 *   npm run bench:backlog -- --broker-env K=V,K=V       # settings for every broker started
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { Client, type Pool } from 'undici';
import { brokerEntryOf, buildBroker, cpuSeconds, RssSampler, rssBytes, startBroker } from './lib/broker.js';
import { startBrookCluster } from './lib/clusters.js';
import { beginCursors, LineCounter } from './lib/consume.js';
import { batchBodies, eventTypeBody } from './lib/events.js';
import { publishPool, RoundRobin, type Requester } from './lib/load.js';
import { fmtInt, median, sleep } from './lib/stats.js';

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const abRoot = argValue('--ab');
const rounds = Number(argValue('--rounds') ?? '1');
const clusterMode = process.argv.includes('--cluster');
const big = Number(argValue('--big') ?? '1000000');
const small = Number(argValue('--small') ?? '300000');
const partitions = 4;
const batchLimit = Number(argValue('--batch-limit') ?? '1000');
const targetEventsPerS = 150_000;
const cpuProfDir = argValue('--cpu-prof');
const nodeArgs = cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`];
/** Extra settings for every broker started, e.g. --broker-env BROOK_PARTITION_MEMORY_ENTRIES=64. */
const brokerEnv = Object.fromEntries((argValue('--broker-env') ?? '').split(',').filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

const log = (s: string) => process.stdout.write(s + '\n');
const mb = (b: number) => (b / 1e6).toFixed(0);
const la = () => loadavg().map((l) => l.toFixed(2)).join(' ');

interface Figure {
  label: string;
  round: number;
  write1000: number;
  write10: number;
  events: number;
  seconds: number;
  eventsPerS: number;
  windows: number[];
  rssBefore: number;
  rssMax: number;
  rssEnd: number;
  readerCores: number;
  load: number[];
  mismatches: number;
}

/**
 * Publishes `total` events as batches of `size` with `producers` in a closed loop; ev/s. A batch not
 * answered 200 is counted, its first failure printed, and sent again (more than 200 failures end the run).
 */
async function write(pool: Requester, path: string, size: number, producers: number, total: number, seed: number): Promise<number> {
  const bodies = batchBodies(size, size === 1000 ? 24 : 500, seed);
  const batches = total / size;
  let next = 0;
  let failed = 0;
  let first: string | undefined;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (next < batches) {
        const b = next++;
        for (;;) {
          const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: bodies[b % bodies.length]! });
          const text = await res.body.text();
          if (res.statusCode === 200) break;
          failed++;
          if (first === undefined) {
            const failedItem = /\{[^{}]*"publishing_status":"(?:failed|aborted)"[^{}]*\}/.exec(text)?.[0];
            first = `${res.statusCode} ${failedItem ?? text.slice(0, 300)}`;
          }
          if (failed > 200) throw new Error(`writing: more than 200 batches not acknowledged; first: ${first}`);
        }
      }
    }),
  );
  if (failed > 0) log(`    writing batches of ${size}: ${failed} batch(es) NOT acknowledged and sent again; first: ${first}`);
  return total / ((performance.now() - t0) / 1000);
}

/** Reads the whole backlog from BEGIN on one node, sampling the node's RSS and the read progress. */
async function read(url: string, pid: number, eventType: string, total: number): Promise<Omit<Figure, 'label' | 'round' | 'write1000' | 'write10' | 'load'>> {
  const path = `/event-types/${eventType}/events?batch_limit=${batchLimit}&stream_limit=${total}&batch_flush_timeout=1`;
  const rssBefore = rssBytes(pid);
  const rss = new RssSampler(pid, 200).start();
  const cpu0 = cpuSeconds(pid);
  const counter = new LineCounter();
  const windows: number[] = [];
  let lastCount = 0;
  const progress = setInterval(() => {
    windows.push((counter.events - lastCount) / 2);
    lastCount = counter.events;
  }, 2000);
  const client = new Client(url, { bodyTimeout: 300_000, headersTimeout: 60_000 });
  const t0 = performance.now();
  const mono0 = process.hrtime.bigint() / 1000n;
  try {
    const res = await client.request({ method: 'GET', path, headers: { 'x-svc-cursors': beginCursors(partitions) } });
    if (res.statusCode !== 200) throw new Error(`stream answered ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
    for await (const chunk of res.body) counter.feed(chunk as Buffer);
  } finally {
    clearInterval(progress);
    await client.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`    read window on the monotonic clock (for profile-summary --window): ${mono0} ${process.hrtime.bigint() / 1000n}`);
  const m = rss.stop();
  return {
    events: counter.events,
    seconds,
    eventsPerS: counter.events / seconds,
    windows,
    rssBefore,
    rssMax: m.max,
    rssEnd: m.last,
    readerCores: (cpuSeconds(pid) - cpu0) / seconds,
    mismatches: counter.sampleMismatches,
  };
}

function report(f: Figure): void {
  log(
    `  ${f.label} round ${f.round}: wrote ${fmtInt(big)} in batches of 1000 (${clusterMode ? '6 producers' : '4 producers'}) at ${fmtInt(f.write1000)} ev/s, then ${fmtInt(small)} in batches of 10 (${clusterMode ? '240' : '64'} producers) at ${fmtInt(f.write10)} ev/s; ` +
      `read ${fmtInt(f.events)} events in ${f.seconds.toFixed(1)} s = ${fmtInt(f.eventsPerS)} ev/s (target >= ${fmtInt(targetEventsPerS)}: ${f.eventsPerS >= targetEventsPerS ? 'MET' : 'MISSED'}); ` +
      `RSS before ${mb(f.rssBefore)} MB, max ${mb(f.rssMax)} MB (+${mb(f.rssMax - f.rssBefore)}), end ${mb(f.rssEnd)} MB; reader node CPU ${f.readerCores.toFixed(2)} cores; ` +
      `sample mismatches ${f.mismatches}; load at start ${f.load.map((l) => l.toFixed(2)).join(' ')}`,
  );
  log(`    ev/s per 2 s window: ${f.windows.map((w) => fmtInt(w)).join(' ')}`);
}

async function singleNode(label: 'old' | 'new', round: number): Promise<Figure> {
  const load = loadavg();
  const broker = await startBroker(label === 'old' ? { entry: brokerEntryOf(abRoot!), nodeArgs, env: brokerEnv } : { nodeArgs, env: brokerEnv });
  try {
    const name = 'bench.mixed-backlog';
    const res = await fetch(`${broker.url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody(name, 'hash', partitions)) });
    if (res.status !== 201) throw new Error(`creating ${name}: ${res.status} ${await res.text()}`);
    const path = `/event-types/${name}/events`;
    let pool: Pool = publishPool(broker.url, 4);
    const write1000 = await write(pool, path, 1000, 4, big, 0);
    await pool.close();
    pool = publishPool(broker.url, 64);
    const write10 = await write(pool, path, 10, 64, small, 10_000_000);
    await pool.close();
    await sleep(1000);
    const r = await read(broker.url, broker.pid, name, big + small);
    return { label, round, write1000, write10, load, ...r };
  } finally {
    await broker.stop();
  }
}

async function cluster(round: number): Promise<Figure> {
  const load = loadavg();
  const c = await startBrookCluster({ env: { ...brokerEnv, BROOK_REPLICATION_FACTOR: '3' }, nodeArgs });
  try {
    const name = 'bench.mixed-backlog';
    const leader = await c.leader();
    const res = await fetch(`${leader.url}/event-types`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody(name, 'hash', partitions)) });
    if (res.status !== 201) throw new Error(`creating ${name}: ${res.status} ${await res.text()}`);
    await sleep(3000);
    const path = `/event-types/${name}/events`;
    let pool = new RoundRobin(c.members.map((m) => publishPool(m.url, 4)));
    const write1000 = await write(pool, path, 1000, 6, big, 0);
    await pool.close();
    // Batches of 10 through three nodes commit with a latency of a few hundred ms on this machine
    // (bench:cluster), so more producers than on one node keep the write phase within minutes.
    pool = new RoundRobin(c.members.map((m) => publishPool(m.url, 240)));
    const write10 = await write(pool, path, 10, 240, small, 10_000_000);
    await pool.close();
    await sleep(2000);
    // Read from the node that leads the fewest partitions of the event type.
    const view = (await (await fetch(`${c.members[0]!.url}/cluster`)).json()) as { partitions: { event_type: string; partition: string; leader: number }[] };
    const leads = new Map(c.members.map((m) => [m.id, [] as string[]]));
    for (const p of view.partitions.filter((p) => p.event_type === name)) leads.get(p.leader)?.push(p.partition);
    const reader = [...c.members].sort((a, b) => leads.get(a.id)!.length - leads.get(b.id)!.length)[0]!;
    log(`  cluster: partition leaders ${view.partitions.filter((p) => p.event_type === name).map((p) => `${p.partition}->${p.leader}`).join(', ')}; reading from node ${reader.id} (leads [${leads.get(reader.id)!.join(', ')}], follows the rest)`);
    const r = await read(reader.url, reader.pid, name, big + small);
    return { label: `cluster node ${reader.id}`, round, write1000, write10, load, ...r };
  } finally {
    await c.stop();
  }
}

async function main(): Promise<void> {
  log(`brook bench:backlog ${new Date().toISOString()}; ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}`);
  log(`uptime: ${readFileSync('/proc/loadavg', 'utf8').trim()}; the machine is shared: other work may be running on the same cores`);
  if (!process.argv.includes('--no-build')) buildBroker();
  log(
    `backlog: ${fmtInt(big)} events in batches of 1000, then ${fmtInt(small)} in batches of 10; ${partitions} partitions, hash; read from BEGIN, batch_limit ${batchLimit}` +
      (clusterMode ? '; three local nodes, RF 3, all on the same cores as the reader' : abRoot === undefined ? '' : `; old = ${brokerEntryOf(abRoot)}, new = this checkout`),
  );
  const figures: Figure[] = [];
  for (let round = 1; round <= rounds; round++) {
    if (clusterMode) {
      const f = await cluster(round);
      figures.push(f);
      report(f);
      continue;
    }
    const labels: ('old' | 'new')[] = abRoot === undefined ? ['new'] : round % 2 === 1 ? ['old', 'new'] : ['new', 'old'];
    for (const label of labels) {
      const f = await singleNode(label, round);
      figures.push(f);
      report(f);
    }
  }
  if (abRoot !== undefined && !clusterMode) {
    const o = figures.filter((f) => f.label === 'old');
    const n = figures.filter((f) => f.label === 'new');
    log(
      `\nsummary: old ${fmtInt(median(o.map((f) => f.eventsPerS)))} ev/s, RSS peak ${mb(median(o.map((f) => f.rssMax)))} MB; ` +
        `new ${fmtInt(median(n.map((f) => f.eventsPerS)))} ev/s, RSS peak ${mb(median(n.map((f) => f.rssMax)))} MB; ` +
        `new/old per round ${n.map((f, k) => (f.eventsPerS / (o[k]?.eventsPerS ?? NaN)).toFixed(2)).join(', ')}`,
    );
  }
  log(`end: load average ${la()}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
