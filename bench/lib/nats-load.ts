/**
 * Publishing load on NATS JetStream for the side-by-side figures of bench/cluster.ts, shaped like the
 * HTTP loops of load.ts so the two systems see the same events and the same concurrency:
 *
 * - a Brook "partition" is a JetStream stream here: `partitions` streams (BENCH0..), each R`replicas`,
 *   file storage, one subject each (bench.p0..). Each is its own Raft group in NATS, as each partition
 *   is in Brook. An event goes to the stream its order_number hashes to (Brook's hash partitioner).
 * - a Brook batch of N events (one HTTP request, answered once all its events are committed) is N
 *   `js.publish` calls sent together, and the batch counts once every PubAck has arrived.
 * - producers are spread over the servers (producer p uses the connection to server p mod n).
 * Messages carry the event's JSON text exactly as Brook receives it inside the batch body; NATS does
 * not validate, enrich or re-frame it.
 */
import { connect, StorageType, type JetStreamClient, type NatsConnection } from 'nats';
import { hashPartitionIndex } from '../../src/publishing/partitioner.js';
import { summarize, type PublishResult } from './load.js';
import { percentile } from './stats.js';

export interface NatsMessage {
  subject: string;
  data: Uint8Array;
}

export type NatsBatch = readonly NatsMessage[];

/** The events of each Brook batch body as JetStream messages, each on the subject of its partition. */
export function natsBatches(bodies: readonly Buffer[], partitions: number): NatsBatch[] {
  return bodies.map((body) =>
    (JSON.parse(body.toString('utf8')) as { order_number: string }[]).map((event) => ({
      subject: `bench.p${hashPartitionIndex([event.order_number], partitions)}`,
      data: Buffer.from(JSON.stringify(event)),
    })),
  );
}

export interface NatsClients {
  readonly connections: NatsConnection[];
  readonly js: JetStreamClient[];
  close(): Promise<void>;
}

/** `perServer` connections to each server, in server order repeated (connection k is on server k mod n). */
export async function natsClients(urls: readonly string[], perServer = 1): Promise<NatsClients> {
  const connections: NatsConnection[] = [];
  for (let r = 0; r < perServer; r++) for (const url of urls) connections.push(await connect({ servers: url, name: `brook-bench-${connections.length}` }));
  return {
    connections,
    js: connections.map((nc) => nc.jetstream({ timeout: 30_000 })),
    async close() {
      await Promise.all(connections.map((nc) => nc.drain()));
    },
  };
}

/** (Re)creates the streams BENCH0..: `replicas` copies, file storage, no limits. */
export async function createNatsStreams(nc: NatsConnection, partitions: number, replicas: number): Promise<void> {
  const jsm = await nc.jetstreamManager();
  for (let p = 0; p < partitions; p++) {
    const name = `BENCH${p}`;
    try {
      await jsm.streams.delete(name);
    } catch {
      /* not there yet */
    }
    await jsm.streams.add({ name, subjects: [`bench.p${p}`], storage: StorageType.File, num_replicas: replicas });
  }
}

/** The server each stream's leader runs on (stream info cluster.leader), e.g. { BENCH0: 'n2' }. */
export async function natsStreamLeaders(nc: NatsConnection, partitions: number): Promise<Record<string, string>> {
  const jsm = await nc.jetstreamManager();
  const out: Record<string, string> = {};
  for (let p = 0; p < partitions; p++) out[`BENCH${p}`] = (await jsm.streams.info(`BENCH${p}`)).cluster?.leader ?? '?';
  return out;
}

async function publishBatch(js: JetStreamClient, batch: NatsBatch): Promise<void> {
  await Promise.all(batch.map((m) => js.publish(m.subject, m.data)));
}

/** Closed loop: each producer publishes a batch, waits for all its acks, then the next. */
export async function natsClosedLoop(opts: {
  js: readonly JetStreamClient[];
  batches: readonly NatsBatch[];
  producers: number;
  warmupMs: number;
  durationMs: number;
}): Promise<PublishResult> {
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
      const js = opts.js[p % opts.js.length]!;
      let k = p * 7;
      while (performance.now() < measureTo) {
        const batch = opts.batches[k++ % opts.batches.length]!;
        const sent = performance.now();
        try {
          await publishBatch(js, batch);
        } catch (err) {
          errors++;
          firstError ??= String(err);
          continue;
        }
        const done = performance.now();
        if (sent >= measureFrom && done <= measureTo) latencies.push(done - sent);
        if (done >= measureFrom && done <= measureTo) {
          events += batch.length;
          requests++;
          for (const m of batch) bytes += m.data.length;
        }
      }
    }),
  );
  const seconds = opts.durationMs / 1000;
  const result: PublishResult = { events, requests, seconds, eventsPerS: events / seconds, bytesPerS: bytes / seconds, errors, latency: summarize(latencies) };
  if (firstError !== undefined) result.firstError = firstError;
  return result;
}

/**
 * Open loop, as load.ts openLoop: batch i is due at start + i / rate and sent then whatever the acks
 * do, over the connections in turn; its latency runs from the due time to its last ack.
 */
export async function natsOpenLoop(opts: {
  js: readonly JetStreamClient[];
  batches: readonly NatsBatch[];
  requestsPerS: number;
  warmupMs: number;
  durationMs: number;
}): Promise<PublishResult & { sendLagP99Ms: number; inFlightMax: number }> {
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
  await new Promise<void>((finished) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + i * interval <= now) {
        const due = start + i * interval;
        const batch = opts.batches[i % opts.batches.length]!;
        const js = opts.js[i % opts.js.length]!;
        i++;
        if (due >= measureFrom) sendLags.push(now - due);
        inFlight++;
        if (inFlight > inFlightMax) inFlightMax = inFlight;
        pending.push(
          publishBatch(js, batch).then(
            () => {
              inFlight--;
              if (due >= measureFrom) {
                latencies.push(performance.now() - due);
                events += batch.length;
                for (const m of batch) bytes += m.data.length;
                requests++;
              }
            },
            (err: unknown) => {
              inFlight--;
              errors++;
              firstError ??= String(err);
            },
          ),
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
