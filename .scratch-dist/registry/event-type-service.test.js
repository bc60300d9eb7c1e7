// Goal: creating an event type proposes where its partitions go: over the cluster's members, with the
// configured factor, balanced against what exists; without a members source the command is as before
// (legacy layout); a node that knows no members refuses rather than creating a legacy event type; a
// refused placement is an error, never a silent success.
// Method: EventTypeService over a real MetadataStateMachine (reads and proposals both go to it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProblem } from '../core/problem.js';
import { MetadataStateMachine } from '../metadata/state-machine.js';
import { EventTypeService } from './event-type-service.js';
import { createBody, opts } from './registry-fixtures.js';
function service(members, partitionsDefault = 1, answer) {
    const sm = new MetadataStateMachine();
    const proposed = [];
    const svc = new EventTypeService({
        reader: { eventType: (n) => sm.eventType(n), eventTypes: () => sm.eventTypes(), eventTypeCount: () => sm.eventTypeCount(), limits: () => sm.limits },
        proposer: {
            propose: async (cmd) => {
                proposed.push(JSON.parse(JSON.stringify(cmd)));
                return answer ?? sm.apply(sm.appliedIndex + 1, cmd);
            },
        },
        options: { ...opts, partitionsDefault },
        clock: { nowMs: () => 0, monotonicMs: () => 0 },
        ...(members === undefined ? {} : { members }),
    });
    return { sm, svc, proposed };
}
test('creates carry a placement over the members; stored placements stay even and get groups in order', async () => {
    const { sm, svc, proposed } = service({ members: () => [3, 1, 2, 4], replicationFactor: undefined, legacyReplica: 1 }, 3);
    for (const name of ['a', 'b', 'c', 'd', 'e'])
        await svc.create(createBody({ name }));
    assert.equal(proposed.length, 5);
    for (const cmd of proposed) {
        assert.equal(cmd.op, 'event_type.create');
        if (cmd.op !== 'event_type.create')
            continue;
        assert.deepEqual(cmd.placement?.members, [1, 2, 3, 4]);
        assert.equal(cmd.placement?.replicas.length, 3);
        for (const list of cmd.placement.replicas)
            assert.equal(list.length, 3, 'the default factor is three');
    }
    const placements = [...sm.eventTypes()].flatMap((r) => r.storage.placement);
    assert.deepEqual(placements.map((p) => p.group), Array.from({ length: 15 }, (_, i) => i + 1));
    const replicaCount = (n) => placements.filter((p) => p.replicas.includes(n)).length;
    const leaderCount = (n) => placements.filter((p) => p.replicas[0] === n).length;
    assert.deepEqual([1, 2, 3, 4].map(replicaCount).sort(), [11, 11, 11, 12]);
    assert.deepEqual([1, 2, 3, 4].map(leaderCount).sort(), [3, 4, 4, 4]);
});
test('the configured factor is used, clamped to the members', async () => {
    const { proposed, svc } = service({ members: () => [1, 2], replicationFactor: 5, legacyReplica: 1 }, 2);
    await svc.create(createBody({ name: 'a' }));
    const cmd = proposed[0];
    assert.deepEqual(cmd.op === 'event_type.create' && cmd.placement, { replicas: [[1, 2], [2, 1]], members: [1, 2] });
});
test('without a members source the command carries no placement (the event type has the legacy layout)', async () => {
    const { proposed, svc, sm } = service(undefined);
    await svc.create(createBody({ name: 'a' }));
    assert.equal('placement' in proposed[0], false);
    assert.equal(sm.eventType('a').storage.placement, undefined);
});
test('a node that knows no members refuses with 503 and proposes nothing', async () => {
    const { proposed, svc } = service({ members: () => [], legacyReplica: 1 });
    await assert.rejects(svc.create(createBody({ name: 'a' })), (err) => isProblem(err) && err.status === 503);
    assert.equal(proposed.length, 0);
});
test('a create the state machine refused as invalid is an error, not a success', async () => {
    const { svc } = service({ members: () => [1], legacyReplica: 1 }, 1, { ok: false, reason: 'invalid', detail: 'Placement refused: members names a node twice' });
    await assert.rejects(svc.create(createBody({ name: 'a' })), (err) => isProblem(err) && err.status === 422 && /Placement refused/.test(err.detail ?? ''));
});
//# sourceMappingURL=event-type-service.test.js.map