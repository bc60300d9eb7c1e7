// Goal: the partitions read model of GET /cluster lists every partition of every log with its group,
// leader, replicas, learners, commit/applied and lag, and counts under-replicated (a voter missing or
// behind) and leaderless partitions correctly; learners never make a partition under-replicated.
// Method: examples over placed records (legacy and placed, with a timeline), and a fast-check property
// against a naive restatement of the rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memberIdOf } from '../core/member-id.js';
import { clusterPartitions, inSyncLagEntriesDefault, type GroupFacts, type ReplicaFacts } from './cluster-partitions.js';
import { placedPartitions, type PlacedPartition } from './placement-of.js';
import { legacyGroupId } from './placement-types.js';
import type { EventType, EventTypeRecord } from './types.js';

function record(name: string, topic: number, partitions: number): EventTypeRecord {
  return { eventType: { name, created_at: 't0' } as EventType, schemas: [], storage: { topic, partitions: Array.from({ length: partitions }, (_, i) => String(i)), timeline: 1 } };
}

const facts = (leader: number | null, term: number, replicas: [number, ReplicaFacts][]): GroupFacts => ({ leader, term, replicas: new Map(replicas) });

test('healthy groups: leader, term, commit/applied, lag; nothing under-replicated', () => {
  const rec = record('orders', 1, 2);
  rec.storage.placement = [{ group: 1, replicas: [1, 2, 3] }, { group: 2, replicas: [2, 3, 1], learners: [4], moving: { from: 1, to: 4 } }];
  const view = clusterPartitions(placedPartitions([rec], 1), new Map([
    [1, facts(1, 3, [[1, { commit: 100, applied: 100 }], [2, { commit: 100, applied: 98 }], [3, { commit: 99, applied: 97 }]])],
    [2, facts(3, 5, [[1, { commit: 50, applied: 50 }], [2, { commit: 50, applied: 50 }], [3, { commit: 50, applied: 49 }]])],
  ]));
  assert.equal(view.under_replicated_partitions, 0);
  assert.equal(view.leaderless_partitions, 0);
  const [p0, p1] = view.partitions;
  assert.deepEqual({ ...p0!, replica_status: undefined }, {
    event_type: 'orders', partition: '0', topic: 1, group: 1, leader: 1, leader_node: 1, term: 3, preferred_leader: 1, preferred_leader_node: 1, replicas: [1, 2, 3], replica_nodes: [1, 2, 3], learners: [], learner_nodes: [], moving: null,
    commit_index: 100, applied_index: 97, lag: 3, under_replicated: false, incomplete_replicas: [], replica_status: undefined,
  });
  assert.deepEqual(p0!.replica_status.map((r) => [r.node, r.role, r.lag, r.in_sync]), [[1, 'voter', 0, true], [2, 'voter', 2, true], [3, 'voter', 3, true]]);
  assert.equal(p1!.preferred_leader, 2);
  assert.deepEqual(p1!.learners, [4]);
  assert.deepEqual(p1!.replica_status.at(-1), { node: 4, member: 4, incarnation: 0, role: 'learner', commit_index: null, applied_index: null, lag: null, in_sync: false, incomplete: null });
  assert.deepEqual(p1!.moving, { from: 1, to: 4, from_node: 1, to_node: 4 });
  assert.equal(p1!.under_replicated, false, 'a learner that has not caught up does not make the partition under-replicated');
});

test('members of wiped directories (incarnation > 0) are shown with their node and incarnation beside the raw member id', () => {
  const rec = record('orders', 1, 1);
  const m3 = memberIdOf(3, 17);
  const m2 = memberIdOf(2, 5);
  rec.storage.placement = [{ group: 1, replicas: [m3, 1, 2], learners: [m2], moving: { from: 2, to: m2 } }];
  const p = clusterPartitions(placedPartitions([rec], 1), new Map([[1, facts(m3, 4, [[m3, { commit: 10, applied: 10 }], [1, { commit: 10, applied: 9 }]])]])).partitions[0]!;
  assert.ok(m3 >= 2 ** 31, 'a member id an operator does not read as a node');
  assert.deepEqual([p.leader, p.leader_node, p.preferred_leader, p.preferred_leader_node], [m3, 3, m3, 3]);
  assert.deepEqual([p.replicas, p.replica_nodes, p.learners, p.learner_nodes], [[m3, 1, 2], [3, 1, 2], [m2], [2]]);
  assert.deepEqual(p.moving, { from: 2, to: m2, from_node: 2, to_node: 2 });
  assert.deepEqual(p.replica_status.map((r) => [r.node, r.incarnation, r.member, r.role, r.applied_index]), [[3, 17, m3, 'voter', 10], [1, 0, 1, 'voter', 9], [2, 0, 2, 'voter', null], [2, 5, m2, 'learner', null]]);
});

