// Preload for a broker child (`node -r THIS dist/main.js`): a timeline of what happens around the
// slow publishes of an open-loop run. Diagnostic only; build-independent (needs only Node's modules).
// Records, on performance.now():
//   req     every publish (POST .../events): [start, answered]
//   sync    every fs.fdatasync with a callback (the WAL's, src/log/rocks-kv.ts) and FileHandle.datasync /
//           sync (the directory's fsync): [start, end, 1 for a FileHandle.sync]
//   marker  every fs.write with a callback (the raft marker's O_DSYNC pwrite): [start, end]
//   gc      every GC (PerformanceObserver 'gc'): [start, end, kind]
//   kvw     every RocksDB write batch flush (rocksdb-native, a thread-pool request: a write RocksDB holds
//           back, a memtable switch or a write stall, shows here as a long one): [start, end]
//   stall   every gap of more than STALL_MS (default 4) between two runs of a 1 ms interval: [from, to,
//           ms the main thread was on a CPU meanwhile]
//   file    every file created or removed in the data directory (fs.watch: RocksDB's flushes and
//           compactions write *.sst, a memtable switch starts a *.log): [t, name]
//   eld     monitorEventLoopDelay's histogram over the whole run
// Writes everything to $TRACE_OUT (JSON; a %p in it becomes the pid, for several brokers) at SIGTERM /
// exit; bench/scratch/stall-path.mjs (one node) and cluster-stalls.mjs (three) read it.
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const { PerformanceObserver, monitorEventLoopDelay } = require('node:perf_hooks');
const now = () => performance.now();
const T = { req: [], sync: [], marker: [], gc: [], stall: [], file: [], mark: [], kvw: [] };
const stallMs = Number(process.env.STALL_MS ?? 4);

fs.promises.open('/dev/null', 'r').then((fh) => {
  const proto = Object.getPrototypeOf(fh);
  for (const name of ['datasync', 'sync']) {
    const orig = proto[name];
    proto[name] = async function () {
      const s = now();
      try { return await orig.call(this); } finally { T.sync.push([s, now(), name === 'sync' ? 1 : 0]); }
    };
  }
  return fh.close();
});
const origFdatasync = fs.fdatasync;
fs.fdatasync = function (fd, cb) {
  if (typeof cb !== 'function') return origFdatasync.apply(this, arguments);
  const s = now();
  return origFdatasync.call(this, fd, function (...r) { T.sync.push([s, now(), 0]); return cb.apply(this, r); });
};
// rocksdb-native as the broker will load it (from its entry's directory): loaded here first, the
// broker's import finds it in the module cache, with its write batch's flush timed.
try {
  const path = require('node:path');
  const entry = process.argv[1] ?? '';
  const index = require.resolve('rocksdb-native', { paths: [path.dirname(entry)] });
  require(index);
  const { WriteBatch } = require(path.join(path.dirname(index), 'lib', 'batch.js'));
  const origFlush = WriteBatch.prototype.flush;
  WriteBatch.prototype.flush = function () {
    const s = now();
    const p = origFlush.call(this);
    p.then(() => T.kvw.push([s, now()]), () => T.kvw.push([s, now()]));
    return p;
  };
} catch { /* not found: no kvw */ }
const origWrite = fs.write;
fs.write = function (...a) {
  const cb = a[a.length - 1];
  if (typeof cb === 'function') { const s = now(); a[a.length - 1] = function (...r) { T.marker.push([s, now()]); return cb.apply(this, r); }; }
  return origWrite.apply(this, a);
};
const origEmit = http.Server.prototype.emit;
http.Server.prototype.emit = function (ev, req, res) {
  if (ev === 'request' && req.method === 'POST' && /\/events$/.test(req.url)) {
    const t0 = now();
    const end = res.end;
    res.end = function (...a) { T.req.push([t0, now()]); return end.apply(this, a); };
  }
  return origEmit.apply(this, arguments);
};
new PerformanceObserver((list) => { for (const e of list.getEntries()) T.gc.push([e.startTime, e.startTime + e.duration, e.detail?.kind ?? e.kind]); }).observe({ entryTypes: ['gc'] });
const eld = monitorEventLoopDelay({ resolution: 1 });
eld.enable();
// The main thread's time on a CPU (ns, /proc schedstat): a stall the thread spent on a CPU is work
// of the broker's own; one spent off it is the machine's (another process ran) or a blocking call.
const statFile = `/proc/self/task/${process.pid}/schedstat`;
const onCpuMs = () => { try { return Number(fs.readFileSync(statFile, 'latin1').split(' ')[0]) / 1e6; } catch { return NaN; } };
// performance.now() against the monotonic clock of V8's CPU profiles (µs), to find a stall in a profile,
// and against the wall clock (ms) the node's log lines carry.
T.clock = [now(), Number(process.hrtime.bigint() / 1000n), Date.now()];
let last = now();
let lastCpu = onCpuMs();
const tick = setInterval(() => { const t = now(); const c = onCpuMs(); if (t - last > stallMs) T.stall.push([last, t, c - lastCpu]); last = t; lastCpu = c; }, 1);
tick.unref();
if (process.env.BROOK_DATA_DIR) {
  try {
    fs.watch(process.env.BROOK_DATA_DIR, { recursive: true }, (type, name) => { if (name && !/LOCK|raft-marker/.test(name)) T.file.push([now(), `${type}:${name}`]); }).unref();
  } catch { /* no recursive watch here */ }
}
function dump() {
  if (!process.env.TRACE_OUT) return;
  eld.disable();
  const q = (p) => eld.percentile(p) / 1e6;
  T.eld = { p50: q(50), p99: q(99), p999: q(99.9), max: eld.max / 1e6, mean: eld.mean / 1e6 };
  fs.writeFileSync(process.env.TRACE_OUT.replace('%p', String(process.pid)), JSON.stringify(T));
}
process.on('exit', dump);
process.prependListener('SIGTERM', dump);
