// --require preload for a one-node broker: counts per publish request that do not depend on how loaded
// the machine is, and what the slowest requests overlap. bench/scratch/single-counts.mjs drives it.
// At each SIGUSR2 it writes to $COUNTS_OUT.<n>.json: cumulative counters (POST .../events answered,
// event-loop iterations from libuv's own counter, fdatasync/fsync calls through node:fs (callback and
// FileHandle forms: the WAL's in every build), fs.write calls with a callback (the raft marker's O_DSYNC
// pwrite; nothing else in the broker writes that way), scavenges and mark-compacts with their pause
// time, the process's and the main thread's CPU from /proc, bytes written: wchar and write_bytes of /proc/self/io) and, since the previous signal, every
// request's [start, end] and every GC's, marker write's and fdatasync's [start, end] (ms, performance.now()).
// PROMISES=1 also counts promises (async_hooks; it slows the node, so compare builds both with it on).
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const { syncBuiltinESMExports } = require('node:module');
const { PerformanceObserver, performance, constants } = require('node:perf_hooks');

const out = process.env.COUNTS_OUT;
if (out !== undefined) {
  const now = () => performance.now();
  const c = { posts: 0, fdatasync: 0, fsync: 0, markerWrites: 0, scavenges: 0, markCompacts: 0, scavengeMs: 0, markCompactMs: 0, promises: 0 };
  const t = { reqs: [], gcs: [], marks: [], syncs: [] };
  const push = (k, x) => { if (t[k].length < 200_000) t[k].push(x); };
  const timed = (kind, arr, orig) => function (...a) {
    c[kind]++;
    const cb = a[a.length - 1];
    if (typeof cb !== 'function') return orig.apply(this, a);
    const s = now();
    a[a.length - 1] = function (...r) { push(arr, [s, now()]); return cb.apply(this, r); };
    return orig.apply(this, a);
  };
  fs.fdatasync = timed('fdatasync', 'syncs', fs.fdatasync);
  fs.fsync = timed('fsync', 'syncs', fs.fsync);
  fs.write = timed('markerWrites', 'marks', fs.write);
  syncBuiltinESMExports();
  fs.promises.open('/dev/null', 'r').then((fh) => {
    const proto = Object.getPrototypeOf(fh);
    for (const [name, kind] of [['datasync', 'fdatasync'], ['sync', 'fsync']]) {
      const orig = proto[name];
      proto[name] = async function () {
        c[kind]++;
        const s = now();
        try { return await orig.call(this); } finally { push('syncs', [s, now()]); }
      };
    }
    return fh.close();
  });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const major = e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
      const minor = e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
      if (major) { c.markCompacts++; c.markCompactMs += e.duration; }
      if (minor) { c.scavenges++; c.scavengeMs += e.duration; }
      push('gcs', [e.startTime, e.startTime + e.duration, major ? 'MC' : minor ? 'S' : 'other']);
    }
  }).observe({ entryTypes: ['gc'] });
  if (process.env.PROMISES === '1') {
    require('node:async_hooks').createHook({ init(_id, type) { if (type === 'PROMISE') c.promises++; } }).enable();
  }
  const origEmit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (ev, req, res) {
    if (ev === 'request' && req.method === 'POST' && /\/events$/.test(req.url)) {
      const t0 = now();
      res.once('finish', () => { c.posts++; push('reqs', [t0, now()]); });
    }
    return origEmit.apply(this, arguments);
  };
  const ticks = (file) => { const f = fs.readFileSync(file, 'utf8'); const r = f.slice(f.lastIndexOf(')') + 2).split(' '); return Number(r[11]) + Number(r[12]); };
  let n = 0;
  process.on('SIGUSR2', () => {
    const snap = {
      ...c,
      loops: performance.nodeTiming.uvMetricsInfo?.loopCount ?? NaN,
      cpuTicks: ticks('/proc/self/stat'),
      mainCpuTicks: ticks(`/proc/self/task/${process.pid}/stat`),
      ...Object.fromEntries(fs.readFileSync('/proc/self/io', 'utf8').trim().split('\n').map((l) => l.split(': ')).filter(([k]) => k === 'wchar' || k === 'write_bytes').map(([k, v]) => [k, Number(v)])),
      at: now(),
      ...t,
    };
    for (const k of Object.keys(t)) t[k] = [];
    fs.writeFileSync(`${out}.${n++}.json`, JSON.stringify(snap));
  });
}
