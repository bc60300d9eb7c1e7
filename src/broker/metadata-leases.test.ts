/**
 * Goal: a follower serves a read under its lease only once every entry it applied that changed its
 * state is released (docs/metadata-raft.md, "Read leases", "Released, not just acknowledged"): a write
 * it applied before the leader heard that every lease holder applied it stays invisible here, or a
 * later read on a lease holder that has not applied it yet would not show what this read showed.
 * Method: the adapter over a stub follower group; messages built by hand as the leader would send them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Message, NodeId } from '../raft/index.js';
import { newLeaderWaitMs, type LeaseField } from './metadata-lease.js';
import { MetadataLeases } from './metadata-leases.js';
import type { RaftGroup } from './raft-host/raft-group.js';

const leader = 1 as NodeId;
const self = 2 as NodeId;
const term = 2;

function follower(): { leases: MetadataLeases; setNow: (ms: number) => void; setLastChange: (i: number) => void; setLeader: (id: NodeId) => void } {
  let now = 0;
  let lastChange = 0;
  let groupLeader: NodeId = leader;
  const group = {
    self,
    term,
    get leader() {
      return groupLeader;
    },
    applied: 5,
    isSingleton: () => false,
    isLeader: () => false,
    raw: { commitIndex: 5, committedInTerm: true },
    conf: { voters: [1, 2, 3], learners: [] },
  } as unknown as RaftGroup<unknown>;
  const leases = new MetadataLeases({ timing: { leaseMs: 1000, freshMs: 500, drift: 0.01 }, group, nowMs: () => now, firstSeq: 100, lastChange: () => lastChange });
  leases.changed();
  return { leases, setNow: (ms) => (now = ms), setLastChange: (i) => (lastChange = i), setLeader: (id) => (groupLeader = id) };
}

function fromLeader(type: 'app' | 'heartbeat', lease: LeaseField): Message {
  return { type, from: leader, to: self, term, lease } as unknown as Message;
}

/** The follower's answer to its leader, as the group would send it; the lease field it gets. */
function answer(leases: MetadataLeases): LeaseField {
  const m = leases.outgoing({ type: 'heartbeatResp', from: self, to: leader, term } as unknown as Message);
  assert.ok(m.lease !== undefined, 'an answer to a leader that stamps carries a lease field');
  return m.lease;
}

/** Makes the follower hold a lease up to commit index 5, with `released` as the leader's released index. */
function grant(leases: MetadataLeases, setNow: (ms: number) => void, released: number): void {
  setNow(10);
  assert.equal(leases.read().kind, 'none', 'no lease yet: the read takes a round and the node asks');
  leases.received(fromLeader('heartbeat', { stamp: 1, seq: 0, index: 0, released }));
  const ask = answer(leases);
  assert.ok(ask.seq > 0, 'a read wanted a lease: the answer asks for one');
  setNow(20);
  leases.received(fromLeader('heartbeat', { stamp: 2, seq: ask.seq, index: 5, released }));
}

test('a write applied here but not yet released is not shown under a lease; it is once the leader releases it', async () => {
  const { leases, setNow, setLastChange } = follower();
  setLastChange(5); // entry 5 changed the state (a metadata write)
  grant(leases, setNow, 4);
  setNow(30);
  assert.deepEqual(leases.read(), { kind: 'release' }, 'applied 5, released 4: the read waits for the release');
  let served = false;
  const wait = leases.waitReleased(5_000).then(() => (served = true));
  await Promise.resolve();
  assert.equal(served, false, 'still unreleased');
  leases.received(fromLeader('heartbeat', { stamp: 3, seq: 0, index: 0, released: 5 }));
  await wait;
  assert.equal(served, true, 'released: the waiting read goes on');
  assert.deepEqual(leases.read(), { kind: 'now' }, 'now released: served from the applied state');
});

test('entries that changed nothing (a new leader\'s empty entry) need no release', () => {
  const { leases, setNow, setLastChange } = follower();
  setLastChange(4); // entry 5 is a no-op: the last change is 4, released
  grant(leases, setNow, 4);
  setNow(30);
  assert.deepEqual(leases.read(), { kind: 'now' });
});

test('a lease runs out on the follower\'s clock one lease length after the ask it answers left', () => {
  const { leases, setNow, setLastChange } = follower();
  setLastChange(4);
  grant(leases, setNow, 4); // the ask left at 10
  setNow(1009);
  assert.deepEqual(leases.read(), { kind: 'now' });
  setNow(1010);
  assert.deepEqual(leases.read(), { kind: 'none' }, 'lease over: back to a round');
});

