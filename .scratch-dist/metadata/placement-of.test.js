// Goal: placementOf answers for every log of an event type: the stored placement where there is one,
// and for records written before placement existed a derived one (the legacy replica alone, a group id
// from (topic, partition) outside the allocated range, the same on every call).
// Method: examples over records with and without placement and timelines, and fast-check properties
// for the legacy group id (a bijection into its own range) and for placedPartitions' coverage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { placedPartitions, placementOf, withTopicPlacement } from './placement-of.js';
import { groupIdAllocatedMax, legacyGroupId, legacyGroupIdBase, legacyGroupParts } from './placement-types.js';
function record(topic, partitions) {
    return {
        eventType: { name: 'orders', created_at: 't0' },
        schemas: [],
        storage: { topic, partitions: Array.from({ length: partitions }, (_, i) => String(i)), timeline: 1 },
    };
}
function timeline(topic, order, partitions, placed) {
    const t = { id: `t${order}`, order, storage_id: 'default', topic, starts: Array(partitions).fill(0), created_at: 't', switched_at: 't' };
    if (placed)
        t.placement = Array.from({ length: partitions }, (_, i) => ({ group: 100 + topic * 10 + i, replicas: [2, 3] }));
    return t;
}
test('a legacy record: one replica (the legacy node), a derived group per partition, stable', () => {
    const rec = record(7, 3);
    const p = placementOf(rec, 7, 2, 5);
    assert.deepEqual(p, { group: legacyGroupId(7, 2), replicas: [5] });
    assert.deepEqual(placementOf(rec, 7, 2, 5), p);
    assert.ok(p.group > groupIdAllocatedMax);
    assert.notEqual(placementOf(rec, 7, 1, 5).group, p.group);
});
test('stored placements are answered as stored; the first timeline\'s lives on the storage, later ones on their timeline', () => {
    const rec = record(7, 2);
    rec.storage.placement = [{ group: 1, replicas: [1, 2] }, { group: 2, replicas: [2, 1] }];
    rec.storage.timelines = [{ ...timeline(7, 1, 2, false) }, timeline(9, 2, 2, true), timeline(11, 3, 2, false)];
    assert.deepEqual(placementOf(rec, 7, 1, 5), { group: 2, replicas: [2, 1] });
    assert.deepEqual(placementOf(rec, 9, 0, 5), { group: 190, replicas: [2, 3] });
    assert.deepEqual(placementOf(rec, 11, 1, 5), { group: legacyGroupId(11, 1), replicas: [5] }, 'a timeline without placement is legacy');
    assert.throws(() => placementOf(rec, 8, 0, 5), /not a log/);
    assert.throws(() => placementOf(rec, 7, 2, 5), /out of range/);
    const all = [...placedPartitions([rec], 5)];
    assert.deepEqual(all.map((p) => [p.topic, p.partition, p.legacy, p.placement.group]), [
        [7, '0', false, 1], [7, '1', false, 2],
        [9, '0', false, 190], [9, '1', false, 191],
        [11, '0', true, legacyGroupId(11, 0)], [11, '1', true, legacyGroupId(11, 1)],
    ]);
});
test('a legacy record after its first timeline switch: the implicit first timeline stays legacy', () => {
    const rec = record(3, 1);
    rec.storage.timelines = [timeline(3, 1, 1, false), timeline(4, 2, 1, true)];
    assert.deepEqual(placementOf(rec, 3, 0, 1), { group: legacyGroupId(3, 0), replicas: [1] });
    const placed = withTopicPlacement(rec, 3, [{ group: legacyGroupId(3, 0), replicas: [2] }]);
    assert.deepEqual(placementOf(placed, 3, 0, 1), { group: legacyGroupId(3, 0), replicas: [2] });
    assert.equal(rec.storage.placement, undefined, 'withTopicPlacement copies');
    const later = withTopicPlacement(rec, 4, [{ group: 50, replicas: [3] }]);
    assert.deepEqual(placementOf(later, 4, 0, 1), { group: 50, replicas: [3] });
    assert.equal(rec.storage.timelines[1].placement[0].group, 140);
});
test('property: legacy group ids are distinct u32s above the allocated range and decode back', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 21 - 1 }), fc.integer({ min: 0, max: 1023 }), fc.integer({ min: 1, max: 2 ** 21 - 1 }), fc.integer({ min: 0, max: 1023 }), (t1, p1, t2, p2) => {
        const g1 = legacyGroupId(t1, p1);
        assert.ok(g1 >= legacyGroupIdBase && g1 < 2 ** 32);
        assert.deepEqual(legacyGroupParts(g1), { topic: t1, index: p1 });
        if (t1 !== t2 || p1 !== p2)
            assert.notEqual(g1, legacyGroupId(t2, p2));
    }));
    assert.equal(legacyGroupParts(groupIdAllocatedMax), undefined);
    assert.equal(legacyGroupParts(2 ** 32), undefined);
    assert.throws(() => legacyGroupId(2 ** 21, 0), /out of range/);
    assert.throws(() => legacyGroupId(1, 1024), /out of range/);
});
//# sourceMappingURL=placement-of.test.js.map