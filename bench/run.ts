/**
 * `npm run bench`: end-to-end benchmark of one broker process (issue 2, "Tests and measurements").
 *
 * The broker runs as a child process (node dist/main.js, rebuilt incrementally first unless --no-build)
 * on a temp data dir with log level warn; this process is the load generator (undici, keep-alive, pipelining 1).
 * Measured, each next to the single-core floor measured in this same process and run:
 *   (a) publish throughput, closed loop: batches of 1000 (4 producers) and of 10 (64 producers);
 *   (b) publish latency at a fixed 5,000 events/s: open loop, batches of 10 at 500 requests/s;
 *   (c) low-level consumption of a preloaded backlog from BEGIN, batch_limit=1000, all partitions;
 *   (d) broker RSS with one stalled consumer over that backlog, idle and then under publishing.
 *
 *   npm run bench                  # default run, ~2 min
 *   npm run bench -- --quick       # smoke run, ~30 s
 *   npm run bench -- --runs 3      # three full runs (fresh broker each), medians and ranges
 *   npm run bench -- --cpu-prof DIR  # broker child runs with --cpu-prof, profiles written to DIR
 *   npm run bench -- --json FILE   # also write every figure as JSON
 *   npm run bench -- --only a,b,c,d                # a subset of the phases
 *   npm run bench -- --no-build    # do not rebuild dist/ first (the broker is dist/main.js)
 *   npm run bench -- --broker-node-args "--trace-gc" --broker-log FILE  # extra node flags, broker output to FILE.<run>
 *   npm run bench -- --broker-env MALLOC_MMAP_THRESHOLD_=1048576 --ab main=DIR  # environment variables for this
 *                                        # checkout's broker only (repeatable), e.g. glibc's malloc tunables, which
 *                                        # are read at process start; the --ab builds run without them
 *   npm run bench -- --ab DIR --runs 2   # A/B: each run measures this build and the build in DIR
 *                                        # (DIR/dist/main.js, e.g. an older commit unpacked with git archive,
 *                                        # npm ci && npm run build), in alternating order; ratios new/old
 *   npm run bench -- --ab main=DIR1 --ab old=DIR2 --runs 2   # several builds beside this one, each named;
 *                                        # rounds alternate the start order (DIR1 DIR2 new / new DIR2 DIR1);
 *                                        # ratios new/each per round
 *   npm run bench -- --ab s4=.::--max-semi-space-size=4      # DIR::FLAGS: that build's broker gets node options
 *                                        # (comma-separated), e.g. this checkout with and without a V8 option
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import type { EventType } from '../src/metadata/types.js';
import { brokerEntryOf, buildBroker, CpuMeter, RssSampler, rssBytes, startBroker, type BrokerProcess } from './lib/broker.js';
import { beginCursors, countingStream, stalledStream } from './lib/consume.js';
import { batchBodies, eventTypeBody } from './lib/events.js';
import { measureFloor } from './lib/floor.js';
import { closedLoop, openLoop, publishPool, type PublishResult } from './lib/load.js';
import { http } from './lib/http.js';
import { fmtInt, fmtMs, median, sleep } from './lib/stats.js';

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const quick = process.argv.includes('--quick');
const runs = Number(argValue('--runs') ?? '1');
const cpuProfDir = argValue('--cpu-prof');
const jsonOut = argValue('--json');
const brokerNodeArgs = argValue('--broker-node-args')?.split(' ').filter((a) => a !== '') ?? [];
const brokerLog = argValue('--broker-log');
/** `--broker-env VAR=VALUE` (repeatable): for this checkout's broker only, not for the --ab builds. */
const brokerEnv: Record<string, string> = Object.fromEntries(
  process.argv.flatMap((a, i) => {
    const v = process.argv[i + 1];
    const eq = v?.indexOf('=') ?? -1;
    return a === '--broker-env' && v !== undefined && eq > 0 ? [[v.slice(0, eq), v.slice(eq + 1)]] : [];
  }),
);
const only = argValue('--only')?.split(',');
const want = (phase: string) => only === undefined || only.includes(phase);
/**
 * The builds measured beside this checkout's (`--ab [NAME=]DIR`, repeatable): a single one without a
 * name is 'old', as before.
 */
