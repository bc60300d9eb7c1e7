// Goal: a stream over three partitions asks its reader for a whole number of bytes per partition. On a
// node holding no replica, a read goes to a replica through the transport's Read service, whose wire
// form carries the bound as a u32 (transport/forward-codec.ts): 4 MiB / 3 was refused there ("not a
// u32"), so every remote read of such a stream failed (found by the host simulation's subscription
// consumers, seed 2). Method: both stream drivers over a reader that refuses a fractional bound as
// the wire codec does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toOffset, type Offset } from '../core/offset.js';
import { runLowLevelStream } from './low-level-stream.js';
import type { PartitionReader, StoredEvent } from './ports.js';
import { SubscriptionStream } from './subscription-stream.js';

function wireStrictReader(asked: number[]): PartitionReader {
  return {
    bounds: () => ({ oldest: 0 as Offset, newest: toOffset(0) }),
    read: async (_topic, _p, after, _max, maxBytes) => {
      asked.push(maxBytes);
      if (!Number.isInteger(maxBytes) || maxBytes < 0 || maxBytes > 2 ** 32 - 1) throw new Error(`read.max_bytes: not a u32: ${maxBytes}`);
      const out: StoredEvent[] = [];
      if (after < 0) out.push({ offset: toOffset(0), bytes: Buffer.from('{}') });
      return out;
    },
    waitForEvents: (_t, _p, _after, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
  };
}

/** A sink that keeps the lines it is written and stops the stream once it holds `n`. */
function collectThenStop(lines: string[], n: number, ac: AbortController): { write(line: Buffer): boolean; drain(): Promise<void> } {
  return {
    write: (line) => {
      lines.push(line.toString());
      if (lines.length === n) ac.abort();
      return true;
    },
    drain: () => Promise.resolve(),
  };
}

test('a low-level stream over three partitions reads a whole number of bytes per partition', async () => {
  const asked: number[] = [];
  const ac = new AbortController();
  const lines: string[] = [];
  const sink = collectThenStop(lines, 3, ac);
  await runLowLevelStream(
    wireStrictReader(asked),
    sink,
    {
      topic: 1,
      partitions: ['0', '1', '2'].map((partition) => ({ partition, after: toOffset(-1) })),
      params: { batchLimit: 1, batchFlushTimeoutMs: 1000, streamLimit: 0, streamTimeoutMs: 0, streamKeepAliveLimit: 0 },
      encode: (b) => Buffer.from(String(b.cursor)),
      monotonicMs: () => performance.now(),
    },
    ac.signal,
  );
  assert.equal(lines.length, 3);
  assert.ok(asked.length >= 3 && asked.every((n) => Number.isInteger(n)), `asked ${asked.join(', ')}`);
});

test('a subscription stream streaming three partitions reads a whole number of bytes per partition', async () => {
  const asked: number[] = [];
  const ac = new AbortController();
  const lines: string[] = [];
  const partitions = ['0', '1', '2'].map((partition) => ({ event_type: 'e', partition, topic: 1 }));
  const stream = new SubscriptionStream({
    id: 's',
    params: { batchLimit: 1, batchFlushTimeoutMs: 1000, streamLimit: 0, streamTimeoutMs: 0, streamKeepAliveLimit: 0, maxUncommittedEvents: 10, commitTimeoutMs: 60_000 },
    view: { alive: () => true, assigned: () => partitions, releasing: () => [], committed: () => -1, release: async () => undefined },
    reader: wireStrictReader(asked),
    encode: (_p, b) => Buffer.from(String(b.cursor)),
    monotonicMs: () => performance.now(),
  });
  const sink = collectThenStop(lines, 3, ac);
  await stream.run(sink, ac.signal);
  assert.equal(lines.length, 3);
  assert.ok(asked.length >= 3 && asked.every((n) => Number.isInteger(n)), `asked ${asked.join(', ')}`);
});
