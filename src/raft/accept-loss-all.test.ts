// Goal: the Raft side of accepting the loss of a group whose every member is damaged
// (RawNode.acceptLossAsOnlyVoter; docs/replication.md, "Accepting the loss of a partition whose every
// replica is damaged"). The member keeps its log and becomes the only voter, every other voter a
// learner, by configuration entries it commits alone in the durable Ready that says `repaired` (its
// hard state carries their commit), at a term above the floor and its damage term; it leads at its
// next election timeout; another member with a divergent, longer tail is brought to exactly its log,
// also when that tail is of the floor term itself (entries of one index and term are taken for the
// same entry: changes written at the floor term were taken for that member's own tail). Refused, changing nothing, for a healthy member or one outside the configuration.
// Method: RawNodes over MemoryStorage with hand-made logs; every Ready carried out by hand, messages
// passed between the members by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '../sim/prng.js';
import { bootstrapState, encodeConfChange } from './confchange.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import type { Damage, Entry, Message } from './types.js';

interface Member {
  raw: RawNode;
  storage: MemoryStorage;
}

/**
 * Member `id` of a group founded with `voters` (and `learners` added after), holding `common` normal
 * entries of term 3 (all committed), then `tail` entries of term `tailTerm` it holds uncommitted.
 */
function member(id: number, voters: number[], damaged: Damage | null, o: { learners?: number[]; common?: number; tail?: number; tailTerm?: number } = {}): Member {
  const storage = new MemoryStorage();
  const log: Entry[] = [...bootstrapState(voters).entries];
  const next = () => log[log.length - 1]!.index + 1;
  for (const l of o.learners ?? []) log.push({ type: 'confChange', term: 3, index: next(), data: encodeConfChange({ type: 'addLearner', nodeId: l }) });
  for (let k = 0; k < (o.common ?? 4); k++) log.push({ type: 'normal', term: 3, index: next(), data: Buffer.from(`c${k}`) });
  const commit = next() - 1;
  for (let k = 0; k < (o.tail ?? 0); k++) log.push({ type: 'normal', term: o.tailTerm ?? 3, index: next(), data: Buffer.from(`t${id}-${k}`) });
  storage.append(log);
  storage.setHardState({ term: Math.max(3, o.tailTerm ?? 0, damaged?.term ?? 0), vote: 0, commit });
  const raw = new RawNode({ id, storage, electionTicks: 10, heartbeatTicks: 1, random: new Prng(id), preVote: true, checkQuorum: true, damaged });
  drain({ raw, storage });
  return { raw, storage };
}

/** Carries out every Ready; returns the messages sent and whether a durable one said repaired. */
function drain(m: Member): { out: Message[]; repaired: boolean; commitWritten: number } {
  const out: Message[] = [];
  let repaired = false;
  let commitWritten = 0;
  while (m.raw.hasReady()) {
    const rd = m.raw.ready();
    m.storage.append(rd.entries);
    if (rd.hardState) {
      m.storage.setHardState(rd.hardState);
      commitWritten = Math.max(commitWritten, rd.hardState.commit);
    }
    for (const e of rd.committedEntries) if (e.type === 'confChange') m.raw.applyConfChange(e);
    if (rd.repaired) {
      assert.ok(rd.mustSync, 'the Ready that ends the damage is written durably');
      repaired = true;
    }
    out.push(...rd.messages);
    m.raw.advance(rd);
  }
  return { out, repaired, commitWritten };
}

const logOf = (s: MemoryStorage): string[] => s.entries(1, s.lastIndex() + 1, Number.MAX_SAFE_INTEGER).map((e) => `${e.index}@${e.term}:${e.type}:${Buffer.from(e.data).toString('hex')}`);

/** Ticks and passes messages among `members` (by id) until `done` or `rounds` are spent. */
function run(members: Map<number, Member>, rounds: number, done: () => boolean): void {
  for (let i = 0; i < rounds && !done(); i++) {
    const mail: Message[] = [];
    for (const m of members.values()) {
      m.raw.tick();
      mail.push(...drain(m).out);
    }
    while (mail.length > 0) {
      const msg = mail.shift()!;
      const to = members.get(msg.to);
      if (to === undefined) continue;
      to.raw.step(msg);
      mail.push(...drain(to).out);
    }
  }
}

test('a damaged member of a group whose every member is damaged becomes its only voter, keeps its log and leads above the floor; the others are its learners', () => {
  const damage: Damage = { term: 3, index: 12 };
  const a = member(1, [1, 2, 3], damage);
  const held = logOf(a.storage);
  const last = a.storage.lastIndex();
  for (let i = 0; i < 40; i++) a.raw.tick();
  drain(a);
  assert.notEqual(a.raw.status().state, 'leader', 'damaged: it never leads by itself');

  assert.equal(a.raw.acceptLossAsOnlyVoter(9), undefined);
  const { repaired, commitWritten } = drain(a);
  assert.ok(repaired, 'the Ready says repaired: the host removes the damage mark in that write');
  assert.equal(a.storage.lastIndex(), last + 2, 'two configuration entries: members 2 and 3 made learners');
  assert.equal(commitWritten, last + 2, 'their commit is in the hard state of the same durable write');
  assert.deepEqual(a.storage.confStateAt(a.storage.hardState().commit), { voters: [1], learners: [2, 3] }, 'a restart finds the new configuration');
  assert.deepEqual(logOf(a.storage).slice(0, held.length), held, 'every entry it held is kept');
  assert.equal(a.storage.term(last + 1), 10, 'the changes are at a term above the floor');

  run(new Map([[1, a]]), 40, () => a.raw.status().state === 'leader');
  const st = a.raw.status();
  assert.equal(st.state, 'leader', 'it leads alone at its next election timeout');
  assert.equal(st.damaged, null);
  assert.ok(st.term > 9, `term ${st.term} above the floor`);
  assert.ok(a.raw.propose(Buffer.from('after')).ok, 'it takes proposals');
  drain(a);
  assert.equal(a.raw.status().commit, a.storage.lastIndex(), 'a majority of one commits');
});

