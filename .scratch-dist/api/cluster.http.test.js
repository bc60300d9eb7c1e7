// Goal: GET /cluster names where every partition lives and how its Raft group is doing (issue 9:
// "the leader of a partition is a fact anyone can read").
// Method: a single node (one-member groups): after an event type with 3 partitions is created, every
// partition is listed with its group, this node as leader and only replica, and nothing is
// under-replicated; after a publish the group's commit and applied indexes have moved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestBroker } from '../testing/broker-harness.js';
test('GET /cluster lists every partition with its group, leader, replicas and indexes', async () => {
    const b = await startTestBroker({ nodeId: 4 });
    try {
        const created = await call(b.url, 'POST', '/event-types', {
            name: 'cluster.view',
            owning_application: 'test',
            category: 'undefined',
            partition_strategy: 'random',
            default_statistic: { messages_per_minute: 10, message_size: 10, read_parallelism: 3, write_parallelism: 3 },
            schema: { type: 'json_schema', schema: '{}' },
        });
        assert.equal(created.status, 201, created.text);
        const viewOf = async () => (await call(b.url, 'GET', '/cluster')).body;
        let view = await viewOf();
        for (let i = 0; i < 50 && view.partitions.some((p) => p.leader === null); i++) {
            await new Promise((r) => setTimeout(r, 20));
            view = await viewOf();
        }
        const mine = view.partitions.filter((p) => p.event_type === 'cluster.view');
        assert.deepEqual(mine.map((p) => p.partition), ['0', '1', '2']);
        assert.equal(new Set(mine.map((p) => p.group)).size, 3, 'one group per partition');
        for (const p of mine) {
            assert.equal(p.leader, 4);
            assert.deepEqual(p.replicas, [4]);
            assert.equal(p.under_replicated, false);
        }
        assert.equal(view.under_replicated_partitions, 0);
        assert.equal(view.leaderless_partitions, 0);
        const before = mine.map((p) => p.applied_index ?? 0);
        assert.equal((await call(b.url, 'POST', '/event-types/cluster.view/events', Array.from({ length: 30 }, (_, i) => ({ i })))).status, 200);
        const after = (await viewOf()).partitions.filter((p) => p.event_type === 'cluster.view');
        assert.ok(after.some((p, i) => (p.applied_index ?? 0) > before[i]), 'a publish moved the applied index of a group');
        for (const p of after)
            assert.equal(p.commit_index, p.applied_index, 'a group of one applies what it commits');
    }
    finally {
        await b.close();
    }
});
//# sourceMappingURL=cluster.http.test.js.map