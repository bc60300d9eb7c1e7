// Preload for a broker child (`node -r THIS dist/main.js`): where the time of one publish goes.
// Per publish request (POST .../events answered), from the 'request' event to res.end():
//   syncs   WAL fdatasyncs (FileHandle.datasync) completed while the request was in flight;
//   pre     from the request to the start of the first fdatasync that started after it;
//   post    from the end of the last fdatasync completed before res.end() to res.end();
//   iters   event-loop iterations (check phases) between that fdatasync's completion and res.end()
//           (0: answered in the same iteration as the fsync completed).
// Also marker writes (fs.write with a callback, the raft marker's O_DSYNC pwrite) per request.
// Writes a summary to $TRACE_OUT (JSON) at SIGTERM / exit.   Diagnostic only.
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const now = () => performance.now();
let syncs = 0, syncEnds = [], markerWrites = 0, iter = 0, chain = 0, syncMs = 0, markerMs = 0;
const syncStarts = [];
function spin() { iter++; if (--chain > 0) setImmediate(spin); }
function afterSync() { if (chain <= 0) { chain = 16; setImmediate(spin); } else chain = 16; }
fs.promises.open('/dev/null', 'r').then((fh) => {
  const proto = Object.getPrototypeOf(fh);
  const orig = proto.datasync;
  proto.datasync = async function () {
    const s = now(); syncStarts.push(s); if (syncStarts.length > 4096) syncStarts.splice(0, 2048);
    try { return await orig.call(this); } finally { syncs++; syncMs += now() - s; syncEnds.push([now(), iter]); if (syncEnds.length > 4096) syncEnds.splice(0, 2048); afterSync(); }
  };
  return fh.close();
});
const origWrite = fs.write;
fs.write = function (...a) {
  const cb = a[a.length - 1];
  if (typeof cb === 'function') { markerWrites++; const s = now(); a[a.length - 1] = function (...r) { markerMs += now() - s; return cb.apply(this, r); }; }
  return origWrite.apply(this, a);
};
const rows = [];
const origEmit = http.Server.prototype.emit;
http.Server.prototype.emit = function (ev, req, res) {
  if (ev === 'request' && req.method === 'POST' && /\/events$/.test(req.url)) {
    const t0 = now(), s0 = syncs, m0 = markerWrites;
    const end = res.end;
    res.end = function (...a) {
      const t1 = now();
      let last; for (let i = syncEnds.length - 1; i >= 0; i--) if (syncEnds[i][0] <= t1) { last = syncEnds[i]; break; }
      let first; for (const s of syncStarts) if (s >= t0) { first = s; break; }
      rows.push([t1 - t0, syncs - s0, first === undefined ? NaN : first - t0, last === undefined || last[0] < t0 ? NaN : t1 - last[0], last === undefined ? NaN : iter - last[1], markerWrites - m0]);
      return end.apply(this, a);
    };
  }
  return origEmit.apply(this, arguments);
};
function pct(xs, p) { const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b); return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]; }
function dump() {
  if (!process.env.TRACE_OUT) return;
  const skip = Math.floor(rows.length * 0.2); // warm-up
  const r = rows.slice(skip);
  const col = (i) => r.map((x) => x[i]);
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const out = { requests: r.length, latency: { p50: pct(col(0), 0.5), p99: pct(col(0), 0.99) },
    syncsPerRequestInFlight: { mean: mean(col(1)), p50: pct(col(1), 0.5), p90: pct(col(1), 0.9) },
    preMs: { p50: pct(col(2), 0.5), p90: pct(col(2), 0.9) },
    postMs: { p50: pct(col(3), 0.5), p90: pct(col(3), 0.9), p99: pct(col(3), 0.99) },
    itersAfterSync: { p50: pct(col(4), 0.5), p90: pct(col(4), 0.9), max: Math.max(...col(4).filter((x) => !Number.isNaN(x))) },
    markerWritesInFlight: { mean: mean(col(5)) }, totalSyncs: syncs, syncMeanMs: syncMs / syncs, totalMarkerWrites: markerWrites, markerMeanMs: markerMs / markerWrites, totalRequests: rows.length };
  fs.writeFileSync(process.env.TRACE_OUT, JSON.stringify(out));
}
process.on('exit', dump);
process.prependListener('SIGTERM', dump);
