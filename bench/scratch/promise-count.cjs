// --require preload for a broker node: counts the promises the process creates (async_hooks PROMISE
// inits: promises, async functions' own promises and their awaits) and the publish requests
// (POST .../events) its HTTP server receives; at SIGUSR2 it writes both to $PROMISE_DIR/<pid>.json.
// bench/scratch/cluster-promises.mjs reads them around a measured window. A count per publish request
// does not depend on the machine's load the way CPU time does. The hook itself slows the node: compare
// builds with it on both, never a figure with it against one without.
'use strict';
const { createHook } = require('node:async_hooks');
const dc = require('node:diagnostics_channel');
const { writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.PROMISE_DIR;
if (dir !== undefined) {
  let promises = 0;
  let posts = 0;
  // PROMISE_STACKS=N: every Nth promise, where it was made (the innermost frames of Brook and of any
  // package), tallied; written with the counts.
  const every = Number(process.env.PROMISE_STACKS ?? 0);
  const sites = new Map();
  const site = () => {
    const saved = Error.stackTraceLimit;
    Error.stackTraceLimit = 12;
    const stack = new Error().stack.split('\n').slice(2).map((l) => l.trim().replace(/^at /, '').replace(/\(?file:\/\/\S*\/dist\//, 'dist/').replace(/\(?\S*node_modules\//, '').replace(/\)$/, ''));
    Error.stackTraceLimit = saved;
    const own = stack.filter((l) => !l.startsWith('node:') && !l.includes('(node:') && !l.startsWith('new Promise') && !l.startsWith('process.processTicksAndRejections') && !l.includes('<anonymous>'));
    return own.filter((l) => !l.includes('promise-count.cjs')).slice(0, 3).join(' < ');
  };
  createHook({
    init(_id, type) {
      if (type !== 'PROMISE') return;
      promises++;
      if (every > 0 && promises % every === 0) {
        const k = site();
        sites.set(k, (sites.get(k) ?? 0) + 1);
      }
    },
  }).enable();
  dc.subscribe('http.server.request.start', ({ request }) => {
    if (request.method === 'POST' && request.url.endsWith('/events')) posts++;
  });
  mkdirSync(dir, { recursive: true });
  process.on('SIGUSR2', () => writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ promises, posts, sites: Object.fromEntries(sites) })));
}
