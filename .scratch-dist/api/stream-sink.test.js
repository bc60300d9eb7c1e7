// Goal: the response sink ends a stream's waits in every way a stream can end: the socket drains, the
// client goes (also before the sink existed), or the service aborts the stream while the client has
// stopped reading. Method: a fake response (an EventEmitter with write() and destroyed), no sockets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { responseSink } from './stream-sink.js';
class FakeResponse extends EventEmitter {
    destroyed = false;
    written = [];
    full = true;
    write(line) {
        this.written.push(line);
        return !this.full;
    }
    close() {
        this.destroyed = true;
        this.emit('close');
    }
}
const asResponse = (f) => f;
/** Whether the promise settles within a few turns of the event loop. */
async function settles(p) {
    let done = false;
    void p.then(() => (done = true));
    for (let i = 0; i < 5; i++)
        await new Promise((r) => setImmediate(r));
    return done;
}
test('drain waits for the socket to drain, then resolves', async () => {
    const raw = new FakeResponse();
    const sink = responseSink(asResponse(raw), new AbortController());
    assert.equal(sink.write(Buffer.from('a\n')), false);
    const d = sink.drain();
    assert.equal(await settles(d), false, 'not before drain');
    raw.emit('drain');
    assert.equal(await settles(d), true);
    assert.equal(raw.listenerCount('drain'), 0, 'no listener left behind');
});
test('a stream aborted by the service ends a wait for a client that stopped reading', async () => {
    const raw = new FakeResponse();
    const abort = new AbortController();
    const sink = responseSink(asResponse(raw), abort);
    sink.write(Buffer.from('a\n'));
    const d = sink.drain();
    assert.equal(await settles(d), false);
    abort.abort();
    assert.equal(await settles(d), true);
    assert.equal(await settles(sink.drain()), true, 'and every later wait returns at once');
});
test('the client going away aborts the stream and ends the wait', async () => {
    const raw = new FakeResponse();
    const abort = new AbortController();
    const sink = responseSink(asResponse(raw), abort);
    const d = sink.drain();
    raw.close();
    assert.equal(abort.signal.aborted, true);
    assert.equal(await settles(d), true);
});
test('a client gone before the sink was made (its close already emitted) aborts the stream at once', async () => {
    const raw = new FakeResponse();
    raw.close();
    const abort = new AbortController();
    const sink = responseSink(asResponse(raw), abort);
    assert.equal(abort.signal.aborted, true);
    assert.equal(await settles(sink.drain()), true);
});
//# sourceMappingURL=stream-sink.test.js.map