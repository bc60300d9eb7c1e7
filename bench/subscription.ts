/**
 * `npm run bench:subscription`: the high-level API of one broker process (issue 4, "Tests and
 * measurements"). The broker is a child process (dist/main.js) on a temp data dir; this process is the
 * client (undici).
 *
 *   (s1) consumption through a subscription: a preloaded backlog over 8 partitions, one stream with
 *        batch_limit=1000 and max_uncommitted_events=10000, the client commits the cursor of EVERY
 *        batch (up to 8 commits in flight, each acknowledged); timed until every event arrived and
 *        every commit was answered. Target: at least 50,000 events/s.
 *   (s2) commits per second: a stream with batch_limit=1 hands out M cursors (one event each), then
 *        the client commits them one per request with K requests in flight. Target: at least 2,000/s.
 *        Commit latency p50/p99 from the client.
 *
 *   npm run bench:subscription                 # default, ~1 min
 *   npm run bench:subscription -- --quick      # smoke run
 *   npm run bench:subscription -- --runs 3     # three runs, fresh broker each
 *   npm run bench:subscription -- --no-build   # do not rebuild dist/ first
 */
import { Pool } from 'undici';
import { buildBroker, CpuMeter, startBroker, type BrokerProcess } from './lib/broker.js';
import { batchBodies, eventTypeBody } from './lib/events.js';
import { publishPool, summarize } from './lib/load.js';
import { http } from './lib/http.js';
import { fmtInt, fmtMs, median } from './lib/stats.js';

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const quick = process.argv.includes('--quick');
const runs = Number(argValue('--runs') ?? '1');
const cfg = quick ? { backlog: 100_000, commitCursors: 5_000 } : { backlog: 500_000, commitCursors: 20_000 };
const commitConcurrency = 16;
const commitsInFlightWhileStreaming = 8;
const log = (s: string) => process.stdout.write(s + '\n');

async function preload(broker: BrokerProcess, name: string, events: number): Promise<number> {
  const bodies = batchBodies(1000, quick ? 8 : 24, 7_000_000);
  const pool = publishPool(broker.url, 4);
  const batches = events / 1000;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches) {
        const b = next++;
        const res = await pool.request({ method: 'POST', path: `/event-types/${name}/events`, headers: { 'content-type': 'application/json' }, body: bodies[b % bodies.length]! });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`preload: ${res.statusCode} ${text.slice(0, 300)}`);
      }
    }),
  );
  await pool.close();
  return events / ((performance.now() - t0) / 1000);
}

async function createSubscription(broker: BrokerProcess, eventType: string, app: string): Promise<string> {
  const r = await http(broker.url, 'POST', '/subscriptions', { owning_application: app, event_types: [eventType], read_from: 'begin' });
  if (r.status !== 201) throw new Error(`subscription: ${r.status} ${JSON.stringify(r.json)}`);
  return (r.json as { id: string }).id;
}

/** Splits NDJSON chunks into lines and hands each line's cursor (parsed from its head) and event count (from the offsets) to onLine. */
class CursorLines {
  readonly #prev = new Map<string, number>();
  #rest: Buffer | undefined;
  events = 0;
  lines = 0;
  constructor(readonly onLine: (cursorJson: string, events: number) => void) {}

  feed(chunk: Buffer): void {
    let buf = this.#rest === undefined ? chunk : Buffer.concat([this.#rest, chunk]);
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(10, pos);
      if (nl === -1) break;
      this.#line(buf.subarray(pos, Math.min(nl, pos + 400)).toString('latin1'));
      pos = nl + 1;
    }
    this.#rest = pos < buf.length ? Buffer.from(buf.subarray(pos)) : undefined;
    buf = Buffer.alloc(0);
  }

  #line(head: string): void {
    const end = head.indexOf('}');
    if (!head.startsWith('{"cursor":') || end < 0) throw new Error(`unexpected line: ${head.slice(0, 120)}`);
    const cursorJson = head.slice('{"cursor":'.length, end + 1);
    const c = JSON.parse(cursorJson) as { partition: string; offset: string };
    const offset = c.offset === 'BEGIN' ? -1 : Number(c.offset.slice(9));
    const n = offset - (this.#prev.get(c.partition) ?? -1);
    this.#prev.set(c.partition, offset);
    this.lines++;
    this.events += n;
    this.onLine(cursorJson, n);
  }
}

