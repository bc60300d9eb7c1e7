// CPU per request of the answer's hold (src/api/cluster-hooks.ts, answerBarrier) on its common path:
// a fastify app with compression and the cluster hooks of the build at ROOT, a publish route that
// answers at once, requests through inject(); A: a cluster port without answerBarrier (no hold), B:
// one whose answerBarrier returns undefined (released: the answer leaves at once). Rounds alternate.
//   node bench/scratch/answer-hold-cpu.mjs [ROOT=.] [requests per round=20000] [rounds=8]
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';
import Fastify from 'fastify';
import fastifyCompress from '@fastify/compress';
const [root = '.', n = '20000', rounds = '8'] = process.argv.slice(2);
const { installClusterHooks } = await import(pathToFileURL(join(resolve(root), 'dist/api/cluster-hooks.js')).href);
async function make(withHold) {
  const app = Fastify();
  app.register(fastifyCompress, { global: true, globalDecompression: false, encodings: ['gzip'], threshold: 1024 });
  const cluster = { view: () => ({}), readBarrier: () => undefined, publishBarrier: () => undefined, cursorCatchUpMs: () => 0 };
  if (withHold) cluster.answerBarrier = () => undefined;
  installClusterHooks(app, { cluster });
  app.post('/event-types/:name/events', async (_req, reply) => reply.code(200).send());
  await app.ready();
  return app;
}
const apps = { A: await make(false), B: await make(true) };
const res = { A: [], B: [] };
for (let round = 0; round < Number(rounds); round++) {
  for (const k of round % 2 ? ['A', 'B'] : ['B', 'A']) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < Number(n); i++) await apps[k].inject({ method: 'POST', url: '/event-types/x/events', payload: '[]', headers: { 'content-type': 'application/json' } });
    const c = process.cpuUsage(c0);
    res[k].push((c.user + c.system) / Number(n));
  }
}
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const fmt = (a) => a.map((x) => x.toFixed(1)).join(' ');
console.log(`CPU µs per request, median of ${rounds} rounds: without the hold ${med(res.A).toFixed(2)} (${fmt(res.A)}); with it ${med(res.B).toFixed(2)} (${fmt(res.B)})`);
