// Goal: a member whose past term is unknown (Damage.termUnknown: a wiped data directory, which keeps
// no term ceiling) learns a term floor from a majority of the other voters before it takes anything.
// Issue 9: without it, a deposed leader commits, with the wiped member's acknowledgement, an entry over
// one a newer leader had committed with the member's former self.
// Method: the synchronous harness (src/sim/harness.ts) for the story, run once without the rule (the
// entry is lost: the scenario is real) and once with it; a lone RawNode fed hand-made messages for the
// counting rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness } from '../sim/harness.js';
import { Prng } from '../sim/prng.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import type { Message, MessageType } from './types.js';
import { makeMessage } from './types.js';

interface Story {
  readonly h: Harness;
  /** The index at which b (2) holds "old" of its term and a (1) committed its no-op of a newer term. */
  readonly i: number;
  readonly newTerm: number;
}

/**
 * Voters a = 1, b = 2, w = 3. b leads, is cut off and appends "old" at index i; a is elected in a newer
 * term by w's vote and commits its no-op at i and "new" after it with w. Then w's directory is wiped:
 * it restarts empty and damaged (with the probe rule or without), and only b (still leading its old
 * term: it was not ticked) and w can talk.
 */
/**
 * The opening both stories share, on voters a = 1, b = 2, w = 3: b leads, is cut off and appends "old"
 * at index i; a is elected in a newer term by w's vote and commits its no-op at i and "new" after it
 * with w, while b still leads its old term.
 */
function deposedBeside(): { h: Harness; old: { index: number; term: number }; newTerm: number } {
  const h = new Harness([1, 2, 3], { preVote: true, checkQuorum: true });
  h.elect(2);
  h.propose(2, 'p');
  h.stabilize();
  h.isolate(2);
  const old = h.propose(2, 'old');
  h.stabilize();
  // a campaigns as on a leadership transfer (which passes w's leader lease), with w's vote.
  h.raw(1).step(makeMessage({ type: 'timeoutNow', from: 2, to: 1, term: h.status(1).term }));
  h.stabilize();
  assert.equal(h.status(1).state, 'leader');
  const newTerm = h.status(1).term;
  assert.ok(newTerm > old.term);
  h.propose(1, 'new');
  h.stabilize();
  assert.equal(h.raw(1).termAt(old.index), newTerm, 'a committed its own entry at the index of "old"');
  assert.ok(h.status(1).commit > old.index, 'with w');
  assert.equal(h.status(2).state, 'leader', 'b still leads its old term (cut off, not ticked)');
  return { h, old, newTerm };
}

function story(probe: boolean): Story {
  const { h, old, newTerm } = deposedBeside();
  h.crash(3);
  h.wipe(3);
  h.start(3, { damaged: { term: 0, index: 0, termUnknown: probe }, termProbePeers: [1, 2, 3] });
  h.heal();
  h.isolate(1);
  return { h, i: old.index, newTerm };
}

test('without the term probe, a deposed leader commits over a committed entry with a wiped member (the hazard is real)', () => {
  const { h, i } = story(false);
  h.tick(2);
  h.stabilize();
  assert.ok(h.status(2).commit >= i, 'b commits index i');
  assert.notEqual(h.raw(2).termAt(i), h.raw(1).termAt(i), 'b committed at i an entry of its old term: a\'s committed entry is lost');
});

test('a wiped member learns a term floor before it takes anything: the deposed leader commits nothing and steps down on its refusal', () => {
  const { h, i, newTerm } = story(true);
  // b's heartbeats and appends reach w, and only b answers w's probe: one answer of the two needed.
  for (let k = 0; k < 3; k++) {
    h.tick(2);
    h.tick(3);
    h.stabilize();
  }
  assert.ok(h.status(2).commit < i, 'b commits nothing at i');
  assert.equal(h.status(3).lastIndex, 0, 'w took no entry');
  assert.equal(h.status(3).damaged?.termUnknown, true, 'w is still learning its floor');
  assert.equal(h.status(3).term, 0, 'and adopted no term');
  // a becomes reachable for w (not for b): w's next probe gets its answer, a term no lower than newTerm.
  h.heal();
  h.cut(1, 2);
  h.tick(3);
  h.stabilize();
  assert.equal(h.status(3).damaged?.termUnknown, undefined, 'the floor is learned');
  assert.ok(h.status(3).term >= newTerm, `w's term ${h.status(3).term} is at least a's ${newTerm}`);
  assert.notEqual(h.status(3).damaged, null, 'and w is still damaged: only a leader repairs it');
  // b's next heartbeat gets w's refusal with the newer term: b steps down.
  h.tick(2);
  h.stabilize();
  assert.notEqual(h.status(2).state, 'leader', 'b stepped down');
  assert.ok(h.status(2).commit < i, 'having committed nothing at i');
  // Everyone together again: a leader of the newest term repairs w; "new" is kept, "old" is gone.
  h.heal();
  h.tickAll(60);
  const l = h.leader();
  assert.ok(l !== undefined);
  assert.equal(h.status(3).damaged, null, 'w repaired');
  for (const id of [1, 2, 3]) {
    assert.deepEqual(h.appliedTexts(id), ['p', 'new'], `node ${id}`);
    assert.equal(h.raw(id).termAt(i), newTerm);
  }
});

