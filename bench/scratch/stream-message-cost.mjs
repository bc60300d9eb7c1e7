// CPU of one message on the Raft stream, both ends in one process (two GrpcTransports on 127.0.0.1,
// cluster secret proven at stream open only): node 1 sends N batches of one small Raft message (an
// append response, or an append of one 5 KB entry with APP=1), one batch per event-loop turn, to node 2,
// whose handler counts them. Prints CPU per message (user + system of the process, both ends, all of
// grpc-js, HTTP/2, the codec and the checks) for the build at ROOT.
//   npm run build && node bench/scratch/stream-message-cost.mjs [ROOT=.] [N=50000]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(process.argv[2] ?? '.');
const n = Number(process.argv[3] ?? 50_000);
const imp = (p) => import(pathToFileURL(resolve(root, p)).href);
const { GrpcTransport } = await imp('dist/transport/index.js');
const { makeMessage } = await imp('dist/raft/index.js');
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
let got = 0;
let done;
const handler = {
  receive: () => {
    if (++got === n) done();
  },
  unreachable: () => {},
  snapshotStatus: () => {},
  heard: () => {},
  propose: async () => ({ status: 'unavailable', detail: '' }),
  append: async () => ({ status: 'unavailable', detail: '' }),
  control: async () => ({ status: 'unavailable', detail: '' }),
  read: async function* () {},
  bounds: async () => ({ oldest: 0, newest: -1, epoch: 0, leader: 0 }),
  fetchLog: async function* () {},
};
const security = { secret: Buffer.from('bench cluster secret, long enough to be accepted') };
const t2 = await GrpcTransport.start({ self: 2, incarnation: 'b', listen: '127.0.0.1:0', peers: [], handler, logger: quiet, security });
const t1 = await GrpcTransport.start({ self: 1, incarnation: 'a', listen: '127.0.0.1:0', peers: [{ id: 2, raftAddress: `127.0.0.1:${t2.port}` }], handler, logger: quiet, security });
t2.addPeer({ id: 1, raftAddress: `127.0.0.1:${t1.port}` }); // node 2 takes calls from its peers only
const app = process.env.APP === '1';
const msg = (i) =>
  app
    ? makeMessage({ type: 'app', from: 1, to: 2, term: 4, logTerm: 4, index: 812_345 + i, commit: 812_344 + i, entries: [{ term: 4, index: 812_346 + i, type: 'normal', data: Buffer.alloc(5000, 7) }] })
    : makeMessage({ type: 'appResp', from: 1, to: 2, term: 4, index: 901_234 + i });
const turn = () => new Promise((r) => setImmediate(r));
/** Sends `count` batches, a few per turn, never more than 256 ahead of what arrived (the peer queue drops beyond flow control). */
async function phase(count) {
  got = 0;
  const deadline = Date.now() + 120_000;
  for (let i = 0; i < count; i++) {
    t1.send([{ group: 3, messages: [msg(i)] }]);
    if (i % 4 === 3) await turn();
    while (i + 1 - got > 256) {
      if (Date.now() > deadline) throw new Error(`only ${got} of ${i + 1} arrived`);
      await turn();
    }
  }
  while (got < count) {
    if (Date.now() > deadline) throw new Error(`only ${got} of ${count} arrived`);
    await new Promise((r) => setTimeout(r, 1));
  }
}
done = () => {};
await phase(Math.min(n, 10_000)); // warm-up
const c0 = process.cpuUsage();
const w0 = performance.now();
await phase(n);
const c = process.cpuUsage(c0);
const wall = performance.now() - w0;
const nSaved = n;
console.log(`${root}: ${app ? 'app of one 5 KB entry' : 'appResp'}: ${((c.user + c.system) / nSaved).toFixed(1)} µs CPU per message (both ends), ${(nSaved / (wall / 1000)).toFixed(0)} messages/s`);
await t1.close();
await t2.close();