interface S1 {
  events: number;
  batches: number;
  commits: number;
  outdated: number;
  seconds: number;
  eventsPerS: number;
  commitLatency: ReturnType<typeof summarize>;
  brokerCores: number;
  benchCores: number;
}

/** (s1) consume `total` events through a subscription, committing every batch. */
async function consumeWithCommits(broker: BrokerProcess, id: string, total: number): Promise<S1> {
  const commits = new Pool(broker.url, { connections: commitsInFlightWhileStreaming, pipelining: 1 });
  const stream = new Pool(broker.url, { connections: 1, bodyTimeout: 120_000, headersTimeout: 60_000 });
  const cpu = new CpuMeter(broker.pid);
  const t0 = performance.now();
  const res = await stream.request({ method: 'GET', path: `/subscriptions/${id}/events?batch_limit=1000&max_uncommitted_events=10000&batch_flush_timeout=1&stream_limit=${total}` });
  if (res.statusCode !== 200) throw new Error(`stream: ${res.statusCode} ${await res.body.text()}`);
  const streamId = res.headers['x-svc-streamid'] as string;
  const latencies: number[] = [];
  let committed = 0;
  let outdated = 0;
  let failure: Error | undefined;
  const pending = new Set<Promise<void>>();
  const lines = new CursorLines((cursorJson, n) => {
    if (n === 0) return; // keep-alive
    const sent = performance.now();
    const p = commits
      .request({ method: 'POST', path: `/subscriptions/${id}/cursors`, headers: { 'content-type': 'application/json', 'x-svc-streamid': streamId }, body: `{"items":[${cursorJson}]}` })
      .then(async (r) => {
        const text = await r.body.text();
        latencies.push(performance.now() - sent);
        if (r.statusCode === 204) committed++;
        else if (r.statusCode === 200) outdated++;
        else failure ??= new Error(`commit: ${r.statusCode} ${text.slice(0, 300)}`);
      })
      .catch((err: Error) => {
        failure ??= err;
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  });
  for await (const chunk of res.body) lines.feed(chunk as Buffer);
  await Promise.all(pending);
  const seconds = (performance.now() - t0) / 1000;
  const c = cpu.read();
  await commits.close();
  await stream.close();
  if (failure !== undefined) throw failure;
  if (lines.events !== total) throw new Error(`consumed ${lines.events} events, expected ${total}`);
  return {
    events: lines.events,
    batches: committed + outdated,
    commits: committed,
    outdated,
    seconds,
    eventsPerS: lines.events / seconds,
    commitLatency: summarize(latencies),
    ...c,
  };
}

interface S2 {
  commits: number;
  outdated: number;
  seconds: number;
  commitsPerS: number;
  latency: ReturnType<typeof summarize>;
  brokerCores: number;
  benchCores: number;
}

/** (s2) receive `m` one-event batches, then commit their cursors one per request, `k` in flight. */
async function commitRate(broker: BrokerProcess, id: string, m: number, k: number): Promise<S2> {
  const stream = new Pool(broker.url, { connections: 1, bodyTimeout: 120_000 });
  const res = await stream.request({ method: 'GET', path: `/subscriptions/${id}/events?batch_limit=1&max_uncommitted_events=${m}&batch_flush_timeout=1&commit_timeout=60` });
  if (res.statusCode !== 200) throw new Error(`stream: ${res.statusCode} ${await res.body.text()}`);
  const streamId = res.headers['x-svc-streamid'] as string;
  const cursors: string[] = [];
  const lines = new CursorLines((cursorJson, n) => {
    if (n > 0) cursors.push(cursorJson);
  });
  for await (const chunk of res.body) {
    lines.feed(chunk as Buffer);
    if (cursors.length >= m) break;
  }
  // Commit in the order received, interleaved over partitions as the stream sent them.
  const pool = new Pool(broker.url, { connections: k, pipelining: 1 });
  const latencies: number[] = [];
  let next = 0;
  let committed = 0;
  let outdated = 0;
  const cpu = new CpuMeter(broker.pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: k }, async () => {
      while (next < m) {
        const cursor = cursors[next++]!;
        const sent = performance.now();
        const r = await pool.request({ method: 'POST', path: `/subscriptions/${id}/cursors`, headers: { 'content-type': 'application/json', 'x-svc-streamid': streamId }, body: `{"items":[${cursor}]}` });
        const text = await r.body.text();
        latencies.push(performance.now() - sent);
        if (r.statusCode === 204) committed++;
        else if (r.statusCode === 200) outdated++;
        else throw new Error(`commit: ${r.statusCode} ${text.slice(0, 300)}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const c = cpu.read();
  await pool.close();
  await stream.destroy();
  return { commits: committed, outdated, seconds, commitsPerS: m / seconds, latency: summarize(latencies), ...c };
}

async function oneRun(runNo: number): Promise<{ s1: S1; s2: S2 }> {
  const broker = await startBroker();
  log(`\n=== run ${runNo}: broker pid ${broker.pid} on ${broker.url}`);
  try {
    const name = 'bench.subscribed';
    const created = await http(broker.url, 'POST', '/event-types', eventTypeBody(name, 'random'));
    if (created.status !== 201) throw new Error(`event type: ${created.status}`);
    const rate = await preload(broker, name, cfg.backlog);
    log(`preload: ${fmtInt(cfg.backlog)} events over 8 partitions (${fmtInt(rate)} ev/s)`);

    const s1 = await consumeWithCommits(broker, await createSubscription(broker, name, 'bench-consumer'), cfg.backlog);
    log(
      `(s1) subscription consumption, batch_limit 1000, a commit per batch: ${fmtInt(s1.eventsPerS)} ev/s ` +
        `(${fmtInt(s1.events)} events in ${s1.seconds.toFixed(2)} s; ${fmtInt(s1.batches)} commits: ${fmtInt(s1.commits)} 204, ${fmtInt(s1.outdated)} 200/outdated; ` +
        `commit latency p50 ${fmtMs(s1.commitLatency.p50)} ms p99 ${fmtMs(s1.commitLatency.p99)} ms); ` +
        `broker CPU ${s1.brokerCores.toFixed(2)} cores, bench ${s1.benchCores.toFixed(2)} — target >= 50,000 ev/s`,
    );

    const s2 = await commitRate(broker, await createSubscription(broker, name, 'bench-committer'), cfg.commitCursors, commitConcurrency);
    log(
      `(s2) commits, one cursor per request, ${commitConcurrency} in flight: ${fmtInt(s2.commitsPerS)} commits/s ` +
        `(${fmtInt(cfg.commitCursors)} in ${s2.seconds.toFixed(2)} s; ${fmtInt(s2.commits)} 204, ${fmtInt(s2.outdated)} outdated); ` +
        `latency p50 ${fmtMs(s2.latency.p50)} ms p99 ${fmtMs(s2.latency.p99)} ms max ${fmtMs(s2.latency.max)} ms; ` +
        `broker CPU ${s2.brokerCores.toFixed(2)} cores, bench ${s2.benchCores.toFixed(2)} — target >= 2,000/s`,
    );
    return { s1, s2 };
  } finally {
    await broker.stop();
  }
}

async function main(): Promise<void> {
  if (!process.argv.includes('--no-build')) buildBroker();
  const results: { s1: S1; s2: S2 }[] = [];
  for (let i = 1; i <= runs; i++) results.push(await oneRun(i));
  if (runs > 1) {
    const s1 = results.map((r) => r.s1.eventsPerS);
    const s2 = results.map((r) => r.s2.commitsPerS);
    log(`\nmedian of ${runs}: (s1) ${fmtInt(median(s1))} ev/s [${fmtInt(Math.min(...s1))}..${fmtInt(Math.max(...s1))}]; (s2) ${fmtInt(median(s2))} commits/s [${fmtInt(Math.min(...s2))}..${fmtInt(Math.max(...s2))}]`);
  }
  const failed = results.some((r) => r.s1.eventsPerS < 50_000 || r.s2.commitsPerS < 2_000);
  log(failed ? 'BELOW TARGET in at least one run' : 'targets met in every run');
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
