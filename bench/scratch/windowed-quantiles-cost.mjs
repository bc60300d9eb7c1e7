import { Summary } from 'prom-client';
import { WindowedQuantiles } from '../../dist/observability/windowed-quantiles.js';
const n = 200000;
const s = new Summary({ name: 'x', help: 'x', percentiles: [0.5,0.75,0.95,0.99,0.999], maxAgeSeconds: 600, ageBuckets: 5, registers: [] });
const w = new WindowedQuantiles({ maxAgeMs: 600000, ageBuckets: 5, min: 0.001, max: 3600000 }, () => performance.now());
for (let r = 0; r < 3; r++) {
  let t = process.cpuUsage(); for (let i = 0; i < n; i++) s.observe(Math.random() * 100); const a = process.cpuUsage(t);
  t = process.cpuUsage(); for (let i = 0; i < n; i++) w.observe(Math.random() * 100); const b = process.cpuUsage(t);
  console.log(`round ${r}: Summary ${((a.user+a.system)/n*1000).toFixed(0)} ns/value, windowed ${((b.user+b.system)/n*1000).toFixed(0)} ns/value`);
}
