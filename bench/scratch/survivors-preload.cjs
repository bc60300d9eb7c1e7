// --require preload for a broker node: V8's sampling heap profiler keeping only objects that survived a
// scavenge (collected later by a mark-compact, or still alive at exit), from SURVIVORS_AFTER_S seconds
// after start (default 0) until SIGTERM; writes $ALLOC_DIR/<pid>.heapprofile (read it with alloc-sum.mjs).
// Same caveat as survivors-open.mjs: an object a mark-compact collects while still young counts too.
//   ALLOC_DIR=/tmp/surv SURVIVORS_AFTER_S=25 ROLES=1 node bench/scratch/cluster-cpu.mjs 1 new=.::-r,$PWD/bench/scratch/survivors-preload.cjs
const inspector = require('node:inspector');
const fs = require('node:fs');
const s = new inspector.Session();
s.connect();
let started = false;
setTimeout(() => {
  started = true;
  s.post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
}, Number(process.env.SURVIVORS_AFTER_S ?? 0) * 1000).unref();
let done = false;
const dump = () => {
  if (done || !started) return;
  done = true;
  s.post('HeapProfiler.stopSampling', (err, r) => {
    if (!err) fs.writeFileSync(`${process.env.ALLOC_DIR || '/tmp'}/${process.pid}.heapprofile`, JSON.stringify(r.profile));
  });
};
process.prependListener('SIGTERM', dump);
process.on('exit', dump);