/**
 * A follower holding a lease has applied entry 5, which changed its state, while its leader released
 * only 4: a read waits for the release, with a deadline at 100.
 */
function unreleasedRead({ leases, setNow, setLastChange }: ReturnType<typeof follower>): { done: Promise<unknown>; settled: () => boolean } {
  setLastChange(5);
  grant(leases, setNow, 4);
  setNow(30);
  let settled = false;
  const done = leases.waitReleased(100).then(
    () => (settled = true),
    (err: { status?: number }) => {
      settled = true;
      throw err;
    },
  );
  return { done, settled: () => settled };
}

test('a node cut off from its leader fails a read waiting for a release with 503 at its deadline; one that follows a leader waits on', async () => {
  const f = follower();
  const { leases, setNow, setLeader } = f;
  const wait = unreleasedRead(f);
  setNow(150);
  leases.tick();
  await Promise.resolve();
  assert.equal(wait.settled(), false, 'past the deadline, but a leader is known: its release may be on its way');
  setLeader(0 as NodeId); // an election timeout without the leader: it campaigns, and knows no leader
  leases.tick();
  await assert.rejects(wait.done, (err: { status?: number }) => err.status === 503);
});

test('a read waiting for a release that never comes fails one new leader\'s wait past its deadline, although the node follows a leader', async () => {
  const f = follower();
  const { leases, setNow } = f;
  const wait = unreleasedRead(f);
  // The leader keeps heartbeating but never releases 5 (say a lease holder answers and does not apply).
  const grace = newLeaderWaitMs({ leaseMs: 1000, freshMs: 500, drift: 0.01 });
  setNow(100 + grace - 1);
  leases.received(fromLeader('heartbeat', { stamp: 3, seq: 0, index: 0, released: 4 }));
  leases.tick();
  await Promise.resolve();
  assert.equal(wait.settled(), false, 'within the grace: a new leader\'s release may be on its way');
  setNow(100 + grace);
  leases.tick();
  await assert.rejects(wait.done, (err: { status?: number }) => err.status === 503, 'past the grace the read answers 503, it does not hang');
});

// Goal: the check an answer makes as it leaves (showable, the HTTP layer's answerBarrier): a read that
// passed its barrier (everything applied was released) is built later, and an entry applied in
// between may not be released; the answer must wait for it. Under a leader of a build without leases
// (it releases nothing) nothing is held.
test('what passed the barrier is checked again as the answer leaves: an entry applied since, unreleased, holds it', async () => {
  const { leases, setNow, setLastChange } = follower();
  setLastChange(5);
  grant(leases, setNow, 5);
  setNow(30);
  assert.deepEqual(leases.read(), { kind: 'now' }, 'the barrier: everything applied is released');
  assert.equal(leases.showable(), true);
  setLastChange(6); // the host's turn applies entry 6 before the handler reads
  assert.equal(leases.showable(), false, 'entry 6 applied, 5 released: the answer waits');
  let released = false;
  const wait = leases.waitReleased(5_000).then(() => (released = true));
  await Promise.resolve();
  assert.equal(released, false);
  leases.received(fromLeader('heartbeat', { stamp: 3, seq: 0, index: 0, released: 6 }));
  await wait;
  assert.equal(leases.showable(), true, 'released: the answer leaves');
});

test('under a leader that stamps nothing (a build without leases) every answer may leave', () => {
  const { leases, setLastChange } = follower();
  setLastChange(6);
  leases.received({ type: 'heartbeat', from: leader, to: self, term } as unknown as Message);
  assert.equal(leases.showable(), true);
});

// Goal: a write this node forwarded and its leader acknowledged is released (a leader acknowledges
// only what it may release), so its answer here does not wait for the leader's next heartbeat to say
// so; an entry applied beyond it still waits.
test('the leader\'s answer to a forwarded write releases that write here; a later entry still waits', async () => {
  const { leases, setNow, setLastChange } = follower();
  setLastChange(5);
  grant(leases, setNow, 5);
  setNow(30);
  setLastChange(6); // the forwarded write, applied here
  assert.equal(leases.showable(), false);
  let released = false;
  const wait = leases.waitReleased(5_000).then(() => (released = true));
  leases.acknowledged(6);
  await wait;
  assert.equal(released, true);
  assert.equal(leases.showable(), true, 'acknowledged at 6: released');
  setLastChange(7);
  assert.equal(leases.showable(), false, 'entry 7 is not released by the answer for 6');
  leases.acknowledged(4); // an older answer lowers nothing
  leases.received(fromLeader('heartbeat', { stamp: 3, seq: 0, index: 0, released: 7 }));
  assert.equal(leases.showable(), true);
});
