// Goal: the partition leader's move steps come in the order the design needs (learner, promotion only
// once caught up, leadership away from the leaving node, removal, then the metadata record), resume
// from any point (a new leader, a stale view), and never remove a voter without a move in flight.
// Method: examples, plus a property that walks a move through a simulated group and metadata, taking
// the planned action each round with crashes of the view in between, and checks the safety rules at
// every step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { caughtUp, nextMoveAction, promoteLagEntriesMax, type MoveProgress, type MoveView } from './replica-move-plan.js';

const live = (match: number): MoveProgress => ({ match, recentActive: true, state: 'replicate' });

function view(v: Partial<MoveView> & Pick<MoveView, 'placement' | 'conf'>): MoveView {
  const members = [...v.conf.voters, ...v.conf.learners];
  return { self: 1, commit: 100, leadTransferee: 0, progress: new Map(members.map((n) => [n, live(100)])), ...v };
}

const moving = { from: 1, to: 4 };

test('a follower plans nothing', () => {
  assert.deepEqual(nextMoveAction({ ...view({ placement: { replicas: [1, 2, 3], learners: [4], moving }, conf: { voters: [1, 2, 3], learners: [] } }), progress: undefined }), { kind: 'idle' });
});

test('the steps of a move, in order, as the leader (node 2) sees them', () => {
  const self = 2;
  const steps: [MoveView['placement'], MoveView['conf'], unknown][] = [
    [{ replicas: [1, 2, 3], learners: [4], moving }, { voters: [1, 2, 3], learners: [] }, { kind: 'confChange', change: { type: 'addLearner', nodeId: 4 } }],
    [{ replicas: [1, 2, 3], learners: [4], moving }, { voters: [1, 2, 3], learners: [4] }, { kind: 'record', step: 'promote', from: 1, to: 4 }],
    [{ replicas: [1, 2, 3, 4], moving }, { voters: [1, 2, 3], learners: [4] }, { kind: 'confChange', change: { type: 'addVoter', nodeId: 4 } }],
    [{ replicas: [1, 2, 3, 4], moving }, { voters: [1, 2, 3, 4], learners: [] }, { kind: 'confChange', change: { type: 'removeNode', nodeId: 1 } }],
    [{ replicas: [1, 2, 3, 4], moving }, { voters: [2, 3, 4], learners: [] }, { kind: 'record', step: 'remove', from: 1, to: 4 }],
    [{ replicas: [4, 2, 3] }, { voters: [2, 3, 4], learners: [] }, { kind: 'idle' }],
  ];
  for (const [placement, conf, want] of steps) assert.deepEqual(nextMoveAction(view({ self, placement, conf })), want, JSON.stringify({ placement, conf }));
});

test('a learner is promoted only once caught up: behind, silent, probed, or still fetching the retained log before its snapshot, it waits (in metadata and in the group)', () => {
  for (const placement of [{ replicas: [1, 2, 3], learners: [4], moving }, { replicas: [1, 2, 3, 4], moving }]) {
    const conf = { voters: [1, 2, 3], learners: [4] };
    const base = view({ self: 2, placement, conf });
    const withLearner = (p: MoveProgress) => ({ ...base, progress: new Map([...base.progress!, [4, p]]) });
    for (const p of [live(0), live(100 - promoteLagEntriesMax - 1), { ...live(100), recentActive: false }, { ...live(100), state: 'snapshot' as const }, { ...live(100), state: 'probe' as const }, { ...live(100), incomplete: true }]) {
      assert.equal(nextMoveAction(withLearner(p)).kind, 'wait', JSON.stringify(p));
    }
    assert.notEqual(nextMoveAction(withLearner(live(100 - promoteLagEntriesMax))).kind, 'wait', 'within the lag allowed');
    assert.notEqual(nextMoveAction({ ...base, progress: new Map([...base.progress!].filter(([n]) => n !== 4)) }).kind, 'record', 'no progress known: not caught up');
  }
});

