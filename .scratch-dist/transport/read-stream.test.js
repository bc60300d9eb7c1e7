// Goal: remote reads and log shipping stream with real backpressure and cancellation: a slow consumer
// holds the server's producer back (chunks produced stay within a small bound of chunks consumed, and
// production stops while the consumer pauses); cancelling on the client (abort or break) aborts the
// server's handler and runs its cleanup; a failing handler or a server shutting down ends the client's
// iteration with a TransportError instead of a hang; log chunks respect maxBytes over the network.
// Method: two GrpcTransports on 127.0.0.1; handlers that count what they produce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TransportError } from './index.js';
import { startNodes, stopNodes, until } from './test-support.js';
const read = { group: 5, topic: 1, partition: 0, afterOffset: -1, maxEvents: 8, maxBytes: 1 << 20, waitMs: 250, follow: false, flowId: 'f-read' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A follow-mode source: one chunk of one event of `size` bytes per pull, forever, counting pulls. */
function endless(size) {
    const state = { produced: 0, aborted: false, cleanedUp: false };
    const source = async function* (signal) {
        signal.addEventListener('abort', () => (state.aborted = true));
        try {
            for (let offset = 0;; offset++) {
                state.produced++;
                yield { events: [{ offset, bytes: Buffer.alloc(size, 120) }], oldest: 0, newest: offset, epoch: 2 };
            }
        }
        finally {
            state.cleanedUp = true;
        }
    };
    return { state, source };
}
test('a read streams every event in order, in chunks within maxEvents, and ends when the source ends', async () => {
    const nodes = await startNodes(2);
    const [n1, n2] = nodes;
    try {
        n2.h.onRead = async function* (_from, req) {
            for (let first = req.afterOffset + 1; first < 30; first += 12) {
                const events = Array.from({ length: Math.min(12, 30 - first) }, (_, k) => ({ offset: first + k, bytes: Buffer.from(`{"n":${first + k}}`) }));
                yield { events, oldest: 0, newest: 29, epoch: 3 };
            }
        };
        const chunks = [];
        for await (const c of n1.t.read(2, read))
            chunks.push(c);
        assert.ok(chunks.every((c) => c.events.length <= 8 && c.epoch === 3 && c.newest === 29));
        assert.deepEqual(chunks.flatMap((c) => c.events.map((e) => [e.offset, String(e.bytes)])), Array.from({ length: 30 }, (_, n) => [n, `{"n":${n}}`]));
        assert.deepEqual({ ...n2.h.reads[0].req }, read);
        assert.equal(n2.h.reads[0].from, 1);
    }
    finally {
        await stopNodes(nodes);
    }
});
test('a slow consumer holds the producer back: production stays within a small bound and stops while the consumer pauses', async () => {
    const nodes = await startNodes(2);
    const [n1, n2] = nodes;
    const { state, source } = endless(16 * 1024);
    n2.h.onRead = (_from, _req, signal) => source(signal);
    try {
        let consumed = 0;
        let maxAhead = 0;
        const it = n1.t.read(2, { ...read, follow: true })[Symbol.asyncIterator]();
        for (; consumed < 40; consumed++) {
            const r = await it.next();
            assert.equal(r.done, false);
            assert.equal(r.value.events[0].offset, consumed);
            maxAhead = Math.max(maxAhead, state.produced - consumed);
            await sleep(5);
        }
        // Pause: the producer must stop within the buffers' bound.
        await sleep(300);
        const atPause = state.produced;
        await sleep(300);
        assert.equal(state.produced, atPause, 'nothing produced while the consumer paused');
        maxAhead = Math.max(maxAhead, state.produced - consumed);
        // Without backpressure the generator yields synchronously: thousands in 600 ms.
        assert.ok(maxAhead <= 48, `the producer ran ${maxAhead} chunks ahead of the consumer`);
        await it.return();
        await until('the server to stop the handler', () => state.aborted && state.cleanedUp);
    }
    finally {
        await stopNodes(nodes);
    }
});
test('cancelling on the client (abort or break) aborts the server handler and runs its cleanup', async () => {
    const nodes = await startNodes(2);
    const [n1, n2] = nodes;
    try {
        // A follow read waiting for events that never come, after two chunks.
        const states = [];
        n2.h.onRead = async function* (_from, _req, signal) {
            const st = { aborted: false, cleanedUp: false };
            states.push(st);
            try {
                yield { events: [{ offset: 0, bytes: Buffer.from('a') }], oldest: 0, newest: 0, epoch: 1 };
                yield { events: [], oldest: 0, newest: 0, epoch: 1 };
                await new Promise((resolve) => signal.addEventListener('abort', () => resolve()));
                st.aborted = true;
            }
            finally {
                st.cleanedUp = true;
            }
        };
        const ctl = new AbortController();
        const got = [];
        await assert.rejects((async () => {
            for await (const c of n1.t.read(2, { ...read, follow: true }, ctl.signal)) {
                got.push(c.events.length);
                if (got.length === 2)
                    ctl.abort();
            }
        })(), (e) => e instanceof TransportError && e.kind === 'cancelled');
        assert.deepEqual(got, [1, 0]);
        await until('the first handler to be aborted', () => states[0]?.aborted === true && states[0].cleanedUp);
        for await (const _ of n1.t.read(2, { ...read, follow: true }))
            break;
        await until('the second handler to be aborted', () => states[1]?.aborted === true && states[1].cleanedUp);
        // An aborted signal opens no call at all.
        await assert.rejects(n1.t.read(2, read, ctl.signal)[Symbol.asyncIterator]().next(), (e) => e.kind === 'cancelled');
        assert.equal(states.length, 2);
    }
    finally {
        await stopNodes(nodes);
    }
});
test('a failing handler or a server that shuts down ends the client iteration with a TransportError', async () => {
    const nodes = await startNodes(2);
    const [n1, n2] = nodes;
    try {
        n2.h.onRead = async function* () {
            yield { events: [{ offset: 0, bytes: Buffer.from('a') }], oldest: 0, newest: 1, epoch: 1 };
            yield { events: [{ offset: 1, bytes: Buffer.from('b') }], oldest: 0, newest: 1, epoch: 1 };
            throw new Error('the partition store closed');
        };
        let n = 0;
        await assert.rejects((async () => {
            for await (const _ of n1.t.read(2, read))
                n++;
        })(), (e) => e.kind === 'unavailable' || e.kind === 'refused');
        assert.equal(n, 2);
        n2.h.onRead = () => {
            throw new TransportError('refused', 'offset out of range');
        };
        await assert.rejects(n1.t.read(2, read)[Symbol.asyncIterator]().next(), (e) => e.kind === 'refused' && /out of range/.test(e.message));
        // The server goes away in the middle of a follow read.
        const { source } = endless(10);
        let stop = false;
        n2.h.onRead = async function* (_f, _r, signal) {
            for await (const c of source(signal)) {
                yield c;
                while (!stop && !signal.aborted)
                    await sleep(10);
            }
        };
        const it = n1.t.read(2, { ...read, follow: true })[Symbol.asyncIterator]();
        assert.equal((await it.next()).done, false);
        const pending = it.next();
        await n2.t.close();
        await assert.rejects(pending, (e) => e.kind === 'unavailable');
        stop = true;
    }
    finally {
        await stopNodes(nodes);
    }
});
test('fetchLog: chunks within maxBytes over the network, contiguous; a larger entry travels alone', async () => {
    const nodes = await startNodes(2);
    const [n1, n2] = nodes;
    try {
        n2.h.onFetchLog = async function* (_from, req) {
            const entries = [];
            for (let i = req.fromIndex; i <= req.toIndex; i++) {
                entries.push({ term: 3, index: i, type: 'normal', data: Buffer.alloc(i === 50 ? 200_000 : 10_000, i % 256) });
            }
            yield { entries };
        };
        const sizes = [];
        let next = 11;
        for await (const c of n1.t.fetchLog(2, { group: 5, fromIndex: 11, toIndex: 110, maxBytes: 64 * 1024 })) {
            for (const e of c.entries)
                assert.equal(e.index, next++);
            sizes.push(c.entries.map((e) => e.data.byteLength));
        }
        assert.equal(next, 111);
        for (const s of sizes)
            assert.ok(s.length === 1 || s.reduce((a, b) => a + b, 0) <= 64 * 1024, `chunk of ${s.join('+')} bytes`);
        assert.ok(sizes.some((s) => s.length === 1 && s[0] === 200_000), 'the 200 KB entry alone');
        assert.ok(sizes.length >= 16, `${sizes.length} chunks`);
        assert.deepEqual(n2.h.fetches[0], { from: 1, req: { group: 5, fromIndex: 11, toIndex: 110, maxBytes: 64 * 1024 } });
    }
    finally {
        await stopNodes(nodes);
    }
});
//# sourceMappingURL=read-stream.test.js.map