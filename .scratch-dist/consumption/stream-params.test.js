// Goal: stream parameters get the interface's defaults and invalid combinations are 422.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStreamParams, parseSubscriptionStreamParams } from './stream-params.js';
test('defaults', () => {
    assert.deepEqual(parseStreamParams({}), {
        batchLimit: 1, batchFlushTimeoutMs: 30_000, streamLimit: 0, streamTimeoutMs: 0, streamKeepAliveLimit: 0,
    });
});
test('batch_flush_timeout 0 means 30 seconds', () => {
    assert.equal(parseStreamParams({ batch_flush_timeout: '0' }).batchFlushTimeoutMs, 30_000);
});
test('invalid combinations and values are 422', () => {
    const bad = [
        { stream_limit: '5', batch_limit: '10' },
        { stream_timeout: '5', batch_flush_timeout: '10' },
        { stream_timeout: '10' }, // lower than the default flush timeout of 30
        { batch_limit: '0' },
        { batch_limit: '-1' },
        { batch_limit: 'ten' },
        { stream_keep_alive_limit: '1.5' },
    ];
    for (const q of bad) {
        assert.throws(() => parseStreamParams(q), (e) => e.status === 422, JSON.stringify(q));
    }
});
test('valid combinations pass', () => {
    const p = parseStreamParams({ batch_limit: '10', stream_limit: '10', batch_flush_timeout: '2', stream_timeout: '2', stream_keep_alive_limit: '3' });
    assert.deepEqual(p, { batchLimit: 10, batchFlushTimeoutMs: 2000, streamLimit: 10, streamTimeoutMs: 2000, streamKeepAliveLimit: 3 });
});
test('subscription streams add max_uncommitted_events (default 10, at least 1) and commit_timeout (seconds, at most 60, default 60)', () => {
    const d = parseSubscriptionStreamParams({});
    assert.equal(d.maxUncommittedEvents, 10);
    assert.equal(d.commitTimeoutMs, 60_000);
    assert.equal(parseSubscriptionStreamParams({ commit_timeout: '0' }).commitTimeoutMs, 60_000);
    const p = parseSubscriptionStreamParams({ max_uncommitted_events: '500', commit_timeout: '5', batch_limit: '100' });
    assert.deepEqual([p.maxUncommittedEvents, p.commitTimeoutMs, p.batchLimit], [500, 5000, 100]);
    for (const q of [{ max_uncommitted_events: '0' }, { commit_timeout: '61' }, { commit_timeout: '-1' }, { max_uncommitted_events: 'x' }, { stream_limit: '1', batch_limit: '2' }]) {
        assert.throws(() => parseSubscriptionStreamParams(q), (e) => e.status === 422, JSON.stringify(q));
    }
});
//# sourceMappingURL=stream-params.test.js.map