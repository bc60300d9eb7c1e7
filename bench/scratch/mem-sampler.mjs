// Preloaded into a broker (`--import`), writes where its memory is, every INTERVAL ms, as JSON lines to
// $MEM_SAMPLES.<pid>: process.memoryUsage(), V8's heap spaces, the RocksDB memtables and block cache
// of every RocksDB the broker opened, and /proc/self/smaps summed by kind of mapping (every SMAPS_EVERY
// samples: V8's heap, glibc's thread arenas, the brk heap, large single mappings such as 64 MiB buffers).
// The bench's own processes stay out of the figures (unlike an in-process load).
//   npm run bench -- --no-build --only a --ab old=OLD_CHECKOUT \
//     --broker-node-args "--import $PWD/bench/scratch/mem-sampler.mjs"   (MEM_SAMPLES=/tmp/x in the env)
//   node bench/scratch/mem-sampler-sum.mjs /tmp/x.*
import { appendFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import v8 from 'node:v8';

const out = `${process.env.MEM_SAMPLES ?? '/tmp/mem-samples'}.${process.pid}`;
const interval = Number(process.env.INTERVAL ?? 250);
const smapsEvery = Number(process.env.SMAPS_EVERY ?? 4);
const dbs = [];
const reads = {};
const stacks = new Map();
try {
  const RocksDB = createRequire(process.argv[1])('rocksdb-native');
  const ready = RocksDB.prototype.ready;
  RocksDB.prototype.ready = function () {
    dbs.push(this);
    return ready.call(this);
  };
  // Reads: iterators opened and point reads, with where the iterators were opened from.
  for (const m of ['iterator', 'get']) {
    const f = RocksDB.prototype[m];
    if (typeof f !== 'function') continue;
    RocksDB.prototype[m] = function (...a) {
      reads[m] = (reads[m] ?? 0) + 1;
      if (m === 'iterator' && process.env.READ_STACKS === '1') {
        const at = new Error().stack.split('\n').slice(2, 7).map((l) => l.trim().replace(/^at /, '').replace(/\(file:.*\/dist\//, '(')).join(' < ');
        stacks.set(at, (stacks.get(at) ?? 0) + 1);
      }
      return f.apply(this, a);
    };
  }
} catch {
  /* no RocksDB: none reported */
}
// The memory tails' slabs (builds that have them): live bytes, slabs allocated, allocations refused.
let slabs;
try {
  const { ByteSlabs } = await import(new URL('broker/byte-slabs.js', `file://${process.argv[1]}`).href);
  const alloc = ByteSlabs.prototype.alloc;
  ByteSlabs.prototype.alloc = function (len) {
    slabs = this;
    return alloc.call(this, len);
  };
} catch {
  /* none */
}
// The memory tails (builds that have them): bytes held by all of them (slabs and own buffers).
const rings = new Set();
try {
  const { RingStorage } = await import(new URL('broker/ring-storage.js', `file://${process.argv[1]}`).href);
  const append = RingStorage.prototype.append;
  RingStorage.prototype.append = function (entries) {
    rings.add(this);
    return append.call(this, entries);
  };
} catch {
  /* none */
}

/** Rss (kB) of /proc/self/smaps summed by kind of mapping. */
function smaps() {
  const kinds = {};
  let name = '';
  let size = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head !== null) {
      name = head[1];
      continue;
    }
    if (line.startsWith('Size:')) size = Number(line.split(/\s+/)[1]);
    else if (line.startsWith('Rss:')) {
      const rss = Number(line.split(/\s+/)[1]);
      if (rss === 0) continue;
      let kind;
      if (name === '[heap]') kind = 'brk';
      else if (name.startsWith('/')) kind = 'file';
      else if (name !== '') kind = name;
      else if (size === 4100) kind = 'anon-4M-buf'; // a malloc'd 4 MiB buffer (a slab of the tails) mapped on its own
      else if (size === 65540) kind = 'anon-64M-buf'; // a malloc'd 64 MiB buffer (the tail cache's arena)
      else if (size >= 1024) kind = `anon>=1M`;
      else kind = 'anon<1M';
      kinds[kind] = (kinds[kind] ?? 0) + rss;
    }
  }
  return kinds;
}

let n = 0;
const t = setInterval(async () => {
  const m = process.memoryUsage();
  const s = { t: Date.now(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
  if (slabs !== undefined) Object.assign(s, { slabLive: slabs.liveBytes(), slabsAllocated: slabs.slabsAllocated(), slabRefused: slabs.refused });
  if (rings.size > 0) {
    let bytes = 0;
    let outside = 0;
    for (const r of rings) {
      bytes += r.bytes();
      outside += r.outsideSlabs();
    }
    Object.assign(s, { tailBytes: bytes, tailOutside: outside, tails: rings.size });
  }
  for (const sp of v8.getHeapSpaceStatistics()) s[`space.${sp.space_name}`] = sp.space_size;
  if (n++ % smapsEvery === 0) {
    try {
      s.smaps = smaps();
    } catch {
      /* not Linux */
    }
    const p = async (db, k) => Number(await db.getProperty(k).catch(() => 'NaN'));
    let mem = 0;
    let cache = 0;
    for (const db of dbs) {
      mem += await p(db, 'rocksdb.size-all-mem-tables');
      cache += await p(db, 'rocksdb.block-cache-usage');
    }
    s.memtables = mem;
    s.blockCache = cache;
    s.dbs = dbs.length;
    s.reads = { ...reads };
    if (stacks.size > 0) s.stacks = Object.fromEntries([...stacks].sort((a, b) => b[1] - a[1]).slice(0, 6));
  }
  appendFileSync(out, JSON.stringify(s) + '\n');
}, interval);
t.unref();