test('a voter that reported nothing or trails by more than the bound makes the partition under-replicated', () => {
  const rec = record('orders', 1, 3);
  rec.storage.placement = [{ group: 1, replicas: [1, 2] }, { group: 2, replicas: [1, 2] }, { group: 3, replicas: [1, 2] }];
  const view = clusterPartitions(placedPartitions([rec], 1), new Map([
    [1, facts(1, 1, [[1, { commit: 10, applied: 10 }]])],
    [2, facts(1, 1, [[1, { commit: 5000, applied: 5000 }], [2, { commit: 5000, applied: 3999 }]])],
    [3, facts(1, 1, [[1, { commit: 5000, applied: 5000 }], [2, { commit: 5000, applied: 4000 }]])],
  ]));
  assert.deepEqual(view.partitions.map((p) => p.under_replicated), [true, true, false]);
  assert.equal(view.under_replicated_partitions, 2);
  assert.equal(view.partitions[1]!.lag, inSyncLagEntriesDefault + 1);
  assert.equal(clusterPartitions(placedPartitions([rec], 1), new Map([[2, facts(1, 1, [[1, { commit: 9, applied: 9 }], [2, { commit: 9, applied: 7 }]])]]), 1).partitions[1]!.under_replicated, true, 'the bound is a parameter');
});

test('no facts: leaderless and under-replicated; a leader that did not report leaves the highest reported commit', () => {
  const legacy = record('old', 4, 1);
  const view = clusterPartitions(placedPartitions([legacy], 7), new Map());
  assert.deepEqual(view.partitions, [{
    event_type: 'old', partition: '0', topic: 4, group: legacyGroupId(4, 0), leader: null, leader_node: null, term: null, preferred_leader: 7, preferred_leader_node: 7, replicas: [7], replica_nodes: [7], learners: [], learner_nodes: [], moving: null,
    commit_index: null, applied_index: null, lag: null, under_replicated: true, incomplete_replicas: [],
    replica_status: [{ node: 7, member: 7, incarnation: 0, role: 'voter', commit_index: null, applied_index: null, lag: null, in_sync: false, incomplete: null }],
  }]);
  assert.equal(view.leaderless_partitions, 1);
  assert.equal(view.under_replicated_partitions, 1);
  const rec = record('orders', 1, 1);
  rec.storage.placement = [{ group: 1, replicas: [1, 2, 3] }];
  const p = clusterPartitions(placedPartitions([rec], 1), new Map([[1, facts(3, 2, [[1, { commit: 8, applied: 8 }], [2, { commit: 9, applied: 6 }]])]])).partitions[0]!;
  assert.equal(p.commit_index, 9);
  assert.equal(p.lag, 3);
  assert.equal(p.under_replicated, true, 'the leader itself reported nothing');
});

test('every log of an event type is listed: partitions of later timelines too', () => {
  const rec = record('orders', 1, 1);
  rec.storage.placement = [{ group: 1, replicas: [1] }];
  rec.storage.timelines = [
    { id: 'a', order: 1, storage_id: 'default', topic: 1, starts: [0], created_at: 't', switched_at: 't' },
    { id: 'b', order: 2, storage_id: 'default', topic: 5, starts: [9], created_at: 't', switched_at: 't', placement: [{ group: 8, replicas: [2] }] },
  ];
  const view = clusterPartitions(placedPartitions([rec], 1), new Map());
  assert.deepEqual(view.partitions.map((p) => [p.topic, p.group, p.replicas]), [[1, 1, [1]], [5, 8, [2]]]);
});

