/**
 * Transport micro-benchmark (a script, not a test): records/s between two local GrpcTransports, each
 * in its own process (so client and server each have a core), through
 *   - forwardAppend (unary): batches of 100 and 1000 ~500-byte events, 1 and 8 callers in flight;
 *   - the parts of small publishes (3 parts of 3 events, as a batch of 10 over 4 partitions forwards to
 *     one node): one Append per part, one AppendMany call per request, one request on the append
 *     stream, with the CPU of both processes per part;
 *   - large parts (2 parts of 250 events, as a batch of 1000 forwards to a node leading two partitions):
 *     single Appends in parallel against one AppendMany call, with request latency and CPU per part;
 *   - a read stream: one follow-less read of 2,000,000 events in chunks of 1000;
 *   - send(): Raft heartbeats of 1,000 groups per send, coalesced (messages/s).
 * The serving side answers at once (no storage, no Raft): this measures the transport alone.
 *
 *   npm run bench:transport [-- --quick] [-- --insecure]   (--insecure: calls prove no cluster secret)
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeMessage } from '../src/raft/index.js';
import { GrpcTransport, type AppendRequest, type NodeHandler, type ReadChunk } from '../src/transport/index.js';
import { fmtInt, fmtMs, percentile } from './lib/stats.js';
import { cpuSeconds } from './lib/broker.js';

const quick = process.argv.includes('--quick');
// Calls prove a cluster secret as a real cluster's do; --insecure measures without (the HMAC's cost).
const security = process.argv.includes('--insecure') ? ('insecure' as const) : { secret: Buffer.from('bench cluster secret, long enough to be accepted') };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function event(i: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      metadata: { eid: `4a7b2c1e-9d3f-4e8a-b5c6-${String(i).padStart(12, '0')}`, occurred_at: '2026-11-22T10:00:00.000Z', received_at: '2026-11-22T10:00:00.123Z', flow_id: 'JMOSBeWfPuEtOMoG7nCrQkbm', event_type: 'order.created', partition: String(i % 8), version: '1.0.0' },
      order_number: `ORD-${i}`,
      customer: { id: `C${i % 10000}`, tier: 'gold', country: 'DE' },
      items: [{ sku: 'SKU-12345', qty: 2, price_cents: 1999 }, { sku: 'SKU-67890', qty: 1, price_cents: 4999 }],
      total_cents: 8997,
      currency: 'EUR',
      note: 'x'.repeat(40),
    }),
  );
}
const pool = Array.from({ length: 1000 }, (_, i) => event(i));
const eventBytes = Math.round(pool.reduce((n, b) => n + b.length, 0) / pool.length);

/** A handler for what the serving side does not serve. */
function idle(): NodeHandler {
  return {
    receive: () => {},
    unreachable: () => {},
    snapshotStatus: () => {},
    propose: async () => ({ status: 'unavailable', detail: 'bench' }),
    append: async () => ({ status: 'unavailable', detail: 'bench' }),
    control: async () => ({ status: 'unavailable', detail: 'bench' }),
    read: async function* () {},
    bounds: async () => ({ oldest: 0, newest: -1, epoch: 0, leader: 0 }),
    fetchLog: async function* () {},
  };
}

/** The serving process: commits every append at once, reads from a ring of events, counts heartbeats. */
async function serve(): Promise<void> {
  let next = 0;
  let received = 0;
  const handler: NodeHandler = {
    ...idle(),
    receive: () => void received++,
    append: async (_from, req) => {
      const first = next;
      next += req.events.length;
      return { status: 'committed', epoch: req.epoch || 1, firstOffset: first, lastOffset: next - 1 };
    },
    read: async function* (_from, req, signal): AsyncGenerator<ReadChunk> {
      const total = req.topic; // the bench passes the number of events to read as the topic
      for (let first = req.afterOffset + 1; first < total && !signal.aborted; first += req.maxEvents) {
        const n = Math.min(req.maxEvents, total - first);
        yield { events: Array.from({ length: n }, (_, k) => ({ offset: first + k, bytes: pool[(first + k) % pool.length]! })), oldest: 0, newest: total - 1, epoch: 1 };
      }
    },
  };
  const t = await GrpcTransport.start({ self: 2, incarnation: 'bench-server', listen: '127.0.0.1:0', peers: [], handler, logger: quiet, security, isMember: (id) => id === 1 });
  process.stdout.write(`PORT ${t.port}\n`);
  process.stdin.on('data', () => process.stdout.write(`RECEIVED ${received}\n`));
  process.stdin.on('end', () => void t.close().then(() => process.exit(0)));
}

