// Goal (issue 10, "Routing decisions are made on the raw URL"): the cluster hooks decide on the route
// fastify matched, never on the raw URL. The router decodes percent-escapes, so a raw URL such as
// `POST /event-types/x/%74imelines` reaches the timelines route and, like `/timelines`, waits for the
// read barrier (a switch reads the event type first; every node switches timelines), and a metadata
// route reached as `/%65vent-types/...` must wait for the read barrier like any other.
// Method: a fastify app with the hooks and stand-in routes of the same patterns as the real ones, over
// a ClusterPort that counts read barriers; requests through inject().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { installClusterHooks, mayWriteMetadata } from './cluster-hooks.js';
import { currentFlowId, openFlows } from '../observability/flow-context.js';
import type { AppDeps, ClusterPort } from './deps.js';

async function appWithHooks(): Promise<{ app: ReturnType<typeof Fastify>; barriers: () => number; handled: string[] }> {
  let barriers = 0;
  const handled: string[] = [];
  const cluster: ClusterPort = {
    view: () => ({}),
    readBarrier: () => {
      barriers++;
      return Promise.resolve();
    },
    cursorCatchUpMs: () => 0,
  };
  const app = Fastify();
  installClusterHooks(app, { cluster } as unknown as AppDeps);
  for (const [method, url] of [
    ['POST', '/event-types/:name/timelines'],
    ['GET', '/event-types/:name/timelines'],
    ['DELETE', '/event-types/:name/timelines/:id'],
    ['POST', '/event-types/:name/events'],
    ['GET', '/event-types/:name'],
    ['GET', '/subscriptions/:id'],
    ['POST', '/settings/features'],
    ['GET', '/settings/blacklist'],
    ['GET', '/health'],
  ] as const) {
    app.route({ method, url, handler: async () => {
      handled.push(`${method} ${url}`);
      return {};
    } });
  }
  await app.ready();
  return { app, barriers: () => barriers, handled };
}

test('a timeline switch reaches its handler on a cluster after the read barrier, however its URL is written', async () => {
  const { app, handled, barriers } = await appWithHooks();
  try {
    const urls = ['/event-types/x/timelines', '/event-types/x/%74imelines', '/%65vent-types/x/timelines', '/event-types/%78/timelines?a=1', '/event-types/x%2Fy/timelines'];
    for (const url of urls) {
      const before = barriers();
      const r = await app.inject({ method: 'POST', url, payload: {} });
      assert.equal(r.statusCode, 200, `POST ${url}: ${r.body}`);
      assert.equal(barriers() - before, 1, `POST ${url}: one read barrier`);
    }
    assert.equal((await app.inject({ method: 'DELETE', url: '/event-types/x/%74imelines/t1' })).statusCode, 200);
    assert.deepEqual(handled, [...urls.map(() => 'POST /event-types/:name/timelines'), 'DELETE /event-types/:name/timelines/:id']);
    assert.equal((await app.inject({ method: 'GET', url: '/event-types/x/%74imelines' })).statusCode, 200);
  } finally {
    await app.close();
  }
});

test('metadata routes wait for the read barrier however their URL is written; feature writes and other routes do not', async () => {
  const { app, barriers } = await appWithHooks();
  try {
    const cases: [string, string, number][] = [
      ['GET', '/event-types/x', 1],
      ['GET', '/%65vent-types/x', 1],
      ['GET', '/%73ubscriptions/s1', 1],
      ['GET', '/%73ettings/blacklist', 1],
      ['POST', '/event-types/x/%65vents', 1],
      ['POST', '/settings/features', 0],
      ['POST', '/%73ettings/features', 0],
      ['GET', '/health', 0],
    ];
    for (const [method, url, more] of cases) {
      const before = barriers();
      const r = await app.inject({ method: method as 'GET' | 'POST', url, ...(method === 'POST' ? { payload: {} } : {}) });
      assert.equal(r.statusCode, 200, `${method} ${url}: ${r.body}`);
      assert.equal(barriers() - before, more, `${method} ${url}: read barriers`);
    }
  } finally {
    await app.close();
  }
});

// Goal: the flow id reaches a metadata write's handler (and what it awaits), while a publish and a read
// open no flow: an open flow turns on the process's async hooks, which every promise of every publish
// would pay for (flow-context.ts), and they are off again once the last flow's request is answered.
test('a metadata write runs in its request\'s flow; a publish and a read open none; none is left open after', async () => {
  const app = Fastify();
  installClusterHooks(app, {} as unknown as AppDeps);
  const seen: Record<string, { flowId: string | undefined; open: number }> = {};
  for (const [method, url] of [
    ['POST', '/event-types'],
    ['POST', '/event-types/:name/events'],
    ['GET', '/event-types/:name'],
  ] as const) {
    app.route({ method, url, handler: async (request) => {
      await new Promise((r) => setImmediate(r));
      seen[`${method} ${url}`] = { flowId: currentFlowId() === request.id ? 'the request id' : currentFlowId(), open: openFlows() };
      return {};
    } });
  }
  await app.ready();
  try {
    for (const [method, url] of [['POST', '/event-types'], ['POST', '/event-types/x/events'], ['GET', '/event-types/x']] as const) {
      assert.equal((await app.inject({ method, url, payload: method === 'POST' ? {} : undefined })).statusCode, 200);
      assert.equal(openFlows(), 0, `${method} ${url}: no flow left open`);
    }
    assert.deepEqual(seen, {
      'POST /event-types': { flowId: 'the request id', open: 1 },
      'POST /event-types/:name/events': { flowId: undefined, open: 0 },
      'GET /event-types/:name': { flowId: undefined, open: 0 },
    });
    assert.equal(mayWriteMetadata('DELETE', '/subscriptions/:id'), true);
    assert.equal(mayWriteMetadata('POST', '/event-types/:name/events'), false);
  } finally {
    await app.close();
  }
});
