/**
 * TEST-ONLY: small clients for the low-level stream and publishing, shared by the *.http.test.ts files.
 */
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import { call, eid, readLines, streamHeadTimeoutMs } from './broker-harness.js';

/** One line of a low-level stream (EventStreamBatch). */
export interface StreamLine {
  cursor: { partition: string; offset: string };
  events?: Array<Record<string, unknown> & { order_number?: string; metadata: Record<string, unknown> }>;
  info?: unknown;
}

/** The wire form of an offset on Brook's first timeline (compatibility.md: 001-<4 hex>-<18 digits>). */
export function off(n: number): string {
  return `001-0001-${String(n).padStart(18, '0')}`;
}

export function cursorsHeader(cursors: unknown): Record<string, string> {
  return { 'X-Svc-Cursors': typeof cursors === 'string' ? cursors : JSON.stringify(cursors) };
}

// Each stream gets its own undici Agent, destroyed when the test is done with the stream. With the shared
// global dispatcher, cancelling a stream's body leaves the pool with a fresh connection that never
// carries a request, and the broker's close() then waits ~70 s for it (see the report on shutdown).
const agents = new WeakMap<Response, Agent>();
const openAgents = new Set<Agent>();

function closeAgent(agent: Agent | undefined): Promise<void> {
  if (agent === undefined || !openAgents.delete(agent)) return Promise.resolve();
  return agent.destroy().catch(() => undefined);
}

/** GET /event-types/{name}/events; resolves when the response head arrives. */
export async function openStream(
  base: string,
  name: string,
  query = '',
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  const agent = new Agent();
  openAgents.add(agent);
  const init = { headers, dispatcher: agent } as unknown as RequestInit;
  if (signal !== undefined) {
    init.signal = signal;
    signal.addEventListener('abort', () => void closeAgent(agent), { once: true });
  }
  // A broker that never sends the head must fail the test, not hold it (and its process) for ever.
  const head = setTimeout(() => void closeAgent(agent), streamHeadTimeoutMs);
  try {
    const res = await fetch(`${base}/event-types/${encodeURIComponent(name)}/events${query === '' ? '' : '?' + query}`, init);
    agents.set(res, agent);
    return res;
  } catch (err) {
    await closeAgent(agent);
    throw err;
  } finally {
    clearTimeout(head);
  }
}

/** Closes the client side of a stream (its connection). */
export function closeStream(res: Response): Promise<void> {
  return closeAgent(agents.get(res));
}

/** Closes every stream connection still open (call before stopping a broker). */
export async function closeAllStreams(): Promise<void> {
  await Promise.all([...openAgents].map((a) => closeAgent(a)));
}

/** Reads a stream until the server ends it; fails if that takes longer than timeoutMs. */
export async function readToEnd(res: Response, timeoutMs = 15_000): Promise<StreamLine[]> {
  try {
    return (await readLines(res, () => false, timeoutMs)) as StreamLine[];
  } finally {
    await closeStream(res);
  }
}

/** Reads until `n` events have arrived (or fails after timeoutMs), then closes the stream. */
export async function readEvents(res: Response, n: number, timeoutMs = 15_000): Promise<StreamLine[]> {
  return readUntil(res, (ls) => countEvents(ls) >= n, timeoutMs);
}

/** Reads until `until` says stop (or fails after timeoutMs), then closes the stream. */
export async function readUntil(res: Response, until: (lines: StreamLine[]) => boolean, timeoutMs = 15_000): Promise<StreamLine[]> {
  try {
    return (await readLines(res, (ls) => until(ls as StreamLine[]), timeoutMs)) as StreamLine[];
  } finally {
    await closeStream(res);
  }
}

export function countEvents(lines: readonly StreamLine[]): number {
  return lines.reduce((s, l) => s + (l.events?.length ?? 0), 0);
}

/** All events of the lines in stream order, with the partition of their batch. */
export function flatEvents(lines: readonly StreamLine[]): Array<{ partition: string; order: string; event: Record<string, unknown> }> {
  const out: Array<{ partition: string; order: string; event: Record<string, unknown> }> = [];
  for (const l of lines) for (const e of l.events ?? []) out.push({ partition: l.cursor.partition, order: String(e.order_number), event: e });
  return out;
}

/** A business event placed in a given partition (for event types with partition_strategy user_defined). */
export function eventIn(partition: string, order: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { order_number: order, ...extra, metadata: { eid: eid(), occurred_at: '2026-11-22T10:00:00Z', partition } };
}

/** Publishes and asserts the 200 of a fully stored batch. */
export async function publish(base: string, name: string, events: unknown[]): Promise<void> {
  const r = await call(base, 'POST', `/event-types/${encodeURIComponent(name)}/events`, events);
  assert.equal(r.status, 200, `publish to ${name} failed: ${r.status} ${r.text.slice(0, 300)}`);
}

/** Creates an event type and asserts 201. */
export async function createEventType(base: string, body: Record<string, unknown>): Promise<void> {
  const r = await call(base, 'POST', '/event-types', body);
  assert.equal(r.status, 201, `create ${String(body['name'])} failed: ${r.status} ${r.text}`);
}

/** Statistics giving `n` partitions ("0".."n-1"). */
export function statisticFor(n: number): Record<string, number> {
  return { messages_per_minute: 100, message_size: 100, read_parallelism: n, write_parallelism: n };
}

/** Asserts a Problem reply (compatibility.md wire format) with the given status. */
export function assertProblem(r: { status: number; headers: Headers; body: unknown; text: string }, status: number, detail?: RegExp): void {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
  assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const p = r.body as { status?: unknown; title?: unknown; type?: unknown; detail?: unknown };
  assert.equal(p.status, status);
  assert.equal(typeof p.title, 'string');
  assert.equal(p.type, `http://httpstatus.es/${status}`);
  if (detail !== undefined) assert.match(String(p.detail), detail);
}

/**
 * Reads a non-200 stream reply as a Problem (the body is small and finite). A 200 is a stream that
 * may never end: it is closed unread, and the caller's status check fails, instead of the test
 * reading it for ever.
 */
export async function streamProblem(res: Response): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  if (res.status === 200) {
    await closeStream(res);
    return { status: res.status, headers: res.headers, body: undefined, text: '(an open stream, where a Problem was expected)' };
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  await closeStream(res);
  return { status: res.status, headers: res.headers, body, text };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Retries `check` until it returns true or timeoutMs passes (for effects that are asynchronous by design). */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(50);
  }
}