test('a learner is promoted only once it holds an entry of the leader\'s term: a match reached through a snapshot of older entries leaves it damaged (no vote) and it waits', () => {
  // The leader's term began at 58 (its election no-op); the learner installed a snapshot at 54 of an
  // older term and is within the lag allowed of the commit index, but holds nothing of this term.
  const conf = { voters: [1, 2, 3], learners: [4] };
  for (const placement of [{ replicas: [1, 2, 3], learners: [4], moving }, { replicas: [1, 2, 3, 4], moving }]) {
    const base = view({ self: 2, placement, conf, commit: 58, termStart: 58 });
    const withLearner = (match: number) => ({ ...base, progress: new Map([...base.progress!, [4, live(match)]]) });
    assert.equal(nextMoveAction(withLearner(54)).kind, 'wait', 'a snapshot of older entries is not enough');
    assert.equal(caughtUp(withLearner(57), 4), false);
    assert.equal(caughtUp(withLearner(58), 4), true, 'holds the term\'s first entry');
    assert.notEqual(nextMoveAction(withLearner(58)).kind, 'wait');
  }
});

test('the leaving node hands leadership to a caught-up voter first (the new one preferred), and never removes itself', () => {
  const placement = { replicas: [1, 2, 3, 4], moving };
  const conf = { voters: [1, 2, 3, 4], learners: [] };
  assert.deepEqual(nextMoveAction(view({ self: 1, placement, conf })), { kind: 'transfer', to: 4 });
  const lagging4 = view({ self: 1, placement, conf });
  const p = new Map(lagging4.progress!);
  p.set(4, live(90));
  assert.deepEqual(nextMoveAction({ ...lagging4, progress: p }), { kind: 'transfer', to: 2 }, 'a voter that holds everything');
  p.set(2, { ...live(100), incomplete: true });
  assert.deepEqual(nextMoveAction({ ...lagging4, progress: p }), { kind: 'transfer', to: 3 }, 'not to a voter still fetching the retained log');
  for (const n of [2, 3, 4]) p.set(n, { ...live(100), recentActive: false });
  assert.equal(nextMoveAction({ ...lagging4, progress: p }).kind, 'wait');
  assert.equal(nextMoveAction(view({ self: 1, placement, conf, leadTransferee: 4 })).kind, 'wait', 'a transfer under way');
});

test('a stale view waits or repeats a harmless step; voters are removed only for a move in flight', () => {
  // The group promoted node 4 but this leader's metadata has not applied the promotion.
  assert.equal(nextMoveAction(view({ self: 2, placement: { replicas: [1, 2, 3], learners: [4], moving }, conf: { voters: [1, 2, 3, 4], learners: [] } })).kind, 'wait');
  // No move in flight (stale or finished): a voter outside the placement stays.
  assert.deepEqual(nextMoveAction(view({ self: 2, placement: { replicas: [1, 2, 3] }, conf: { voters: [1, 2, 3, 4], learners: [] } })), { kind: 'idle' });
  // A cancelled move leaves a learner: removed.
  assert.deepEqual(nextMoveAction(view({ self: 2, placement: { replicas: [1, 2, 3] }, conf: { voters: [1, 2, 3], learners: [4] } })), { kind: 'confChange', change: { type: 'removeNode', nodeId: 4 } });
  // A leader that restarts the move after the group lost the learner adds it again, then promotes.
  assert.deepEqual(nextMoveAction(view({ self: 2, placement: { replicas: [1, 2, 3, 4], moving }, conf: { voters: [1, 2, 3], learners: [] } })), { kind: 'confChange', change: { type: 'addLearner', nodeId: 4 } });
});

test('caughtUp needs progress, activity and streaming', () => {
  const v = view({ placement: { replicas: [1] }, conf: { voters: [1], learners: [4] } });
  assert.equal(caughtUp(v, 4), true);
  assert.equal(caughtUp(v, 9), false);
});