/** A lone node 1 that restarts wiped, with the voters it knows. */
function probingNode(peers: number[]): { raw: RawNode; storage: MemoryStorage } {
  const storage = new MemoryStorage();
  const raw = new RawNode({ id: 1, storage, electionTicks: 10, heartbeatTicks: 2, random: new Prng(3), damaged: { term: 0, index: 0, termUnknown: true }, termProbePeers: peers });
  return { raw, storage };
}

function drain(raw: RawNode, storage: MemoryStorage): Message[] {
  const out: Message[] = [];
  while (raw.hasReady()) {
    const rd = raw.ready();
    storage.append(rd.entries);
    if (rd.hardState) storage.setHardState(rd.hardState);
    out.push(...rd.messages);
    raw.advance(rd);
  }
  return out;
}

function msg(type: MessageType, from: number, term: number, extra: Partial<Message> = {}): Message {
  return makeMessage({ type, from, to: 1, term, ...extra });
}

test('a probing member asks every other voter, again on heartbeat ticks only those that did not answer', () => {
  const { raw, storage } = probingNode([1, 2, 3, 4, 5]);
  assert.deepEqual(drain(raw, storage).map((m) => [m.type, m.to]), [['termProbe', 2], ['termProbe', 3], ['termProbe', 4], ['termProbe', 5]]);
  raw.step(msg('termProbeResp', 3, 7));
  drain(raw, storage);
  raw.tick();
  assert.deepEqual(drain(raw, storage), [], 'not before a heartbeat period');
  raw.tick();
  assert.deepEqual(drain(raw, storage).map((m) => m.to), [2, 4, 5]);
});

test('the floor needs answers from a majority of the voters, itself not counted; unknown answers and strangers do not count', () => {
  for (const [voters, needed] of [[[1, 2, 3], 2], [[1, 2, 3, 4], 3], [[1, 2, 3, 4, 5], 3], [[1, 2], 1]] as Array<[number[], number]>) {
    const { raw, storage } = probingNode(voters);
    drain(raw, storage);
    raw.step(msg('termProbeResp', 9, 50)); // not a voter it knows
    raw.step(msg('termProbeResp', 2, 60, { reject: true })); // its own past term is unknown too
    let floor: number | undefined;
    for (let k = 0; k < needed; k++) {
      assert.equal(floor, undefined, `${voters}: no floor after ${k} answers`);
      raw.step(msg('termProbeResp', voters[voters.length - 1 - k]!, 4 + k));
      const rd = raw.ready();
      floor = rd.termFloor;
      if (floor !== undefined) {
        assert.equal(rd.mustSync, true, 'the floor is made durable');
        assert.equal(rd.hardState?.term, floor, 'with the hard state at that term');
      }
      raw.advance(rd);
    }
    assert.equal(floor, 4 + needed - 1, `${voters}: the highest of ${needed} answers`);
    assert.equal(raw.status().term, floor);
    assert.equal(raw.status().vote, 0, 'no vote');
    assert.deepEqual(raw.status().damaged, { term: floor, index: 0 }, 'still damaged, at least at the floor, term no longer unknown');
  }
});

test('while probing it takes nothing and adopts no term; it answers probes as unknown', () => {
  const { raw, storage } = probingNode([1, 2, 3]);
  drain(raw, storage);
  const e = { term: 2, index: 1, type: 'normal' as const, data: new Uint8Array([1]) };
  raw.step(msg('app', 2, 2, { index: 0, logTerm: 0, entries: [e], commit: 1 }));
  raw.step(msg('heartbeat', 2, 2, { commit: 1 }));
  raw.step(msg('vote', 3, 5, { index: 9, logTerm: 4 }));
  raw.step(msg('termProbe', 3, 0));
  assert.deepEqual(drain(raw, storage).map((m) => [m.type, m.to, m.reject]), [['termProbeResp', 3, true]]);
  assert.equal(raw.status().term, 0);
  assert.equal(raw.status().lastIndex, 0);
  assert.equal(raw.status().lead, 0);
});

