/**
 * The clients of the data workload (jepsen-like-tests/data.ts), each on random nodes:
 *
 * - producers publish small batches; a producer owns its keys and has one batch in flight at a time,
 *   so each key's sequence numbers are the order its events were published in. Every event has a
 *   unique eid; nothing is ever re-sent (a retry would be a new event).
 * - stream consumers read every partition through low-level streams from BEGIN (X-Svc-Cursors), and
 *   after every end (stream_timeout, a fault, a silent node) reconnect to a random node after the last
 *   cursor they were sent;
 * - the subscription consumer streams a subscription (read_from begin) on a random node and commits
 *   the cursor of every batch it is sent, on the same node with its stream id;
 * - the cursor poller reads the subscription's committed cursors on random nodes.
 *
 * Everything they see is recorded (data-history.ts); nothing is checked here except the shape of
 * what came back (a line that is not what the interface says goes to `anomalies`).
 */
import { Agent, fetch as ufetch } from 'undici';
import type { Prng } from '../src/sim/prng.js';
import { offsetOf, wireOf, type CommitOp, type ConsumedBatch, type ConsumerConn, type CursorRead, type EventResult, type FinalRead, type PublishOp, type SentEvent, type StoredEvent } from './data-history.js';

export interface Endpoints {
  nodes: readonly number[];
  url: (node: number) => string;
  eventType: string;
  partitions: readonly string[];
}

/** The event type: business events hashed on `key`, which the schema requires (as must every partition key field). */
export function dataEventTypeBody(name: string, partitions: number): Record<string, unknown> {
  return {
    name,
    owning_application: 'jepsen',
    category: 'business',
    enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: 'hash',
    partition_key_fields: ['key'],
    default_statistic: { messages_per_minute: 1000, message_size: 100, read_parallelism: partitions, write_parallelism: partitions },
    schema: {
      type: 'json_schema',
      schema: JSON.stringify({
        type: 'object',
        properties: { key: { type: 'string' }, seq: { type: 'integer' }, p: { type: 'integer' } },
        required: ['key', 'seq'],
      }),
    },
  };
}

export function errorCode(err: unknown): string {
  const e = err as { name?: string; code?: unknown; cause?: { code?: unknown; name?: string } };
  // AbortSignal.timeout() rejects with a DOMException whose numeric code (23) says nothing.
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.cause?.name === 'TimeoutError') return 'timeout';
  const code = e.cause?.code ?? e.code;
  return typeof code === 'string' ? code : (e.cause?.name ?? e.name ?? 'error');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------ producers

export interface ProducerOptions extends Endpoints {
  producers: number;
  keysPerProducer: number;
  batchMax: number;
  requestTimeoutMs: number;
  thinkMsMax: number;
  /** 8 hex digits that make this run's eids unique. */
  runTag: string;
}

/** A valid UUID that says which producer sent which event: <run>-<producer>-4000-8000-<counter>. */
export function eidFor(runTag: string, producer: number, k: number): string {
  return `${runTag}-${producer.toString(16).padStart(4, '0')}-4000-8000-${k.toString(16).padStart(12, '0')}`;
}

export async function runProducers(o: ProducerOptions, prngFor: (producer: number) => Prng, stop: () => boolean, out: PublishOp[]): Promise<void> {
  await Promise.all(
    Array.from({ length: o.producers }, async (_, p) => {
      const rnd = prngFor(p);
      const keys = Array.from({ length: o.keysPerProducer }, (_, j) => `p${p}k${j}`);
      const seqs = new Map<string, number>();
      let k = 0;
      for (let n = 0; !stop(); n++) {
        const node = o.nodes[rnd.int(o.nodes.length)]!;
        const size = 1 + rnd.int(o.batchMax);
        const events: SentEvent[] = [];
        for (let i = 0; i < size; i++) {
          const key = keys[rnd.int(keys.length)]!;
          const seq = (seqs.get(key) ?? 0) + 1;
          seqs.set(key, seq);
          events.push({ eid: eidFor(o.runTag, p, k++), key, seq });
        }
        const op = await publish(o, p, n, node, events);
        out.push(op);
        if (o.thinkMsMax > 0) await sleep(rnd.int(o.thinkMsMax));
        // A node that is down refuses at once: do not spin on it.
        if (op.status === 'ECONNREFUSED') await sleep(50);
      }
    }),
  );
}

