// Goal: what a consumer reads is what the producer wrote plus enrichment: integers beyond 2^53 keep
// every digit, string escapes and key order are kept, a pretty-printed event arrives on one stream line.
// Method: a real broker; publish raw text, read it back through the low-level stream.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { businessEventType, call, startTestBroker } from '../testing/broker-harness.js';
let broker;
before(async () => {
    broker = await startTestBroker();
    assert.equal((await call(broker.url, 'POST', '/event-types', businessEventType('st.orders'))).status, 201);
});
after(async () => {
    await broker.destroy();
});
test('big integers, escapes and key order survive publishing; pretty-printed events arrive on one line', async () => {
    const body = `[
  {
    "order_number": "A\\u00e9\\"1",
    "big": 12345678901234567890123,
    "metadata": {
      "eid": "1f1e7a0a-3c5e-4a52-9d3f-0b6f1c2d3e4f",
      "occurred_at": "2026-11-22T10:00:00Z"
    },
    "amount": 1.50
  }
]`;
    const r = await call(broker.url, 'POST', '/event-types/st.orders/events', body, { 'content-type': 'application/json', 'x-flow-id': 'flow-st-1' });
    assert.equal(r.status, 200, r.text);
    const res = await fetch(`${broker.url}/event-types/st.orders/events?batch_flush_timeout=1&stream_limit=1`, {
        headers: { 'X-Svc-Cursors': '[{"partition":"0","offset":"BEGIN"}]' },
    });
    const lines = (await res.text()).split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, 'one batch, one line');
    const line = lines[0];
    assert.match(line, /"big":12345678901234567890123,/, 'every digit kept');
    assert.match(line, /"amount":1\.50\}/, 'the number as written');
    assert.match(line, /"order_number":"A\\u00e9\\"1"/, 'escapes as written');
    const ev = JSON.parse(line).events[0];
    assert.deepEqual(Object.keys(ev), ['order_number', 'big', 'metadata', 'amount'], 'key order as written');
    const md = ev['metadata'];
    assert.deepEqual(Object.keys(md), ['eid', 'occurred_at', 'event_type', 'received_at', 'version', 'flow_id', 'partition']);
    assert.deepEqual([md['event_type'], md['version'], md['flow_id'], md['partition']], ['st.orders', '1.0.0', 'flow-st-1', '0']);
});
//# sourceMappingURL=stored-text.http.test.js.map