test('a healthy member answers a probe with its term and changes nothing, not even a quiesced leader\'s state', () => {
  const h = new Harness([1, 2, 3], { preVote: true, checkQuorum: true });
  h.elect(1);
  h.tickAll(5);
  assert.equal(h.raw(1).quiesce(), true);
  h.stabilize();
  const before = h.status(1);
  h.raw(1).step(makeMessage({ type: 'termProbe', from: 9, to: 1, term: 0 }));
  const rd = h.raw(1).ready();
  assert.deepEqual(rd.messages.map((m) => [m.type, m.to, m.term, m.reject]), [['termProbeResp', 9, before.term, false]]);
  assert.equal(rd.hardState, undefined);
  h.raw(1).advance(rd);
  assert.equal(h.status(1).state, 'leader');
  assert.equal(h.raw(1).quiesced, true, 'still quiesced');
  // A probe with a higher term moves nobody's term either.
  h.raw(2).step(makeMessage({ type: 'termProbe', from: 3, to: 2, term: before.term + 5 }));
  assert.equal(h.status(2).term, before.term);
  assert.equal(h.status(2).lead, 1);
});

test('a member whose past term is unknown must be told the voters to ask', () => {
  assert.throws(() => probingNode([]), /termProbePeers/);
  // A group of one lists itself: nobody to ask, the floor is its own term at once.
  const { raw } = probingNode([1]);
  assert.equal(raw.ready().termFloor, 0);
});

// A replica move changes the voters while a wiped member probes: a view that names a member gone since
// (a cancelled move's learner, a moved replica's old node: its data is dropped, it never answers) must
// not be waited for. Seeds 314 and 1824 of the host simulation: the member waited for good.
test('a probing member told new voters asks them and counts only their answers; the same voters change nothing', () => {
  // Voters 1, 2, 3 and a move's learner 4 in the host's view: three answers needed of 2, 3, 4.
  const { raw, storage } = probingNode([1, 2, 3, 4]);
  drain(raw, storage);
  raw.step(msg('termProbeResp', 2, 6));
  raw.step(msg('termProbeResp', 4, 9));
  assert.equal(raw.probing, true);
  raw.setTermProbePeers([3, 1, 2, 4, 2]);
  assert.deepEqual(drain(raw, storage), [], 'the same voters in another order: nothing starts over');
  raw.step(msg('termProbeResp', 2, 6));
  assert.equal(raw.probing, true, 'an answer given twice counts once');
  // The move is cancelled: voters 1, 2, 3. Everyone of the new view is asked again at once.
  raw.setTermProbePeers([1, 2, 3]);
  assert.deepEqual(drain(raw, storage).map((m) => [m.type, m.to]), [['termProbe', 2], ['termProbe', 3]]);
  raw.step(msg('termProbeResp', 4, 9));
  raw.step(msg('termProbeResp', 2, 5));
  assert.equal(raw.probing, true, 'answers from before the change, and from a member no longer listed, do not count');
  raw.step(msg('termProbeResp', 3, 7));
  const rd = raw.ready();
  assert.equal(rd.termFloor, 7, 'the highest answer of the new view');
  raw.advance(rd);
  assert.equal(raw.probing, false);
  raw.setTermProbePeers([1, 5]);
  assert.deepEqual(drain(raw, storage), [], 'once the floor is learned, a new view changes nothing');
  assert.equal(raw.status().term, 7);
});

// A node whose directory was wiped runs a new member (5 here) in place of its former one (2), which
// nobody answers for: a member asking 2 waited for good (docs/metadata-raft.md, "A wiped directory is
// a new member"). The new member answers for it (the host sets `index` to the member asked).
test('an answer given for a former member counts in its place, once per answerer', () => {
  const { raw, storage } = probingNode([1, 2, 3]);
  drain(raw, storage);
  raw.step(msg('termProbeResp', 5, 9, { index: 2, reject: true }));
  assert.equal(raw.probing, true, 'a refusal for 2 is not counted');
  raw.step(msg('termProbeResp', 5, 9, { index: 4 }));
  assert.equal(raw.probing, true, 'an answer for a member not asked is not counted');
  raw.step(msg('termProbeResp', 5, 9, { index: 2 }));
  assert.equal(raw.probing, true, 'one answer of the two needed');
  raw.step(msg('termProbeResp', 5, 11, { index: 3 }));
  assert.equal(raw.probing, true, 'the member that answered for 2 does not also fill 3\'s place');
  raw.step(msg('termProbeResp', 3, 7));
  const rd = raw.ready();
  assert.equal(rd.termFloor, 9, 'the highest of the answers: 5 for 2, and 3');
  raw.advance(rd);

  // A member asked under its own id is counted there only, not also for a former member of its node.
  const two = probingNode([1, 2, 3, 5]);
  drain(two.raw, two.storage);
  two.raw.step(msg('termProbeResp', 5, 9, { index: 2 }));
  two.raw.step(msg('termProbeResp', 5, 9));
  two.raw.step(msg('termProbeResp', 3, 7));
  assert.equal(two.raw.probing, true, 'two answers of the three needed: 5 counts once');
});

