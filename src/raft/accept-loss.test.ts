// Goal: the operator's lever for a damaged sole member (RawNode.acceptLoss): the only voter of its
// group, damaged (it lost a tail nobody can send it again), never leads on its own; once the loss is
// accepted it leads at a term above both its damage term and the floor it is given (the node's term
// ceiling), keeps every entry it holds, says `repaired` in a durable Ready (the host removes the mark)
// and takes proposals. A member with another voter or a learner, or one that is not damaged, is
// refused and left as it was.
// Method: a lone RawNode over MemoryStorage with hand-made logs, every Ready carried out by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '../sim/prng.js';
import { bootstrapState, encodeConfChange } from './confchange.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import type { Damage, Entry } from './types.js';

/** A member of a group of `voters` (and `learners`, added after the founding), with `extra` normal entries of term 3, all committed. */
function member(voters: number[], damaged: Damage | null, extra = 4, learners: number[] = []): { raw: RawNode; storage: MemoryStorage } {
  const storage = new MemoryStorage();
  const log: Entry[] = [...bootstrapState(voters).entries];
  const next = () => log[log.length - 1]!.index + 1;
  for (const l of learners) log.push({ type: 'confChange', term: 3, index: next(), data: encodeConfChange({ type: 'addLearner', nodeId: l }) });
  for (let k = 0; k < extra; k++) log.push({ type: 'normal', term: 3, index: next(), data: Buffer.from(`e${k}`) });
  storage.append(log);
  storage.setHardState({ term: Math.max(3, damaged?.term ?? 0), vote: 0, commit: next() - 1 });
  const raw = new RawNode({ id: voters[0]!, storage, electionTicks: 10, heartbeatTicks: 1, random: new Prng(5), preVote: true, checkQuorum: true, damaged });
  drain(raw, storage);
  return { raw, storage };
}

/** Carries out every Ready; returns whether one said repaired (and was durable) and the highest hard-state term written. */
function drain(raw: RawNode, storage: MemoryStorage): { repaired: boolean; termWritten: number } {
  let repaired = false;
  let termWritten = 0;
  while (raw.hasReady()) {
    const rd = raw.ready();
    storage.append(rd.entries);
    if (rd.hardState) {
      storage.setHardState(rd.hardState);
      termWritten = Math.max(termWritten, rd.hardState.term);
    }
    for (const e of rd.committedEntries) if (e.type === 'confChange') raw.applyConfChange(e);
    if (rd.repaired) {
      assert.ok(rd.mustSync, 'the Ready that ends the damage is written durably');
      repaired = true;
    }
    raw.advance(rd);
  }
  return { repaired, termWritten };
}

test('a damaged sole voter does not lead by itself; once its loss is accepted it leads above its damage term and the floor, keeping its log', () => {
  for (const [damageTerm, floor] of [[7, 3], [4, 9], [6, 6]] as const) {
    const { raw, storage } = member([1], { term: damageTerm, index: 20 });
    raw.campaign();
    for (let i = 0; i < 50; i++) raw.tick();
    drain(raw, storage);
    assert.notEqual(raw.status().state, 'leader', 'damaged: it never leads by itself');
    const before = storage.lastIndex();
    const held = storage.entries(1, before + 1, Number.MAX_SAFE_INTEGER).map((e) => [e.index, e.term]);
    assert.equal(raw.acceptLoss(floor), undefined);
    const { repaired, termWritten } = drain(raw, storage);
    const st = raw.status();
    assert.equal(st.state, 'leader', `damage term ${damageTerm}, floor ${floor}`);
    assert.equal(st.damaged, null);
    assert.ok(repaired, 'the Ready says repaired: the host removes the damage mark in that write');
    assert.ok(st.term > Math.max(damageTerm, floor), `leads at term ${st.term}, above damage term ${damageTerm} and floor ${floor}`);
    assert.equal(termWritten, st.term, 'the new term is in the hard state written');
    // Every entry it held is still there, below the new leader's no-op.
    assert.deepEqual(storage.entries(1, before + 1, Number.MAX_SAFE_INTEGER).map((e) => [e.index, e.term]), held);
    assert.equal(storage.term(before + 1), st.term, 'the no-op of the new term follows them');
    const p = raw.propose(Buffer.from('after'));
    assert.ok(p.ok, 'it takes proposals');
    drain(raw, storage);
    assert.equal(raw.status().commit, storage.lastIndex(), 'a majority of one commits');
  }
});

test('acceptLoss is refused, and changes nothing, for a member that is not damaged or is not alone in its group', () => {
  const cases: { what: string; raw: RawNode; storage: MemoryStorage; why: RegExp }[] = [
    { what: 'healthy sole voter', ...member([1], null), why: /not damaged/ },
    { what: 'damaged voter of three', ...member([1, 2, 3], { term: 5, index: 9 }), why: /not the only member/ },
    { what: 'damaged sole voter with a learner', ...member([1], { term: 5, index: 9 }, 4, [2]), why: /not the only member/ },
  ];
  for (const c of cases) {
    const before = c.raw.status();
    const refused = c.raw.acceptLoss(100);
    assert.match(refused ?? '', c.why, c.what);
    drain(c.raw, c.storage);
    const after = c.raw.status();
    assert.equal(after.term, before.term, `${c.what}: the term is unchanged`);
    assert.deepEqual(after.damaged, before.damaged, `${c.what}: the damage is unchanged`);
    assert.notEqual(after.state === 'leader' && before.state !== 'leader', true, `${c.what}: it did not start leading`);
  }
});