const others: { label: string; root: string; nodeArgs: string[] }[] = process.argv.flatMap((a, i) => {
  const v = process.argv[i + 1];
  if (a !== '--ab' || v === undefined) return [];
  const eq = v.indexOf('=');
  const [root, flags] = (eq > 0 ? v.slice(eq + 1) : v).split('::') as [string, string | undefined];
  return [{ label: eq > 0 ? v.slice(0, eq) : 'old', root, nodeArgs: flags === undefined ? [] : flags.split(',') }];
});
if (others.some((o) => o.label === 'new') || new Set(others.map((o) => o.label)).size !== others.length) throw new Error('--ab names must be distinct and not "new"');
const abRoot = others.length === 0 ? undefined : others;
const rootOf = (label: string) => others.find((o) => o.label === label)?.root;

const cfg = quick
  ? { warmupMs: 500, durationMs: 3000, latencyWarmupMs: 500, latencyMs: 4000, backlog: 100_000, stallMs: 3000, floorWarmupMs: 300, floorMs: 1000 }
  : { warmupMs: 2000, durationMs: 10_000, latencyWarmupMs: 2000, latencyMs: 10_000, backlog: 1_000_000, stallMs: 10_000, floorWarmupMs: 1000, floorMs: 3000 };
const partitions = 8;
const producers1000 = 4;
const producers10 = 64;
const latencyRate = 500; // requests/s of 10 events = 5,000 events/s
const consumeBatchLimit = 1000;

const mb = (b: number) => (b / 1e6).toFixed(1);
/** The monotonic clock in microseconds, V8's profile clock (for profile-summary --window). */
const mono = () => String(process.hrtime.bigint() / 1000n);
const smb = (b: number) => (b >= 0 ? '+' : '') + mb(b);
const log = (s: string) => process.stdout.write(s + '\n');

async function createEventType(broker: BrokerProcess, name: string, strategy: 'hash' | 'random'): Promise<EventType> {
  const created = await http(broker.url, 'POST', '/event-types', eventTypeBody(name, strategy));
  if (created.status !== 201) throw new Error(`creating ${name}: ${created.status} ${JSON.stringify(created.json)}`);
  const got = await http(broker.url, 'GET', `/event-types/${name}`);
  if (got.status !== 200) throw new Error(`reading ${name}: ${got.status}`);
  const parts = await http(broker.url, 'GET', `/event-types/${name}/partitions`);
  const count = (parts.json as unknown[]).length;
  if (count !== partitions) throw new Error(`${name} has ${count} partitions, expected ${partitions}`);
  return got.json as EventType;
}

interface RunResult {
  /** 'new' (this checkout's dist/) or the name of an --ab build ('old' when unnamed). */
  label: string;
  /** The round (run number) it belongs to. */
  round: number;
  load: number[];
  eventBytes: number;
  floor1000: number;
  floor10: number;
  floorRuns: number[];
  pub1000?: PublishResult & { brokerCores: number; benchCores: number; rssMax: number };
  pub10?: PublishResult & { brokerCores: number; benchCores: number; rssMax: number };
  latency?: Awaited<ReturnType<typeof openLoop>> & { brokerCores: number; benchCores: number };
  preload?: { events: number; seconds: number; eventsPerS: number; failed: number };
  consume?: Awaited<ReturnType<typeof countingStream>> & { brokerCores: number; benchCores: number; backlogBytes: number };
  stall?: {
    backlogEvents: number;
    backlogBytes: number;
    rssBefore: number;
    receivedBeforePause: number;
    idle: { max: number; last: number };
    publishing: { max: number; last: number; events: number; eventsPerS: number };
    resumedBytes: number;
  };
}