test('a replacement removes the former member (nobody runs it) before it adds the new one, so that the group never needs the new member beside its three live ones', () => {
  const self = 2;
  const former = (n: number) => n === 1;
  const steps: [MoveView['placement'], MoveView['conf'], unknown][] = [
    [{ replicas: [1, 2, 3], learners: [4], moving }, { voters: [1, 2, 3], learners: [] }, { kind: 'confChange', change: { type: 'removeNode', nodeId: 1 } }],
    [{ replicas: [1, 2, 3], learners: [4], moving }, { voters: [2, 3], learners: [] }, { kind: 'confChange', change: { type: 'addLearner', nodeId: 4 } }],
    // Added as a learner before the removal (a leader of before this rule): the former member goes first too.
    [{ replicas: [1, 2, 3], learners: [4], moving }, { voters: [1, 2, 3], learners: [4] }, { kind: 'confChange', change: { type: 'removeNode', nodeId: 1 } }],
    [{ replicas: [1, 2, 3], learners: [4], moving }, { voters: [2, 3], learners: [4] }, { kind: 'record', step: 'promote', from: 1, to: 4 }],
    [{ replicas: [1, 2, 3, 4], moving }, { voters: [2, 3], learners: [4] }, { kind: 'confChange', change: { type: 'addVoter', nodeId: 4 } }],
    // Promoted before the removal (a leader of before this rule): it goes now.
    [{ replicas: [1, 2, 3, 4], moving }, { voters: [1, 2, 3, 4], learners: [] }, { kind: 'confChange', change: { type: 'removeNode', nodeId: 1 } }],
    [{ replicas: [1, 2, 3, 4], moving }, { voters: [2, 3, 4], learners: [] }, { kind: 'record', step: 'remove', from: 1, to: 4 }],
  ];
  for (const [placement, conf, want] of steps) {
    const v = view({ self, placement, conf });
    const progress = new Map(v.progress!);
    if (progress.has(1)) progress.set(1, { match: 10, recentActive: false, state: 'probe' });
    assert.deepEqual(nextMoveAction({ ...v, progress, former }), want, JSON.stringify({ placement, conf }));
  }
  // A live member leaving is removed only after the new one votes (the steps above, without `former`).
  assert.deepEqual(nextMoveAction(view({ self, placement: { replicas: [1, 2, 3], learners: [4], moving }, conf: { voters: [1, 2, 3], learners: [] } })), { kind: 'confChange', change: { type: 'addLearner', nodeId: 4 } });
});

test('a new member wiped after the metadata recorded its promotion is passed over: the move finishes without it, and its replacement follows', () => {
  const former = (n: number) => n === 4;
  const placement = { replicas: [1, 2, 3, 4], moving };
  const dead = { match: 10, recentActive: false, state: 'probe' as const };
  const at = (self: number, conf: MoveView['conf']) => {
    const v = view({ self, placement, conf });
    const progress = new Map(v.progress!);
    if (progress.has(4)) progress.set(4, dead);
    return { ...v, progress, former };
  };
  // Still a learner in the group: never made a voter; the leaving member goes.
  assert.deepEqual(nextMoveAction(at(2, { voters: [1, 2, 3], learners: [4] })), { kind: 'confChange', change: { type: 'removeNode', nodeId: 1 } });
  assert.deepEqual(nextMoveAction(at(1, { voters: [1, 2, 3], learners: [4] })), { kind: 'transfer', to: 2 }, 'the leaving leader hands over to a live voter');
  assert.deepEqual(nextMoveAction(at(2, { voters: [2, 3], learners: [4] })), { kind: 'record', step: 'remove', from: 1, to: 4 });
  // Not in the group at all (a new leader found it removed): not added again.
  assert.deepEqual(nextMoveAction(at(2, { voters: [2, 3], learners: [] })), { kind: 'record', step: 'remove', from: 1, to: 4 });
  // A voter already: the move goes on as before.
  assert.deepEqual(nextMoveAction(at(2, { voters: [1, 2, 3, 4], learners: [] })), { kind: 'confChange', change: { type: 'removeNode', nodeId: 1 } });
  // Not promoted: it waits (the replacement cancels the move).
  const unpromoted = { ...at(2, { voters: [1, 2, 3], learners: [4] }), placement: { replicas: [1, 2, 3], learners: [4], moving } };
  assert.equal(nextMoveAction(unpromoted).kind, 'wait');
});

