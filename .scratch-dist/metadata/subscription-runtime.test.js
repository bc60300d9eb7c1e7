// Goal: the replicated runtime of subscriptions (sessions, assignment, hand-over, committed cursors)
// keeps its rules whatever the order of commands: assigned partitions belong to live sessions, live
// sessions hold balanced shares, cursors only move forward except by a reset, a partition moving from
// a live session is reassigning until released, closed sessions commit only within their window, and
// a snapshot taken anywhere restores a machine that answers the rest identically.
// Method: examples, and a fast-check model run over random command sequences through the state machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MetadataStateMachine } from './state-machine.js';
import { storedEventType } from '../testing/metadata-fixtures.js';
const et = (name) => storedEventType(name);
/** A machine with event type "a" (4 partitions) and subscription "s" on it. */
function machine(partitions = 4) {
    const sm = new MetadataStateMachine();
    sm.apply(1, { op: 'event_type.create', eventType: et('a'), partitionCount: partitions });
    sm.apply(2, { op: 'subscription.create', subscription: { id: 's', owning_application: 'app', event_types: ['a'], consumer_group: 'g', read_from: 'begin', created_at: 't0' } });
    return sm;
}
const apply = (sm, cmd) => sm.apply(sm.appliedIndex + 1, cmd);
const session = (id, commitTimeoutMs = 1000) => ({ id, node: 1, incarnation: 'i', openedAtMs: 0, commitTimeoutMs });
const open = (sm, id, starts = []) => apply(sm, { op: 'stream.open', subscription: 's', session: session(id), starts: starts.map((s) => ({ event_type: 'a', ...s })) });
const commit = (sm, id, atMs, cursors) => apply(sm, { op: 'cursor.commit', subscription: 's', session: id, atMs, cursors: cursors.map(([partition, offset]) => ({ event_type: 'a', partition, offset })) });
const owners = (sm) => sm.runtime('s').slots.map((s) => `${s.session ?? '-'}${s.releasingFrom === undefined ? '' : '<' + s.releasingFrom}`);
test('open: balanced assignment, the slot limit with its message, starts fixed by the first stream only', () => {
    const sm = machine(4);
    assert.deepEqual(open(sm, 'x', [{ partition: '0', offset: 5 }, { partition: '1', offset: -1 }]), { ok: true });
    assert.deepEqual(owners(sm), ['x', 'x', 'x', 'x']);
    open(sm, 'y', [{ partition: '0', offset: 99 }]);
    assert.equal(sm.runtime('s').committed.get('a\u00000').offset, 5, 'a later start does not move a cursor');
    assert.deepEqual(owners(sm), ['x', 'x', 'y<x', 'y<x'], 'moved from a live session: reassigning');
    open(sm, 'z');
    open(sm, 'w');
    const r = open(sm, 'v');
    assert.deepEqual(r, { ok: false, reason: 'no_slots', detail: 'No free slots for streaming available. Total slots: 4' });
    assert.equal(open(sm, 'w').ok, false, 'the same session twice');
});
test('release hands over; only the releasing session can release; moving back clears it', () => {
    const sm = machine(2);
    open(sm, 'x');
    open(sm, 'y');
    assert.deepEqual(owners(sm), ['x', 'y<x']);
    apply(sm, { op: 'stream.release', subscription: 's', session: 'y', partitions: [{ event_type: 'a', partition: '1' }] });
    assert.deepEqual(owners(sm), ['x', 'y<x'], 'not the releasing session: no-op');
    apply(sm, { op: 'stream.close', subscription: 's', session: 'y', atMs: 10 });
    assert.deepEqual(owners(sm), ['x', 'x'], 'moved back to the holder: no longer reassigning');
    open(sm, 'z');
    apply(sm, { op: 'stream.release', subscription: 's', session: 'x', partitions: [{ event_type: 'a', partition: '1' }] });
    assert.deepEqual(owners(sm), ['x', 'z']);
});
test('close: partitions go straight to the others; the closed session commits what it held within its window only', () => {
    const sm = machine(2);
    open(sm, 'x');
    open(sm, 'y');
    apply(sm, { op: 'stream.release', subscription: 's', session: 'x', partitions: [{ event_type: 'a', partition: '1' }] });
    apply(sm, { op: 'stream.close', subscription: 's', session: 'y', atMs: 1000 });
    assert.deepEqual(owners(sm), ['x', 'x']);
    assert.deepEqual(commit(sm, 'y', 2000, [['1', 3]]), { ok: true, outcomes: ['committed'] }, 'at closedAt + timeout: still accepted');
    assert.equal(commit(sm, 'y', 2001, [['1', 4]]).ok, false, 'after the window');
    open(sm, 'z');
    apply(sm, { op: 'stream.close', subscription: 's', session: 'z', atMs: 3000 });
    const r = commit(sm, 'z', 3000, [['0', 1]]);
    assert.equal(r.ok, false, 'z never held partition 0');
});
test('commit: all or nothing on ownership, then committed or outdated per cursor; reset forgets every session', () => {
    const sm = machine(2);
    open(sm, 'x');
    open(sm, 'y');
    apply(sm, { op: 'stream.release', subscription: 's', session: 'x', partitions: [{ event_type: 'a', partition: '1' }] });
    const mixed = commit(sm, 'x', 0, [['0', 5], ['1', 5]]);
    assert.equal(mixed.ok, false);
    assert.equal(sm.runtime('s').committed.get('a\u00000'), undefined, 'nothing of a refused request is applied');
    assert.deepEqual(commit(sm, 'x', 0, [['0', 5], ['0', 3], ['0', 5]]), { ok: true, outcomes: ['committed', 'outdated', 'outdated'] });
    assert.equal(commit(sm, 'nobody', 0, [['0', 9]]).ok, false);
    apply(sm, { op: 'stream.close', subscription: 's', session: 'y', atMs: 0 });
    apply(sm, { op: 'cursor.reset', subscription: 's', cursors: [{ event_type: 'a', partition: '0', offset: 1 }] });
    assert.equal(sm.runtime('s').committed.get('a\u00000').offset, 1, 'a reset may move a cursor back');
    assert.deepEqual(owners(sm), ['-', '-']);
    assert.equal(commit(sm, 'x', 0, [['0', 9]]).ok, false, 'a stream from before the reset');
    assert.equal(commit(sm, 'y', 0, [['1', 9]]).ok, false, 'a closed stream from before the reset');
});
test('stream.close_stale closes the sessions of that node from other incarnations only', () => {
    const sm = machine(3);
    apply(sm, { op: 'stream.open', subscription: 's', session: { ...session('old'), incarnation: 'i1' }, starts: [] });
    apply(sm, { op: 'stream.open', subscription: 's', session: { ...session('new'), incarnation: 'i2' }, starts: [] });
    apply(sm, { op: 'stream.open', subscription: 's', session: { ...session('far'), node: 2, incarnation: 'i1' }, starts: [] });
    apply(sm, { op: 'stream.close_stale', node: 1, incarnation: 'i2', atMs: 5 });
    assert.deepEqual(sm.runtime('s').sessions.map((s) => s.id), ['new', 'far']);
});
test('model: invariants hold and a snapshot anywhere replays identically, for random command sequences', () => {
    const sessions = ['s1', 's2', 's3', 's4', 's5', 's6'];
    const cmd = fc.oneof(fc.record({ k: fc.constant('open'), s: fc.constantFrom(...sessions) }), fc.record({ k: fc.constant('close'), s: fc.constantFrom(...sessions), at: fc.nat(5000) }), fc.record({ k: fc.constant('release'), s: fc.constantFrom(...sessions), p: fc.constantFrom('0', '1', '2', '3', '4') }), fc.record({ k: fc.constant('commit'), s: fc.constantFrom(...sessions), p: fc.constantFrom('0', '1', '2', '3', '4'), o: fc.integer({ min: -1, max: 50 }), at: fc.nat(5000) }), fc.record({ k: fc.constant('reset'), p: fc.constantFrom('0', '1', '2', '3', '4'), o: fc.integer({ min: -1, max: 50 }) }));
    const toCommand = (c) => {
        switch (c.k) {
            case 'open':
                return { op: 'stream.open', subscription: 's', session: session(c.s), starts: [{ event_type: 'a', partition: '0', offset: 0 }] };
            case 'close':
                return { op: 'stream.close', subscription: 's', session: c.s, atMs: c.at };
            case 'release':
                return { op: 'stream.release', subscription: 's', session: c.s, partitions: [{ event_type: 'a', partition: c.p }] };
            case 'commit':
                return { op: 'cursor.commit', subscription: 's', session: c.s, atMs: c.at, cursors: [{ event_type: 'a', partition: c.p, offset: c.o }] };
            default:
                return { op: 'cursor.reset', subscription: 's', cursors: [{ event_type: 'a', partition: c.p, offset: c.o }] };
        }
    };
    fc.assert(fc.property(fc.array(cmd, { maxLength: 60 }), fc.nat(60), (cmds, cut) => {
        const sm = machine(5);
        const results = [];
        let restored;
        const restoredResults = [];
        cmds.forEach((c, i) => {
            if (i === cut)
                restored = MetadataStateMachine.restore(JSON.parse(JSON.stringify(sm.snapshot())), sm.appliedIndex);
            const before = new Map([...(sm.runtime('s')?.committed ?? new Map()).entries()].map(([k, v]) => [k, v.offset]));
            const command = toCommand(c);
            results.push(apply(sm, command));
            if (restored !== undefined)
                restoredResults.push(apply(restored, command));
            const rt = sm.runtime('s');
            if (rt === undefined)
                return;
            const live = new Set(rt.sessions.map((s) => s.id));
            for (const slot of rt.slots) {
                if (slot.session !== undefined)
                    assert.ok(live.has(slot.session), 'assigned to a live session');
                if (slot.releasingFrom !== undefined)
                    assert.ok(live.has(slot.releasingFrom) && slot.session !== undefined && slot.releasingFrom !== slot.session, 'released by a live other session');
                if (live.size > 0)
                    assert.ok(slot.session !== undefined, 'with sessions, every partition is assigned');
            }
            const counts = [...live].map((id) => rt.slots.filter((s) => s.session === id).length);
            if (counts.length > 0)
                assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `balanced: ${counts.join(',')}`);
            if (command.op !== 'cursor.reset') {
                for (const [k, v] of before)
                    assert.ok(rt.committed.get(k).offset >= v, 'cursors never move back except by a reset');
            }
        });
        if (restored !== undefined) {
            assert.deepEqual(restoredResults, results.slice(results.length - restoredResults.length));
            assert.deepEqual(JSON.parse(JSON.stringify(restored.snapshot())), JSON.parse(JSON.stringify(sm.snapshot())));
        }
    }), { numRuns: 300 });
});
//# sourceMappingURL=subscription-runtime.test.js.map