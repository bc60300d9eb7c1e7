// --require preload for the broker: samples every allocation (objects collected by minor and major GCs included)
// from start to exit and writes the sampling heap profile to $ALLOC_DIR/<pid>.heapprofile at SIGTERM.
//   ALLOC_DIR=DIR npm run bench -- --no-build --only a --broker-node-args "-r $PWD/bench/scratch/alloc-preload.cjs"
const inspector = require('node:inspector');
const fs = require('node:fs');
const s = new inspector.Session();
s.connect();
s.post('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
let done = false;
const dump = () => {
  if (done) return; done = true;
  s.post('HeapProfiler.stopSampling', (err, r) => {
    if (!err) fs.writeFileSync(`${process.env.ALLOC_DIR || '/tmp'}/${process.pid}.heapprofile`, JSON.stringify(r.profile));
  });
};
process.prependListener('SIGTERM', dump);
process.on('exit', dump);
