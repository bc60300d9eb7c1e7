// Sums the samples of mem-sampler.mjs: per file (one broker), the sample of highest RSS (within
// [FROM, TO] seconds of the first sample when given) and the nearest one with smaps and RocksDB figures,
// in MB; with SERIES=1 also every 8th sample.
//   node bench/scratch/mem-sampler-sum.mjs FILE...
import { readFileSync } from 'node:fs';
const mb = (b) => (b / 1e6).toFixed(0);
const from = Number(process.env.FROM ?? 0);
const to = Number(process.env.TO ?? Infinity);
for (const f of process.argv.slice(2)) {
  const all = readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const t0 = all[0].t;
  const xs = all.filter((s) => (s.t - t0) / 1000 >= from && (s.t - t0) / 1000 <= to);
  const top = xs.reduce((a, b) => (b.rss > a.rss ? b : a));
  const withSmaps = xs.filter((s) => s.smaps !== undefined);
  const near = withSmaps.reduce((a, b) => (Math.abs(b.t - top.t) < Math.abs(a.t - top.t) ? b : a));
  const line = (s) =>
    `t+${((s.t - t0) / 1000).toFixed(1)}s rss ${mb(s.rss)} heapTotal ${mb(s.heapTotal)} (old ${mb(s['space.old_space'])} new ${mb(s['space.new_space'])} lo ${mb(s['space.large_object_space'])}) heapUsed ${mb(s.heapUsed)} external ${mb(s.external)} arrayBuffers ${mb(s.arrayBuffers)}` +
    (s.smaps === undefined ? '' : ` | memtables ${mb(s.memtables)} blockCache ${mb(s.blockCache)} | smaps ` + Object.entries(s.smaps).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(v / 1024).toFixed(0)}`).join(', '));
  console.log(`== ${f} (${all.length} samples)`);
  console.log(`max rss:  ${line(top)}`);
  console.log(`nearest:  ${line(near)}`);
  if (process.env.SERIES === '1') for (let i = 0; i < xs.length; i += 8) console.log(`  ${line(xs[i])}`);
}
