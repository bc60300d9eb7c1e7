// Goal: the low-level stream (GET /event-types/{name}/events) follows interface.md "Low-level stream" and
// compatibility.md: application/x-json-stream, one EventStreamBatch per line, one partition per batch,
// every stream parameter, keep-alives, X-Svc-Cursors / X-Nakadi-Cursors with exclusive offsets and BEGIN,
// and every error: 400 bad header, 404 unknown event type, 422 bad cursors / parameters / expired
// offsets, 429 over the per-partition connection limit. Also: new events reach an open stream without
// waiting for the flush timeout, and a consumer that stops reading does not make the server buffer the
// backlog.
// Method: a real broker in this process (real HTTP, real RocksDB in a temporary directory); streams are
// read with fetch, or with node:http where the test must stop reading without closing the socket.
// Timing is only ever asserted as "arrives within a generous timeout" or as a lower bound.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { assertProblem, closeAllStreams, countEvents, createEventType, cursorsHeader, eventIn, eventually, flatEvents, off, openStream, publish, readEvents, readToEnd, readUntil, sleep, statisticFor, streamProblem, } from '../testing/stream-client.js';
let broker;
let base;
let seq = 0;
before(async () => {
    broker = await startTestBroker();
    base = broker.url;
});
after(async () => {
    await closeAllStreams();
    await broker.destroy();
});
/** A fresh user_defined event type with `partitions` partitions. */
async function freshType(partitions = 1) {
    const name = `stream.t${++seq}`;
    await createEventType(base, businessEventType(name, { partition_strategy: 'user_defined', default_statistic: statisticFor(partitions) }));
    return name;
}
/** Publishes `n` events named prefix0..prefix(n-1) to one partition. */
async function fill(name, partition, prefix, n) {
    await publish(base, name, Array.from({ length: n }, (_, i) => eventIn(partition, `${prefix}${i}`)));
}
const begin = (...parts) => cursorsHeader(parts.map((p) => ({ partition: p, offset: 'BEGIN' })));
// ------------------------------------------------------------------ response format
test('stream answers 200 application/x-json-stream; one batch per line ended by a line feed; one partition per batch; cursor names the batch\'s last event', async () => {
    const name = await freshType(3);
    await fill(name, '0', 'a', 5);
    await fill(name, '1', 'b', 3);
    // stream_limit makes the server end the stream, so the whole body can be read as raw text.
    const res = await openStream(base, name, 'batch_limit=2&batch_flush_timeout=1&stream_limit=8', begin('0', '1', '2'));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-json-stream');
    const text = await res.text();
    assert.ok(text.endsWith('\n'), 'the last line ends with a line feed');
    const lines = text.slice(0, -1).split('\n').map((l) => JSON.parse(l));
    assert.equal(countEvents(lines), 8);
    const seen = new Map();
    for (const line of lines) {
        assert.deepEqual(Object.keys(line.cursor).sort(), ['offset', 'partition']);
        const events = line.events ?? [];
        assert.ok(events.length >= 1 && events.length <= 2, `batch of ${events.length} events`);
        const list = seen.get(line.cursor.partition) ?? [];
        for (const e of events) {
            assert.equal(e.metadata['partition'], line.cursor.partition, 'every event of a batch is of the batch\'s partition');
            list.push(String(e.order_number));
        }
        seen.set(line.cursor.partition, list);
        // Offsets are dense from 0, so the last event of the batch is the (count-1)th of its partition.
        assert.equal(line.cursor.offset, off(list.length - 1), 'cursor of the last event of the batch');
    }
    assert.deepEqual(seen.get('0'), ['a0', 'a1', 'a2', 'a3', 'a4']);
    assert.deepEqual(seen.get('1'), ['b0', 'b1', 'b2']);
    assert.equal(seen.has('2'), false);
});
test('events are delivered as published, enriched with metadata (event_type, partition, received_at, version)', async () => {
    const name = await freshType(1);
    await publish(base, name, [eventIn('0', 'x1', { amount: 12.5 })]);
    const lines = await readEvents(await openStream(base, name, '', begin('0')), 1);
    const ev = lines[0].events[0];
    assert.equal(ev.order_number, 'x1');
    assert.equal(ev['amount'], 12.5);
    assert.equal(ev.metadata['event_type'], name);
    assert.equal(ev.metadata['partition'], '0');
    assert.equal(ev.metadata['version'], '1.0.0');
    assert.equal(typeof ev.metadata['received_at'], 'string');
});
// ------------------------------------------------------------------ parameters
test('batch_limit defaults to 1: one event per batch', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 3);
    const lines = await readEvents(await openStream(base, name, '', begin('0')), 3);
    assert.deepEqual(lines.map((l) => l.events?.length), [1, 1, 1]);
    assert.deepEqual(lines.map((l) => l.cursor.offset), [off(0), off(1), off(2)]);
});
test('batch_limit: a batch holds at most batch_limit events and flushes at once when full; the rest waits for batch_flush_timeout', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 7);
    const lines = await readEvents(await openStream(base, name, 'batch_limit=3&batch_flush_timeout=1', begin('0')), 7);
    assert.deepEqual(lines.map((l) => l.events?.length), [3, 3, 1]);
    assert.deepEqual(lines.map((l) => l.cursor.offset), [off(2), off(5), off(6)]);
    assert.deepEqual(flatEvents(lines).map((e) => e.order), ['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
});
test('batch_flush_timeout: a partial batch is sent after the flush timeout (not before), with everything buffered', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 2);
    const started = Date.now();
    const lines = await readEvents(await openStream(base, name, 'batch_limit=10&batch_flush_timeout=1', begin('0')), 2, 10_000);
    const elapsed = Date.now() - started;
    assert.equal(lines.length, 1);
    assert.equal(lines[0].events.length, 2);
    // Lower bound only (a timer never fires much early); no upper bound on a loaded machine.
    assert.ok(elapsed >= 700, `a batch of 2 < batch_limit 10 waited for the 1 s flush timeout (took ${elapsed} ms)`);
});
test('stream_limit: the stream closes after exactly stream_limit events, the last batch cut to fit', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 10);
    const lines = await readToEnd(await openStream(base, name, 'batch_limit=2&batch_flush_timeout=1&stream_limit=5', begin('0')));
    assert.equal(countEvents(lines), 5);
    assert.deepEqual(lines.map((l) => l.events?.length), [2, 2, 1]);
    assert.deepEqual(flatEvents(lines).map((e) => e.order), ['e0', 'e1', 'e2', 'e3', 'e4']);
    assert.equal(lines[2].cursor.offset, off(4));
});
test('stream_limit counts live events too: the stream ends after exactly stream_limit new events', async () => {
    const name = await freshType(1);
    const res = await openStream(base, name, 'batch_limit=1&batch_flush_timeout=1&stream_limit=3');
    assert.equal(res.status, 200);
    const reading = readToEnd(res);
    await fill(name, '0', 'n', 5);
    const lines = await reading;
    assert.equal(countEvents(lines), 3);
    assert.deepEqual(flatEvents(lines).map((e) => e.order), ['n0', 'n1', 'n2']);
});
test('stream_timeout: the stream closes at stream_timeout and pending (not yet flushed) events are flushed first', async () => {
    const name = await freshType(1);
    const started = Date.now();
    const res = await openStream(base, name, 'batch_limit=100&batch_flush_timeout=2&stream_timeout=3', begin('0'));
    assert.equal(res.status, 200);
    const lines = [];
    // The first line is the keep-alive at t=2 s; events published then wait in the buffer (batch not
    // full, next flush at t=4 s) and must come out when the stream times out at t=3 s.
    const reader = readUntil(res, (ls) => {
        if (ls.length === 1 && lines.length === 0) {
            lines.push(ls[0]);
            void fill(name, '0', 'p', 2);
        }
        return false;
    }, 15_000);
    const all = await reader;
    const elapsed = Date.now() - started;
    assert.equal(all.length, 2, JSON.stringify(all));
    assert.equal(all[0].events, undefined, 'first line is the keep-alive');
    assert.deepEqual(all[1].events.map((e) => e.order_number), ['p0', 'p1']);
    assert.ok(elapsed >= 2500, `closed by stream_timeout=3 s, not earlier (took ${elapsed} ms)`);
});
test('stream_keep_alive_limit: the stream closes after N keep-alive batches in a row', async () => {
    const name = await freshType(1);
    const lines = await readToEnd(await openStream(base, name, 'batch_flush_timeout=1&stream_keep_alive_limit=2', begin('0')));
    assert.equal(lines.length, 2);
    for (const l of lines)
        assert.deepEqual(l, { cursor: { partition: '0', offset: 'BEGIN' } });
});
test('stream_keep_alive_limit counts per partition: with two idle partitions the stream ends after N keep-alives of each', async () => {
    const name = await freshType(2);
    const lines = await readToEnd(await openStream(base, name, 'batch_flush_timeout=1&stream_keep_alive_limit=2', begin('0', '1')));
    assert.equal(lines.filter((l) => l.cursor.partition === '0').length, 2);
    assert.equal(lines.filter((l) => l.cursor.partition === '1').length, 2);
    assert.equal(countEvents(lines), 0);
});
test('keep-alive lines: cursor only (no events key), offset unchanged from the last batch', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 3);
    const res = await openStream(base, name, 'batch_limit=3&batch_flush_timeout=1', begin('0'));
    const lines = await readUntil(res, (ls) => ls.length >= 3, 10_000);
    assert.equal(lines[0].events.length, 3);
    assert.equal(lines[0].cursor.offset, off(2));
    for (const ka of lines.slice(1)) {
        assert.equal('events' in ka, false, 'keep-alive has no events key');
        assert.deepEqual(ka.cursor, { partition: '0', offset: off(2) });
    }
});
test('parameters: batch_flush_timeout=0 means the default (30 s), so no keep-alive comes within 2 s', async () => {
    const name = await freshType(1);
    const ac = new AbortController();
    const res = await openStream(base, name, 'batch_flush_timeout=0', begin('0'), ac.signal);
    assert.equal(res.status, 200);
    await assert.rejects(readUntil(res, (ls) => ls.length >= 1, 2_000), /timed out/);
    ac.abort();
});
// ------------------------------------------------------------------ cursors
test('X-Svc-Cursors offsets are exclusive: the first event delivered is the one after the cursor', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 5);
    const lines = await readEvents(await openStream(base, name, 'batch_limit=5&batch_flush_timeout=1', cursorsHeader([{ partition: '0', offset: off(2) }])), 2);
    assert.deepEqual(flatEvents(lines).map((e) => e.order), ['e3', 'e4']);
    assert.equal(lines[0].cursor.offset, off(4));
});
test('X-Svc-Cursors at the newest offset: nothing old is delivered, the next new event is', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'old', 3);
    const res = await openStream(base, name, 'batch_flush_timeout=1', cursorsHeader([{ partition: '0', offset: off(2) }]));
    assert.equal(res.status, 200);
    const reading = readEvents(res, 1);
    await fill(name, '0', 'new', 1);
    const lines = await reading;
    assert.deepEqual(flatEvents(lines).map((e) => e.order), ['new0']);
    assert.equal(lines.find((l) => l.events !== undefined).cursor.offset, off(3));
});
test('X-Nakadi-Cursors is accepted as an alias of X-Svc-Cursors', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 3);
    const res = await openStream(base, name, 'batch_limit=5&batch_flush_timeout=1', { 'X-Nakadi-Cursors': JSON.stringify([{ partition: '0', offset: off(0) }]) });
    assert.equal(res.status, 200);
    const lines = await readEvents(res, 2);
    assert.deepEqual(flatEvents(lines).map((e) => e.order), ['e1', 'e2']);
});
test('BEGIN (any case) starts at the oldest event', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 2);
    for (const spelling of ['BEGIN', 'begin', 'Begin', 'bEgIn']) {
        const lines = await readEvents(await openStream(base, name, 'batch_limit=2&batch_flush_timeout=1', cursorsHeader([{ partition: '0', offset: spelling }])), 2);
        assert.deepEqual(flatEvents(lines).map((e) => e.order), ['e0', 'e1'], spelling);
    }
});
test('only the partitions listed in X-Svc-Cursors are streamed (events and keep-alives)', async () => {
    const name = await freshType(3);
    await fill(name, '0', 'a', 2);
    await fill(name, '1', 'b', 2);
    await fill(name, '2', 'c', 2);
    const res = await openStream(base, name, 'batch_limit=10&batch_flush_timeout=1', cursorsHeader([{ partition: '1', offset: 'BEGIN' }]));
    // The events line, then at least two keep-alives: enough time for other partitions to show up if they would.
    const lines = await readUntil(res, (ls) => ls.length >= 3, 10_000);
    for (const l of lines)
        assert.equal(l.cursor.partition, '1');
    assert.deepEqual(flatEvents(lines).map((e) => e.order), ['b0', 'b1']);
});
test('without X-Svc-Cursors every partition streams from its newest event at call time: old events are not delivered, new ones are', async () => {
    const name = await freshType(2);
    await fill(name, '0', 'old-a', 3);
    await fill(name, '1', 'old-b', 1);
    const res = await openStream(base, name, 'batch_flush_timeout=1');
    assert.equal(res.status, 200);
    const reading = readUntil(res, (ls) => countEvents(ls) >= 2 && ls.some((l) => l.events === undefined), 10_000);
    await fill(name, '0', 'new-a', 1);
    await fill(name, '1', 'new-b', 1);
    const lines = await reading;
    assert.deepEqual(flatEvents(lines).map((e) => e.order).sort(), ['new-a0', 'new-b0']);
    const byPartition = new Map(lines.filter((l) => l.events !== undefined).map((l) => [l.cursor.partition, l.cursor.offset]));
    assert.equal(byPartition.get('0'), off(3));
    assert.equal(byPartition.get('1'), off(1));
});
test('without X-Svc-Cursors, keep-alives of idle partitions carry their newest offset (BEGIN when never written)', async () => {
    const name = await freshType(2);
    await fill(name, '0', 'old', 2);
    const lines = await readToEnd(await openStream(base, name, 'batch_flush_timeout=1&stream_keep_alive_limit=1'));
    assert.deepEqual(lines.map((l) => l.cursor).sort((a, b) => a.partition.localeCompare(b.partition)), [{ partition: '0', offset: off(1) }, { partition: '1', offset: 'BEGIN' }]);
});
/** Fails if the promise does not settle within ms. */
function within(p, ms, what) {
    let timer;
    return Promise.race([p, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}
test('the 200 head of a stream is sent at once, not with the first batch (a client knows the stream is open)', async () => {
    const name = await freshType(1);
    const ac = new AbortController();
    const res = await within(openStream(base, name, 'batch_flush_timeout=30', {}, ac.signal), 5_000, 'response head of an idle stream');
    assert.equal(res.status, 200);
    ac.abort();
});
test('new events reach an open stream without waiting for the flush timeout (notify on append)', async () => {
    const name = await freshType(1);
    const res = await within(openStream(base, name, 'batch_limit=1&batch_flush_timeout=30'), 5_000, 'response head');
    assert.equal(res.status, 200);
    const reading = readEvents(res, 3, 5_000); // far below the 30 s flush timeout
    for (let i = 0; i < 3; i++) {
        await fill(name, '0', `live${i}-`, 1);
        await sleep(50);
    }
    const lines = await reading;
    assert.deepEqual(flatEvents(lines).map((e) => e.order), ['live0-0', 'live1-0', 'live2-0']);
});
// ------------------------------------------------------------------ errors
test('400 for an X-Svc-Cursors (or X-Nakadi-Cursors) header that is not a JSON array of cursors', async () => {
    const name = await freshType(1);
    const bad = [
        'not json',
        '{"partition":"0","offset":"BEGIN"}',
        '[1]',
        '["0"]',
        '[{"partition":0,"offset":"BEGIN"}]',
        '[{"partition":"0"}]',
        '[{"offset":"BEGIN"}]',
        '[{"partition":"0","offset":5}]',
        '[null]',
    ];
    for (const header of bad) {
        assertProblem(await streamProblem(await openStream(base, name, '', { 'X-Svc-Cursors': header })), 400);
    }
    assertProblem(await streamProblem(await openStream(base, name, '', { 'X-Nakadi-Cursors': 'not json' })), 400);
});
test('422 for a cursor naming an unknown partition, a malformed offset, an unknown timeline or an offset not yet existing', async () => {
    const name = await freshType(2);
    await fill(name, '0', 'e', 3);
    const cases = [
        [[{ partition: '2', offset: 'BEGIN' }], /Partition "2" does not exist/],
        [[{ partition: '0', offset: 'BEGIN' }, { partition: 'x', offset: 'BEGIN' }], /Partition "x" does not exist/],
        [[{ partition: '0', offset: 'abc' }], /not a valid offset/],
        [[{ partition: '0', offset: '001-0001-2' }], /not a valid offset/],
        [[{ partition: '0', offset: '2' }], /not a valid offset/],
        [[{ partition: '0', offset: '' }], /not a valid offset/],
        [[{ partition: '0', offset: 'BEGINNING' }], /not a valid offset/],
        [[{ partition: '0', offset: '001-0002-000000000000000000' }], /timeline/],
        [[{ partition: '0', offset: off(3) }], /does not exist yet/],
        [[{ partition: '1', offset: off(0) }], /does not exist yet/],
        [[{ partition: '0', offset: 'BEGIN' }, { partition: '0', offset: off(1) }], /twice/],
    ];
    for (const [cursors, detail] of cases) {
        assertProblem(await streamProblem(await openStream(base, name, '', cursorsHeader(cursors))), 422, detail);
    }
    // The newest offset itself is a valid (exclusive) cursor.
    const ok = await openStream(base, name, 'stream_keep_alive_limit=1&batch_flush_timeout=1', cursorsHeader([{ partition: '0', offset: off(2) }]));
    assert.equal(ok.status, 200);
    assert.deepEqual(await readToEnd(ok), [{ cursor: { partition: '0', offset: off(2) } }]);
});
test('422 for invalid stream parameters: stream_limit < batch_limit, stream_timeout < batch_flush_timeout, negatives, non-integers', async () => {
    const name = await freshType(1);
    const bad = [
        'batch_limit=10&stream_limit=5',
        'batch_flush_timeout=10&stream_timeout=5',
        'stream_timeout=5', // lower than the default batch_flush_timeout of 30
        'batch_limit=0',
        'batch_limit=-1',
        'batch_flush_timeout=-1',
        'stream_limit=-1',
        'stream_timeout=-1',
        'stream_keep_alive_limit=-1',
        'batch_limit=1.5',
        'batch_flush_timeout=0.5',
        'stream_limit=ten',
        'stream_timeout=1e3',
        'stream_keep_alive_limit=x',
    ];
    for (const q of bad) {
        assertProblem(await streamProblem(await openStream(base, name, q, begin('0'))), 422);
    }
    // Boundaries that are valid: equal limits.
    const ok = await openStream(base, name, 'batch_limit=2&stream_limit=2&batch_flush_timeout=1&stream_timeout=1', begin('0'));
    assert.equal(ok.status, 200);
    await readToEnd(ok);
});
test('404 for the stream of an unknown event type', async () => {
    assertProblem(await streamProblem(await openStream(base, 'no.such.type', '')), 404);
    assertProblem(await streamProblem(await openStream(base, 'no.such.type', '', begin('0'))), 404);
});
test('429 on the 6th simultaneous connection to a partition (default limit 5); a slot frees when a client disconnects', async () => {
    const name = await freshType(2);
    const clients = [];
    for (let i = 0; i < 5; i++) {
        const ac = new AbortController();
        clients.push(ac);
        const r = await openStream(base, name, '', begin('0'), ac.signal);
        assert.equal(r.status, 200, `connection ${i + 1}`);
    }
    assertProblem(await streamProblem(await openStream(base, name, '', begin('0'))), 429);
    // A stream without cursors covers every partition, so it needs a slot on partition 0 too.
    assertProblem(await streamProblem(await openStream(base, name, '')), 429);
    // Other partitions are not affected.
    const other = new AbortController();
    assert.equal((await openStream(base, name, '', begin('1'), other.signal)).status, 200);
    other.abort();
    clients.shift().abort();
    const again = new AbortController();
    let status = 0;
    await eventually(async () => {
        const r = await openStream(base, name, '', begin('0'), again.signal);
        status = r.status;
        if (r.status !== 200)
            await streamProblem(r);
        return r.status === 200;
    }, 5_000, 'the disconnected client\'s slot to free');
    assert.equal(status, 200);
    assertProblem(await streamProblem(await openStream(base, name, '', begin('0'))), 429);
    again.abort();
    for (const c of clients)
        c.abort();
});
test('429 when a stream ends by itself its slot frees too (stream_limit reached)', async () => {
    const name = await freshType(1);
    await fill(name, '0', 'e', 1);
    const open = [];
    for (let i = 0; i < 4; i++) {
        const ac = new AbortController();
        open.push(ac);
        assert.equal((await openStream(base, name, '', begin('0'), ac.signal)).status, 200);
    }
    const finite = await openStream(base, name, 'stream_limit=1', begin('0'));
    assert.equal(finite.status, 200);
    assert.equal(countEvents(await readToEnd(finite)), 1);
    await eventually(async () => {
        const ac = new AbortController();
        const r = await openStream(base, name, '', begin('0'), ac.signal);
        ac.abort();
        return r.status === 200;
    }, 5_000, 'the finished stream\'s slot to free');
    for (const c of open)
        c.abort();
});
test('429 limit is configurable (lowLevelConnectionsPerPartitionMax) and all-or-nothing across partitions', async () => {
    const small = await startTestBroker({ lowLevelConnectionsPerPartitionMax: 2 });
    try {
        const name = 'stream.limit2';
        await createEventType(small.url, businessEventType(name, { partition_strategy: 'user_defined', default_statistic: statisticFor(2) }));
        const acs = [];
        const open = async (cursors) => {
            const ac = new AbortController();
            acs.push(ac);
            return openStream(small.url, name, '', begin(...cursors), ac.signal);
        };
        assert.equal((await open(['0'])).status, 200);
        assert.equal((await open(['0'])).status, 200);
        assertProblem(await streamProblem(await open(['0'])), 429, /partition "0"/);
        // A stream over 0 and 1 is refused as a whole and takes no slot on partition 1.
        assertProblem(await streamProblem(await open(['1', '0'])), 429);
        assert.equal((await open(['1'])).status, 200);
        assert.equal((await open(['1'])).status, 200);
        assertProblem(await streamProblem(await open(['1'])), 429);
        for (const ac of acs)
            ac.abort();
    }
    finally {
        await closeAllStreams();
        await small.destroy();
    }
});
test('clients that disconnect while their stream is being opened do not keep its connection slots (429 for ever)', async () => {
    // A slow token-info service holds every request in authentication for a while; the clients are gone
    // before the route runs, so their response has closed before the stream listens for its close.
    const tokenInfo = http.createServer((req, res) => {
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ uid: 'reader', scope: ['svc.event_stream.read', 'svc.event_type.write'] })), 300);
    });
    await new Promise((resolve) => tokenInfo.listen(0, '127.0.0.1', resolve));
    const tokenInfoUrl = `http://127.0.0.1:${tokenInfo.address().port}/tokeninfo`;
    const small = await startTestBroker({ lowLevelConnectionsPerPartitionMax: 1, auth: 'tokeninfo', authTokenInfoUrl: tokenInfoUrl, authTokenInfoCacheMs: 0 });
    try {
        const name = 'stream.gone';
        const auth = { authorization: 'Bearer t' };
        assert.equal((await call(small.url, 'POST', '/event-types', businessEventType(name), auth)).status, 201);
        const { hostname, port } = new URL(small.url);
        const header = JSON.stringify([{ partition: '0', offset: 'BEGIN' }]);
        for (let i = 0; i < 3; i++) {
            await new Promise((resolve, reject) => {
                const sock = net.connect(Number(port), hostname, () => {
                    const request = `GET /event-types/${name}/events?batch_flush_timeout=1 HTTP/1.1\r\nHost: ${hostname}\r\n` +
                        `Authorization: Bearer t\r\nX-Svc-Cursors: ${header}\r\n\r\n`;
                    sock.write(request, () => setTimeout(() => { sock.destroy(); resolve(); }, 50));
                });
                sock.on('error', reject);
            });
        }
        await sleep(500); // every one of them has left authentication by now
        const ac = new AbortController();
        const r = await openStream(small.url, name, 'batch_flush_timeout=1', { ...begin('0'), ...auth }, ac.signal);
        ac.abort();
        assert.equal(r.status, 200, 'the single slot is free');
    }
    finally {
        await closeAllStreams();
        await small.destroy();
        tokenInfo.close();
    }
});
test('422 for an expired offset after retention cleanup; BEGIN then starts at the oldest available event; offsets are never renumbered', async () => {
    const b = await startTestBroker({ retentionCheckIntervalMs: 100 });
    try {
        const name = 'stream.retention';
        await createEventType(b.url, businessEventType(name, { options: { retention_time: 3000 } }));
        await publish(b.url, name, [businessEvent('a0'), businessEvent('a1'), businessEvent('a2')]);
        await sleep(3200); // the first batch is now older than retention_time
        await publish(b.url, name, [businessEvent('b0'), businessEvent('b1')]);
        await eventually(async () => {
            const r = await call(b.url, 'GET', `/event-types/${name}/partitions`);
            return r.body[0].oldest_available_offset === off(3);
        }, 2_000, 'retention to remove the first batch');
        const parts = (await call(b.url, 'GET', `/event-types/${name}/partitions`)).body;
        assert.deepEqual(parts, [{ partition: '0', oldest_available_offset: off(3), newest_available_offset: off(4) }]);
        for (const expired of [off(0), off(1)]) {
            assertProblem(await streamProblem(await openStream(b.url, name, '', cursorsHeader([{ partition: '0', offset: expired }]))), 422, /expired/);
        }
        // oldest - 1 is still a valid exclusive cursor, and BEGIN means the same.
        for (const start of [off(2), 'BEGIN']) {
            const lines = await readEvents(await openStream(b.url, name, 'batch_limit=2&batch_flush_timeout=1', cursorsHeader([{ partition: '0', offset: start }])), 2);
            assert.deepEqual(flatEvents(lines).map((e) => e.order), ['b0', 'b1'], start);
            assert.equal(lines[0].cursor.offset, off(4), 'offsets are kept, not renumbered');
        }
    }
    finally {
        await closeAllStreams();
        await b.destroy();
    }
});
// ------------------------------------------------------------------ backpressure
/** Events the broker has written to its low-level streams of one event type (its own counter). */
async function eventsWritten(url, eventType) {
    const r = await fetch(`${url}/metrics/prometheus`);
    const text = await r.text();
    const line = text.split('\n').find((l) => l.startsWith(`brook_events_consumed_total{event_type="${eventType}"}`));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}
