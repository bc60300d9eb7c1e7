// The broker's RSS under (a)'s batch-1000 load, by the amount written rather than by time, so that a
// loaded machine (brokers at a fraction of a core) reaches the state a quiet one reaches in (a)'s 12 s:
// each build in turn (alternating order over ROUNDS) gets a fresh child broker, 8 partitions (hash),
// 4 closed-loop producers of batches of 1000 until EVENTS are acknowledged; the broker's VmRSS is
// sampled every 100 ms (max, and max over the second half), with the broker's CPU per event. With
// mem-sampler.mjs preloaded (MEM=1) the broker writes its own breakdown to $MEM_SAMPLES.<pid>; with
// DUMP=1, at the end of the load, its anonymous mappings of 1 MB or more and glibc's malloc_info per
// arena (through gdb: bytes each arena took from the system and how many of them are free).
// SNAP=1 writes a heap snapshot at 75 % of the events (to SNAP_DIR); NODE_ARGS: more node flags for the brokers.
//   npm run build:bench && EVENTS=600000 ROUNDS=2 node bench/scratch/rss-by-count.mjs old=OLD_CHECKOUT new=.
//   ... new=. new-mmap=.,MALLOC_MMAP_THRESHOLD_=1048576    # LABEL=ROOT[,VAR=VALUE...]: environment for that broker
import { join, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { startBroker, rssBytes, brokerEntryOf, cpuSeconds } from '../../dist-bench/bench/lib/broker.js';
import { eventTypeBody, batchBodies } from '../../dist-bench/bench/lib/events.js';
import { publishPool } from '../../dist-bench/bench/lib/load.js';

// LABEL=ROOT[,VAR=VALUE...]: a build, with environment variables for its broker (e.g. glibc's MALLOC_* tunables).
const builds = process.argv.slice(2).map((a) => {
  const [spec, ...vars] = a.split(',');
  const [label, root] = spec.split('=');
  return { label, root: resolve(root), env: Object.fromEntries(vars.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)])) };
});
const events = Number(process.env.EVENTS ?? 1_000_000);
const rounds = Number(process.env.ROUNDS ?? 1);
const here = resolve(new URL('.', import.meta.url).pathname);
const nodeArgs = [...(process.env.MEM === '1' ? ['--import', join(here, 'mem-sampler.mjs')] : []), ...(process.env.SNAP === '1' ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${process.env.SNAP_DIR ?? '/tmp'}`] : []), ...(process.env.NODE_ARGS ?? '').split(' ').filter((x) => x !== '')];
const mb = (b) => (b / 1e6).toFixed(0);
const bodies = batchBodies(1000, 24, 0);
const results = {};

async function one(label, root, env) {
  const b = await startBroker({ nodeArgs, entry: brokerEntryOf(root), env });
  try {
    const r = await fetch(b.url + '/event-types', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(eventTypeBody('x.orders', 'hash')) });
    if (r.status !== 201) throw new Error(`create: ${r.status}`);
    const pool = publishPool(b.url, 4);
    const samples = [];
    const t = setInterval(() => samples.push(rssBytes(b.pid)), 100);
    const load0 = loadavg()[0];
    const t0 = performance.now();
    const cpu0 = cpuSeconds(b.pid);
    let next = 0;
    const total = events / 1000;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < total) {
          if (process.env.SNAP === '1' && next === Math.floor(total * 0.75)) process.kill(b.pid, 'SIGUSR2');
          const res = await pool.request({ path: '/event-types/x.orders/events', method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[next++ % bodies.length] });
          await res.body.arrayBuffer();
          if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
        }
      }),
    );
    const s = (performance.now() - t0) / 1000;
    const cpuUs = ((cpuSeconds(b.pid) - cpu0) * 1e6) / events;
    if (process.env.DUMP === '1') {
      // The broker's anonymous mappings of 1 MB or more (size/rss in kB, with the mapping's flags).
      const rows = [];
      let head = '';
      let size = 0;
      for (const l of readFileSync(`/proc/${b.pid}/smaps`, 'utf8').split('\n')) {
        if (/^[0-9a-f]+-/.test(l)) head = l;
        else if (l.startsWith('Size:')) size = Number(l.split(/\s+/)[1]);
        else if (l.startsWith('Rss:')) {
          const rss = Number(l.split(/\s+/)[1]);
          if (rss >= 1024 && head.trim().split(/\s+/).length === 5) rows.push(`${size}/${rss} ${head.split(' ')[1]}`);
          if (head.includes('[heap]')) rows.push(`brk ${size}/${rss}`);
        }
      }
      console.log(`${label} anon mappings >= 1 MB resident (size/rss kB): ${rows.join(', ')}`);
      // glibc's own view, per arena (0 is the main thread's): bytes taken from the system and bytes free in it.
      const out = `/tmp/malloc-info.${b.pid}.xml`;
      try {
        execFileSync('gdb', ['-p', String(b.pid), '-batch', '-ex', `call (void*)fopen("${out}", "w")`, '-ex', 'call (int)malloc_info(0, $1)', '-ex', 'call (int)fclose($1)'], { stdio: 'ignore', timeout: 60_000 });
        const xml = readFileSync(out, 'utf8');
        const heaps = [...xml.matchAll(/<heap nr="(\d+)">([\s\S]*?)<\/heap>/g)].map(([, nr, body]) => {
          const free = [...body.matchAll(/<total type="(?:fast|rest)" count="\d+" size="(\d+)"/g)].reduce((a, m) => a + Number(m[1]), 0);
          const sys = Number(/<system type="current" size="(\d+)"/.exec(body)?.[1] ?? 0);
          return `#${nr} system ${mb(sys)} free ${mb(free)}`;
        });
        const mmap = /<total type="mmap" count="(\d+)" size="(\d+)"/.exec(xml);
        console.log(`${label} malloc arenas (MB): ${heaps.join('; ')}; mmapped chunks ${mmap?.[1]} = ${mb(Number(mmap?.[2] ?? 0))} MB`);
      } catch (err) {
        console.log(`malloc_info failed: ${err.message}`);
      }
    }
    clearInterval(t);
    await pool.close();
    const max = Math.max(...samples);
    const max2 = Math.max(...samples.slice(Math.floor(samples.length / 2)));
    const med = [...samples].sort((x, y) => x - y)[Math.floor(samples.length / 2)];
    (results[label] ??= []).push(max);
    console.log(`${label} (pid ${b.pid}): ${events} events in ${s.toFixed(1)} s (${Math.round(events / s)} ev/s), load ${load0.toFixed(1)}-${loadavg()[0].toFixed(1)}; broker CPU ${cpuUs.toFixed(2)} us/event; RSS max ${mb(max)} MB, max over the 2nd half ${mb(max2)}, median ${mb(med)}`);
  } finally {
    await b.stop();
  }
}

for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const { label, root, env } of order) await one(label, root, env);
}
console.log('RSS max per build (MB):', Object.entries(results).map(([l, xs]) => `${l} ${xs.map(mb).join(', ')}`).join('; '));
