// Goal: the choice of the replica that keeps its log when every replica of a partition is damaged
// (group-loss-choice.ts): the newest log by (last term, last index), placement order on a tie, or the
// one the operator names; refused while the healthy replicas are voters enough to elect a leader (one
// healthy of three is taken: two of three damaged are stuck alike), while one is silent or still
// learning its term floor, while a healthy one meets a move in flight, and for a named node that holds none.
// Method: the rule as a table, and a property: the chosen log is never older than another replica's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memberIdOf } from '../core/member-id.js';
import { groupLossChoice, newerLog, type GroupLossFacts, type ReplicaReport } from './group-loss-choice.js';

const damaged = (member: number, lastTerm: number, lastIndex: number): ReplicaReport => ({ member, answered: true, damaged: true, probing: false, lastTerm, lastIndex });
const three = { replicas: [1, 2, 3], learners: [] };
const all: GroupLossFacts = { placement: three, reports: [damaged(1, 4, 10), damaged(2, 5, 8), damaged(3, 5, 7)] };

test('the rule: which replica keeps its log, and when it is refused', () => {
  const m2 = memberIdOf(2, 1);
  const cases: [string, GroupLossFacts, { keep: number; rejoin: number[]; healthy?: boolean } | [404 | 409, RegExp]][] = [
    ['the newest last term wins over a longer log', all, { keep: 2, rejoin: [1, 3] }],
    ['the same last term: the longer log', { ...all, reports: [damaged(1, 5, 10), damaged(2, 5, 12), damaged(3, 5, 7)] }, { keep: 2, rejoin: [1, 3] }],
    ['a tie: the first in placement order', { ...all, reports: [damaged(1, 5, 9), damaged(2, 5, 9), damaged(3, 5, 9)] }, { keep: 1, rejoin: [2, 3] }],
    ['the operator names a node', { ...all, named: 3 }, { keep: 3, rejoin: [1, 2] }],
    ['a learner (a move in flight) is a replica too, and may be newest', { placement: { replicas: [1, 2, 3], learners: [4] }, reports: [...all.reports, damaged(4, 6, 3)] }, { keep: 4, rejoin: [1, 2, 3] }],
    ['a member of a later directory is named by its node', { placement: { replicas: [1, m2, 3], learners: [] }, reports: [damaged(1, 4, 10), damaged(m2, 3, 8), damaged(3, 5, 7)], named: 2 }, { keep: m2, rejoin: [1, 3] }],
    ['no partition has the group', { ...all, placement: undefined }, [404, /No partition is replicated by group 9/]],
    ['two replicas are healthy: they elect a leader', { ...all, reports: [damaged(1, 4, 10), { ...damaged(2, 5, 8), damaged: false }, { ...damaged(3, 5, 7), damaged: false }] }, [409, /not damaged \(on node 2, node 3\): enough to elect a leader/]],
    ['one healthy of three (two damaged): stuck, taken; the healthy one has the newest log', { ...all, reports: [damaged(1, 4, 10), { ...damaged(2, 5, 8), damaged: false }, damaged(3, 5, 7)] }, { keep: 2, rejoin: [1, 3], healthy: true }],
    ['one healthy of three, behind a damaged one: the newest log keeps, the healthy one rejoins', { ...all, reports: [damaged(1, 6, 10), { ...damaged(2, 5, 8), damaged: false }, damaged(3, 5, 7)] }, { keep: 1, rejoin: [2, 3] }],
    ['one healthy of three with a move in flight: refused', { ...all, moving: true, reports: [damaged(1, 4, 10), { ...damaged(2, 5, 8), damaged: false }, damaged(3, 5, 7)] }, [409, /a move is in flight/]],
    ['a healthy learner of a move and damaged voters: refused', { placement: { replicas: [1, 2, 3], learners: [4] }, reports: [...all.reports, { ...damaged(4, 6, 3), damaged: false }] }, [409, /a move is in flight/]],
    ['one replica did not answer', { ...all, reports: [damaged(1, 4, 10), { member: 2, answered: false }, damaged(3, 5, 7)] }, [409, /on node 2 did not answer/]],
    ['one replica has no report', { ...all, reports: [damaged(1, 4, 10), damaged(3, 5, 7)] }, [409, /on node 2 did not answer/]],
    ['one is learning its term floor', { ...all, reports: [damaged(1, 4, 10), { ...damaged(2, 5, 8), probing: true }, damaged(3, 5, 7)] }, [409, /node 2 are still learning their term floor/]],
    ['the named node holds none', { ...all, named: 7 }, [409, /Node 7 holds no replica of group 9; its replicas are on node 1, node 2, node 3/]],
  ];
  for (const [what, facts, want] of cases) {
    const v = groupLossChoice(9, facts);
    if (!Array.isArray(want)) assert.deepEqual(v, { allowed: true, healthy: false, ...want }, what);
    else {
      assert.ok(!v.allowed, what);
      assert.equal(v.status, want[0], what);
      assert.match(v.detail, want[1], what);
    }
  }
});

test('property: the chosen log is not older than any other replica\'s, and every other replica rejoins', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(5), fc.nat(20)), { minLength: 2, maxLength: 5 }), (logs) => {
      const members = logs.map((_, i) => i + 1);
      const v = groupLossChoice(1, { placement: { replicas: members, learners: [] }, reports: logs.map(([t, i], k) => damaged(k + 1, t, i)) });
      assert.ok(v.allowed);
      const [kt, ki] = logs[v.keep - 1]!;
      for (const [t, i] of logs) assert.ok(!newerLog(t, i, kt, ki));
      assert.deepEqual([...v.rejoin, v.keep].sort(), members);
    }),
  );
});
