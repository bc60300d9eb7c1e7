// Goal (docs/metadata-raft.md, "Read leases", streams): a stream writes its own 200 head and lines,
// which the answer hold of cluster-hooks.ts (an onSend hook) never sees. What they show of metadata (the
// event type, the subscription and its open session) must leave only once everything the node
// applied is released, as every other answer built from metadata: else a
// client could see a stream of a new event type here, and then be told on a lease holder that has not
// applied it yet that it does not exist. Past the wait's deadline the head is a 503 Problem (and a
// subscription's opened session is closed). Its lines are not held (stream-hold.ts says why).
// Method: the real stream routes (events.ts, subscription-streams.ts) and cluster hooks in a fastify
// app over stand-in services and a stand-in node whose applied and released versions the test moves:
// its barrier resolves with both equal and an apply slips in after it (as the node host's turn can).
// Real HTTP, so the test sees when the head and each line arrive. Before the change the heads arrived at
// once (seen failing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import Fastify from 'fastify';
import { installClusterHooks } from './cluster-hooks.js';
import { eventRoutes } from './routes/events.js';
import { subscriptionStreamRoutes } from './routes/subscription-streams.js';
import type { AppDeps, ClusterPort } from './deps.js';
import type { StreamSink } from '../consumption/low-level-stream.js';
import type { Principal } from '../auth/principal.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function standNode() {
  let applied = 1;
  let released = 1;
  let failHold = false;
  let waiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const cluster: ClusterPort = {
    view: () => ({}),
    readBarrier: () =>
      Promise.resolve().then(() => {
        applied++; // checked released, and then an apply slips in before the handler reads
      }),
    answerBarrier: () => {
      if (failHold) return Promise.reject(new Error('not released in time'));
      if (released >= applied) return undefined;
      return new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
    },
    cursorCatchUpMs: () => 0,
  };
  return {
    cluster,
    apply: () => applied++,
    release: () => {
      released = applied;
      const w = waiters;
      waiters = [];
      for (const x of w) x.resolve();
    },
    failHolds: () => {
      failHold = true;
      const w = waiters;
      waiters = [];
      for (const x of w) x.reject(new Error('not released in time'));
    },
    healHolds: () => (failHold = false),
    unreleased: () => applied > released,
  };
}

interface Opened {
  cancelled: boolean;
  ran: boolean;
}

async function app(node: ReturnType<typeof standNode>, run: (sink: StreamSink, signal: AbortSignal) => Promise<'limit' | 'client_closed'>) {
  const eventType = { name: 'x' };
  const rec = { eventType, storage: { topic: 1, partitions: ['0'] } };
  let registered = 0;
  const opened: Opened[] = [];
  const deps = {
    cluster: node.cluster,
    http: { publishBodyBytesMax: 1 << 20 },
    clock: { nowMs: () => Date.now(), monotonicMs: () => performance.now() },
    features: { isEnabled: (n: string) => n === 'high_level_api' },
    access: { checkConsume: () => undefined, checkSubscription: () => undefined },
    eventTypes: { record: () => rec, find: () => eventType, get: () => eventType },
    cursors: { bounds: () => ({ oldest: 0, newest: -1 }), formatCursor: () => '001-0001-000000000000000000' },
    openStreams: {
      add: () => {
        registered++;
        return () => registered--;
      },
    },
    reader: {
      read: async () => [],
      waitForEvents: (_t: number, _p: number, _a: number, signal: AbortSignal) => new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true })),
    },
    subscriptions: { get: (id: string) => ({ id, event_types: ['x'] }) },
    hub: {
      open: async () => {
        const o: Opened = { cancelled: false, ran: false };
        opened.push(o);
        return {
          id: `stream-${opened.length}`,
          params: {},
          run: (sink: StreamSink, signal: AbortSignal) => {
            o.ran = true;
            return run(sink, signal);
          },
          cancel: () => (o.cancelled = true),
        };
      },
    },
  } as unknown as AppDeps;
  const a = Fastify();
  a.decorateRequest('principal', undefined as unknown as Principal);
  a.addHook('onRequest', async (request) => {
    (request as unknown as { principal: object }).principal = { uid: 'consumer' };
  });
  installClusterHooks(a, deps);
  const streams = new Set<AbortController>();
  await a.register(eventRoutes, { deps, streams });
  await a.register(subscriptionStreamRoutes, { deps, streams });
  await a.listen({ host: '127.0.0.1', port: 0 });
  const address = a.server.address();
  assert.ok(address !== null && typeof address === 'object');
  return { app: a, port: address.port, registered: () => registered, opened, streams };
}

