// Goal: a leader hands its leadership back only to a caught-up, complete, answering preferred leader
// that is a voter and not leaving; an incomplete leader hands it to an able voter in the placement's
// order, and after a transfer that did not happen to the next able one, not the same again. Method:
// the pure rules on hand-made leader views.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noNode, type ProgressStatus } from '../raft/index.js';
import { handBackTo, handOffHeir, type LeaderView } from './leader-handoff-rule.js';

const pr = (match: number, more: Partial<ProgressStatus> = {}): ProgressStatus => ({ match, next: match + 1, state: 'replicate', isLearner: false, recentActive: true, incomplete: false, ...more });
const view = (progress: [number, ProgressStatus][], lastIndex = 10, leadTransferee = noNode): LeaderView => ({ progress: new Map(progress), lastIndex, leadTransferee });

test('leadership goes back to the preferred leader only when it is caught up and staying', () => {
  const st = view([[1, pr(10)], [2, pr(10)], [3, pr(10)]]);
  const at = (self: number, voters: number[], placement: Parameters<typeof handBackTo>[2], v = st) => handBackTo(self, voters, placement, () => v);
  assert.equal(at(2, [1, 2, 3], { replicas: [1, 2, 3] }), 1);
  assert.equal(at(1, [1, 2, 3], { replicas: [1, 2, 3] }), undefined, 'it leads itself');
  assert.equal(at(2, [2, 3], { replicas: [1, 2, 3] }), undefined, 'not a voter (a learner being added)');
  assert.equal(at(2, [1, 2, 3], { replicas: [1, 2, 3], moving: { from: 1 } }), undefined, 'a move takes the replica from it');
  assert.equal(at(2, [1, 2, 3], undefined), undefined, 'no placement');
  assert.equal(at(2, [1, 2, 3], { replicas: [1, 2, 3] }, view([[1, pr(9)]])), undefined, 'it lags');
  assert.equal(at(2, [1, 2, 3], { replicas: [1, 2, 3] }, view([[1, pr(10, { incomplete: true })]])), undefined, 'it is fetching its retained log');
  assert.equal(at(2, [1, 2, 3], { replicas: [1, 2, 3] }, view([[1, pr(10, { recentActive: false })]])), undefined, 'it does not answer');
  assert.equal(at(2, [1, 2, 3], { replicas: [1, 2, 3] }, view([[1, pr(10)]], 10, 3)), undefined, 'a transfer is in flight');
  assert.equal(at(2, [1, 2, 3], { replicas: [1, 2, 3] }, { progress: undefined, lastIndex: 10, leadTransferee: noNode }), undefined, 'not leader');
  // The leader's view is read only once the placement allows a transfer.
  assert.equal(handBackTo(1, [1, 2, 3], { replicas: [1, 2, 3] }, () => assert.fail('read')), undefined);
});

test('an incomplete leader hands off to an able voter, in the placement order, then the next one', () => {
  const st = view([[1, pr(10)], [2, pr(10)], [3, pr(10)], [4, pr(10)]]);
  assert.equal(handOffHeir(1, [1, 2, 3, 4], [3, 1, 2], st, undefined), 3, 'the placement order first');
  assert.equal(handOffHeir(1, [1, 2, 3, 4], [3, 1, 2], st, 3), 2, 'the next one after a transfer that did not happen');
  assert.equal(handOffHeir(1, [1, 2, 3, 4], [3, 1, 2], st, 2), 4, 'a voter the placement does not list comes last');
  assert.equal(handOffHeir(1, [1, 2, 3, 4], [3, 1, 2], st, 4), 3, 'round the list');
  assert.equal(handOffHeir(1, [1, 2, 3, 4], [3, 1, 2], st, 9), 3, 'a former heir no longer able');
  const some = view([[2, pr(10, { state: 'probe' })], [3, pr(9)], [4, pr(10, { incomplete: true })]]);
  assert.equal(handOffHeir(1, [1, 2, 3, 4], [1, 2, 3, 4], some, undefined), undefined, 'probing, lagging, incomplete: none able');
  assert.equal(handOffHeir(1, [1, 2], [1, 2], view([[2, pr(10)]], 10, 2), undefined), undefined, 'a transfer is in flight');
  assert.equal(handOffHeir(1, [1, 2, 3], [1, 2, 3], view([[2, pr(10)], [3, pr(10)]]), undefined), 2);
});
