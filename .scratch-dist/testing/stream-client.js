/**
 * TEST-ONLY: small clients for the low-level stream and publishing, shared by the *.http.test.ts files.
 */
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import { call, eid, readLines } from './broker-harness.js';
/** The wire form of an offset on Brook's first timeline (compatibility.md: 001-<4 hex>-<18 digits>). */
export function off(n) {
    return `001-0001-${String(n).padStart(18, '0')}`;
}
export function cursorsHeader(cursors) {
    return { 'X-Svc-Cursors': typeof cursors === 'string' ? cursors : JSON.stringify(cursors) };
}
// Each stream gets its own undici Agent, destroyed when the test is done with the stream. With the shared
// global dispatcher, cancelling a stream's body leaves the pool with a fresh connection that never
// carries a request, and the broker's close() then waits ~70 s for it (see the report on shutdown).
const agents = new WeakMap();
const openAgents = new Set();
function closeAgent(agent) {
    if (agent === undefined || !openAgents.delete(agent))
        return Promise.resolve();
    return agent.destroy().catch(() => undefined);
}
/** GET /event-types/{name}/events; resolves when the response head arrives. */
export async function openStream(base, name, query = '', headers = {}, signal) {
    const agent = new Agent();
    openAgents.add(agent);
    const init = { headers, dispatcher: agent };
    if (signal !== undefined) {
        init.signal = signal;
        signal.addEventListener('abort', () => void closeAgent(agent), { once: true });
    }
    try {
        const res = await fetch(`${base}/event-types/${encodeURIComponent(name)}/events${query === '' ? '' : '?' + query}`, init);
        agents.set(res, agent);
        return res;
    }
    catch (err) {
        await closeAgent(agent);
        throw err;
    }
}
/** Closes the client side of a stream (its connection). */
export function closeStream(res) {
    return closeAgent(agents.get(res));
}
/** Closes every stream connection still open (call before stopping a broker). */
export async function closeAllStreams() {
    await Promise.all([...openAgents].map((a) => closeAgent(a)));
}
/** Reads a stream until the server ends it; fails if that takes longer than timeoutMs. */
export async function readToEnd(res, timeoutMs = 15_000) {
    try {
        return (await readLines(res, () => false, timeoutMs));
    }
    finally {
        await closeStream(res);
    }
}
/** Reads until `n` events have arrived (or fails after timeoutMs), then closes the stream. */
export async function readEvents(res, n, timeoutMs = 15_000) {
    return readUntil(res, (ls) => countEvents(ls) >= n, timeoutMs);
}
/** Reads until `until` says stop (or fails after timeoutMs), then closes the stream. */
export async function readUntil(res, until, timeoutMs = 15_000) {
    try {
        return (await readLines(res, (ls) => until(ls), timeoutMs));
    }
    finally {
        await closeStream(res);
    }
}
export function countEvents(lines) {
    return lines.reduce((s, l) => s + (l.events?.length ?? 0), 0);
}
/** All events of the lines in stream order, with the partition of their batch. */
export function flatEvents(lines) {
    const out = [];
    for (const l of lines)
        for (const e of l.events ?? [])
            out.push({ partition: l.cursor.partition, order: String(e.order_number), event: e });
    return out;
}
/** A business event placed in a given partition (for event types with partition_strategy user_defined). */
export function eventIn(partition, order, extra = {}) {
    return { order_number: order, ...extra, metadata: { eid: eid(), occurred_at: '2026-11-22T10:00:00Z', partition } };
}
/** Publishes and asserts the 200 of a fully stored batch. */
export async function publish(base, name, events) {
    const r = await call(base, 'POST', `/event-types/${encodeURIComponent(name)}/events`, events);
    assert.equal(r.status, 200, `publish to ${name} failed: ${r.status} ${r.text.slice(0, 300)}`);
}
/** Creates an event type and asserts 201. */
export async function createEventType(base, body) {
    const r = await call(base, 'POST', '/event-types', body);
    assert.equal(r.status, 201, `create ${String(body['name'])} failed: ${r.status} ${r.text}`);
}
/** Statistics giving `n` partitions ("0".."n-1"). */
export function statisticFor(n) {
    return { messages_per_minute: 100, message_size: 100, read_parallelism: n, write_parallelism: n };
}
/** Asserts a Problem reply (compatibility.md wire format) with the given status. */
export function assertProblem(r, status, detail) {
    assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
    assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const p = r.body;
    assert.equal(p.status, status);
    assert.equal(typeof p.title, 'string');
    assert.equal(p.type, `http://httpstatus.es/${status}`);
    if (detail !== undefined)
        assert.match(String(p.detail), detail);
}
/** Reads a non-200 stream reply as a Problem (the body is small and finite). */
export async function streamProblem(res) {
    const text = await res.text();
    let body;
    try {
        body = JSON.parse(text);
    }
    catch {
        body = undefined;
    }
    await closeStream(res);
    return { status: res.status, headers: res.headers, body, text };
}
export function sleep(ms) {
    return new Promise((r) => setTimeout(r, ms));
}
/** Retries `check` until it returns true or timeoutMs passes (for effects that are asynchronous by design). */
export async function eventually(check, timeoutMs, what) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
        if (Date.now() > deadline)
            assert.fail(`timed out after ${timeoutMs} ms waiting for: ${what}`);
        await sleep(50);
    }
}
//# sourceMappingURL=stream-client.js.map