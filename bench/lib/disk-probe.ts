/**
 * A disk probe beside a measurement: a worker thread that appends 128 bytes to a file of its own and
 * fdatasyncs it every `everyMs` (default 20), in a directory on the same filesystem as the brokers'
 * data. Each sample is the time the call was blocked, i.e. its wall time less the thread's time on a
 * CPU and waiting for one (/proc schedstat), so a loaded machine does not count as a slow disk.
 *
 * What it tells apart: a publish stall of seconds during which every node's WAL fdatasync is slow is
 * either the nodes' own doing or the disk's (a journal commit every fsync on the filesystem waits for,
 * a device that stalls). The probe is no broker: when its fdatasyncs stall at the same moment, the
 * disk stalled for everyone.
 */
import { Worker } from 'node:worker_threads';

export interface DiskProbeResult {
  /** fdatasyncs made. */
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** How many were blocked longer than 100 ms, and 1 s. */
  readonly over100: number;
  readonly over1000: number;
  /** Every fdatasync blocked 20 ms or more: [start on performance.timeOrigin's clock, ms blocked]. */
  readonly slow: ReadonlyArray<readonly [number, number]>;
}

export interface DiskProbe {
  /** Stops the probe, removes its file, and summarises its fdatasyncs. */
  stop(): Promise<DiskProbeResult>;
}

// The worker's code (plain JS, run with eval: no separate file to build or find; dynamic imports, so it
// runs whether the eval is taken as CommonJS or as a module).
const workerCode = `
(async () => {
const { parentPort, workerData } = await import('node:worker_threads');
const fs = await import('node:fs');
const { file, everyMs } = workerData;
const fd = fs.openSync(file, 'w');
const buf = Buffer.alloc(128, 1);
// This thread's ms on a CPU plus waiting for one.
const sched = () => { try { const f = fs.readFileSync('/proc/thread-self/schedstat', 'latin1').split(' '); return (Number(f[0]) + Number(f[1])) / 1e6; } catch { return 0; } };
const samples = [];
let written = 0;
const timer = setInterval(() => {
  const c0 = sched();
  const t0 = performance.now();
  fs.writeSync(fd, buf);
  fs.fdatasyncSync(fd);
  const ms = performance.now() - t0 - (sched() - c0);
  samples.push(performance.timeOrigin + t0, Math.max(0, ms));
  // The file stays small: start it again now and then.
  if ((written += buf.length) > 1 << 20) { fs.ftruncateSync(fd, 0); written = 0; }
}, everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  fs.closeSync(fd);
  try { fs.unlinkSync(file); } catch {}
  parentPort.postMessage(samples);
});
})();
`;

/** Starts a probe writing `dir/disk-probe-PID.bin`. */
export function startDiskProbe(dir: string, everyMs = 20): DiskProbe {
  const file = `${dir}/disk-probe-${process.pid}-${Math.random().toString(36).slice(2, 8)}.bin`;
  const w = new Worker(workerCode, { eval: true, workerData: { file, everyMs } });
  w.unref();
  return {
    async stop() {
      const flat = await new Promise<number[]>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
        w.postMessage('stop');
      });
      await w.terminate();
      const ms: number[] = [];
      const slow: [number, number][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        ms.push(flat[i + 1]!);
        if (flat[i + 1]! >= 20) slow.push([flat[i]! - performance.timeOrigin, flat[i + 1]!]);
      }
      const sorted = [...ms].sort((a, b) => a - b);
      const q = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);
      return { count: ms.length, p50Ms: q(0.5), p99Ms: q(0.99), maxMs: sorted.at(-1) ?? NaN, over100: ms.filter((x) => x > 100).length, over1000: ms.filter((x) => x > 1000).length, slow };
    },
  };
}

/**
 * One line: "disk probe (...): n 600, p99 2.1 max 8.0 ms, 0 over 100 ms, 0 over 1 s". No median: the
 * scheduler's accounting is coarser than a fast fdatasync, so short ones come out near 0; what the
 * probe is for, blocks of tens of ms and more, it measures.
 */
export function diskProbeText(r: DiskProbeResult): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
  return `disk probe (fdatasync of a 128 B append every 20 ms, blocked time): n ${r.count}, p99 ${f(r.p99Ms)} max ${f(r.maxMs)} ms, ${r.over100} over 100 ms, ${r.over1000} over 1 s`;
}
