import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProblem } from '../core/problem.js';
import { storedEventType } from '../testing/metadata-fixtures.js';
import { CursorResolver } from './cursors.js';
const stops = [];
/** A replica that applies one more event every 10 ms up to `upTo`. */
function laggingReader(startNewest, upTo) {
    let newest = startNewest;
    const waiters = new Set();
    const timer = setInterval(() => {
        if (newest < upTo)
            newest++;
        for (const w of waiters)
            w();
    }, 10);
    stops.push(() => clearInterval(timer));
    return {
        bounds: () => ({ oldest: 0, newest: newest }),
        read: async () => [],
        waitForEvents: (_t, _p, after, signal) => new Promise((resolve) => {
            const check = () => {
                if (newest > after || signal.aborted) {
                    waiters.delete(check);
                    resolve();
                }
            };
            waiters.add(check);
            signal.addEventListener('abort', check, { once: true });
        }),
    };
}
const cursor = (n) => `001-0001-${String(n).padStart(18, '0')}`;
test('a cursor ahead of this node\'s copy waits for the copy to reach it, and is refused (422) only when it does not in time', async () => {
    const rec = { eventType: storedEventType('orders'), schemas: [], storage: { topic: 1, partitions: ['0'], timeline: 1 } };
    const catchingUp = new CursorResolver(laggingReader(10, 20));
    assert.equal(await catchingUp.resolveCatchingUp(rec, '0', cursor(15), 2000), 15);
    const stuck = new CursorResolver(laggingReader(10, 12));
    await assert.rejects(stuck.resolveCatchingUp(rec, '0', cursor(15), 200), (e) => isProblem(e) && e.status === 422 && /does not exist yet/.test(e.detail ?? ''));
    // Without a wait (a single node), the answer is immediate, as resolve() gives it.
    await assert.rejects(new CursorResolver(laggingReader(10, 20)).resolveCatchingUp(rec, '0', cursor(15), 0), (e) => isProblem(e) && e.status === 422);
    for (const stop of stops)
        stop();
});
//# sourceMappingURL=cursors.test.js.map