test('another damaged member with a longer tail of an older term is brought to exactly the kept log, and repaired', () => {
  // Member 1 keeps its log (index 7); member 2 holds a tail of term 5 up to index 13 that member 1
  // never had. The floor the lever gives is the highest term any member reported (5): the changes
  // must not be written at it.
  const a = member(1, [1, 2, 3], { term: 3, index: 8 });
  const b = member(2, [1, 2, 3], { term: 5, index: 14 }, { tail: 6, tailTerm: 5 });
  assert.ok(b.storage.lastIndex() > a.storage.lastIndex());
  assert.equal(a.raw.acceptLossAsOnlyVoter(5), undefined);
  drain(a);
  const members = new Map([[1, a], [2, b]]);
  run(members, 60, () => a.raw.status().state === 'leader');
  assert.equal(a.raw.status().state, 'leader');
  // The leader's log must pass member 2's damage index before member 2 counts as repaired.
  for (let k = 0; k < 8; k++) assert.ok(a.raw.propose(Buffer.from(`n${k}`)).ok);
  run(members, 60, () => b.raw.status().damaged === null && logOf(b.storage).join() === logOf(a.storage).join());
  assert.deepEqual(logOf(b.storage), logOf(a.storage), 'member 2 holds exactly the kept log and what followed: its own tail is gone');
  assert.equal(b.raw.status().damaged, null, 'and it is repaired');
  assert.ok(!logOf(b.storage).some((e) => e.includes(Buffer.from('t2-').toString('hex'))), 'none of its tail entries');
  assert.deepEqual(b.storage.confStateAt(b.storage.hardState().commit), { voters: [1], learners: [2, 3] }, 'it applied the same configuration');
});

test('a damaged learner becomes the only voter: it is made a voter first, then every voter a learner', () => {
  const c = member(3, [1, 2], { term: 3, index: 9 }, { learners: [3] });
  assert.equal(c.raw.acceptLossAsOnlyVoter(4), undefined);
  drain(c);
  assert.deepEqual(c.storage.confStateAt(c.storage.hardState().commit), { voters: [3], learners: [1, 2] });
  run(new Map([[3, c]]), 40, () => c.raw.status().state === 'leader');
  assert.equal(c.raw.status().state, 'leader');
});

// Two of three damaged: the healthy member cannot be elected (the damaged ones do not vote), and the
// lever may keep its log (group-loss-choice.ts): forced with `healthy`, it becomes the only voter above
// the floor and leads; a damaged member with a longer tail of an older term is brought to its log.
test('a healthy member of a group whose two other members are damaged, forced with healthy, becomes its only voter and leads; a damaged one is brought to its log', () => {
  const a = member(1, [1, 2, 3], null, { tail: 2, tailTerm: 4 });
  const b = member(2, [1, 2, 3], { term: 4, index: 12 }, { tail: 5, tailTerm: 3 });
  const c = member(3, [1, 2, 3], { term: 4, index: 12 });
  const members = new Map([[1, a], [2, b], [3, c]]);
  run(members, 60, () => a.raw.status().state === 'leader');
  assert.notEqual(a.raw.status().state, 'leader', 'stuck: the damaged members do not vote for it');
  const held = logOf(a.storage);
  assert.equal(a.raw.acceptLossAsOnlyVoter(4, { healthy: true }), undefined);
  const { repaired } = drain(a);
  assert.equal(repaired, false, 'it was not damaged: nothing to repair');
  assert.deepEqual(a.storage.confStateAt(a.storage.hardState().commit), { voters: [1], learners: [2, 3] });
  assert.deepEqual(logOf(a.storage).slice(0, held.length), held, 'every entry it held is kept');
  run(members, 60, () => a.raw.status().state === 'leader');
  assert.equal(a.raw.status().state, 'leader');
  assert.ok(a.raw.status().term > 4, 'above the floor');
  for (let k = 0; k < 8; k++) assert.ok(a.raw.propose(Buffer.from(`n${k}`)).ok);
  run(members, 80, () => b.raw.status().damaged === null && logOf(b.storage).join() === logOf(a.storage).join());
  assert.deepEqual(logOf(b.storage), logOf(a.storage), 'member 2 holds exactly the kept log: its own tail is gone');
});

test('refused, changing nothing, for a healthy member or one outside the configuration', () => {
  const cases: [string, Member, RegExp][] = [
    ['healthy', member(1, [1, 2, 3], null), /not damaged/],
    ['not a member', member(4, [1, 2, 3], { term: 3, index: 9 }), /not in its group's configuration/],
  ];
  for (const [what, m, why] of cases) {
    const before = { status: m.raw.status(), log: logOf(m.storage) };
    assert.match(m.raw.acceptLossAsOnlyVoter(100) ?? '', why, what);
    drain(m);
    assert.equal(m.raw.status().term, before.status.term, `${what}: the term is unchanged`);
    assert.deepEqual(m.raw.status().damaged, before.status.damaged, `${what}: the damage is unchanged`);
    assert.deepEqual(logOf(m.storage), before.log, `${what}: the log is unchanged`);
  }
});
