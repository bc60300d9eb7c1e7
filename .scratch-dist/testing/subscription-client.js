/**
 * TEST-ONLY: a client of one subscription stream that keeps reading in the background, so a test can
 * wait for lines, commit what it got and watch the stream end.
 */
import { Agent } from 'undici';
import { call } from './broker-harness.js';
export class SubscriptionStreamClient {
    base;
    subscription;
    res;
    streamId;
    headers;
    lines = [];
    /** Resolves when the server ended the response (or the client closed it). */
    ended;
    #ended = false;
    #agent;
    #abort = new AbortController();
    #waiters = new Set();
    constructor(base, subscription, res, streamId, agent, 
    /** Sent with every request of this client (e.g. Authorization). */
    headers = {}) {
        this.base = base;
        this.subscription = subscription;
        this.res = res;
        this.streamId = streamId;
        this.headers = headers;
        this.#agent = agent;
        this.ended = this.#pump();
    }
    /** Opens a stream; rejects with the response when it is not 200. */
    static async open(base, subscription, query = '', headers = {}) {
        const agent = new Agent();
        const res = await fetch(`${base}/subscriptions/${subscription}/events${query === '' ? '' : '?' + query}`, { dispatcher: agent, headers });
        if (res.status !== 200) {
            const text = await res.text();
            await agent.destroy();
            throw Object.assign(new Error(`stream answered ${res.status}: ${text}`), { status: res.status, text });
        }
        const id = res.headers.get('x-svc-streamid');
        if (id === null)
            throw new Error('no X-Svc-StreamId header');
        return new SubscriptionStreamClient(base, subscription, res, id, agent, headers);
    }
    async #pump() {
        const reader = this.res.body.getReader();
        const decoder = new TextDecoder();
        let buf = '';
        try {
            for (;;) {
                const chunk = await reader.read();
                if (chunk.done)
                    break;
                buf += decoder.decode(chunk.value, { stream: true });
                let nl;
                while ((nl = buf.indexOf('\n')) >= 0) {
                    this.lines.push(JSON.parse(buf.slice(0, nl)));
                    buf = buf.slice(nl + 1);
                }
                this.#wake();
            }
        }
        catch {
            // closed by the client
        }
        finally {
            this.#ended = true;
            this.#wake();
            await this.#agent.destroy().catch(() => undefined);
        }
    }
    #wake() {
        for (const w of this.#waiters)
            w();
    }
    get isEnded() {
        return this.#ended;
    }
    /** Lines that carry events. */
    batches() {
        return this.lines.filter((l) => l.events !== undefined && l.events.length > 0);
    }
    /** Every event received, in arrival order. */
    events() {
        return this.batches().flatMap((l) => l.events);
    }
    /** Order numbers received, in arrival order. */
    orders() {
        return this.events().map((e) => e.order_number ?? '');
    }
    /** Waits until the predicate holds (checked on every line and at the end); fails after timeoutMs. */
    async waitFor(pred, timeoutMs = 10_000, what = 'condition') {
        const deadline = Date.now() + timeoutMs;
        while (!pred(this)) {
            if (Date.now() > deadline) {
                throw new Error(`timed out waiting for ${what}; ${this.lines.length} lines: ${JSON.stringify(this.lines).slice(0, 600)}`);
            }
            await new Promise((resolve) => {
                const done = () => {
                    this.#waiters.delete(done);
                    clearTimeout(t);
                    resolve();
                };
                const t = setTimeout(done, Math.min(100, Math.max(1, deadline - Date.now())));
                this.#waiters.add(done);
            });
        }
    }
    /** Waits until the server ends the stream. */
    async waitEnded(timeoutMs = 10_000) {
        await this.waitFor((c) => c.isEnded, timeoutMs, 'the stream to end');
    }
    /** POST cursors with this stream's id. */
    commit(cursors, headerName = 'X-Svc-StreamId') {
        return call(this.base, 'POST', `/subscriptions/${this.subscription}/cursors`, { items: cursors }, { ...this.headers, [headerName]: this.streamId });
    }
    /** Commits the cursor of every batch received so far (the last one per partition). */
    async commitAll() {
        const last = new Map();
        for (const l of this.batches())
            last.set(`${l.cursor.event_type}/${l.cursor.partition}`, l.cursor);
        if (last.size === 0)
            return undefined;
        return this.commit([...last.values()]);
    }
    /** Partitions this stream received events from. */
    partitions() {
        return new Set(this.batches().map((l) => l.cursor.partition));
    }
    /** Closes the client side (like a consumer that dies). */
    async close() {
        this.#abort.abort();
        await this.#agent.destroy().catch(() => undefined);
        await this.ended;
    }
}
//# sourceMappingURL=subscription-client.js.map