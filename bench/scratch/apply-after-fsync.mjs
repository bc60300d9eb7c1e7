// In process, no HTTP: 8 one-member partition groups on RocksDB (durable) through PartitionReplicas,
// open loop of RATE appends/s of 10 events hashed over the 8 partitions, for SECONDS. Prints how long
// after a durable write resolved the node host applied the first entry it made durable, and the
// append's latency from the write's resolution to the append's answer (both in microseconds).
//   node bench/scratch/apply-after-fsync.mjs ROOT_OF_A_BUILD [RATE=500] [SECONDS=5]
import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
const root = process.argv[2]; const rate = +(process.argv[3] ?? 500); const secs = +(process.argv[4] ?? 5);
const { openRocksKv, FileCell } = await import(root + '/dist/log/index.js');
const { RaftNodeHost } = await import(root + '/dist/broker/raft-host/node-host.js');
const { RaftGroup } = await import(root + '/dist/broker/raft-host/raft-group.js');
const { PartitionReplicas } = await import(root + '/dist/broker/partition-replicas.js');
const { NodeDisk, markerFileName } = await import(root + '/dist/broker/node-disk.js');
const pino = (await import(root + '/node_modules/pino/pino.js')).default;
const logger = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'apply-after-'));
const kv = await openRocksKv(dir);
const disk = await NodeDisk.open({ kv, cell: new FileCell(join(dir, markerFileName)), self: 1, newId: randomUUID, logger });
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
const host = new RaftNodeHost({ self: 1, kv, disk, tickMs: 100, clock, ticks: { every: (ms, f) => { const t = setInterval(f, ms); return () => clearInterval(t); } }, logger, onFatal: (e) => { console.error(e); process.exit(1); } });
const replicas = new PartitionReplicas({ self: 1, kv, disk, host, placement: (t, p) => ({ group: 1000 + p, replicas: [1] }), clock, random: { next: Math.random, int: (n) => Math.floor(Math.random() * n), uuid: randomUUID }, logger, electionTicks: 10, heartbeatTicks: 1, appendTimeoutMs: 5000 });
host.start(undefined);
const ev = Buffer.alloc(526, 120);
await Promise.all(Array.from({ length: 8 }, (_, p) => replicas.append([{ topic: 1, partition: p, events: [ev] }])));
let lastDurable = 0, applyWaiting = false; const applyGap = [], ackGap = [];
const w0 = kv.write.bind(kv);
kv.write = (fill, o) => { const p = w0(fill, o); if (o.durable) p.then(() => { lastDurable = performance.now(); applyWaiting = true; }); return p; };
const a0 = RaftGroup.prototype.applyEntry;
RaftGroup.prototype.applyEntry = function (e) { if (applyWaiting) { applyWaiting = false; applyGap.push(performance.now() - lastDurable); } return a0.call(this, e); };
let n = 0; const t0 = performance.now(); const pending = []; const lat = [];
await new Promise((done) => {
  const tick = () => {
    const due = Math.floor((performance.now() - t0) * rate / 1000);
    while (n < due) {
      n++;
      const by = new Map(); for (let i = 0; i < 10; i++) { const p = Math.floor(Math.random() * 8); (by.get(p) ?? by.set(p, []).get(p)).push(ev); }
      const at = performance.now(); pending.push(replicas.append([...by].map(([p, events]) => ({ topic: 1, partition: p, events }))).then(() => { ackGap.push(performance.now() - lastDurable); lat.push(performance.now() - at); }));
    }
    if (performance.now() - t0 < secs * 1000) setTimeout(tick, 1); else done();
  };
  tick();
});
await Promise.all(pending);
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return (1000 * s[Math.floor(p * (s.length - 1))]).toFixed(0); };
const skip = (xs) => xs.slice(Math.floor(xs.length / 5));
console.log(`${root}: ${n} appends, ${kv.stats.walSyncs} WAL syncs; first apply after a durable write p50 ${q(skip(applyGap), 0.5)} p90 ${q(skip(applyGap), 0.9)} us; append latency p50 ${q(skip(lat), 0.5)} p90 ${q(skip(lat), 0.9)} us; answer after the durable write p50 ${q(skip(ackGap), 0.5)} p90 ${q(skip(ackGap), 0.9)} us`);
await host.close(); await kv.close(); process.exit(0);
