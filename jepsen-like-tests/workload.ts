/**
 * The clients: each event type is a register whose value is its owning_application. A write is
 * PUT /event-types/{name} with the full event-type body and a value no other write uses; a read is
 * GET /event-types/{name}. Every request goes to a random node.
 *
 * Outcomes, and why (src/registry/event-type-service.ts, src/metadata/state-machine.ts,
 * src/broker/metadata-group.ts):
 * - 2xx: completed; the write took effect between invocation and response.
 * - 400/404/409/412/422 on a write: definitely not applied. 422/400 are validation before any
 *   proposal; 404 is the record lookup before the proposal or the state machine's not_found; 409 is the
 *   state machine refusing the update because updated_at moved since the node read the record
 *   (basedOnUpdatedAt): the command committed but changed nothing. The proposer never re-sends a command
 *   (a forward that fails is a 503, not a retry), so a 409 is never the echo of an earlier copy that did
 *   apply. Left out of the history.
 * - a refused TCP connection (ECONNREFUSED: the node is down): nothing was sent; left out too.
 * - anything else on a write (503: no quorum, lost leadership, not applied here in time; 5xx; reset
 *   connection; client timeout): indeterminate, complete = +Infinity.
 * - a read that fails is left out (a read has no effect). A read answered 404 is recorded as reading
 *   "no value": every key is created before the workload, so that would be a violation.
 *
 * Positions are performance.now() in this process, taken right before the request is sent and right
 * after the whole response is read, so an operation's interval contains its effect.
 */
import type { KvOp } from '../src/sim/linearizability.js';
import type { Prng } from '../src/sim/prng.js';

export const definiteRefusals: ReadonlySet<number> = new Set([400, 404, 409, 412, 422]);

export type Outcome = 'ok' | 'refused' | 'indeterminate' | 'failed';

export interface Recorded {
  op: KvOp;
  node: number;
  outcome: Outcome;
  /** HTTP status, or the error's name (timeout, connection reset). */
  status: string;
}

/** The body every write sends: what the event type was created with, with another owner. */
export function eventTypeBody(name: string, owner: string): Record<string, unknown> {
  return {
    name,
    owning_application: owner,
    category: 'business',
    enrichment_strategies: ['metadata_enrichment'],
    partition_strategy: 'random',
    schema: {
      type: 'json_schema',
      schema: JSON.stringify({ type: 'object', properties: { order_number: { type: 'string' } }, required: ['order_number'] }),
    },
  };
}

export interface WorkloadOptions {
  keys: readonly string[];
  nodes: readonly number[];
  url: (node: number) => string;
  clients: number;
  writeRatio: number;
  /** A request not answered within this long counts as failed (indeterminate for a write). */
  requestTimeoutMs: number;
  /** Think time between one client's operations, [0, thinkMsMax): keeps histories checkable. */
  thinkMsMax: number;
}

async function request(method: string, url: string, body: unknown, timeoutMs: number): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

function errorName(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string } };
  return e.cause?.code ?? e.name ?? 'error';
}

/** One write; recorded unless definitely refused (then recorded with outcome 'refused' for the summary). */
export async function write(client: number, key: string, value: string, node: number, o: Pick<WorkloadOptions, 'url' | 'requestTimeoutMs'>): Promise<Recorded> {
  const invoke = performance.now();
  let status: string;
  let outcome: Outcome;
  try {
    const r = await request('PUT', `${o.url(node)}/event-types/${encodeURIComponent(key)}`, eventTypeBody(key, value), o.requestTimeoutMs);
    status = String(r.status);
    outcome = r.status >= 200 && r.status < 300 ? 'ok' : definiteRefusals.has(r.status) ? 'refused' : 'indeterminate';
  } catch (err) {
    status = errorName(err);
    // A refused connection sent no byte of the request; any other error may follow a delivered request.
    outcome = status === 'ECONNREFUSED' ? 'refused' : 'indeterminate';
  }
  const complete = outcome === 'indeterminate' ? Infinity : performance.now();
  return { op: { client, kind: 'write', key, value, invoke, complete }, node, outcome, status };
}

/** One read; outcome 'failed' when it has no answer to record. */
export async function read(client: number, key: string, node: number, o: Pick<WorkloadOptions, 'url' | 'requestTimeoutMs'>): Promise<Recorded> {
  const invoke = performance.now();
  let status: string;
  let outcome: Outcome = 'failed';
  let value: string | undefined;
  try {
    const r = await request('GET', `${o.url(node)}/event-types/${encodeURIComponent(key)}`, undefined, o.requestTimeoutMs);
    status = String(r.status);
    if (r.status === 200) {
      const owner = (r.json as { owning_application?: unknown } | undefined)?.owning_application;
      if (typeof owner === 'string') {
        value = owner;
        outcome = 'ok';
      }
    } else if (r.status === 404) {
      outcome = 'ok'; // "no such event type": the register's empty value (a violation once created)
    }
  } catch (err) {
    status = errorName(err);
  }
  return { op: { client, kind: 'read', key, value, invoke, complete: performance.now() }, node, outcome, status };
}

/**
 * Runs `clients` concurrent clients until `stop()` says so. Each client has its own
 * PRNG stream (derived from the run's), so the mix of operations replays with the seed; which node
 * answers what under faults naturally does not.
 */
export async function runClients(o: WorkloadOptions, prngFor: (client: number) => Prng, stop: () => boolean, out: Recorded[]): Promise<void> {
  await Promise.all(
    Array.from({ length: o.clients }, async (_, c) => {
      const rnd = prngFor(c);
      let n = 0;
      while (!stop()) {
        const key = o.keys[rnd.int(o.keys.length)]!;
        const node = o.nodes[rnd.int(o.nodes.length)]!;
        if (rnd.next() < o.writeRatio) out.push(await write(c, key, `w${c}-${n++}`, node, o));
        else out.push(await read(c, key, node, o));
        if (o.thinkMsMax > 0) await new Promise((r) => setTimeout(r, rnd.int(o.thinkMsMax)));
      }
    }),
  );
}
