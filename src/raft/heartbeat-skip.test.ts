// Goal: with heartbeatWhileReplicating false (partition groups), a leader's heartbeat round skips a
// follower that was sent an append and accepted one since the last round (the append reset its
// election timer and carried the commit; its answer counted for CheckQuorum), and every other follower
// still gets its heartbeat: one that did not answer, one appends did not reach, one whose window is
// full, and every follower when the round carries a ReadIndex context. With the default (true) every
// follower gets one each round, as before. On three loaded nodes heartbeats and their answers were
// half of the Raft messages (docs/replication.md).
// Method: three RawNodes over MemoryStorage, messages delivered by hand between Readies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HandGroup } from '../testing/raft-hand-group.js';
import type { NodeId } from './types.js';

const ids: NodeId[] = [1, 2, 3];

class Group extends HandGroup {
  constructor(heartbeatWhileReplicating: boolean | undefined, inflightAppendsMax = 256) {
    super(ids, 5, { inflightAppendsMax, heartbeatWhileReplicating });
  }

  /** One heartbeat round of the leader (node 1), its messages delivered; the followers its heartbeats go to. */
  heartbeatRound(): NodeId[] {
    this.raw(1).tick();
    const out = this.ready(1);
    for (const m of out) this.raw(m.to).step(m);
    return out
      .filter((m) => m.type === 'heartbeat')
      .map((m) => m.to)
      .sort();
  }
}

function elected(heartbeatWhileReplicating: boolean | undefined, inflightAppendsMax?: number): Group {
  const g = new Group(heartbeatWhileReplicating, inflightAppendsMax).elect(1);
  // A first round clears what the election's appends and answers left.
  g.heartbeatRound();
  g.settle();
  return g;
}

const data = (s: string) => new TextEncoder().encode(s);

test('no heartbeat to a follower that appends reach and that answers; heartbeats again once they stop', () => {
  const g = elected(false);
  assert.equal(g.raw(1).propose(data('a')).ok, true);
  g.settle();
  assert.deepEqual(g.heartbeatRound(), [], 'both followers were sent an append and accepted one since the last round');
  g.settle();
  assert.deepEqual(g.heartbeatRound(), [2, 3], 'nothing sent since: both get their heartbeat');
  g.settle();
  // The followers' election timers were reset by the appends: ten quiet rounds of skipped heartbeats
  // would have let them campaign; with traffic every round they never do.
  for (let i = 0; i < 30; i++) {
    assert.equal(g.raw(1).propose(data(`b${i}`)).ok, true);
    g.settle();
    assert.deepEqual(g.heartbeatRound(), [], `round ${i}: appends reached both`);
    g.settle();
    for (const id of [2, 3]) g.raw(id).tick();
    g.settle();
  }
  for (const id of ids) assert.equal(g.raw(id).status().lead, 1, `node ${id} still follows node 1`);
  assert.equal(g.raw(1).isLeader(), true, 'CheckQuorum counted the append answers');
});

test('a follower whose answers are lost, or whose appends are, still gets its heartbeat', () => {
  const g = elected(false);
  assert.equal(g.raw(1).propose(data('a')).ok, true);
  // Follower 3's answers are lost: the leader sent it an append but heard nothing back.
  g.settle((m) => m.from === 3 && m.type === 'appResp');
  assert.deepEqual(g.heartbeatRound(), [3]);
  g.settle();
  // Follower 2's appends are lost: nothing reached it, so nothing was accepted.
  assert.equal(g.raw(1).propose(data('b')).ok, true);
  g.settle((m) => m.to === 2 && m.type === 'app');
  assert.deepEqual(g.heartbeatRound(), [2]);
  g.settle();
  const commit = g.raw(1).status().commit;
  for (const id of ids) assert.equal(g.raw(id).status().commit, commit, `node ${id} caught up through the heartbeat's answer`);
});

test('a round with a ReadIndex context goes to every follower, and the default config skips nobody', () => {
  const g = elected(false);
  assert.equal(g.raw(1).propose(data('a')).ok, true);
  g.settle();
  // A read whose round is still open (its heartbeats' answers lost): the tick's round carries its context.
  assert.equal(g.raw(1).readIndex('r1'), true);
  g.settle((m) => m.type === 'heartbeatResp');
  assert.equal(g.raw(1).propose(data('b')).ok, true);
  g.settle((m) => m.type === 'heartbeatResp');
  assert.deepEqual(g.heartbeatRound(), [2, 3]);
  const d = elected(undefined);
  assert.equal(d.raw(1).propose(data('a')).ok, true);
  d.settle();
  assert.deepEqual(d.heartbeatRound(), [2, 3], 'heartbeatWhileReplicating defaults to true');
});

test('a follower whose window is full gets its heartbeat (what finds lost appends)', () => {
  const g = elected(false, 1);
  assert.equal(g.raw(1).propose(data('a')).ok, true);
  g.settle();
  // One more entry in flight to follower 3 fills its window of one; follower 2 answers it.
  assert.equal(g.raw(1).propose(data('b')).ok, true);
  g.settle((m) => m.from === 3 && m.type === 'appResp');
  assert.equal(g.raw(1).status().progress?.get(3)?.state, 'replicate');
  assert.deepEqual(g.heartbeatRound(), [3]);
});

test('ticks caught up at once make one heartbeat round in a partition group (the later rounds would leave with it); one per tick otherwise', () => {
  for (const skipping of [false, undefined]) {
    const g = elected(skipping);
    assert.equal(g.raw(1).propose(data('a')).ok, true);
    g.settle();
    g.raw(1).tick(3);
    const beats = g.ready(1).filter((m) => m.type === 'heartbeat');
    // Skipping: the one round skips both (each accepted an append since the last round); the default
    // (the metadata group) keeps one round per tick.
    assert.deepEqual(beats.map((m) => m.to).sort(), skipping === false ? [] : [2, 2, 2, 3, 3, 3], `heartbeatWhileReplicating ${skipping}`);
    g.raw(1).tick(3);
    assert.deepEqual(g.ready(1).filter((m) => m.type === 'heartbeat').map((m) => m.to).sort(), skipping === false ? [2, 3] : [2, 2, 2, 3, 3, 3], 'nothing since: one heartbeat each per round');
  }
});