interface Seen {
  status?: number;
  body: string;
  lines: string[];
  ended: boolean;
  req: http.ClientRequest;
}

const clients = new Set<http.ClientRequest>();

/** Closes the app whatever its streams do: a stream left running must not keep the test from ending. */
async function closeApp(a: ReturnType<typeof Fastify>): Promise<void> {
  for (const c of clients) c.destroy();
  clients.clear();
  a.server.closeAllConnections();
  await a.close();
}

function get(port: number, path: string): Seen {
  const seen = { body: '', lines: [], ended: false } as unknown as Seen;
  seen.req = http.get({ host: '127.0.0.1', port, path }, (res) => {
    seen.status = res.statusCode;
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      seen.body += d;
      seen.lines = seen.body.split('\n').filter((l) => l !== '');
    });
    res.on('end', () => (seen.ended = true));
  });
  seen.req.on('error', () => undefined);
  clients.add(seen.req);
  return seen;
}

async function until(what: string, probe: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

test('a stream\'s head leaves only once what the node applied is released, though an apply slipped in after the barrier', { timeout: 20_000 }, async () => {
  const node = standNode();
  const s = await app(node, async (_sink, signal) => {
    await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
    return 'client_closed';
  });
  try {
    for (const path of ['/event-types/x/events', '/subscriptions/s/events']) {
      const seen = get(s.port, path);
      await sleep(150);
      assert.ok(node.unreleased(), `${path}: an unreleased apply is pending`);
      assert.equal(seen.status, undefined, `${path}: the head left while what the node applied was not released`);
      node.release();
      await until(`${path}: the head`, () => seen.status !== undefined);
      assert.equal(seen.status, 200, seen.body);
      seen.req.destroy();
    }
    await until('the streams ended', () => s.streams.size === 0 && s.registered() === 0);
  } finally {
    await closeApp(s.app);
  }
});

test('a stream\'s head whose wait gives up is a 503 Problem, nothing of the stream is left open, and a subscription\'s session is closed', { timeout: 20_000 }, async () => {
  const node = standNode();
  const s = await app(node, async () => 'limit');
  try {
    for (const path of ['/event-types/x/events', '/subscriptions/s/events']) {
      const seen = get(s.port, path);
      await sleep(50);
      assert.equal(seen.status, undefined);
      node.failHolds();
      await until(`${path}: the answer`, () => seen.ended);
      assert.equal(seen.status, 503, seen.body);
      assert.match(seen.body, /confirmed visible everywhere/);
      assert.equal(s.registered(), 0, `${path}: no open stream left registered`);
      assert.equal(s.streams.size, 0);
      node.healHolds();
    }
    assert.deepEqual(s.opened, [{ cancelled: true, ran: false }], 'the session opened for the refused stream is closed');
  } finally {
    await closeApp(s.app);
  }
});

test('a running stream\'s lines are not held by an unreleased apply (a hold per line would make a stream wait a release per line under commit churn)', { timeout: 20_000 }, async () => {
  const node = standNode();
  const s = await app(node, async (sink) => {
    assert.equal(sink.write(Buffer.from('{"line":1}\n')), true);
    node.apply(); // a cursor commit of another consumer applied here, not yet released
    assert.equal(sink.write(Buffer.from('{"line":2}\n')), true, 'the line was held');
    sink.write(Buffer.from('{"line":3}\n'));
    return 'limit';
  });
  try {
    const seen = get(s.port, '/subscriptions/s/events');
    await sleep(50);
    node.release(); // the head's own wait (the barrier's apply)
    await until('the end', () => seen.ended);
    assert.deepEqual(seen.lines, ['{"line":1}', '{"line":2}', '{"line":3}']);
  } finally {
    await closeApp(s.app);
  }
});
