/** TEST-ONLY: set-up shared by the subscription HTTP tests (event types with chosen partitions, events, subscriptions, stats). */
import assert from 'node:assert/strict';
import { businessEventType, call } from './broker-harness.js';
import { createEventType, eventIn, publish, sleep, statisticFor } from './stream-client.js';
/** Creates a user_defined event type with `partitions` partitions ("0".."n-1"). */
export async function userDefinedEventType(base, name, partitions) {
    await createEventType(base, businessEventType(name, { partition_strategy: 'user_defined', default_statistic: statisticFor(partitions) }));
    return name;
}
/** Publishes events with the given order numbers into one partition, in this order. */
export async function putEvents(base, name, partition, orders) {
    await publish(base, name, orders.map((o) => eventIn(partition, o)));
}
/** ["p0", "p1", ...]: order numbers. */
export const orderRange = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
/** POST /subscriptions (read_from begin unless overridden); the id of the created subscription. */
export async function createSubscription(base, owner, eventTypes, over = {}) {
    const r = await call(base, 'POST', '/subscriptions', { owning_application: owner, event_types: eventTypes, read_from: 'begin', ...over });
    assert.equal(r.status, 201, r.text);
    return r.body.id;
}
/** GET /subscriptions/{id}/stats, one element per partition. */
export async function subscriptionStats(base, id) {
    const r = await call(base, 'GET', `/subscriptions/${id}/stats`);
    assert.equal(r.status, 200, r.text);
    const items = r.body.items;
    return items.flatMap((it) => it.partitions.map((p) => ({ event_type: it.event_type, ...p })));
}
/** Polls `cond` until it holds; fails after timeoutMs naming `what`. */
export async function waitUntil(what, cond, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await cond())) {
        if (Date.now() > deadline)
            assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(25);
    }
}
//# sourceMappingURL=subscription-fixtures.js.map