async function oneRun(runNo: number, label: string): Promise<RunResult> {
  const abArgs = others.find((o) => o.label === label)?.nodeArgs ?? [];
  const nodeArgs = [...abArgs, ...brokerNodeArgs, ...(cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`])];
  const root = rootOf(label);
  const entry = root === undefined ? undefined : brokerEntryOf(root);
  const env = root === undefined ? brokerEnv : {};
  const broker = await startBroker({ nodeArgs, env, ...(brokerLog === undefined ? {} : { logFile: `${brokerLog}.${runNo}.${label}` }), ...(entry === undefined ? {} : { entry }) });
  const load = loadavg();
  log(
    `\n=== run ${runNo}${abRoot === undefined ? '' : ` (${label}: ${entry ?? 'dist/main.js of this checkout'})`}${Object.keys(env).length === 0 ? '' : ` with ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}`}: broker pid ${broker.pid} on ${broker.url}, data ${broker.dataDir}, ` +
      `RSS at start ${mb(rssBytes(broker.pid))} MB; load average ${load.map((l) => l.toFixed(2)).join(' ')}`,
  );
  try {
    const pubType = await createEventType(broker, 'bench.order-placed', 'hash');
    const backlogType = await createEventType(broker, 'bench.order-backlog', 'random');
    const bodies1000 = batchBodies(1000, quick ? 8 : 24, 0);
    const bodies10 = batchBodies(10, 500, 1_000_000);
    const eventBytes = (bodies1000[0]!.length - 2) / 1000;
    log(`event: business, 8 partitions; submitted size ${eventBytes.toFixed(0)} B/event (batch of 1000 = ${mb(bodies1000[0]!.length)} MB)`);

    const floorRuns: number[] = [];
    const floorOnce = (label: string) => {
      const f1000 = measureFloor(pubType, bodies1000, cfg.floorWarmupMs, cfg.floorMs);
      const f10 = measureFloor(pubType, bodies10, cfg.floorWarmupMs / 2, cfg.floorMs / 2);
      floorRuns.push(f1000.eventsPerS);
      log(`floor (${label}): batch 1000 ${fmtInt(f1000.eventsPerS)} ev/s (${f1000.mbPerS.toFixed(1)} MB/s of input); batch 10 ${fmtInt(f10.eventsPerS)} ev/s`);
      return { f1000: f1000.eventsPerS, f10: f10.eventsPerS };
    };
    const floorStart = floorOnce('before load');
    const r: RunResult = { label, round: runNo, load, eventBytes, floor1000: floorStart.f1000, floor10: floorStart.f10, floorRuns };

    const pubPath = `/event-types/${pubType.name}/events`;
    if (want('a')) {
      for (const [size, producers, bodies] of [
        [1000, producers1000, bodies1000],
        [10, producers10, bodies10],
      ] as const) {
        const pool = publishPool(broker.url, producers);
        const rss = new RssSampler(broker.pid, 250).start();
        const cpu = new CpuMeter(broker.pid);
        const from = mono();
        const res = await closedLoop({ pool, path: pubPath, bodies, eventsPerBody: size, producers, warmupMs: cfg.warmupMs, durationMs: cfg.durationMs });
        log(`(a) batch ${size} window on the monotonic clock: ${from} ${mono()} us`);
        const c = cpu.read();
        const m = rss.stop();
        await pool.close();
        const full = { ...res, ...c, rssMax: m.max };
        if (size === 1000) r.pub1000 = full;
        else r.pub10 = full;
        log(
          `(a) publish batch ${size} x ${producers} producers: ${fmtInt(res.eventsPerS)} ev/s (${mb(res.bytesPerS)} MB/s, ${fmtInt(res.requests / res.seconds)} req/s); ` +
            `latency p50 ${fmtMs(res.latency.p50)} ms p99 ${fmtMs(res.latency.p99)} ms; errors ${res.errors}${res.firstError ? ` (${res.firstError})` : ''}; ` +
            `broker CPU ${c.brokerCores.toFixed(2)} cores, bench ${c.benchCores.toFixed(2)}; broker RSS max ${mb(m.max)} MB`,
        );
      }
    }

    if (want('b')) {
      const pool = publishPool(broker.url, 32);
      const cpu = new CpuMeter(broker.pid);
      const from = mono();
      const res = await openLoop({ pool, path: pubPath, bodies: bodies10, requestsPerS: latencyRate, warmupMs: cfg.latencyWarmupMs, durationMs: cfg.latencyMs });
      log(`(b) window on the monotonic clock: ${from} ${mono()} us`);
      const c = cpu.read();
      await pool.close();
      r.latency = { ...res, ...c };
      log(
        `(b) publish latency, open loop ${latencyRate} req/s x 10 events = ${fmtInt(latencyRate * 10)} ev/s offered: achieved ${fmtInt(res.eventsPerS)} ev/s; ` +
          `p50 ${fmtMs(res.latency.p50)} ms, p90 ${fmtMs(res.latency.p90)}, p99 ${fmtMs(res.latency.p99)}, p99.9 ${fmtMs(res.latency.p999)}, max ${fmtMs(res.latency.max)} ` +
          `(n=${res.latency.count}); sender lag p99 ${fmtMs(res.sendLagP99Ms)} ms; in flight max ${res.inFlightMax}; errors ${res.errors}; ` +
          `broker CPU ${c.brokerCores.toFixed(2)} cores, bench ${c.benchCores.toFixed(2)}`,
      );
    }

    if (want('c') || want('d')) {
      // Preload the backlog: batches of 1000, 4 producers, until cfg.backlog events are acknowledged.
      const backlogPath = `/event-types/${backlogType.name}/events`;
      const preloadBodies = batchBodies(1000, quick ? 8 : 24, 5_000_000);
      const pool = publishPool(broker.url, producers1000);
      const batches = cfg.backlog / 1000;
      let next = 0;
      const t0 = performance.now();
      // A batch not answered 200 is counted and sent again (the backlog must still hold cfg.backlog
      // acknowledged events; one that failed "and may still commit" can add events beyond them, which
      // the stream_limit of (c) leaves out). More than 100 failures end the run.
      let failed = 0;
      let firstFailure: string | undefined;
      await Promise.all(
        Array.from({ length: producers1000 }, async () => {
          while (next < batches) {
            const b = next++;
            for (;;) {
              const res = await pool.request({ method: 'POST', path: backlogPath, headers: { 'content-type': 'application/json' }, body: preloadBodies[b % preloadBodies.length]! });
              const text = await res.body.text();
              if (res.statusCode === 200) break;
              failed++;
              firstFailure ??= `${res.statusCode} ${text.slice(0, 300)}`;
              if (failed > 100) throw new Error(`preload: more than 100 batches failed; first: ${firstFailure}`);
            }
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      await pool.close();
      r.preload = { events: cfg.backlog, seconds, eventsPerS: cfg.backlog / seconds, failed };
      log(
        `preload: ${fmtInt(cfg.backlog)} events into ${backlogType.name} in ${seconds.toFixed(1)} s (${fmtInt(cfg.backlog / seconds)} ev/s, batch 1000 x 4)` +
          (failed > 0 ? `; ${failed} batch(es) NOT acknowledged and sent again, first: ${firstFailure}` : ''),
      );
      await sleep(500);

      const cursors = beginCursors(partitions);
      const streamPath = `/event-types/${backlogType.name}/events?batch_limit=${consumeBatchLimit}&stream_limit=${cfg.backlog}&batch_flush_timeout=1`;
      let backlogBytes = 0;
      if (want('c')) {
        const cpu = new CpuMeter(broker.pid);
        const res = await countingStream(broker.url, streamPath, cursors);
        const c = cpu.read();
        backlogBytes = res.bytes;
        r.consume = { ...res, ...c, backlogBytes };
        log(
          `(c) consume ${fmtInt(res.events)} events from BEGIN over ${partitions} partitions, batch_limit ${consumeBatchLimit}: ${fmtInt(res.eventsPerS)} ev/s, ` +
            `${res.mbPerS.toFixed(1)} MB/s (${mb(res.bytes)} MB, ${fmtInt(res.lines)} lines, ${res.seconds.toFixed(2)} s, first byte ${fmtMs(res.firstByteMs)} ms); ` +
            `counted by cursor offsets, ${res.sampledLines} lines JSON-parsed to check: ${res.sampleMismatches} mismatches; ` +
            `broker CPU ${c.brokerCores.toFixed(2)} cores, bench ${c.benchCores.toFixed(2)}`,
        );
        if (res.events !== cfg.backlog) log(`    WARNING: expected ${cfg.backlog} events, counted ${res.events}`);
      }

      if (want('d')) {
        await sleep(1000);
        const rssBefore = rssBytes(broker.pid);
        const stallPath = `/event-types/${backlogType.name}/events?batch_limit=${consumeBatchLimit}`;
        const stalled = await stalledStream(broker.port, stallPath, cursors);
        const idle = new RssSampler(broker.pid, 200).start();
        const idleFrom = mono();
        await sleep(cfg.stallMs);
        const idleM = idle.stop();
        log(`(d) stalled idle window on the monotonic clock: ${idleFrom} ${mono()} us; RSS samples ${idle.samples.map((x) => mb(x.rss)).join(' ')} MB`);
        // Keep the consumer stalled while producers publish to the same event type (batch 1000 x 4).
        const pool = publishPool(broker.url, producers1000);
        const busy = new RssSampler(broker.pid, 200).start();
        const pub = await closedLoop({
          pool,
          path: `/event-types/${backlogType.name}/events`,
          bodies: preloadBodies,
          eventsPerBody: 1000,
          producers: producers1000,
          warmupMs: 0,
          durationMs: cfg.stallMs,
        });
        const busyM = busy.stop();
        await pool.close();
        // Resume the stalled consumer briefly: it must still be served.
        let resumedBytes = 0;
        stalled.socket.on('data', (d: Buffer) => (resumedBytes += d.length));
        stalled.socket.resume();
        await sleep(1000);
        stalled.close();
        const backlogEvents = cfg.backlog;
        const bb = backlogBytes > 0 ? backlogBytes : backlogEvents * (eventBytes + 120);
        r.stall = {
          backlogEvents,
          backlogBytes: bb,
          rssBefore,
          receivedBeforePause: stalled.receivedBytes,
          idle: { max: idleM.max, last: idleM.last },
          publishing: { max: busyM.max, last: busyM.last, events: pub.events, eventsPerS: pub.eventsPerS },
          resumedBytes,
        };
        log(
          `(d) stalled consumer over a backlog of ${fmtInt(backlogEvents)} events (${mb(bb)} MB as streamed): broker RSS before ${mb(rssBefore)} MB; ` +
            `stalled ${cfg.stallMs / 1000} s: max ${mb(idleM.max)} MB (${smb(idleM.max - rssBefore)}), end ${mb(idleM.last)} MB; ` +
            `stalled while publishing ${fmtInt(pub.eventsPerS)} ev/s for ${cfg.stallMs / 1000} s: max ${mb(busyM.max)} MB (${smb(busyM.max - rssBefore)}), end ${mb(busyM.last)} MB; ` +
            `consumer got ${mb(stalled.receivedBytes)} MB before pausing, ${mb(resumedBytes)} MB in 1 s after resuming`,
        );
      }
    }

    const floorEnd = floorOnce('after load');
    r.floor1000 = median(floorRuns);
    r.floor10 = (floorStart.f10 + floorEnd.f10) / 2;
    return r;
  } finally {
    const code = await broker.stop();
    if (code !== 0) log(`broker exited with code ${code}`);
  }
}

function verdict(ok: boolean): string {
  return ok ? 'MET' : 'MISSED';
}

function range(values: number[], f: (n: number) => string): string {
  if (values.length < 2) return f(values[0] ?? NaN);
  return `${f(median(values))} [${f(Math.min(...values))}-${f(Math.max(...values))}]`;
}

function summary(results: RunResult[]): void {
  const pick = (f: (r: RunResult) => number | undefined) => results.map(f).filter((v): v is number => v !== undefined && Number.isFinite(v));
  const floor = pick((r) => r.floor1000);
  const floor10 = pick((r) => r.floor10);
  const i = (n: number) => fmtInt(n);
  const pct = (n: number) => `${(n * 100).toFixed(0)}%`;
  const ms = (n: number) => fmtMs(n);
  const MB = (n: number) => mb(n);
  log(`\n=== summary (${results.length} run${results.length > 1 ? 's: median [min-max]' : ''}); machine: ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`);
  log(`single-core floor (parse + validate + enrich + stringify + Buffer), batch 1000: ${range(floor, i)} ev/s; batch 10: ${range(floor10, i)} ev/s`);
  const p1000 = pick((r) => r.pub1000?.eventsPerS);
  const ratio1000 = results.filter((r) => r.pub1000).map((r) => r.pub1000!.eventsPerS / r.floor1000);
  if (p1000.length > 0) {
    log(`(a) publish batch 1000 x ${producers1000}: ${range(p1000, i)} ev/s; broker/floor ${range(ratio1000, pct)} (target >= 40%: ${verdict(median(ratio1000) >= 0.4)}); p99 ${range(pick((r) => r.pub1000?.latency.p99), ms)} ms`);
  }
  const p10 = pick((r) => r.pub10?.eventsPerS);
  const ratio10 = results.filter((r) => r.pub10).map((r) => r.pub10!.eventsPerS / r.floor10);
  if (p10.length > 0) {
    log(`(a) publish batch 10 x ${producers10}: ${range(p10, i)} ev/s; broker/floor(batch 10) ${range(ratio10, pct)}; p99 ${range(pick((r) => r.pub10?.latency.p99), ms)} ms`);
  }
  const p99 = pick((r) => r.latency?.latency.p99);
  if (p99.length > 0) {
    log(
      `(b) latency at ${i(latencyRate * 10)} ev/s (batch 10, open loop): p50 ${range(pick((r) => r.latency?.latency.p50), ms)} ms, p99 ${range(p99, ms)} ms, max ${range(pick((r) => r.latency?.latency.max), ms)} ms ` +
        `(target p99 < 20 ms: ${verdict(median(p99) < 20)}); offered rate = ${range(pick((r) => (r.latency ? (latencyRate * 10) / r.floor10 : undefined)), pct)} of the batch-10 floor`,
    );
  }
  const cons = pick((r) => r.consume?.eventsPerS);
  if (cons.length > 0) {
    log(
      `(c) consume batch_limit 1000: ${range(cons, i)} ev/s, ${range(pick((r) => r.consume?.mbPerS), (n) => n.toFixed(1))} MB/s ` +
        `(target >= 100,000 ev/s: ${verdict(median(cons) >= 100_000)}); consume/floor ${range(results.filter((r) => r.consume).map((r) => r.consume!.eventsPerS / r.floor1000), pct)}`,
    );
  }
  const st = results.filter((r) => r.stall).map((r) => r.stall!);
  if (st.length > 0) {
    const idleGrowth = st.map((s) => s.idle.max - s.rssBefore);
    const busyGrowth = st.map((s) => s.publishing.max - s.rssBefore);
    const control = pick((r) => r.pub1000?.rssMax);
    log(
      `(d) stalled consumer, backlog ${range(st.map((s) => s.backlogBytes), MB)} MB: RSS before ${range(st.map((s) => s.rssBefore), MB)} MB, ` +
        `growth while stalled ${range(idleGrowth, smb)} MB (${range(st.map((s, k) => idleGrowth[k]! / s.backlogBytes), pct)} of the backlog), ` +
        `while stalled + publishing ${range(busyGrowth, smb)} MB (peak ${range(st.map((s) => s.publishing.max), MB)} MB; ` +
        `control: peak RSS during (a) batch 1000 without a stalled consumer ${range(control, MB)} MB) ` +
        `(target bounded: ${verdict(median(idleGrowth) < 0.1 * median(st.map((s) => s.backlogBytes)))})`,
    );
  }
}

/** Per round, new against `base`: each figure's ratio, and whether it got worse by more than 10 %. */
function abSummary(results: RunResult[], base: string): void {
  log(`\n=== A/B: new / ${base} per round (same run, alternating order); "worse" = more than 10 % worse`);
  const rows: { name: string; f: (r: RunResult) => number | undefined; higherIsBetter: boolean; fmt: (n: number) => string }[] = [
    { name: '(a) batch 1000 broker/floor', f: (r) => (r.pub1000 ? r.pub1000.eventsPerS / r.floor1000 : undefined), higherIsBetter: true, fmt: (n) => `${(n * 100).toFixed(0)}%` },
    { name: '(a) batch 1000 ev/s', f: (r) => r.pub1000?.eventsPerS, higherIsBetter: true, fmt: fmtInt },
    { name: '(a) batch 10 broker/floor', f: (r) => (r.pub10 ? r.pub10.eventsPerS / r.floor10 : undefined), higherIsBetter: true, fmt: (n) => `${(n * 100).toFixed(0)}%` },
    { name: '(a) batch 10 ev/s', f: (r) => r.pub10?.eventsPerS, higherIsBetter: true, fmt: fmtInt },
    { name: '(b) p50 at 5,000 ev/s (ms)', f: (r) => r.latency?.latency.p50, higherIsBetter: false, fmt: fmtMs },
    { name: '(b) p99 at 5,000 ev/s (ms)', f: (r) => r.latency?.latency.p99, higherIsBetter: false, fmt: fmtMs },
    { name: '(c) consumption ev/s', f: (r) => r.consume?.eventsPerS, higherIsBetter: true, fmt: fmtInt },
    { name: '(d) RSS growth stalled (MB)', f: (r) => (r.stall ? (r.stall.idle.max - r.stall.rssBefore) / 1e6 : undefined), higherIsBetter: false, fmt: (n) => n.toFixed(1) },
    { name: '(d) RSS growth stalled+publishing (MB)', f: (r) => (r.stall ? (r.stall.publishing.max - r.stall.rssBefore) / 1e6 : undefined), higherIsBetter: false, fmt: (n) => n.toFixed(1) },
    // Beyond the issue's figures: what the broker holds after (a)-(c), what it costs per request, and
    // batches it failed to acknowledge (the old build never failed one).
    { name: 'broker RSS max during (a) batch 1000 (MB)', f: (r) => (r.pub1000 ? r.pub1000.rssMax / 1e6 : undefined), higherIsBetter: false, fmt: (n) => n.toFixed(0) },
    { name: 'broker RSS before (d), after (a)-(c) (MB)', f: (r) => (r.stall ? r.stall.rssBefore / 1e6 : undefined), higherIsBetter: false, fmt: (n) => n.toFixed(0) },
    { name: '(a) batch 10 broker CPU per request (ms)', f: (r) => (r.pub10 ? (r.pub10.brokerCores * r.pub10.seconds * 1000) / r.pub10.requests : undefined), higherIsBetter: false, fmt: (n) => n.toFixed(3) },
    { name: '(a) batch 1000 broker CPU per event (us)', f: (r) => (r.pub1000 ? (r.pub1000.brokerCores * r.pub1000.seconds * 1e6) / r.pub1000.events : undefined), higherIsBetter: false, fmt: (n) => n.toFixed(1) },
    { name: 'preload batches not acknowledged (207)', f: (r) => r.preload?.failed, higherIsBetter: false, fmt: (n) => String(n) },
  ];
  const roundsOf = [...new Set(results.map((r) => r.round))];
  for (const row of rows) {
    const cells: string[] = [];
    const ratios: number[] = [];
    for (const k of roundsOf) {
      const o = results.find((r) => r.round === k && r.label === base);
      const n = results.find((r) => r.round === k && r.label === 'new');
      const ov = o === undefined ? undefined : row.f(o);
      const nv = n === undefined ? undefined : row.f(n);
      if (ov === undefined || nv === undefined) continue;
      const ratio = nv / ov;
      ratios.push(ratio);
      cells.push(`${base} ${row.fmt(ov)} new ${row.fmt(nv)} = ${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'}`);
    }
    if (cells.length === 0) continue;
    const m = median(ratios);
    const worse = row.higherIsBetter ? m < 0.9 : m > 1.1;
    log(`${row.name.padEnd(40)} ${cells.join('; ')}; median ratio ${m.toFixed(2)}${worse ? ' WORSE by more than 10 %' : ''}`);
  }
}

async function main(): Promise<void> {
  log(`brook bench ${quick ? '(quick)' : ''} ${new Date().toISOString()}; ${cpus().length} x ${cpus()[0]?.model ?? '?'}; Node ${process.version}`);
  if (cpuProfDir !== undefined) mkdirSync(cpuProfDir, { recursive: true });
  if (!process.argv.includes('--no-build')) {
    log('building the broker (tsc -p tsconfig.json, incremental) so dist/ matches src/ ...');
    buildBroker();
  }
  const started = performance.now();
  const results: RunResult[] = [];
  log(`load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')} (the machine is shared: other work may run on the same cores)`);
  for (let n = 1; n <= runs; n++) {
    if (abRoot === undefined) {
      results.push(await oneRun(n, 'new'));
      continue;
    }
    // Alternate the order (others, new / new, others reversed / ...) so a drift of the machine's load
    // hits every build alike.
    const order = [...abRoot.map((o) => o.label), 'new'];
    for (const label of n % 2 === 1 ? order : order.reverse()) results.push(await oneRun(n, label));
  }
  if (abRoot === undefined) summary(results);
  else {
    for (const label of [...abRoot.map((o) => o.label), 'new']) {
      const root = rootOf(label);
      log(`\n##### ${label}: ${root === undefined ? 'this checkout' : brokerEntryOf(root)}`);
      summary(results.filter((r) => r.label === label));
    }
    for (const o of abRoot) abSummary(results, o.label);
  }
  log(`load average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  log(`total ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (jsonOut !== undefined) writeFileSync(jsonOut, JSON.stringify({ quick, runs: results }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
