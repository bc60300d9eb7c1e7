// In process, no disk, no gRPC: the Raft messages per committed entry of three node hosts (the build's
// RaftNodeHost and RaftGroup) with four three-member groups led 2-1-1 by the nodes, as (b)'s partitions
// are on three nodes, when proposals come at RATE per second per group, one at a time per group
// (each waits for the last to apply, like one entry in flight per partition). Durable writes take
// WRITE_MS (timer), messages arrive after HOP_MS. Counts what the transport carried, per type, and the
// batches (one per peer per send), per committed entry: what the count per entry is on a machine that
// keeps up, which a loaded machine's cluster runs cannot show (they coalesce).
//   node bench/scratch/inproc-raft-messages.mjs [RATE=100] [SECONDS=5] [WRITE_MS=1] [HOP_MS=0.3] LABEL=ROOT ...
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const num = (i, d) => (args[i] !== undefined && /^[\d.]+$/.test(args[i]) ? Number(args[i]) : d);
const rate = num(0, 100);
const seconds = num(1, 5);
const writeMs = num(2, 1);
const hopMs = num(3, 0.3);
const builds = args.filter((a) => a.includes('=')).map((a) => ({ label: a.slice(0, a.indexOf('=')), root: resolve(a.slice(a.indexOf('=') + 1)) }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function run({ label, root }) {
  const imp = (p) => import(pathToFileURL(join(root, p)).href);
  const { MemoryKv } = await imp('dist/log/index.js');
  const { RaftNodeHost, systemTicks } = await imp('dist/broker/raft-host/node-host.js');
  const { RaftGroup } = await imp('dist/broker/raft-host/raft-group.js');
  const { RaftLogStore } = await imp('dist/broker/raft-log-store.js');
  const { systemClock } = await imp('dist/broker/system.js');
  const pino = (await import(pathToFileURL(join(root, 'node_modules/pino/pino.js')).href)).default;
  class SlowKv extends MemoryKv {
    async write(fill, o) {
      if (o.durable) await sleep(writeMs);
      return super.write(fill, o);
    }
  }
  const ids = [1, 2, 3];
  const leaders = new Map([
    [11, 1],
    [12, 2],
    [13, 3],
    [14, 1],
  ]);
  const hosts = new Map();
  const groups = new Map();
  const byType = new Map();
  let batches = 0;
  let counting = false;
  const transport = (self) => ({
    send: (gs) => {
      const peers = new Set();
      for (const { group, messages } of gs) {
        for (const m of messages) {
          peers.add(m.to);
          if (counting) byType.set(m.type, (byType.get(m.type) ?? 0) + 1);
          setTimeout(() => hosts.get(m.to)?.receive(group, m), hopMs);
        }
      }
      if (counting) batches += peers.size;
    },
  });
  for (const id of ids) {
    const kv = new SlowKv();
    const host = new RaftNodeHost({ self: id, kv, tickMs: 100, clock: systemClock, ticks: systemTicks, logger: pino({ level: 'silent' }), quiescence: false, onFatal: (e) => { console.error(e); process.exit(1); } });
    hosts.set(id, host);
    for (const gid of leaders.keys()) {
      const store = await RaftLogStore.open(kv, gid);
      await store.bootstrap(ids);
      // As partition groups are opened (partition-replica-open.ts); a build without the option ignores it.
      const g = new RaftGroup({ id: gid, self: id, store, conf: { voters: ids, learners: [] }, applied: 3, electionTicks: 10, heartbeatTicks: 1, random: { int: (n) => Math.floor(Math.random() * n) }, heartbeatWhileReplicating: false });
      g.setApplier({ apply: () => undefined, applied: () => undefined, restore: () => undefined });
      groups.set(`${gid}/${id}`, g);
    }
  }
  for (const id of ids) {
    hosts.get(id).start(transport(id));
    for (const gid of leaders.keys()) hosts.get(id).add(groups.get(`${gid}/${id}`));
  }
  for (const [gid, id] of leaders) {
    groups.get(`${gid}/${id}`).raw.campaign();
    hosts.get(id).kick(gid);
  }
  const t0 = Date.now();
  while (![...leaders].every(([gid, id]) => groups.get(`${gid}/${id}`).isLeader())) {
    if (Date.now() - t0 > 10_000) throw new Error('no leaders');
    await sleep(5);
  }
  await sleep(300);
  counting = true;
  let entries = 0;
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    [...leaders].map(async ([gid, id]) => {
      const g = groups.get(`${gid}/${id}`);
      let next = Date.now();
      while (Date.now() < end) {
        next += 1000 / rate;
        await g.propose(Buffer.alloc(100), systemClock.monotonicMs() + 5000);
        entries++;
        const wait = next - Date.now();
        if (wait > 0) await sleep(wait);
      }
    }),
  );
  counting = false;
  for (const h of hosts.values()) await h.close();
  const per = (n) => (n / entries).toFixed(2);
  const total = [...byType.values()].reduce((a, b) => a + b, 0);
  console.log(`${label}: ${entries} entries; per entry: Raft messages ${per(total)}, batches ${per(batches)} (${[...byType].sort().map(([k, v]) => `${k} ${per(v)}`).join(', ')})`);
}

for (const b of builds) await run(b);
