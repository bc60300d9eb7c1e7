/**
 * Drives one low-level stream: reads committed events from the partitions, lets the pure batcher
 * decide what to send, writes NDJSON lines to the sink, and waits for whichever comes first: new
 * events (notify on append, no polling), the batcher's next deadline, or the client going away.
 *
 * Backpressure: the sink's write() returns false when the socket buffer is full, and the driver
 * awaits drain before reading more, so a consumer that stops reading holds at most one batch of
 * read-ahead per partition in memory, never the backlog.
 */
import type { Offset } from '../core/offset.js';
import { streamReadAheadBytesMax, timerDelayMsMax } from '../core/limits.js';
import { StreamBatcher, type OutBatch } from './batcher.js';
import type { PartitionReader } from './ports.js';
import type { StreamParams } from './stream-params.js';

export interface StreamSink {
  /** Writes a line; false means wait for drain() before writing more. */
  write(line: Buffer): boolean;
  drain(): Promise<void>;
}

export interface LowLevelStreamSpec {
  topic: number;
  partitions: { partition: string; after: Offset }[];
  params: StreamParams;
  /** Encodes a batch to its line (cursor format lives with the caller). */
  encode(batch: OutBatch): Buffer;
  monotonicMs(): number;
  /**
   * Calls `fn` after `ms` and returns what cancels it (defaults to setTimeout; the simulator passes
   * one on its virtual clock, so a stream's flush timer is an event of its queue).
   */
  timer?(ms: number, fn: () => void): () => void;
}

function realTimer(ms: number, fn: () => void): () => void {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
}

export type StreamEnd = 'limit' | 'client_closed' | 'error';

export async function runLowLevelStream(
  reader: PartitionReader,
  sink: StreamSink,
  spec: LowLevelStreamSpec,
  signal: AbortSignal,
): Promise<StreamEnd> {
  const batcher = new StreamBatcher(spec.params, spec.partitions, spec.monotonicMs());
  const readCursor = new Map<string, Offset>(spec.partitions.map((p) => [p.partition, p.after]));
  // Whole bytes: a remote read carries the bound as a u32 on the wire (transport/forward-codec.ts).
  const perPartitionBytes = Math.max(Math.floor(streamReadAheadBytesMax / spec.partitions.length), 1_000_000);

  while (!signal.aborted) {
    let readSomething = false;
    for (const { partition } of spec.partitions) {
      const room = batcher.capacity(partition);
      if (room === 0) continue;
      const after = readCursor.get(partition)!;
      const events = await reader.read(spec.topic, Number(partition), after, room, perPartitionBytes);
      if (events.length > 0) {
        batcher.offer(partition, events);
        readCursor.set(partition, events[events.length - 1]!.offset);
        readSomething = true;
      }
    }
    if (signal.aborted) break;

    const { batches, done, wakeAtMs } = batcher.poll(spec.monotonicMs());
    for (const b of batches) {
      if (!sink.write(spec.encode(b))) await sink.drain();
      if (signal.aborted) return 'client_closed';
    }
    if (done) return 'limit';
    if (readSomething || batches.length > 0) continue;

    await waitForWork(reader, spec, batcher, readCursor, wakeAtMs - spec.monotonicMs(), signal);
  }
  return 'client_closed';
}

/** Sleeps until events arrive on a partition that can take them, the deadline passes, or abort. */
async function waitForWork(
  reader: PartitionReader,
  spec: LowLevelStreamSpec,
  batcher: StreamBatcher,
  readCursor: Map<string, Offset>,
  delayMs: number,
  signal: AbortSignal,
): Promise<void> {
  const round = new AbortController();
  const onAbort = () => round.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const waits: Promise<unknown>[] = [];
  for (const { partition } of spec.partitions) {
    if (batcher.capacity(partition) === 0) continue;
    // A waiter that rejects after the race is decided must not become an unhandled rejection.
    waits.push(reader.waitForEvents(spec.topic, Number(partition), readCursor.get(partition)!, round.signal).catch(() => undefined));
  }
  let cancel: (() => void) | undefined;
  if (Number.isFinite(delayMs)) {
    const timer = spec.timer?.bind(spec) ?? realTimer;
    waits.push(new Promise<void>((resolve) => (cancel = timer(Math.min(timerDelayMsMax, Math.max(0, delayMs)), resolve))));
  }
  waits.push(new Promise<void>((resolve) => round.signal.addEventListener('abort', () => resolve(), { once: true })));
  try {
    await Promise.race(waits);
  } finally {
    cancel?.();
    round.abort();
    signal.removeEventListener('abort', onAbort);
  }
}