const occurredAt = '2026-01-01T00:00:00Z';

async function publish(o: ProducerOptions, producer: number, n: number, node: number, events: SentEvent[]): Promise<PublishOp> {
  const flow = `jp${producer}-${n}`;
  const body = JSON.stringify(events.map((e) => ({ key: e.key, seq: e.seq, p: producer, metadata: { eid: e.eid, occurred_at: occurredAt } })));
  const op: PublishOp = { producer, n, node, flow, invoke: performance.now(), complete: null, status: '', events, results: [] };
  try {
    const res = await fetch(`${o.url(node)}/event-types/${encodeURIComponent(o.eventType)}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-flow-id': flow },
      body,
      signal: AbortSignal.timeout(o.requestTimeoutMs),
    });
    const text = await res.text();
    op.complete = performance.now();
    op.status = String(res.status);
    op.results = resultsOf(res.status, text, events.length, op);
    if (res.status !== 200) op.contentType = res.headers.get('content-type') ?? '';
  } catch (err) {
    op.status = errorCode(err);
    // A refused connection carried no byte of the request: nothing can have been stored.
    const r: EventResult = op.status === 'ECONNREFUSED' ? 'failed' : 'unknown';
    op.results = events.map(() => r);
    if (r === 'failed') op.complete = performance.now();
  }
  return op;
}

function resultsOf(status: number, text: string, count: number, op: PublishOp): EventResult[] {
  if (status === 200) return new Array<EventResult>(count).fill('acked');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if ((status === 207 || status === 422) && Array.isArray(body) && body.length === count) {
    const items = body as { publishing_status?: unknown; detail?: unknown }[];
    const bad = items.find((i) => i.publishing_status !== 'submitted');
    if (bad !== undefined) op.detail = String(bad.detail ?? '');
    // A failed item whose detail says its outcome is unknown (its leader did not answer in time; the
    // broker says "may have been stored" / "may still commit") is indeterminate, like a 5xx: the broker
    // told the client it does not know. Every other failed item must never be stored.
    const unknownOutcome = (d: unknown) => /outcome is unknown|may have been stored|may still commit/.test(String(d ?? ''));
    return items.map((i): EventResult => (i.publishing_status === 'submitted' ? 'acked' : i.publishing_status === 'failed' ? (unknownOutcome(i.detail) ? 'unknown' : 'failed') : i.publishing_status === 'aborted' ? 'aborted' : 'unknown'));
  }
  op.detail = typeof body === 'object' && body !== null && 'detail' in body ? String((body as { detail: unknown }).detail) : text.slice(0, 200);
  // Other client errors refuse the request before anything is published; 5xx may follow a commit.
  if (status >= 400 && status < 500) return new Array<EventResult>(count).fill('failed');
  return new Array<EventResult>(count).fill('unknown');
}

// ------------------------------------------------------------------------------------ streams

interface StreamEnd {
  status: string;
  end: string;
  headers?: Headers;
  body?: string;
}

/**
 * GETs a line stream and hands every parsed line to onLine until the server ends it (eof), no line
 * came for idleMs (idle: a stopped or cut-off node keeps the connection open but sends nothing),
 * stop() says so, or the connection fails. One undici Agent per stream, destroyed at the end, so a
 * stream's connection never outlives it.
 */
async function readStream(
  url: string,
  headers: Record<string, string>,
  o: { idleMs: number; stop: () => boolean; onHead?: (h: Headers) => void; onLine: (line: unknown) => void; onBadLine: (text: string) => void },
): Promise<StreamEnd> {
  const agent = new Agent({ connect: { timeout: o.idleMs } });
  const ac = new AbortController();
  const headTimer = setTimeout(() => ac.abort(), o.idleMs);
  try {
    let res: Awaited<ReturnType<typeof ufetch>>;
    try {
      res = await ufetch(url, { headers, dispatcher: agent, signal: ac.signal });
    } catch (err) {
      return { status: ac.signal.aborted ? 'timeout' : errorCode(err), end: 'no-answer' };
    } finally {
      clearTimeout(headTimer);
    }
    if (res.status !== 200) {
      const t = setTimeout(() => ac.abort(), o.idleMs);
      const body = await res.text().catch(() => '');
      clearTimeout(t);
      return { status: String(res.status), end: 'refused', headers: res.headers, body: body.slice(0, 300) };
    }
    o.onHead?.(res.headers);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let last = performance.now();
    let pending = reader.read();
    for (;;) {
      const tick = sleep(200).then(() => 'tick' as const);
      const r = await Promise.race([pending, tick]).catch((err: unknown) => ({ error: err }));
      if (r === 'tick') {
        if (o.stop()) return { status: '200', end: 'stop' };
        if (performance.now() - last > o.idleMs) return { status: '200', end: 'idle' };
        continue;
      }
      if ('error' in r) return { status: '200', end: errorCode(r.error) };
      if (r.done) return { status: '200', end: 'eof' };
      last = performance.now();
      buf += decoder.decode(r.value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const text = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let line: unknown;
        try {
          line = JSON.parse(text);
        } catch {
          o.onBadLine(text);
          continue;
        }
        o.onLine(line);
      }
      pending = reader.read();
    }
  } finally {
    clearTimeout(headTimer);
    ac.abort();
    await agent.destroy().catch(() => undefined);
  }
}

interface BatchLine {
  cursor?: { partition?: unknown; offset?: unknown; event_type?: unknown; cursor_token?: unknown };
  events?: unknown[];
}

/** Events of a batch line with their offsets (the cursor is the last event's; offsets are dense). */
function seenOf(line: BatchLine): { partition: string; last: number; events: [number, string][] } {
  const c = line.cursor;
  if (c === undefined || typeof c.partition !== 'string' || typeof c.offset !== 'string') throw new Error('a batch without a cursor');
  const last = offsetOf(c.offset);
  const evs = line.events ?? [];
  return {
    partition: c.partition,
    last,
    events: evs.map((e, i): [number, string] => [last - evs.length + 1 + i, String((e as { metadata?: { eid?: unknown } }).metadata?.eid)]),
  };
}

export interface ConsumerRecord {
  consumed: ConsumedBatch[];
  conns: ConsumerConn[];
  commits: CommitOp[];
  cursorReads: CursorRead[];
  anomalies: string[];
}

/**
 * A low-level stream consumer of every partition. Its position is the cursor of the last batch it was
 * sent per partition (BEGIN at first); each connection goes to a random node with a random batch_limit
 * and a stream_timeout of a few seconds, so it moves between nodes even without faults.
 */
export async function runStreamConsumer(name: string, e: Endpoints, rnd: Prng, stop: () => boolean, rec: ConsumerRecord): Promise<void> {
  const pos: Record<string, number> = Object.fromEntries(e.partitions.map((p) => [p, -1]));
  for (let conn = 0; !stop(); conn++) {
    const node = e.nodes[rnd.int(e.nodes.length)]!;
    const q = `batch_limit=${1 + rnd.int(20)}&batch_flush_timeout=1&stream_timeout=${2 + rnd.int(7)}`;
    const cursors = e.partitions.map((p) => ({ partition: p, offset: wireOf(pos[p]!) }));
    const c: ConsumerConn = { consumer: name, conn, node, opened: performance.now(), closed: 0, status: '', end: '', start: { ...pos } };
    rec.conns.push(c);
    const r = await readStream(`${e.url(node)}/event-types/${encodeURIComponent(e.eventType)}/events?${q}`, { 'X-Svc-Cursors': JSON.stringify(cursors) }, {
      idleMs: 4000,
      stop,
      onBadLine: (t) => rec.anomalies.push(`${name}#${conn} on node ${node}: a line that is not JSON: ${t.slice(0, 200)}`),
      onLine: (l) => {
        try {
          const b = seenOf(l as BatchLine);
          if (!(b.partition in pos)) throw new Error(`unknown partition ${b.partition}`);
          if (b.events.length === 0) {
            // A keep-alive carries the offset the stream is at (interface.md: "same offset").
            if (b.last !== pos[b.partition]) rec.anomalies.push(`${name}#${conn} on node ${node}: keep-alive of partition ${b.partition} at ${b.last}, the stream is at ${pos[b.partition]}`);
            return;
          }
          rec.consumed.push({ consumer: name, conn, partition: b.partition, at: performance.now(), events: b.events });
          pos[b.partition] = b.last;
        } catch (err) {
          rec.anomalies.push(`${name}#${conn} on node ${node}: ${(err as Error).message}: ${JSON.stringify(l).slice(0, 300)}`);
        }
      },
    });
    c.closed = performance.now();
    c.status = r.status;
    c.end = r.end === 'refused' ? `refused: ${r.body ?? ''}` : r.end;
    if (r.end !== 'eof' && r.end !== 'stop') await sleep(100 + rnd.int(300));
  }
}

