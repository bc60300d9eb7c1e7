// Goal: a clean shutdown does not hang on connections a client opened and never used. Node's fetch
// (undici) opens a fresh pooled connection after a stream's body is cancelled and never sends on it;
// server.close() alone waits for such sockets until their keep-alive timeout (about 70 s here), which
// would turn every SIGTERM into a forced exit after the grace period.
// Method: read a stream with plain fetch, cancel it, then close the broker; the test's own timeout
// (far below 70 s) fails it if the close waits for the unused connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, readLines, startTestBroker } from '../testing/broker-harness.js';
test('close does not wait for connections that never carried a request', { timeout: 20_000 }, async () => {
    const broker = await startTestBroker();
    assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('shutdown.t'))).status, 201);
    assert.equal((await call(broker.url, 'POST', '/event-types/shutdown.t/events', [businessEvent('o-1')])).status, 200);
    for (let i = 0; i < 3; i++) {
        const res = await fetch(`${broker.url}/event-types/shutdown.t/events?batch_flush_timeout=1`, {
            headers: { 'X-Svc-Cursors': '[{"partition":"0","offset":"BEGIN"}]' },
        });
        const lines = await readLines(res, (l) => l.length >= 1);
        assert.equal(lines.length, 1);
    }
    await broker.destroy();
});
//# sourceMappingURL=shutdown.http.test.js.map