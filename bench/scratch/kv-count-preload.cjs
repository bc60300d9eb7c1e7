// --require preload for a broker: counts what the node hands RocksDB (native write batches, puts by kind
// of key and their bytes, deletes, WAL questions, fdatasyncs of any file) and appends the running totals
// once a second as one JSON line to $KV_COUNT_DIR/<pid>.jsonl; differences of two lines give a window.
//   node bench/scratch/cluster-cpu.mjs 1 new=.::-r,$PWD/bench/scratch/kv-count-preload.cjs   (KV_COUNT_DIR=DIR in the env)
const fs = require('node:fs');
const { join, dirname } = require('node:path');
const dir = process.env.KV_COUNT_DIR || '/tmp';
const count = { flushes: 0, puts: 0, putBytes: 0, deletes: 0, walQuestions: 0, datasyncs: 0, fsyncs: 0 };
const kinds = {};
try {
  const main = require.resolve('rocksdb-native', { paths: [process.cwd(), dirname(process.argv[1] || '.')] });
  const { WriteBatch } = require(join(dirname(fs.realpathSync(main)), 'lib/batch.js'));
  const State = require(join(dirname(fs.realpathSync(main)), 'lib/state.js'));
  for (const [name, key] of [['tryPut', 'puts'], ['put', 'puts'], ['tryDelete', 'deletes'], ['delete', 'deletes'], ['tryDeleteRange', 'deletes'], ['deleteRange', 'deletes']]) {
    const orig = WriteBatch.prototype[name];
    if (typeof orig !== 'function') continue;
    WriteBatch.prototype[name] = function (...a) {
      count[key]++;
      if (key === 'puts') {
        count.putBytes += a[0].length + (a[1]?.length ?? 0);
        const k = a[0];
        const kind = k[0] === 0x02 && k.length >= 6 ? `raft 0x0${k[5]}` : `0x${k[0].toString(16).padStart(2, '0')}`;
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
      return orig.apply(this, a);
    };
  }
  const flush = WriteBatch.prototype.flush;
  WriteBatch.prototype.flush = function (...a) { count.flushes++; return flush.apply(this, a); };
  const cw = State.prototype.currentWalFile;
  State.prototype.currentWalFile = function (...a) { count.walQuestions++; return cw.apply(this, a); };
} catch (err) { console.error('kv-count-preload:', err.message); }
const fh = require('node:fs/promises');
(async () => {
  // FileHandle's class: patched on the prototype of a handle of our own.
  const h = await fh.open(__filename, 'r');
  const P = Object.getPrototypeOf(h);
  await h.close();
  const ds = P.datasync, sy = P.sync;
  P.datasync = function () { count.datasyncs++; return ds.call(this); };
  P.sync = function () { count.fsyncs++; return sy.call(this); };
})();
const out = join(dir, `${process.pid}.jsonl`);
setInterval(() => fs.appendFileSync(out, JSON.stringify({ t: Date.now(), ...count, kinds }) + '\n'), 1000).unref();