/**
 * The subscription consumer: one stream at a time on a random node; the cursor of every batch with
 * events is committed (latest per partition, one commit request in flight) with the stream's id on
 * the stream's node, also after the stream ended (the interface leaves a window for that).
 */
export async function runSubscriptionConsumer(e: Endpoints, subscription: string, rnd: Prng, stop: () => boolean, rec: ConsumerRecord, requestTimeoutMs: number, firstConn = 0): Promise<void> {
  for (let conn = firstConn; !stop(); conn++) {
    const node = e.nodes[rnd.int(e.nodes.length)]!;
    const q = `batch_limit=${1 + rnd.int(10)}&batch_flush_timeout=1&max_uncommitted_events=100&stream_timeout=${3 + rnd.int(8)}`;
    const c: ConsumerConn = { consumer: 'sub', conn, node, opened: performance.now(), closed: 0, status: '', end: '' };
    rec.conns.push(c);
    const pending = new Map<string, Record<string, unknown>>();
    let streamId: string | undefined;
    let streaming = true;
    let committer: Promise<void> = Promise.resolve();
    const startCommitter = (): void => {
      committer = (async () => {
        while ((streaming || pending.size > 0) && streamId !== undefined) {
          if (pending.size === 0) {
            await sleep(20);
            continue;
          }
          const cursors = [...pending.values()];
          pending.clear();
          rec.commits.push(await commit(e, subscription, node, conn, streamId, cursors, requestTimeoutMs));
        }
      })();
    };
    const r = await readStream(`${e.url(node)}/subscriptions/${subscription}/events?${q}`, {}, {
      idleMs: 4000,
      stop,
      onHead: (h) => {
        streamId = h.get('x-svc-streamid') ?? undefined;
        c.streamId = streamId;
        if (streamId === undefined) rec.anomalies.push(`sub#${conn} on node ${node}: no X-Svc-StreamId header`);
        startCommitter();
      },
      onBadLine: (t) => rec.anomalies.push(`sub#${conn} on node ${node}: a line that is not JSON: ${t.slice(0, 200)}`),
      onLine: (l) => {
        try {
          const line = l as BatchLine;
          const b = seenOf(line);
          if (!e.partitions.includes(b.partition) || line.cursor?.event_type !== e.eventType) throw new Error('unknown partition or event type');
          if (b.events.length === 0) return;
          rec.consumed.push({ consumer: 'sub', conn, partition: b.partition, at: performance.now(), events: b.events });
          pending.set(b.partition, line.cursor as Record<string, unknown>);
        } catch (err) {
          rec.anomalies.push(`sub#${conn} on node ${node}: ${(err as Error).message}: ${JSON.stringify(l).slice(0, 300)}`);
        }
      },
    });
    streaming = false;
    await committer;
    c.closed = performance.now();
    c.status = r.status;
    c.end = r.end === 'refused' ? `refused: ${r.body ?? ''}` : r.end;
    if (r.end !== 'eof' && r.end !== 'stop') await sleep(200 + rnd.int(500));
  }
}

