// Goal: a leader tells its followers a new commit index with the next Ready, in the append that carries
// the entries proposed since (if any), not in an empty append of its own followed by that append; and a
// follower that has acknowledged everything it was sent does not answer an empty append that only
// moves its commit index (types.ts commitOnlyAppend), while every append a leader needs an answer to
// (a probe, a member it has not heard complete) is answered as before. Each committed entry cost 8 Raft
// messages: 2 appends, 2 acknowledgements, 2 empty appends with the commit index, 2 acknowledgements.
// Method: three RawNodes over MemoryStorage, messages delivered by hand between Readies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HandGroup, type HandGroupConfig } from '../testing/raft-hand-group.js';
import { commitOnlyAppend, incompleteAck, makeMessage, type NodeId } from './types.js';

const ids: NodeId[] = [1, 2, 3];

function elected(config: HandGroupConfig = {}): HandGroup {
  return new HandGroup(ids, 11, config).elect(1);
}

/** What partition groups run with (heartbeatWhileReplicating false): the fewer messages of raft.ts. */
const partitionGroup: HandGroupConfig = { heartbeatWhileReplicating: false };

const data = (s: string) => new TextEncoder().encode(s);

test('a commit and the entries proposed before the next Ready reach each follower in one append', () => {
  const g = elected();
  const leader = g.raw(1);
  assert.equal(leader.propose(data('a')).ok, true);
  const first = g.ready(1).filter((m) => m.type === 'app');
  assert.deepEqual(first.map((m) => [m.to, m.entries.length]), [[2, 1], [3, 1]]);
  const aIndex = first[0]!.entries[0]!.index;
  // The followers store the entry and acknowledge it; the leader has persisted its own copy (ready()
  // above, advanced), so the first acknowledgement commits the entry.
  for (const m of first) g.raw(m.to).step(m);
  const acks = [...g.ready(2), ...g.ready(3)].filter((m) => m.type === 'appResp');
  assert.equal(acks.length, 2);
  for (const m of acks) leader.step(m);
  assert.equal(leader.status().commit, aIndex, 'committed by the acknowledgements');
  // A batch proposed before the leader's next Ready.
  assert.equal(leader.propose(data('b')).ok, true);
  const next = g.ready(1).filter((m) => m.type === 'app');
  assert.deepEqual(
    next.map((m) => ({ to: m.to, entries: m.entries.length, commit: m.commit })),
    [
      { to: 2, entries: 1, commit: aIndex },
      { to: 3, entries: 1, commit: aIndex },
    ],
    'one append per follower, carrying both the new entry and the commit index',
  );
  for (const m of next) g.raw(m.to).step(m);
  g.settle();
  for (const id of ids) assert.equal(g.raw(id).status().commit, aIndex + 1, `node ${id} committed both`);
});

test('a commit with nothing proposed since still reaches the followers with the next Ready', () => {
  const g = elected();
  const leader = g.raw(1);
  assert.equal(leader.propose(data('a')).ok, true);
  const first = g.ready(1).filter((m) => m.type === 'app');
  for (const m of first) g.raw(m.to).step(m);
  for (const m of [...g.ready(2), ...g.ready(3)]) leader.step(m);
  const aIndex = first[0]!.entries[0]!.index;
  assert.equal(leader.hasReady(), true, 'the commit is work for a Ready');
  const next = g.ready(1).filter((m) => m.type === 'app');
  assert.deepEqual(next.map((m) => ({ to: m.to, entries: m.entries.length, commit: m.commit, context: m.context })), [
    { to: 2, entries: 0, commit: aIndex, context: commitOnlyAppend },
    { to: 3, entries: 0, commit: aIndex, context: commitOnlyAppend },
  ]);
  for (const m of next) g.raw(m.to).step(m);
  const answers = [...g.ready(2), ...g.ready(3)];
  assert.deepEqual(answers, [], 'nothing to answer to an append that only moves the commit index');
  for (const id of [2, 3]) assert.equal(g.raw(id).status().commit, aIndex, `follower ${id} knows the commit`);
});

/**
 * Entry a proposed and sent to both followers; follower 2's acknowledgement commits it while follower
 * 3's (`ack3`) is still on its way; `next`: the appends of the leader's next Ready.
 */
function commitWithAckInFlight(config: HandGroupConfig) {
  const g = elected(config);
  const leader = g.raw(1);
  assert.equal(leader.propose(data('a')).ok, true);
  const first = g.ready(1).filter((m) => m.type === 'app');
  const aIndex = first[0]!.entries[0]!.index;
  for (const m of first) g.raw(m.to).step(m);
  const ack2 = g.ready(2).filter((m) => m.type === 'appResp');
  const ack3 = g.ready(3).filter((m) => m.type === 'appResp');
  for (const m of ack2) leader.step(m);
  assert.equal(leader.status().commit, aIndex);
  const next = g.ready(1).filter((m) => m.type === 'app');
  return { g, leader, aIndex, ack3, next };
}