/** Waits until the broker has stopped writing to the event type's streams (its count holds still for a second); returns the count. */
async function writtenOnceStalled(url, eventType) {
    let written = -1;
    let stillSince = Date.now();
    await eventually(async () => {
        const now = await eventsWritten(url, eventType);
        if (now !== written) {
            written = now;
            stillSince = Date.now();
        }
        return Date.now() - stillSince >= 1000;
    }, 30_000, 'the server to stop writing');
    return written;
}
test('backpressure: a consumer that stops reading stalls the server before the end of the backlog; it resumes in order; a stalled stream can still be closed by the service', async () => {
    // What is asserted is the server's behaviour, not process memory (memory while stalled is a bench
    // figure, bench (d)): once the client stops reading, the server stops writing after what the kernel's
    // socket buffers can take, instead of encoding the whole backlog into its own write buffer. The
    // backlog is made much larger than those buffers (loopback autotuning may grow the receive buffer up to
    // net.ipv4.tcp_rmem's maximum, 32 MiB on some machines, plus tcp_wmem's 4 MiB on the sending side),
    // and a tiny tail cache makes the stream read it from RocksDB.
    const b = await startTestBroker({ tailCacheBytesMax: 1024 * 1024, lowLevelConnectionsPerPartitionMax: 2 });
    try {
        const name = 'stream.backlog';
        await createEventType(b.url, businessEventType(name));
        const eventCount = 4000;
        const pad = 'x'.repeat(25_000);
        for (let i = 0; i < eventCount; i += 35) {
            const n = Math.min(35, eventCount - i);
            await publish(b.url, name, Array.from({ length: n }, (_, j) => businessEvent(String(i + j), { payload: pad })));
        }
        const backlogBytes = eventCount * (pad.length + 200); // ~100 MB of events
        const req = http.get(`${b.url}/event-types/${name}/events?batch_limit=20&batch_flush_timeout=1`, {
            headers: cursorsHeader([{ partition: '0', offset: 'BEGIN' }]),
            agent: false,
        });
        const res = await new Promise((resolve, reject) => {
            req.on('response', resolve);
            req.on('error', reject);
        });
        assert.equal(res.statusCode, 200);
        const chunks = [];
        let received = 0;
        // Read until the first line is complete, then stop reading (the socket stays open).
        await new Promise((resolve) => {
            const onData = (c) => {
                chunks.push(c);
                received += c.length;
                if (c.includes(0x0a)) {
                    res.pause();
                    res.off('data', onData);
                    resolve();
                }
            };
            res.on('data', onData);
        });
        const written = await writtenOnceStalled(b.url, name);
        // eslint-disable-next-line no-console
        console.log(`backpressure: backlog ${eventCount} events (${(backlogBytes / 1e6).toFixed(0)} MB); client read ${(received / 1e6).toFixed(2)} MB ` +
            `before pausing; the server stalled after writing ${written} events (${((written * (pad.length + 200)) / 1e6).toFixed(0)} MB)`);
        // A server that ignored backpressure would have written all of it (into its own memory).
        assert.ok(written < eventCount * 0.6, `the server wrote ${written} of ${eventCount} events to a consumer that stopped reading`);
        assert.ok(written > 0);
        // Resume: every event arrives, in order, with dense offsets. Complete lines are parsed as they
        // arrive (re-parsing the whole ~100 MB received so far at every poll made this wait quadratic,
        // and on a loaded machine it timed out while the server was streaming fine).
        const lines = [];
        let pending = Buffer.concat(chunks);
        const takeLines = (c) => {
            pending = pending.length === 0 ? c : Buffer.concat([pending, c]);
            let nl;
            while ((nl = pending.indexOf(0x0a)) !== -1) {
                if (nl > 0)
                    lines.push(JSON.parse(pending.toString('utf8', 0, nl)));
                pending = pending.subarray(nl + 1);
            }
        };
        takeLines(Buffer.alloc(0));
        let streamed = countEvents(lines);
        res.on('data', (c) => {
            const before = lines.length;
            takeLines(c);
            for (let k = before; k < lines.length; k++)
                streamed += lines[k].events?.length ?? 0;
        });
        res.resume();
        await eventually(() => streamed >= eventCount, 60_000, 'the whole backlog after resuming');
        req.destroy();
        const orders = flatEvents(lines).map((e) => Number(e.order));
        assert.equal(orders.length, eventCount);
        assert.deepEqual(orders, Array.from({ length: eventCount }, (_, i) => i));
        let seen = 0;
        for (const l of lines) {
            seen += l.events?.length ?? 0;
            if (l.events !== undefined)
                assert.equal(l.cursor.offset, off(seen - 1));
        }
        // A second consumer stops reading; the service closes its stream all the same (a blacklist entry
        // for the event type), though the stream is waiting for a socket that will never drain.
        const written2Before = await eventsWritten(b.url, name);
        const stalledReq = http.get(`${b.url}/event-types/${name}/events?batch_limit=20&batch_flush_timeout=1`, {
            headers: cursorsHeader([{ partition: '0', offset: 'BEGIN' }]),
            agent: false,
        });
        stalledReq.on('error', () => undefined);
        const stalled = await new Promise((resolve) => stalledReq.on('response', resolve));
        stalled.pause();
        assert.ok((await writtenOnceStalled(b.url, name)) - written2Before < eventCount * 0.6, 'the second stream stalled too');
        assert.equal((await call(b.url, 'PUT', `/settings/blacklist/CONSUMER_ET/${name}`)).status, 204);
        assert.equal((await call(b.url, 'DELETE', `/settings/blacklist/CONSUMER_ET/${name}`)).status, 204);
        // Its connection slot is freed only when its handler has really ended: both slots (the limit is 2
        // here) become available to new consumers while the stalled client still holds its socket open.
        await eventually(async () => {
            const acs = [new AbortController(), new AbortController()];
            const statuses = [];
            for (const ac of acs)
                statuses.push((await openStream(b.url, name, '', undefined, ac.signal)).status);
            for (const ac of acs)
                ac.abort();
            return statuses.every((st) => st === 200);
        }, 5_000, 'the stalled stream to be ended by the service');
        stalledReq.destroy();
    }
    finally {
        await closeAllStreams();
        await b.destroy();
    }
});
//# sourceMappingURL=stream.http.test.js.map