async function commit(e: Endpoints, subscription: string, node: number, conn: number, streamId: string, cursors: Record<string, unknown>[], timeoutMs: number): Promise<CommitOp> {
  const op: CommitOp = {
    conn,
    streamId,
    node,
    invoke: performance.now(),
    complete: null,
    status: '',
    cursors: cursors.map((c) => ({ partition: String(c['partition']), offset: offsetOf(String(c['offset'])) })),
  };
  try {
    const res = await fetch(`${e.url(node)}/subscriptions/${subscription}/cursors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Svc-StreamId': streamId },
      body: JSON.stringify({ items: cursors }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    op.complete = performance.now();
    op.status = String(res.status);
    if (res.status === 204) op.results = cursors.map(() => 'committed');
    else if (res.status === 200) {
      const items = (JSON.parse(text) as { items?: { result?: unknown }[] }).items ?? [];
      op.results = items.map((i) => String(i.result));
    }
  } catch (err) {
    op.status = errorCode(err);
  }
  return op;
}

/** GET /subscriptions/{id}/cursors on a node; undefined when it did not answer 200. */
export async function readCursors(e: Endpoints, subscription: string, node: number, timeoutMs: number): Promise<CursorRead | { status: string }> {
  const invoke = performance.now();
  try {
    const res = await fetch(`${e.url(node)}/subscriptions/${subscription}/cursors`, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    if (res.status !== 200) return { status: String(res.status) };
    const complete = performance.now();
    const items = (JSON.parse(text) as { items?: { partition?: unknown; offset?: unknown }[] }).items ?? [];
    const cursors: Record<string, number> = {};
    for (const i of items) cursors[String(i.partition)] = offsetOf(String(i.offset));
    return { node, invoke, complete, cursors };
  } catch (err) {
    return { status: errorCode(err) };
  }
}

export async function runCursorPoller(e: Endpoints, subscription: string, rnd: Prng, stop: () => boolean, rec: ConsumerRecord, failures: Map<string, number>): Promise<void> {
  while (!stop()) {
    const node = e.nodes[rnd.int(e.nodes.length)]!;
    const r = await readCursors(e, subscription, node, 3000);
    if ('cursors' in r) rec.cursorReads.push(r);
    else failures.set(r.status, (failures.get(r.status) ?? 0) + 1);
    await sleep(150 + rnd.int(250));
  }
}

// ------------------------------------------------------------------------------------ final reads

/** Newest offset per partition as a node reports it (GET /event-types/{name}/partitions). */
export async function newestOffsets(e: Endpoints, node: number): Promise<Record<string, number> | undefined> {
  try {
    const res = await fetch(`${e.url(node)}/event-types/${encodeURIComponent(e.eventType)}/partitions`, { signal: AbortSignal.timeout(3000) });
    if (res.status !== 200) return undefined;
    const list = (await res.json()) as { partition: string; newest_available_offset: string; oldest_available_offset: string }[];
    return Object.fromEntries(list.map((p) => [p.partition, offsetOf(p.newest_available_offset)]));
  } catch {
    return undefined;
  }
}

/**
 * Reads every partition of a node from BEGIN to `newest` through one low-level stream (the way a
 * consumer sees the log), keeping each event's offset (from the batch cursors), eid, key, seq and
 * stored metadata.partition.
 */
export async function readEverything(e: Endpoints, node: number, newest: Record<string, number>, timeoutMs: number): Promise<FinalRead> {
  const out: FinalRead = { node, partitions: Object.fromEntries(e.partitions.map((p) => [p, [] as StoredEvent[]])), newest };
  const at: Record<string, number> = Object.fromEntries(e.partitions.map((p) => [p, -1]));
  const done = (): boolean => e.partitions.every((p) => at[p]! >= newest[p]!);
  if (done()) return out;
  const deadline = performance.now() + timeoutMs;
  let problem: string | undefined;
  const r = await readStream(
    `${e.url(node)}/event-types/${encodeURIComponent(e.eventType)}/events?batch_limit=1000&batch_flush_timeout=1`,
    { 'X-Svc-Cursors': JSON.stringify(e.partitions.map((p) => ({ partition: p, offset: 'BEGIN' }))) },
    {
      idleMs: 5000,
      stop: () => done() || problem !== undefined || performance.now() > deadline,
      onBadLine: (t) => (problem = `a line that is not JSON: ${t.slice(0, 200)}`),
      onLine: (l) => {
        try {
          const line = l as BatchLine;
          const b = seenOf(line);
          const list = out.partitions[b.partition];
          if (list === undefined) throw new Error(`unknown partition ${b.partition}`);
          (line.events ?? []).forEach((ev, i) => {
            const x = ev as { key?: unknown; seq?: unknown; metadata?: { eid?: unknown; partition?: unknown } };
            const stored: StoredEvent = { offset: b.events[i]![0], eid: String(x.metadata?.eid), key: String(x.key), seq: Number(x.seq) };
            if (x.metadata?.partition !== undefined) stored.partition = String(x.metadata.partition);
            list.push(stored);
          });
          if (b.events.length > 0) at[b.partition] = b.last;
        } catch (err) {
          problem = `${(err as Error).message}: ${JSON.stringify(l).slice(0, 300)}`;
        }
      },
    },
  );
  if (problem !== undefined) out.error = problem;
  else if (!done()) out.error = `stream ended (${r.status} ${r.end}${r.body ? `: ${r.body}` : ''}) at ${JSON.stringify(at)}, newest ${JSON.stringify(newest)}`;
  return out;
}
