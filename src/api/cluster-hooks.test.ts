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

// Goal (docs/metadata-raft.md, "Read leases"): an answer built from metadata leaves only once
// everything the node applied is released. The barrier is checked before the handler runs, and the
// handler reads later; an entry applied in between (the node host's turn runs between the barrier's
// check and the handler, or during the handler's own awaits, such as a publish's validation) may not
// be released yet, and an answer showing it would show a write that a later read on a lease holder
// that has not applied it does not.
// Method: a stand-in node whose applied state is a version and whose released index is another; the
// barrier resolves with both equal and then applies a newer version (the injected apply); handlers
// answer the version they read. Every answer must leave with what it shows released. Before the
// answer's hold the first case answered version 2 while only 1 was released (seen failing).
function nodeWithRelease(): {
  cluster: ClusterPort;
  applied: () => number;
  apply: () => void;
  release: () => void;
  released: () => number;
  holds: () => number;
  answers: { url: string; shown: number; releasedThen: number }[];
} {
  let applied = 1;
  let released = 1;
  let holds = 0;
  let waiters: (() => void)[] = [];
  const answers: { url: string; shown: number; releasedThen: number }[] = [];
  const barrier = () => {
    // Checked now (everything applied is released), resolved later: the apply slips in between.
    assert.equal(released, applied);
    return Promise.resolve().then(() => {
      applied++;
    });
  };
  const cluster: ClusterPort = {
    view: () => ({}),
    readBarrier: barrier,
    publishBarrier: barrier,
    answerBarrier: () => {
      holds++;
      if (released >= applied) return undefined;
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
    cursorCatchUpMs: () => 0,
  };
  return {
    cluster,
    applied: () => applied,
    apply: () => applied++,
    release: () => {
      released = applied;
      const w = waiters;
      waiters = [];
      for (const r of w) r();
    },
    released: () => released,
    holds: () => holds,
    answers,
  };
}

test('an answer that read metadata leaves only once what the node applied is released, though an apply slipped in after the barrier', async () => {
  const node = nodeWithRelease();
  const app = Fastify();
  installClusterHooks(app, { cluster: node.cluster } as unknown as AppDeps);
  const { answers } = node;
  app.addHook('onResponse', (request, reply, done) => {
    answers.push({ url: request.url, shown: Number(reply.getHeader('x-shown')), releasedThen: node.released() });
    done();
  });
  // A read: answers the version it reads at once.
  app.get('/event-types/:name', async (_request, reply) => {
    reply.header('x-shown', String(node.applied()));
    return { version: node.applied() };
  });
  // A publish: reads, awaits (validation), reads again; another apply lands during the await.
  app.post('/event-types/:name/events', async (_request, reply) => {
    await new Promise((r) => setImmediate(r));
    node.apply();
    await new Promise((r) => setImmediate(r));
    reply.header('x-shown', String(node.applied()));
    return {};
  });
  // A refusal built from the state (e.g. a 404 for an event type deleted by the unreleased entry).
  app.get('/subscriptions/:id', async (_request, reply) => {
    reply.header('x-shown', String(node.applied()));
    reply.code(404);
    return { title: 'Not Found' };
  });
  await app.ready();
  try {
    for (const [method, url] of [['GET', '/event-types/x'], ['POST', '/event-types/x/events'], ['GET', '/subscriptions/s']] as const) {
      let answered = false;
      const pending = app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) }).then((r) => {
        answered = true;
        return r;
      });
      // Turns of the event loop pass; the answer must not leave while the newer entry is unreleased.
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      assert.equal(answered, false, `${method} ${url}: answered while version ${node.applied()} was applied and only ${node.released()} released`);
      node.release();
      const r = await pending;
      assert.ok(r.statusCode === 200 || r.statusCode === 404, `${method} ${url}: ${r.statusCode} ${r.body}`);
    }
    assert.equal(answers.length, 3);
    for (const a of answers) assert.ok(a.shown <= a.releasedThen, `${a.url} showed version ${a.shown} with ${a.releasedThen} released`);
  } finally {
    await app.close();
  }
});

test('answers of routes that read no metadata, feature writes and 5xx answers are not held; a hold past its deadline answers 503, except a publish that stored its batch', async () => {
  const node = nodeWithRelease();
  const app = Fastify();
  let failHold = false;
  const cluster: ClusterPort = {
    ...node.cluster,
    readBarrier: () => undefined,
    publishBarrier: () => undefined,
    answerBarrier: () => (failHold ? Promise.reject(new Error('not released in time')) : node.cluster.answerBarrier!()),
  };
  installClusterHooks(app, { cluster } as unknown as AppDeps);
  app.get('/health', async () => ({}));
  app.post('/settings/features', async () => ({}));
  app.get('/settings/blacklist', async () => ({}));
  app.get('/event-types/:name', async (_request, reply) => reply.code(503).send({ title: 'Service Unavailable' }));
  app.post('/event-types/:name/events', async () => ({}));
  await app.ready();
  try {
    node.apply(); // applied 2, released 1: any held answer would wait
    assert.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'POST', url: '/settings/features', payload: {} })).statusCode, 200);
    assert.equal(node.holds(), 0, 'no hold on routes that read no metadata');
    node.release();
    assert.equal((await app.inject({ method: 'GET', url: '/event-types/x' })).statusCode, 503);
    assert.equal(node.holds(), 0, 'a 5xx answer is not held');
    failHold = true;
    const r = await app.inject({ method: 'GET', url: '/settings/blacklist' });
    assert.equal(r.statusCode, 503, r.body);
    assert.match(String(r.headers['content-type']), /application\/problem\+json/);
    assert.match(r.body, /confirmed visible everywhere/);
    // A publish that stored its batch keeps its answer: a 503 would have the producer store it twice.
    const stored = await app.inject({ method: 'POST', url: '/event-types/x/events', payload: {} });
    assert.equal(stored.statusCode, 200, `a stored batch is answered as stored: ${stored.body}`);
  } finally {
    await app.close();
  }
});
