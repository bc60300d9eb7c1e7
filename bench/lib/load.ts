/**
 * Publishing load over HTTP with undici: a closed loop (N producers, each sends its next batch when the
 * previous one is answered) for throughput, and an open loop (requests sent on a fixed schedule
 * whatever the responses do) for latency, measured from the scheduled send time so queueing delay is
 * counted (no coordinated omission).
 */
import { Pool } from 'undici';
import { percentile } from './stats.js';

/** What the loops need of a pool: `request`. A Pool, or a RoundRobin over pools of several nodes. */
export type Requester = Pick<Pool, 'request'>;

/** Spreads requests over the pools of several nodes, one after the other. */
export class RoundRobin implements Requester {
  #next = 0;
  constructor(readonly pools: readonly Pool[]) {}
  request: Pool['request'] = ((opts: Parameters<Pool['request']>[0]) => this.pools[this.#next++ % this.pools.length]!.request(opts)) as Pool['request'];
  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.close()));
  }
}

export function publishPool(url: string, connections: number): Pool {
  return new Pool(url, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export function summarize(latencies: number[]): LatencySummary {
  const s = latencies.sort((a, b) => a - b);
  const sum = s.reduce((a, b) => a + b, 0);
  return {
    count: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    p999: percentile(s, 99.9),
    max: s[s.length - 1] ?? NaN,
    mean: s.length > 0 ? sum / s.length : NaN,
  };
}

export interface PublishResult {
  events: number;
  requests: number;
  seconds: number;
  eventsPerS: number;
  bytesPerS: number;
  errors: number;
  firstError?: string;
  latency: LatencySummary;
}

/** POSTs one body; `okStatus` is the success status (200 for publishing, 204 for a settings write). */
async function send(pool: Requester, path: string, body: Buffer, okStatus = 200): Promise<{ status: number; text?: string }> {
  const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body });
  if (res.statusCode === okStatus) {
    await res.body.dump();
    return { status: okStatus };
  }
  return { status: res.statusCode, text: (await res.body.text()).slice(0, 500) };
}

/** Closed loop: counts batches answered 200 whose answer arrived within [warm-up end, end]. */
export async function closedLoop(opts: {
  pool: Requester;
  path: string;
  bodies: readonly Buffer[];
  eventsPerBody: number;
  producers: number;
  warmupMs: number;
  durationMs: number;
  /** The status that counts as success (default 200). */
  okStatus?: number;
}): Promise<PublishResult> {
  const okStatus = opts.okStatus ?? 200;
  const t0 = performance.now();
  const measureFrom = t0 + opts.warmupMs;
  const measureTo = measureFrom + opts.durationMs;
  let events = 0;
  let requests = 0;
  let bytes = 0;
  let errors = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: opts.producers }, async (_, p) => {
      let k = p * 7;
      while (performance.now() < measureTo) {
        const body = opts.bodies[k++ % opts.bodies.length]!;
        const sent = performance.now();
        let r: { status: number; text?: string };
        try {
          r = await send(opts.pool, opts.path, body, okStatus);
        } catch (err) {
          r = { status: 0, text: String(err) };
        }
        const done = performance.now();
        if (r.status !== okStatus) {
          errors++;
          firstError ??= `${r.status} ${r.text ?? ''}`;
          continue;
        }
        if (sent >= measureFrom && done <= measureTo) latencies.push(done - sent);
        if (done >= measureFrom && done <= measureTo) {
          events += opts.eventsPerBody;
          requests++;
          bytes += body.length;
        }
      }
    }),
  );
  const seconds = opts.durationMs / 1000;
  const result: PublishResult = {
    events,
    requests,
    seconds,
    eventsPerS: events / seconds,
    bytesPerS: bytes / seconds,
    errors,
    latency: summarize(latencies),
  };
  if (firstError !== undefined) result.firstError = firstError;
  return result;
}

/**
 * Open loop: request i is due at start + i / rate; the sender fires every due request at each tick
 * (so a late tick sends a small burst, as a real fleet of producers would), and each latency is
 * measured from the due time to the end of the response.
 */
export async function openLoop(opts: {
  pool: Requester;
  path: string;
  bodies: readonly Buffer[];
  requestsPerS: number;
  warmupMs: number;
  durationMs: number;
  /** The status that counts as success (default 200). */
  okStatus?: number;
}): Promise<PublishResult & { sendLagP99Ms: number; inFlightMax: number }> {
  const okStatus = opts.okStatus ?? 200;
  const interval = 1000 / opts.requestsPerS;
  const start = performance.now() + 20;
  const total = Math.floor(((opts.warmupMs + opts.durationMs) / 1000) * opts.requestsPerS);
  const measureFrom = start + opts.warmupMs;
  const latencies: number[] = [];
  const sendLags: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let events = 0;
  let bytes = 0;
  let requests = 0;
  let inFlight = 0;
  let inFlightMax = 0;
  const pending: Promise<void>[] = [];
  let i = 0;
  const eventsPerBody = (opts.bodies[0]!.toString('latin1').match(/"eid":/g) ?? []).length;

  await new Promise<void>((finished) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + i * interval <= now) {
        const due = start + i * interval;
        const body = opts.bodies[i % opts.bodies.length]!;
        i++;
        if (due >= measureFrom) sendLags.push(now - due);
        inFlight++;
        if (inFlight > inFlightMax) inFlightMax = inFlight;
        pending.push(
          send(opts.pool, opts.path, body, okStatus)
            .catch((err: unknown) => ({ status: 0, text: String(err) }))
            .then((r) => {
              inFlight--;
              const done = performance.now();
              if (r.status !== okStatus) {
                errors++;
                firstError ??= `${r.status} ${r.text ?? ''}`;
                return;
              }
              if (due >= measureFrom) {
                latencies.push(done - due);
                events += eventsPerBody;
                bytes += body.length;
                requests++;
              }
            }),
        );
      }
      if (i >= total) {
        finished();
        return;
      }
      setTimeout(tick, Math.max(0, start + i * interval - performance.now()));
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
  });
  await Promise.all(pending);
  sendLags.sort((a, b) => a - b);
  const seconds = opts.durationMs / 1000;
  const result = {
    events,
    requests,
    seconds,
    eventsPerS: events / seconds,
    bytesPerS: bytes / seconds,
    errors,
    latency: summarize(latencies),
    sendLagP99Ms: percentile(sendLags, 99),
    inFlightMax,
  };
  return firstError === undefined ? result : { ...result, firstError };
}