// A move walked through a model of the group and the metadata: each round a random member leads (with
// progress that may lag), the planned action is taken if the model allows it, and the rules hold.
// Three kinds of move: an operator's (every member live); a replacement (the member leaving, 1, is a
// former one: its node's directory was wiped, and nobody runs it); and an operator's move whose new
// member, 4, is wiped at a random round after the metadata recorded its promotion.
test('property: any interleaving of leaders and lag walks the move to its end and keeps the rules', () => {
  fc.assert(
    fc.property(
      fc.constantFrom('plain', 'formerFrom', 'wipeTo'),
      fc.integer({ min: 0, max: 60 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 60 }),
      (mode, wipeRound, rounds) => {
        let placement: { replicas: number[]; learners?: number[]; moving?: { from: number; to: number } } = { replicas: [1, 2, 3], learners: [4], moving };
        let conf = { voters: [1, 2, 3], learners: [] as number[] };
        const gone = new Set<number>(mode === 'formerFrom' ? [1] : []);
        const former = (n: number) => gone.has(n);
        let dropped = false;
        let leader = 1;
        let heir: number | undefined;
        let round = 0;
        for (const [pick, learnerCaughtUp, everyoneActive] of [...rounds, ...Array.from({ length: 12 }, () => [0, true, true] as const)]) {
          if (mode === 'wipeTo' && round++ >= wipeRound && placement.moving !== undefined && placement.replicas.includes(4)) gone.add(4);
          const candidates = conf.voters.filter((n) => !former(n));
          leader = heir !== undefined && candidates.includes(heir) ? heir : candidates[pick % candidates.length]!;
          heir = undefined;
          const members = [...conf.voters, ...conf.learners];
          const progress = new Map(
            members.map((n) => [n, former(n) ? { match: 10, recentActive: false, state: 'probe' as const } : { match: n === 4 && !learnerCaughtUp ? 10 : 100, recentActive: everyoneActive || n === leader, state: 'replicate' as const }]),
          );
          const a = nextMoveAction({ self: leader, placement, conf, commit: 100, progress, leadTransferee: 0, former });
          const before = { placement: JSON.stringify(placement), conf: JSON.stringify(conf) };
          switch (a.kind) {
            case 'confChange': {
              const { type, nodeId } = a.change;
              if (type === 'addVoter') {
                assert.ok(learnerCaughtUp && everyoneActive, 'promoted while behind');
                assert.ok(!former(nodeId), 'a former member made a voter');
                assert.ok(placement.replicas.includes(nodeId), 'a voter the metadata has not promoted');
                conf = { voters: [...conf.voters, nodeId], learners: conf.learners.filter((n) => n !== nodeId) };
              } else if (type === 'addLearner') {
                assert.ok(!former(nodeId), 'a former member added');
                conf = { ...conf, learners: [...conf.learners, nodeId] };
              } else {
                assert.notEqual(nodeId, leader, 'a leader removed itself');
                assert.ok(placement.moving !== undefined || !conf.voters.includes(nodeId), 'a voter removed without a move');
                conf = { voters: conf.voters.filter((n) => n !== nodeId), learners: conf.learners.filter((n) => n !== nodeId) };
              }
              break;
            }
            case 'record':
              if (a.step === 'promote') {
                assert.ok(learnerCaughtUp && everyoneActive, 'promotion recorded while behind');
                placement = { replicas: [...placement.replicas, 4], moving };
              } else {
                assert.ok(!conf.voters.includes(1) && !conf.learners.includes(1), 'remove recorded before the group removed the node');
                placement = { replicas: [4, 2, 3] };
                dropped = true;
              }
              break;
            case 'transfer':
              assert.equal(leader, 1);
              assert.ok(conf.voters.includes(a.to) && !former(a.to));
              heir = a.to;
              break;
            default:
          }
          // Without former members the group never has fewer than three voters; with one, never fewer
          // than the two live members it had, and never a former member voting beside the new one (a
          // group of four that needs all three live members: one more fault and no leader).
          const live = conf.voters.filter((n) => !former(n));
          assert.ok(live.length >= (gone.size === 0 ? 3 : 2), `the group shrank to ${live.length} live voters`);
          assert.ok(!(former(1) && conf.voters.includes(1) && conf.voters.includes(4)), 'a former member votes beside the new one');
          assert.ok(conf.voters.length + conf.learners.length <= 4);
          if (a.kind === 'idle' || a.kind === 'wait') assert.deepEqual({ placement: JSON.stringify(placement), conf: JSON.stringify(conf) }, before);
        }
        // With everyone caught up for the last rounds, the move is done (a wiped new member left to
        // its own replacement).
        assert.ok(dropped, `move not finished: ${JSON.stringify({ mode, placement, conf })}`);
        assert.deepEqual([...conf.voters].filter((n) => !former(n)).sort(), former(4) ? [2, 3] : [2, 3, 4]);
      },
    ),
    { numRuns: 600 },
  );
});

