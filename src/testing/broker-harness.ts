/**
 * TEST-ONLY: starts a real broker (real HTTP, real RocksDB in a temporary directory) in this process,
 * and small helpers to call it. Imported only by *.test.ts files.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { defaults, type Config } from '../config/config.js';
import { startBroker, type RunningBroker } from '../main.js';
import { check as conformance } from './openapi-conformance.js';

export interface TestBroker extends RunningBroker {
  dataDir: string;
  /** Stops the broker (clean shutdown) and removes its data directory. */
  destroy(): Promise<void>;
  /** Stops and starts again on the same data directory (and port). */
  restart(): Promise<TestBroker>;
}

export async function startTestBroker(over: Partial<Config> = {}, dataDir?: string): Promise<TestBroker> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'brook-test-'));
  const config: Config = Object.freeze({ ...defaults, host: '127.0.0.1', port: 0, dataDir: dir, logLevel: 'silent', ...over });
  const logger = pino({ level: process.env['BROOK_TEST_LOG'] ?? 'silent' });
  const broker = await startBroker(config, logger);
  const tb: TestBroker = {
    ...broker,
    dataDir: dir,
    async destroy() {
      await closedWithin(broker, closeTimeoutMs);
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await closedWithin(broker, closeTimeoutMs);
      return startTestBroker({ ...over, port: broker.port }, dir);
    },
  };
  return tb;
}

/**
 * How long destroy() and restart() wait for the broker's close(). A close that never ends must fail
 * the test (or its after hook) that waits for it, not hold the test file's process for ever.
 */
const closeTimeoutMs = 120_000;

async function closedWithin(broker: RunningBroker, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      broker.close(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the broker's close() did not finish within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/**
 * How long call() waits for a whole answer by default. A test that waits on a broker that never
 * answers must fail, not hang: a pending fetch to a live process keeps the test file's process alive
 * after its test timed out, and `node --test` then waits for it for ever.
 */
export const callTimeoutMs = 60_000;

/** How long openStream() and SubscriptionStreamClient.open() wait for a response head (the body has its readers' own timeouts). */
export const streamHeadTimeoutMs = 60_000;

export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = callTimeoutMs): Promise<JsonResponse> {
  const init: RequestInit = { method, headers: { ...headers }, signal: AbortSignal.timeout(timeoutMs) };
  if (body !== undefined) {
    init.body = typeof body === 'string' || Buffer.isBuffer(body) ? (body as string) : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  const bad = await conformance(base, { method, path, status: res.status, contentType: res.headers.get('content-type'), text });
  // Every answer a test gets must be what the broker's OpenAPI document says (issue 11).
  if (bad.length > 0) throw new Error(`${method} ${path}: the answer does not conform to the broker's OpenAPI document (GET /openapi.json):\n${bad.join('\n')}`);
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** A business event type body with a realistic schema; override any field. */
export function businessEventType(name: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    owning_application: 'test-app',
    category: 'business',
    enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: 'random',
    schema: {
      type: 'json_schema',
      schema: JSON.stringify({
        type: 'object',
        properties: { order_number: { type: 'string' }, amount: { type: 'number' } },
        required: ['order_number'],
      }),
    },
    ...over,
  };
}

let eidCounter = 0;
export function eid(): string {
  eidCounter++;
  return `00000000-0000-4000-8000-${eidCounter.toString(16).padStart(12, '0')}`;
}

export function businessEvent(order: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { order_number: order, metadata: { eid: eid(), occurred_at: '2026-11-22T10:00:00Z' }, ...over };
}

/** Reads NDJSON lines from a streaming response until `until` says stop, or the stream ends. */
export async function readLines(
  res: Response,
  until: (lines: unknown[]) => boolean,
  timeoutMs = 10_000,
): Promise<unknown[]> {
  const lines: unknown[] = [];
  const reader = res.body!.getReader();
  // The bytes of the line not yet ended, as received. Only each new chunk is searched for the newline
  // and a line is decoded once, when it ends: appending chunks to one string and searching it from
  // the start made a multi-megabyte line cost quadratic time, on the event loop that also runs an
  // in-process broker (a 20 s read of 12 MB failed so under load).
  let pending: Uint8Array[] = [];
  const deadline = Date.now() + timeoutMs;
  try {
    while (!until(lines)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms with ${lines.length} lines: ${JSON.stringify(lines).slice(0, 500)}`);
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms with ${lines.length} lines`)), left))),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) break;
      let rest = chunk.value as Uint8Array;
      let nl: number;
      while ((nl = rest.indexOf(0x0a)) >= 0) {
        pending.push(rest.subarray(0, nl));
        lines.push(JSON.parse(Buffer.concat(pending).toString('utf8')));
        pending = [];
        rest = rest.subarray(nl + 1);
      }
      if (rest.length > 0) pending.push(rest);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return lines;
}
