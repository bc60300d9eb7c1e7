/**
 * Storage micro-benchmark (a script, not a test): durable append throughput of PartitionStore on a
 * real RocksDB, for 1000-event and 10-event batches of ~500-byte JSON events, at several numbers of
 * concurrent producers; the same without fsync for comparison; cold reads from RocksDB; and the cost
 * of verifying every batch at start (verifyOnStart: 'all').
 *
 *   npm run build:bench && node dist-bench/bench/storage.js [--quick]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Offset } from '../src/core/offset.js';
import { openRocksKv, PartitionStore } from '../src/log/index.js';

async function tempDir(name: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), `brook-bench-${name}-`));
  return { dir, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

const quick = process.argv.includes('--quick');
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };

function makeEvent(i: number): Buffer {
  const body = {
    metadata: { eid: `4a7b2c1e-9d3f-4e8a-b5c6-${String(i).padStart(12, '0')}`, occurred_at: '2026-11-22T10:00:00.000Z', received_at: '2026-11-22T10:00:00.123Z', flow_id: 'JMOSBeWfPuEtOMoG7nCrQkbm', event_type: 'order.created', partition: String(i % 8), version: '1.0.0' },
    order_number: `ORD-${i}`, customer: { id: `C${i % 10000}`, tier: 'gold', country: 'DE' },
    items: [{ sku: 'SKU-12345', qty: 2, price_cents: 1999 }, { sku: 'SKU-67890', qty: 1, price_cents: 4999 }],
    total_cents: 8997, currency: 'EUR', note: 'x'.repeat(40),
  };
  return Buffer.from(JSON.stringify(body));
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function appendRun(opts: { batch: number; producers: number; totalEvents: number; fsync: boolean; partitions: number }) {
  const t = await tempDir('bench');
  const kv = await openRocksKv(t.dir, { fsync: opts.fsync });
  const store = await PartitionStore.open(kv, { clock });
  const pool = Array.from({ length: 2000 }, (_, i) => makeEvent(i));
  const eventBytes = pool.reduce((a, b) => a + b.length, 0) / pool.length;
  const perProducer = Math.ceil(opts.totalEvents / opts.batch / opts.producers);
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: opts.producers }, async (_, p) => {
    for (let i = 0; i < perProducer; i++) {
      const start = (p * 7919 + i * opts.batch) % (pool.length - opts.batch);
      const t0 = performance.now();
      const [r] = await store.append([{ topic: 1, partition: (p + i) % opts.partitions, events: pool.slice(start, start + opts.batch) }]);
      latencies.push(performance.now() - t0);
      if (!r!.ok) throw r!.error;
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const events = perProducer * opts.producers * opts.batch;
  latencies.sort((a, b) => a - b);
  const result = {
    ...opts, events, eventBytes: Math.round(eventBytes),
    evPerS: Math.round(events / seconds), mbPerS: +((events * eventBytes) / seconds / 1e6).toFixed(1),
    appendsPerS: Math.round((perProducer * opts.producers) / seconds),
    commits: store.stats.commits, walSyncs: kv.stats.walSyncs, walSwitches: kv.stats.walSwitches,
    p50Ms: +pct(latencies, 50).toFixed(2), p99Ms: +pct(latencies, 99).toFixed(2),
  };
  return { result, t, kv, store };
}

async function main(): Promise<void> {
  const total1000 = quick ? 100_000 : 400_000;
  const total10 = quick ? 20_000 : 100_000;
  const runs = [
    { batch: 1000, producers: 1, totalEvents: total1000, fsync: true, partitions: 8 },
    { batch: 1000, producers: 4, totalEvents: total1000, fsync: true, partitions: 8 },
    { batch: 1000, producers: 4, totalEvents: total1000, fsync: false, partitions: 8 },
    { batch: 10, producers: 1, totalEvents: total10 / 4, fsync: true, partitions: 8 },
    { batch: 10, producers: 16, totalEvents: total10, fsync: true, partitions: 8 },
    { batch: 10, producers: 64, totalEvents: total10, fsync: true, partitions: 8 },
    { batch: 10, producers: 64, totalEvents: total10, fsync: false, partitions: 8 },
  ];
  for (const r of runs) {
    const { result, t, kv, store } = await appendRun(r);
    console.log(JSON.stringify(result));
    await store.close();
    await kv.close();
    await t.remove();
  }

  // Cold reads and full start-up verification over one larger log.
  const { result, t, kv, store } = await appendRun({ batch: 1000, producers: 4, totalEvents: quick ? 200_000 : 1_000_000, fsync: true, partitions: 8 });
  console.log(JSON.stringify({ setup: 'read/verify log', events: result.events }));
  await store.close();
  await kv.close();
  const kv2 = await openRocksKv(t.dir);
  const cold = await PartitionStore.open(kv2, { clock, tailCacheBytesMax: 0 });
  let read = 0;
  let bytes = 0;
  const r0 = performance.now();
  for (let p = 0; p < 8; p++) {
    let after = -1;
    for (;;) {
      const evs = await cold.read(1, p, after as Offset, 1000, 1 << 20);
      if (evs.length === 0) break;
      read += evs.length;
      for (const e of evs) bytes += e.bytes.length;
      after = evs[evs.length - 1]!.offset;
    }
  }
  const rs = (performance.now() - r0) / 1000;
  console.log(JSON.stringify({ coldRead: { events: read, evPerS: Math.round(read / rs), mbPerS: +(bytes / rs / 1e6).toFixed(1) } }));
  await cold.close();
  const v0 = performance.now();
  const verified = await PartitionStore.open(kv2, { clock, verifyOnStart: 'all' });
  const vs = (performance.now() - v0) / 1000;
  const rep = verified.startReport!;
  console.log(JSON.stringify({ verifyAll: { batches: rep.batchesVerified, mb: +(rep.bytesVerified / 1e6).toFixed(1), seconds: +vs.toFixed(2), mbPerS: +(rep.bytesVerified / vs / 1e6).toFixed(1) } }));
  await verified.close();
  const c0 = performance.now();
  const clean = await PartitionStore.open(kv2, { clock });
  console.log(JSON.stringify({ verifyAfterCleanShutdown: { batches: clean.startReport!.batchesVerified, ms: +(performance.now() - c0).toFixed(1) } }));
  await clean.close();
  await kv2.close();
  await t.remove();
}

await main();
