// Goal: the metadata leader's replacement plan takes one change at a time in the order learner,
// removal of the former member, promotion once caught up; resumes from any configuration on the way
// (a new leader, a crash); never removes the leader itself; never adds a node that had no member; and,
// carried out step by step from any starting point, keeps at most one voter fewer than it started
// with and ends with the new member voting in place of the former one.
// Method: example steps, and fast-check over starting configurations and registrations, applying each
// proposed change to the configuration until the plan goes idle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { memberIdOf } from '../core/member-id.js';
import { nextReplacement, type MemberProgress, type ReplacementView } from './member-replacement.js';

const M = memberIdOf(3, 9);
const live = (match: number): MemberProgress => ({ match, recentActive: true, state: 'replicate' });

function view(voters: number[], learners: number[], over: Partial<ReplacementView> = {}): ReplacementView {
  const all = [...voters, ...learners];
  return { self: 1, conf: { voters, learners }, registrations: [{ node: 3, member: M }], progress: new Map(all.map((id) => [id, live(100)])), commit: 100, ...over };
}

test('the steps: learner, removal of the former member, promotion once caught up, then nothing', () => {
  assert.deepEqual(nextReplacement(view([1, 2, 3], [])).kind === 'confChange' && (nextReplacement(view([1, 2, 3], [])) as { change: unknown }).change, { type: 'addLearner', nodeId: M });
  const remove = nextReplacement(view([1, 2, 3], [M]));
  assert.ok(remove.kind === 'confChange');
  assert.deepEqual(remove.change, { type: 'removeNode', nodeId: 3 });
  const behind = nextReplacement(view([1, 2], [M], { progress: new Map([[1, live(100)], [2, live(100)], [M, { match: 10, recentActive: true, state: 'replicate' }]]) }));
  assert.equal(behind.kind, 'wait');
  const probing = nextReplacement(view([1, 2], [M], { progress: new Map([[1, live(100)], [2, live(100)], [M, { match: 100, recentActive: true, state: 'snapshot' }]]) }));
  assert.equal(probing.kind, 'wait');
  const promote = nextReplacement(view([1, 2], [M]));
  assert.ok(promote.kind === 'confChange');
  assert.deepEqual(promote.change, { type: 'addVoter', nodeId: M });
  assert.equal(nextReplacement(view([1, 2, M], [])).kind, 'idle');
});

test('nothing is done for a node without a member, a registration without one, or the leader itself', () => {
  assert.equal(nextReplacement(view([1, 2], [])).kind, 'idle', 'a node that was never a member is not added');
  assert.equal(nextReplacement(view([1, 2, 3], [], { registrations: [{ node: 3 }] })).kind, 'idle');
  const selfFormer = nextReplacement(view([1, 2, 3], [M], { self: 3 }));
  assert.equal(selfFormer.kind, 'wait');
});

test('from any configuration on the way, step by step: one voter fewer at most, and the new member votes in the end', () => {
  const former = fc.constantFrom(3, memberIdOf(3, 4));
  fc.assert(
    fc.property(former, fc.boolean(), fc.constantFrom('none', 'learner', 'voter'), fc.boolean(), (old, oldVotes, newState, oldPresent) => {
      const voters = [1, 2];
      const learners: number[] = [];
      if (oldPresent) (oldVotes ? voters : learners).push(old);
      if (newState === 'voter') voters.push(M);
      if (newState === 'learner') learners.push(M);
      if (!oldPresent && newState === 'none') return; // no member on the node: nothing to do (checked above)
      let conf = { voters: [...voters].sort((a, b) => a - b), learners: [...learners] };
      const startVoters = conf.voters.length;
      for (let step = 0; step < 10; step++) {
        const a = nextReplacement({ self: 1, conf, registrations: [{ node: 3, member: M }], progress: new Map([...conf.voters, ...conf.learners].map((id) => [id, live(100)])), commit: 100 });
        if (a.kind !== 'confChange') {
          assert.equal(a.kind, 'idle');
          break;
        }
        const id = a.change.nodeId;
        const v = conf.voters.filter((x) => x !== id);
        const l = conf.learners.filter((x) => x !== id);
        if (a.change.type === 'addVoter') v.push(id);
        if (a.change.type === 'addLearner') l.push(id);
        conf = { voters: v.sort((x, y) => x - y), learners: l };
        assert.ok(conf.voters.length >= Math.min(startVoters, 3) - 1, `voters ${conf.voters.join(',')}`);
      }
      assert.deepEqual(conf, { voters: [1, 2, M], learners: [] });
    }),
  );
});
