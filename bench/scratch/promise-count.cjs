// --require preload for a broker node: counts the promises the process creates (async_hooks PROMISE
// inits: promises, async functions' own promises and their awaits) and the publish requests
// (POST .../events) its HTTP server receives, both from the first publish on, and writes them at exit to
// $PROMISE_DIR/<pid>.json with the node's entry script. A count per publish request does not depend on
// the machine's load the way CPU time does. The hook itself slows the node: compare builds with it on
// both, never a figure with it against one without.
//   P=$PWD/bench/scratch/promise-count.cjs; PROMISE_DIR=/tmp/pc RATE=20 WARM=0 SECONDS=20 \
//     node bench/scratch/cluster-cpu.mjs 1 new=.::-r,$P main=/tmp/main::-r,$P
//   node bench/scratch/promise-sum.mjs /tmp/pc
'use strict';
const { createHook } = require('node:async_hooks');
const dc = require('node:diagnostics_channel');
const { writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.PROMISE_DIR;
if (dir !== undefined) {
  let promises = 0;
  let posts = 0;
  let atFirst;
  createHook({ init(_id, type) { if (type === 'PROMISE') promises++; } }).enable();
  dc.subscribe('http.server.request.start', ({ request }) => {
    if (request.method !== 'POST' || !request.url.endsWith('/events')) return;
    // From the first publish on: the start (opening stores, electing) is not counted.
    atFirst ??= promises;
    posts++;
  });
  mkdirSync(dir, { recursive: true });
  process.on('exit', () => writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ entry: process.argv[1], promises: promises - (atFirst ?? promises), posts })));
}
