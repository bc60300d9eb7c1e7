// Goal (issue 10): a batch_flush_timeout above what a Node timer takes (about 24.8 days) is accepted
// and waited for, not turned into a 1 ms timer: that made the stream spin and log a
// TimeoutOverflowWarning 33 times a second. Both streams still deliver events at once.
// Method: a real broker; streams opened with batch_flush_timeout=3000000 (34.7 days) while the test
// listens for process warnings.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEvent, businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
import { closeStream, openStream, readEvents } from '../testing/stream-client.js';
import { SubscriptionStreamClient } from '../testing/subscription-client.js';
let broker;
let base;
before(async () => {
    broker = await startTestBroker();
    base = `http://127.0.0.1:${broker.port}`;
    assert.equal((await call(base, 'POST', '/event-types', businessEventType('timers.orders'))).status, 201);
});
after(async () => {
    await broker.destroy();
});
test('issue 10: streams with batch_flush_timeout beyond 24.8 days wait without timer overflow and still deliver', async () => {
    const warnings = [];
    const onWarning = (w) => warnings.push(w.name);
    process.on('warning', onWarning);
    const sub = await call(base, 'POST', '/subscriptions', { owning_application: 'timers', event_types: ['timers.orders'], read_from: 'begin' });
    const id = sub.body.id;
    const low = await openStream(base, 'timers.orders', 'batch_limit=1&batch_flush_timeout=3000000', { 'X-Svc-Cursors': JSON.stringify([{ partition: '0', offset: 'BEGIN' }]) });
    const high = await SubscriptionStreamClient.open(base, id, 'batch_limit=1&batch_flush_timeout=3000000');
    try {
        assert.equal(low.status, 200);
        await new Promise((r) => setTimeout(r, 1000));
        assert.equal((await call(base, 'POST', '/event-types/timers.orders/events', [businessEvent('T-1')])).status, 200);
        const lines = await readEvents(low, 1);
        assert.equal(lines.flatMap((l) => l.events ?? [])[0]?.order_number, 'T-1');
        await high.waitFor((c) => c.lines.some((l) => l.events?.[0]?.order_number === 'T-1'), 10_000, 'the event on the subscription stream');
        assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
    }
    finally {
        process.off('warning', onWarning);
        await closeStream(low);
        await high.close();
    }
});
//# sourceMappingURL=stream-timers.http.test.js.map