test('a member answers a probe for a former member of its node only once it is in the configuration it applied', () => {
  // A new member (4) that a leader has not added yet: empty, its term 0 below any the former member used.
  const storage = new MemoryStorage();
  const fresh = new RawNode({ id: 4, storage, electionTicks: 10, heartbeatTicks: 2, random: new Prng(3) });
  fresh.step(makeMessage({ type: 'termProbe', from: 1, to: 4, term: 0, index: 2 }));
  assert.deepEqual(drain(fresh, storage).map((m) => [m.type, m.to, m.index, m.reject]), [['termProbeResp', 1, 2, true]], 'refused: it holds no configuration entry that added it');
  fresh.step(makeMessage({ type: 'termProbe', from: 1, to: 4, term: 0 }));
  assert.deepEqual(drain(fresh, storage).map((m) => [m.type, m.index, m.reject]), [['termProbeResp', 0, false]], 'asked under its own id it answers as before');

  // Added (here: in the configuration of a running group), it answers with its term for the former member.
  const h = new Harness([1, 2, 3], { preVote: true, checkQuorum: true });
  h.elect(1);
  h.raw(3).step(makeMessage({ type: 'termProbe', from: 9, to: 3, term: 0, index: 7 }));
  const rd = h.raw(3).ready();
  assert.deepEqual(rd.messages.map((m) => [m.type, m.to, m.index, m.term, m.reject]), [['termProbeResp', 9, 7, h.status(3).term, false]]);
  h.raw(3).advance(rd);
});

/**
 * Voters a = 1, b = 2, w = 3, as in `story`: b leads, is cut off and appends "old" at index i; a
 * leads a newer term with w's vote and commits its entries with w. Then w's directory is wiped: its
 * node runs a new member, 4, that no leader has added yet (empty, term 0). a loses its state and keeps
 * its id: it probes 2 and 3, and the probe for 3 reaches 4 (its host marks it `index` 3). b still
 * leads its old term and reaches a.
 */
function formerStory(): Story & { answerFor3: () => void } {
  const { h, old, newTerm } = deposedBeside();
  h.crash(3);
  h.wipe(3);
  h.addEmpty(4);
  h.crash(1);
  h.wipe(1);
  h.start(1, { damaged: { term: 0, index: 0, termUnknown: true }, termProbePeers: [1, 2, 3] });
  h.heal();
  // a's probe for 3 as the host of 3's node hands it to 4 (a sends the same one every heartbeat
  // period; here a message for the down node 3 is dropped).
  const answerFor3 = () => {
    h.raw(4).step(makeMessage({ type: 'termProbe', from: 1, to: 4, term: h.status(1).term, index: 3 }));
    h.stabilize();
  };
  return { h, i: old.index, newTerm, answerFor3 };
}

test('an answer for a former member from a new member not yet added would give too low a floor: a deposed leader commits over a committed entry (the hazard is real)', () => {
  const { h, i, newTerm } = formerStory();
  h.stabilize();
  // What a new member that answered before it was added would say: its term, 0, for member 3.
  h.raw(1).step(makeMessage({ type: 'termProbeResp', from: 4, to: 1, term: 0, index: 3 }));
  h.tick(2);
  h.stabilize();
  assert.ok(h.status(1).term < newTerm, 'a took a floor below the term a committed in with 3');
  assert.ok(h.status(2).commit >= i, 'b commits index i');
  assert.notEqual(h.raw(2).termAt(i), newTerm, 'b committed at i an entry of its old term over the one committed with 3');
});

test('a new member not yet added refuses to answer for its node\'s former member: the asker waits, and the deposed leader commits nothing', () => {
  const { h, i, answerFor3 } = formerStory();
  for (let k = 0; k < 3; k++) {
    h.tick(1);
    h.tick(2);
    h.stabilize();
    answerFor3();
  }
  assert.ok(h.status(2).commit < i, 'b commits nothing at i');
  assert.equal(h.status(1).damaged?.termUnknown, true, 'a still learns its floor');
});
