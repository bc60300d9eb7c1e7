/**
 * Where does publish tail latency come from? Three open-loop probes at the rate of bench (b)
 * (500 operations/s for 10 s, latency from the scheduled time), with no HTTP:
 *   1. fdatasync of a 6 KB append on a plain file (the disk alone);
 *   2. PartitionStore.append of 10 events, durable (RocksDB write + WAL fdatasync, group commit);
 *   3. the same without fsync.
 * Also prints the event-loop delay of this process (perf_hooks histogram) so a stall of the loop is
 * told apart from a slow disk.
 *
 *   npm run build:bench && node dist-bench/bench/latency-probe.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openRocksKv, PartitionStore } from '../src/log/index.js';
import { orderEventText } from './lib/events.js';
import { summarize } from './lib/load.js';
import { fmtMs } from './lib/stats.js';

const rate = 500;
const seconds = Number(process.argv[2] ?? '10');

async function openLoop(op: () => Promise<void>): Promise<number[]> {
  const interval = 1000 / rate;
  const total = rate * seconds;
  const start = performance.now() + 10;
  const lat: number[] = [];
  const pending: Promise<void>[] = [];
  let i = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + i * interval <= now) {
        const due = start + i * interval;
        i++;
        pending.push(op().then(() => void lat.push(performance.now() - due)));
      }
      if (i >= total) return done();
      setTimeout(tick, Math.max(0, start + i * interval - performance.now()));
    };
    setTimeout(tick, 10);
  });
  await Promise.all(pending);
  return lat;
}

function report(label: string, lat: number[], eld: ReturnType<typeof monitorEventLoopDelay>): void {
  const s = summarize(lat);
  console.log(
    `${label}: p50 ${fmtMs(s.p50)} ms, p90 ${fmtMs(s.p90)}, p99 ${fmtMs(s.p99)}, p99.9 ${fmtMs(s.p999)}, max ${fmtMs(s.max)} (n=${s.count}); ` +
      `event-loop delay p99 ${fmtMs(eld.percentile(99) / 1e6)} ms, max ${fmtMs(eld.max / 1e6)} ms`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'brook-latency-probe-'));
  const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
  try {
    const fh = await open(join(dir, 'raw.log'), 'a');
    const block = Buffer.alloc(6000, 120);
    let busy: Promise<void> = Promise.resolve();
    let eld = monitorEventLoopDelay({ resolution: 1 });
    eld.enable();
    // Serialised like a group commit: one fdatasync at a time, each op waits for the next one after it.
    report('1. file append + fdatasync (serialised)', await openLoop(() => (busy = busy.then(async () => {
      await fh.write(block);
      await fh.datasync();
    }))), eld);
    eld.disable();
    await fh.close();

    const events = Array.from({ length: 10 }, (_, k) => Buffer.from(orderEventText(k)));
    for (const fsync of [true, false]) {
      const kv = await openRocksKv(join(dir, `rocks-${fsync}`), { fsync });
      const store = await PartitionStore.open(kv, { clock });
      let p = 0;
      eld = monitorEventLoopDelay({ resolution: 1 });
      eld.enable();
      const lat = await openLoop(async () => {
        const [r] = await store.append([{ topic: 1, partition: p++ % 8, events }]);
        if (!r!.ok) throw r!.error;
      });
      eld.disable();
      report(`${fsync ? '2' : '3'}. PartitionStore.append 10 events, ${fsync ? 'durable' : 'no fsync'}`, lat, eld);
      await store.close();
      await kv.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