test('a follower whose acknowledgement is on its way is told the commit without being asked again', () => {
  const { g, leader, aIndex, ack3, next } = commitWithAckInFlight(partitionGroup);
  assert.deepEqual(next.map((m) => ({ to: m.to, entries: m.entries.length, commit: m.commit, context: m.context })), [
    { to: 2, entries: 0, commit: aIndex, context: commitOnlyAppend },
    { to: 3, entries: 0, commit: aIndex, context: commitOnlyAppend },
  ]);
  for (const m of next) g.raw(m.to).step(m);
  assert.deepEqual([...g.ready(2), ...g.ready(3)], [], 'follower 3 does not answer again what its acknowledgement says');
  for (const id of [2, 3]) assert.equal(g.raw(id).status().commit, aIndex, `follower ${id} knows the commit`);
  for (const m of ack3) leader.step(m);
  assert.equal(leader.status().progress?.get(3)?.match, aIndex);
  // Had the entry not reached follower 3, the same append is rejected, and the rejection answered.
  assert.equal(leader.propose(data('b')).ok, true);
  const lost = g.ready(1).filter((m) => m.type === 'app');
  for (const m of lost) if (m.to === 2) g.raw(2).step(m);
  for (const m of g.ready(2)) leader.step(m);
  const commits = g.ready(1).filter((m) => m.type === 'app');
  const told = commits.filter((m) => m.to === 3);
  assert.deepEqual(told.map((m) => [m.entries.length, m.context]), [[0, commitOnlyAppend]]);
  for (const m of commits) g.raw(m.to).step(m);
  const rejected = g.ready(3).filter((m) => m.type === 'appResp');
  assert.deepEqual(rejected.map((m) => m.reject), [true], 'a follower that lacks the entries says so');
  for (const m of rejected) leader.step(m);
  g.settle();
  for (const id of ids) assert.equal(g.raw(id).status().commit, aIndex + 1, `node ${id} committed both`);
});

test('an acknowledgement that commits nothing, while the next entry is in flight, sends nothing', () => {
  const g = elected(partitionGroup);
  const leader = g.raw(1);
  assert.equal(leader.propose(data('a')).ok, true);
  const first = g.ready(1).filter((m) => m.type === 'app');
  for (const m of first) g.raw(m.to).step(m);
  const ack2 = g.ready(2);
  const ack3 = g.ready(3);
  for (const m of ack2) leader.step(m); // commits a
  assert.equal(leader.propose(data('b')).ok, true);
  const second = g.ready(1).filter((m) => m.type === 'app');
  assert.deepEqual(second.map((m) => [m.to, m.entries.length]), [[2, 1], [3, 1]], 'b, with the commit of a');
  // Follower 3's answer to a arrives late: it commits nothing, and b is on its way to 3 already.
  for (const m of ack3) leader.step(m);
  assert.deepEqual(g.ready(1).filter((m) => m.type === 'app'), [], 'no empty append to 3 (its answer to b is coming)');
  for (const m of second) g.raw(m.to).step(m);
  g.settle();
  for (const id of ids) assert.equal(g.raw(id).status().commit, leader.status().lastIndex, `node ${id} committed b`);
});

test('with the default config (the metadata group, whose read leases hear applied indexes in answers) those appends are still answered', () => {
  const { next } = commitWithAckInFlight({});
  assert.deepEqual(next.map((m) => ({ to: m.to, context: m.context })), [
    { to: 2, context: commitOnlyAppend },
    { to: 3, context: '' },
  ], 'follower 3, whose acknowledgement is on its way, is asked to answer');
});

test('an empty append the leader needs an answer to is answered: a probe, and to a member seen incomplete', () => {
  const g = elected();
  const leader = g.raw(1);
  // Follower 2 unreachable: the leader probes it (its next append is a probe, answered).
  leader.reportUnreachable(2);
  leader.tick();
  const probe = g.ready(1).filter((m) => m.to === 2);
  for (const m of probe) g.raw(2).step(m);
  for (const m of g.ready(2)) leader.step(m); // the heartbeat's answer: the leader sends the probe
  const app = g.ready(1).filter((m) => m.type === 'app' && m.to === 2);
  assert.equal(app.length, 1);
  assert.equal(app[0]!.entries.length, 0);
  assert.notEqual(app[0]!.context, commitOnlyAppend, 'a probe is not commit-only');
  g.raw(2).step(app[0]!);
  const answer = g.ready(2).filter((m) => m.type === 'appResp');
  assert.equal(answer.length, 1, 'the probe is answered');
  leader.step(answer[0]!);
  assert.equal(leader.status().progress?.get(2)?.state, 'replicate');
  // A follower that became incomplete answers even a commit-only append (its own answer saying so
  // was lost here: the leader learns it from this one).
  g.settle();
  g.raw(3).setIncomplete(true);
  assert.equal(g.ready(3).length, 1, 'the incomplete answer (lost)');
  const st = g.raw(3).status();
  const last = leader.status().progress!.get(3)!.match;
  g.raw(3).step(makeMessage({ type: 'app', from: 1, to: 3, term: st.term, index: last, logTerm: st.term, commit: st.commit, context: commitOnlyAppend }));
  const told = g.ready(3).filter((m) => m.type === 'appResp');
  assert.deepEqual(told.map((m) => [m.index, m.context]), [[last, incompleteAck]]);
  leader.step(told[0]!);
  assert.equal(leader.status().progress?.get(3)?.incomplete, true);
  assert.equal(leader.propose(data('c')).ok, true);
  g.settle();
  const idx = leader.status().commit;
  for (const id of ids) assert.equal(g.raw(id).status().commit, idx, `node ${id} committed the last entry`);
});

test('a group of one has nobody to tell a commit: no broadcast is pending after it (it may quiesce at once)', () => {
  const g = new HandGroup([1], 3);
  const raw = g.raw(1);
  const turn = (): void => void g.ready(1);
  while (raw.hasReady()) turn();
  raw.campaign();
  while (raw.hasReady()) turn();
  assert.equal(raw.isLeader(), true);
  const proposed = raw.propose(data('a'));
  assert.ok(proposed.ok);
  turn(); // writes the entry; advance() makes it durable, which commits it
  assert.equal(raw.status().commit, proposed.lastIndex);
  assert.equal(raw.quiesce(), true, 'nothing under way: no broadcast pending for a commit nobody needs to hear');
});