// An accepted loss of the whole group (metadata partition.loss): node 2 kept its log and is the only
// voter; 1 and 3 rejoined empty as learners and become voters again, one at a time, in placement order.
test('after an accepted loss, the learners are made voters again one at a time, each once caught up, first in the metadata', () => {
  const self = 2;
  const behind = (n: number) => new Map([[2, live(100)], [1, live(100)], [3, live(100)], [n, live(10)]]);
  const steps: [MoveView['placement'], MoveView['conf'], unknown, Map<number, MoveProgress>?][] = [
    [{ replicas: [2], learners: [1, 3] }, { voters: [2], learners: [1, 3] }, { kind: 'wait', why: 'node 1 is catching up' }, behind(1)],
    [{ replicas: [2], learners: [1, 3] }, { voters: [2], learners: [1, 3] }, { kind: 'record', step: 'rejoin', from: 1, to: 1 }],
    [{ replicas: [2, 1], learners: [3] }, { voters: [2], learners: [1, 3] }, { kind: 'wait', why: 'node 1 is catching up' }, behind(1)],
    [{ replicas: [2, 1], learners: [3] }, { voters: [2], learners: [1, 3] }, { kind: 'confChange', change: { type: 'addVoter', nodeId: 1 } }],
    [{ replicas: [2, 1], learners: [3] }, { voters: [2, 1], learners: [3] }, { kind: 'record', step: 'rejoin', from: 3, to: 3 }],
    [{ replicas: [2, 1, 3] }, { voters: [2, 1], learners: [3] }, { kind: 'confChange', change: { type: 'addVoter', nodeId: 3 } }],
    [{ replicas: [2, 1, 3] }, { voters: [2, 1, 3], learners: [] }, { kind: 'idle' }],
    // A learner of the placement the group lacks (the kept member was itself a learner): added first.
    [{ replicas: [2], learners: [1, 3] }, { voters: [2], learners: [3] }, { kind: 'confChange', change: { type: 'addLearner', nodeId: 1 } }],
  ];
  for (const [placement, conf, want, progress] of steps) {
    assert.deepEqual(nextMoveAction(view({ self, placement, conf, ...(progress === undefined ? {} : { progress }) })), want, JSON.stringify({ placement, conf }));
  }
});
