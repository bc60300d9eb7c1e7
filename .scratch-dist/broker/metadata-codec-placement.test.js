// Goal: placement keeps the metadata bytes compatible: a snapshot image written before placement
// existed still decodes (its event types are legacy, the group counter starts at 1), an image with
// placements round-trips, and forwarded commands with placement fields are checked for their shape.
// Method: an image captured from the version before placement (main at 4e45473, made by encodeImage),
// decoded and extended; well-formed and malformed forwarded commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkForwardedCommand, decodeImage, encodeImage } from './metadata-codec.js';
import { placedPartitions } from '../metadata/placement-of.js';
import { legacyGroupId } from '../metadata/placement-types.js';
/** One event type with two partitions and a second timeline, and one deleted event type (topic 2). */
const imageBeforePlacement = '{"v":1,"commands":4,"state":{"blacklist":{"CONSUMER_APP":[],"CONSUMER_ET":[],"PRODUCER_APP":[],"PRODUCER_ET":[]},"storages":[],"eventTypes":[{"eventType":{"name":"orders","owning_application":"app","category":"business","enrichment_strategies":["metadata_enrichment"],"partition_strategy":"random","compatibility_mode":"forward","schema":{"type":"json_schema","schema":"{}","version":"1.0.0","created_at":"2026-11-01T00:00:00.000Z"},"options":{"retention_time":345600000},"created_at":"2026-11-01T00:00:00.000Z","updated_at":"2026-11-01T00:00:00.000Z"},"schemas":[{"type":"json_schema","schema":"{}","version":"1.0.0","created_at":"2026-11-01T00:00:00.000Z"}],"storage":{"topic":1,"partitions":["0","1"],"timeline":2,"timelines":[{"id":"00000000-0000-4000-8000-000000000001","order":1,"storage_id":"default","topic":1,"starts":[0,0],"created_at":"2026-11-01T00:00:00.000Z","switched_at":"2026-11-01T00:00:00.000Z"},{"id":"tl-2","order":2,"storage_id":"default","topic":3,"starts":[5,7],"created_at":"2026-11-02T00:00:00.000Z","switched_at":"2026-11-02T00:00:00.000Z"}]}}],"nextTopic":4,"features":{},"subscriptions":[],"runtimes":[]}}';
test('an image written before placement existed decodes: legacy placements, group ids from 1', () => {
    const sm = decodeImage(Buffer.from(imageBeforePlacement));
    assert.equal(sm.appliedIndex, 4);
    const placed = [...placedPartitions(sm.eventTypes(), 1)];
    assert.deepEqual(placed.map((p) => [p.topic, p.index, p.legacy, p.placement.group, p.placement.replicas]), [
        [1, 0, true, legacyGroupId(1, 0), [1]],
        [1, 1, true, legacyGroupId(1, 1), [1]],
        [3, 0, true, legacyGroupId(3, 0), [1]],
        [3, 1, true, legacyGroupId(3, 1), [1]],
    ]);
    const eventType = { ...sm.eventType('orders').eventType, name: 'fresh' };
    assert.deepEqual(sm.apply(5, { op: 'event_type.create', eventType, partitionCount: 1, placement: { replicas: [[1]], members: [1] } }), { ok: true });
    assert.deepEqual(sm.eventType('fresh').storage.placement, [{ group: 1, replicas: [1] }]);
    assert.equal(sm.eventType('fresh').storage.topic, 4, 'topic ids continue where the old image left them');
    const again = decodeImage(encodeImage(sm));
    assert.deepEqual(again.snapshot(), sm.snapshot());
    assert.equal(again.snapshot().nextGroup, 2);
    assert.equal(again.eventType('orders').storage.placement, undefined, 'legacy records stay as they were written');
});
const et = { name: 'a', schema: { type: 'json_schema', schema: '{}' }, updated_at: 't' };
const bytes = (v) => Buffer.from(JSON.stringify(v));
test('forwarded creates with a well-formed placement pass; malformed placements are refused', () => {
    const placement = { replicas: [[1, 2], [2, 1]], members: [1, 2] };
    assert.equal(checkForwardedCommand(bytes({ op: 'event_type.create', eventType: et, partitionCount: 2, placement })), undefined);
    assert.equal(checkForwardedCommand(bytes({ op: 'event_type.create', eventType: et, partitionCount: 2 })), undefined, 'no placement: legacy');
    const timeline = { op: 'timeline.create', eventType: 'a', id: 't', storage_id: 'default', starts: [0, 0], at: 't' };
    assert.equal(checkForwardedCommand(bytes({ ...timeline, placement })), undefined);
    for (const bad of [null, [], { replicas: [[1]] }, { replicas: [[1, 'x']], members: [1] }, { replicas: [[]], members: [1] }, { replicas: [[0]], members: [0] }, { replicas: [1], members: [1] }]) {
        assert.match(checkForwardedCommand(bytes({ op: 'event_type.create', eventType: et, partitionCount: 1, placement: bad })) ?? '', /malformed event_type.create/, JSON.stringify(bad));
        assert.match(checkForwardedCommand(bytes({ ...timeline, placement: bad })) ?? '', /malformed timeline.create/, JSON.stringify(bad));
    }
});
test('forwarded partition.move and partition.leader are checked for their shape', () => {
    assert.equal(checkForwardedCommand(bytes({ op: 'partition.move', group: 3, step: 'add_learner', from: 1, to: 4 })), undefined);
    assert.equal(checkForwardedCommand(bytes({ op: 'partition.leader', group: 3, leader: 2 })), undefined);
    const bad = [
        { op: 'partition.move', group: 3, step: 'teleport', from: 1, to: 4 },
        { op: 'partition.move', group: '3', step: 'promote', from: 1, to: 4 },
        { op: 'partition.move', group: 3, step: 'remove', from: 0, to: 4 },
        { op: 'partition.move', group: 3, step: 'cancel', from: 1 },
        { op: 'partition.leader', group: 3 },
        { op: 'partition.leader', group: 1.5, leader: 2 },
    ];
    for (const cmd of bad)
        assert.match(checkForwardedCommand(bytes(cmd)) ?? '', /malformed partition\./, JSON.stringify(cmd));
});
//# sourceMappingURL=metadata-codec-placement.test.js.map