test('property: the counts match a naive restatement of the rules', () => {
  const group = fc.record({
    voters: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 }),
    leader: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
    reports: fc.array(fc.record({ node: fc.integer({ min: 1, max: 5 }), commit: fc.nat(100), behind: fc.nat(30) }), { maxLength: 5 }),
  });
  fc.assert(
    fc.property(fc.array(group, { minLength: 1, maxLength: 8 }), fc.nat(20), (groups, lagMax) => {
      const placed: PlacedPartition[] = groups.map((g, i) => ({ event_type: 'e', partition: String(i), index: i, topic: 1, legacy: false, placement: { group: i + 1, replicas: g.voters } }));
      const facts = new Map(groups.map((g, i) => [i + 1, { leader: g.leader, term: 1, replicas: new Map(g.reports.map((r) => [r.node, { commit: r.commit, applied: Math.max(0, r.commit - r.behind) }])) }]));
      const view = clusterPartitions(placed, facts, lagMax);
      let under = 0;
      for (const [i, g] of groups.entries()) {
        const reported = facts.get(i + 1)!.replicas;
        const commit = g.leader !== null && reported.has(g.leader) ? reported.get(g.leader)!.commit : Math.max(-1, ...[...reported.values()].map((r) => r.commit));
        if (g.voters.some((v) => !reported.has(v) || commit - reported.get(v)!.applied > lagMax)) under++;
      }
      assert.equal(view.under_replicated_partitions, under);
      assert.equal(view.leaderless_partitions, groups.filter((g) => g.leader === null).length);
    }),
    { numRuns: 300 },
  );
});

test('facts from a follower (partial): replicas it does not know are not counted as out of sync, a lagging one it knows is', () => {
  const r = record('a', 1, 1);
  r.storage.placement = [{ group: 1, replicas: [1, 2, 3] }];
  const placed = [...placedPartitions([r], 1)];
  const follower = clusterPartitions(placed, new Map([[1, { leader: 2, term: 4, replicas: new Map([[3, { commit: 10, applied: 10 }]]), partial: true }]]));
  assert.equal(follower.under_replicated_partitions, 0);
  assert.equal(follower.partitions[0]!.replica_status.find((r) => r.node === 1)!.in_sync, true);
  const full = clusterPartitions(placed, new Map([[1, { leader: 2, term: 4, replicas: new Map([[3, { commit: 10, applied: 10 }]]) }]]));
  assert.equal(full.under_replicated_partitions, 1, 'from the leader, a replica that reported nothing is out of sync');
  const lagging = clusterPartitions(placed, new Map([[1, { leader: 2, term: 4, replicas: new Map([[3, { commit: 5000, applied: 10 }]]), partial: true }]]));
  assert.equal(lagging.under_replicated_partitions, 1);
});

test('incomplete replicas (still fetching the retained log before their snapshot) are shown per replica and per partition, and counted; unknown is null; they do not make a partition under-replicated', () => {
  const rec = record('orders', 1, 3);
  rec.storage.placement = [{ group: 1, replicas: [1, 2, 3] }, { group: 2, replicas: [1, 2], learners: [3] }, { group: 3, replicas: [1, 2, 3] }];
  const view = clusterPartitions(placedPartitions([rec], 1), new Map([
    [1, facts(1, 2, [[1, { commit: 50, applied: 50, incomplete: false }], [2, { commit: 50, applied: 50, incomplete: true }], [3, { commit: 50, applied: 50, incomplete: false }]])],
    [2, facts(1, 2, [[1, { commit: 50, applied: 50, incomplete: false }], [2, { commit: 50, applied: 50, incomplete: false }], [3, { commit: 40, applied: 40, incomplete: true }]])],
    // A follower's view: it knows only itself.
    [3, { leader: 2, term: 2, replicas: new Map([[1, { commit: 50, applied: 50, incomplete: false }]]), partial: true }],
  ]));
  assert.deepEqual(view.partitions.map((p) => p.incomplete_replicas), [[2], [3], []]);
  assert.deepEqual(view.partitions.map((p) => p.replica_status.map((r) => r.incomplete)), [[false, true, false], [false, false, true], [false, null, null]]);
  assert.deepEqual(view.partitions.map((p) => p.under_replicated), [false, false, false], 'an incomplete replica holds the Raft log: in sync by its lag alone');
  assert.equal(view.incomplete_partitions, 2);
  assert.equal(clusterPartitions(placedPartitions([rec], 1), new Map()).incomplete_partitions, 0);
});
