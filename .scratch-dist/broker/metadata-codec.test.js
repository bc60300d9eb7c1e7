// Goal: a forwarded subscription command is checked for its shape before it is proposed (a command the
// state machine cannot apply would stop every node).
// Method: well-formed commands pass; each malformed variant is refused with a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkForwardedCommand } from './metadata-codec.js';
const bytes = (v) => Buffer.from(JSON.stringify(v));
const good = {
    id: '5a3f3c5e-0a8c-4f6b-9d35-3c0f6a1c2b7d', owning_application: 'app', event_types: ['a'], consumer_group: 'default',
    read_from: 'cursors', initial_cursors: [{ event_type: 'a', partition: '0', offset: 'BEGIN' }], created_at: '2026-01-01T00:00:00.000Z',
};
test('subscription.create and subscription.delete of the right shape pass', () => {
    assert.equal(checkForwardedCommand(bytes({ op: 'subscription.create', subscription: good })), undefined);
    const { initial_cursors: _, ...noCursors } = good;
    assert.equal(checkForwardedCommand(bytes({ op: 'subscription.create', subscription: { ...noCursors, read_from: 'end' } })), undefined);
    assert.equal(checkForwardedCommand(bytes({ op: 'subscription.delete', id: good.id })), undefined);
});
test('malformed subscription commands are refused', () => {
    const bad = [
        { op: 'subscription.create' },
        { op: 'subscription.create', subscription: { ...good, id: '' } },
        { op: 'subscription.create', subscription: { ...good, event_types: [] } },
        { op: 'subscription.create', subscription: { ...good, event_types: [1] } },
        { op: 'subscription.create', subscription: { ...good, read_from: 'middle' } },
        { op: 'subscription.create', subscription: { ...good, consumer_group: 7 } },
        { op: 'subscription.create', subscription: { ...good, created_at: undefined } },
        { op: 'subscription.create', subscription: { ...good, initial_cursors: [{ event_type: 'a', partition: 0, offset: 'BEGIN' }] } },
        { op: 'subscription.delete', id: 3 },
    ];
    for (const cmd of bad)
        assert.match(checkForwardedCommand(bytes(cmd)) ?? '', /malformed subscription/, JSON.stringify(cmd));
});
const session = { id: 's1', node: 1, incarnation: 'i', openedAtMs: 1, commitTimeoutMs: 60_000 };
const cursor = { event_type: 'a', partition: '0', offset: 5 };
test('stream and cursor commands of the right shape pass', () => {
    const ok = [
        { op: 'stream.open', subscription: 'x', session, starts: [cursor, { ...cursor, partition: '1', offset: -1 }] },
        { op: 'stream.close', subscription: 'x', session: 's1', atMs: 5 },
        { op: 'stream.close_stale', node: 1, incarnation: 'i', atMs: 5 },
        { op: 'stream.release', subscription: 'x', session: 's1', partitions: [{ event_type: 'a', partition: '0' }] },
        { op: 'cursor.commit', subscription: 'x', session: 's1', atMs: 5, cursors: [cursor] },
        { op: 'cursor.reset', subscription: 'x', cursors: [cursor] },
    ];
    for (const cmd of ok)
        assert.equal(checkForwardedCommand(bytes(cmd)), undefined, JSON.stringify(cmd));
});
test('malformed stream and cursor commands are refused', () => {
    const bad = [
        { op: 'stream.open', subscription: 'x', session: { ...session, node: 'one' }, starts: [] },
        { op: 'stream.open', subscription: '', session, starts: [] },
        { op: 'stream.open', subscription: 'x', session, starts: [{ ...cursor, offset: '5' }] },
        { op: 'stream.open', subscription: 'x', session, starts: [{ ...cursor, offset: -2 }] },
        { op: 'stream.close', subscription: 'x', session: 's1' },
        { op: 'stream.close_stale', node: 1.5, incarnation: 'i', atMs: 5 },
        { op: 'stream.release', subscription: 'x', session: 's1', partitions: [{ event_type: 'a' }] },
        { op: 'cursor.commit', subscription: 'x', session: 's1', atMs: -1, cursors: [cursor] },
        { op: 'cursor.commit', subscription: 'x', session: 's1', atMs: 5, cursors: [{ ...cursor, offset: 1.5 }] },
        { op: 'cursor.reset', subscription: 'x', cursors: 'all' },
    ];
    for (const cmd of bad)
        assert.match(checkForwardedCommand(bytes(cmd)) ?? '', /malformed (stream|cursor)\./, JSON.stringify(cmd));
});
//# sourceMappingURL=metadata-codec.test.js.map