async function appendPhase(t: GrpcTransport, batch: number, callers: number, seconds: number) {
  const latencies: number[] = [];
  let events = 0;
  let seq = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const start = (seq * 131) % (pool.length - batch + 1);
        const req: AppendRequest = { group: 1, topic: 1, partition: 0, epoch: 1, requestId: `r-${seq++}`, flowId: 'bench', deadlineMs: 10_000, events: pool.slice(start, start + batch) };
        const t0 = performance.now();
        const a = await t.forwardAppend(2, req);
        latencies.push(performance.now() - t0);
        if (a.status !== 'committed') throw new Error(`append: ${JSON.stringify(a)}`);
        events += batch;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { batch, callers, evPerS: events / seconds, reqPerS: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/**
 * Requests of `parts` parts of `events` events each, `callers` in flight, the parts of a request sent as
 * single Appends or in one AppendMany; the CPU of both processes (this one and the server `pid`) per part.
 */
type PartsWay = 'single Appends' | 'one AppendMany call' | 'one request on the append stream';

async function partsPhase(t: GrpcTransport, pid: number, way: PartsWay, parts: number, events: number, callers: number, seconds: number) {
  let done = 0;
  let seq = 0;
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const server0 = cpuSeconds(pid);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const r = seq++;
        const reqs: AppendRequest[] = Array.from({ length: parts }, (_, p) => {
          const start = ((r * parts + p) * 7) % (pool.length - events + 1);
          return { group: p + 1, topic: 1, partition: p, epoch: 1, requestId: `m-${r}.${p}`, flowId: 'bench', deadlineMs: 10_000, events: pool.slice(start, start + events) };
        });
        const r0 = performance.now();
        const answers =
          way === 'single Appends' ? await Promise.all(reqs.map((q) => t.forwardAppend(2, q))) : way === 'one AppendMany call' ? await t.unaryAppendMany(2, reqs) : await t.forwardAppendMany(2, reqs);
        for (const a of answers) if (a.status !== 'committed') throw new Error(`append: ${JSON.stringify(a)}`);
        latencies.push(performance.now() - r0);
        done += parts;
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(cpu0);
  const cpuS = (c.user + c.system) / 1e6 + (cpuSeconds(pid) - server0);
  latencies.sort((a, b) => a - b);
  return { partsPerS: done / s, cpuUsPerPart: (cpuS * 1e6) / done, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function readPhase(t: GrpcTransport, total: number) {
  const t0 = performance.now();
  let events = 0;
  let bytes = 0;
  for await (const c of t.read(2, { group: 1, topic: total, partition: 0, afterOffset: -1, maxEvents: 1000, maxBytes: 4 << 20, waitMs: 0, follow: false, flowId: 'bench' })) {
    events += c.events.length;
    for (const e of c.events) bytes += e.bytes.length;
  }
  const s = (performance.now() - t0) / 1000;
  if (events !== total) throw new Error(`read ${events} of ${total}`);
  return { evPerS: events / s, mbPerS: bytes / s / 1e6 };
}

async function heartbeatPhase(t: GrpcTransport, ask: () => Promise<number>, groups: number, sends: number) {
  const before = await ask();
  const t0 = performance.now();
  for (let k = 0; k < sends; k++) {
    t.send(Array.from({ length: groups }, (_, g) => ({ group: g + 1, messages: [makeMessage({ type: 'heartbeat', from: 1, to: 2, term: 3, commit: k })] })));
    if (k % 10 === 9) await new Promise((r) => setImmediate(r));
  }
  for (;;) {
    const got = (await ask()) - before;
    if (got >= groups * sends) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const s = (performance.now() - t0) / 1000;
  return { groups, sends, msgPerS: (groups * sends) / s, msPerSend: (s * 1000) / sends };
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', ...process.argv.filter((a) => a === '--insecure')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters: ((l: string) => void)[] = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const w = waiters.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  const nextLine = () => new Promise<string>((resolve) => (lines.length > 0 ? resolve(lines.shift()!) : waiters.push(resolve)));
  const port = Number((await nextLine()).split(' ')[1]);
  const t = await GrpcTransport.start({ self: 1, incarnation: 'bench-client', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${port}` }], handler: idle(), logger: quiet, security });
  const ask = async () => {
    child.stdin!.write('?\n');
    return Number((await nextLine()).split(' ')[1]);
  };
  const seconds = quick ? 2 : 5;
  console.log(`transport bench: ${eventBytes}-byte events, ${seconds} s per append phase, client and server in separate processes, ${security === 'insecure' ? 'no authentication' : 'every call proves the cluster secret'}`);
  await appendPhase(t, 100, 4, 1); // warm-up
  for (const [batch, callers] of [[100, 1], [100, 8], [1000, 1], [1000, 8]] as const) {
    const r = await appendPhase(t, batch, callers, seconds);
    console.log(`forwardAppend batch ${batch}, ${callers} in flight: ${fmtInt(r.evPerS)} ev/s, ${fmtInt(r.reqPerS)} req/s, p50 ${fmtMs(r.p50)} ms, p99 ${fmtMs(r.p99)} ms`);
  }
  const ways: PartsWay[] = ['single Appends', 'one AppendMany call', 'one request on the append stream'];
  for (const w of ways) await partsPhase(t, child.pid!, w, 3, 3, 8, 1); // warm-up
  for (const round of [1, 2]) {
    for (const way of round === 1 ? ways : [...ways].reverse()) {
      const r = await partsPhase(t, child.pid!, way, 3, 3, 8, seconds);
      console.log(`publish parts (3 parts of 3 events per request, 8 requests in flight) as ${way}, round ${round}: ${fmtInt(r.partsPerS)} parts/s, ${fmtInt(r.cpuUsPerPart)} µs CPU per part (both processes)`);
    }
  }
  // Large parts: a batch of 1000 over 4 partitions forwards about 2 parts of 250 events to a node
  // leading two of them; 3 such requests in flight. Sent as single Appends in parallel (the build
  // before the grouped forward) and as one AppendMany (what forwardAppendMany does with them).
  const large: PartsWay[] = ['single Appends', 'one AppendMany call'];
  for (const w of large) await partsPhase(t, child.pid!, w, 2, 250, 3, 1); // warm-up
  for (const round of [1, 2]) {
    for (const way of round === 1 ? large : [...large].reverse()) {
      const r = await partsPhase(t, child.pid!, way, 2, 250, 3, seconds);
      console.log(`large parts (2 parts of 250 events per request, 3 requests in flight) as ${way}, round ${round}: ${fmtInt(r.partsPerS)} parts/s, request p50 ${fmtMs(r.p50)} ms p99 ${fmtMs(r.p99)} ms, ${fmtInt(r.cpuUsPerPart)} µs CPU per part (both processes)`);
    }
  }
  await readPhase(t, 100_000); // warm-up
  const total = quick ? 500_000 : 2_000_000;
  const r = await readPhase(t, total);
  console.log(`read stream, ${fmtInt(total)} events in chunks of 1000: ${fmtInt(r.evPerS)} ev/s, ${r.mbPerS.toFixed(0)} MB/s`);
  const h = await heartbeatPhase(t, ask, 1000, quick ? 100 : 300);
  console.log(`send(): heartbeats of ${h.groups} groups per send, coalesced: ${fmtInt(h.msgPerS)} messages/s, ${fmtMs(h.msPerSend)} ms per send`);
  await t.close();
  child.stdin!.end();
}

if (process.argv.includes('--serve')) await serve();
else await main();
