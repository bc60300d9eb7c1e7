import assert from 'node:assert/strict';
import { test } from 'node:test';
import { holdMs, LeaseFollower, LeaseLeader, newLeaderWaitMs, type LeaseTiming } from './metadata-lease.js';

const t: LeaseTiming = { leaseMs: 1000, freshMs: 500, drift: 0.01 };
const voters = [1, 2, 3];

/** A leader (1) that has heard from followers 2 and 3 at its stamp `at`, in a term whose first entry committed. */
function freshLeader(at: number, becameMs = -1e9): LeaseLeader {
  const l = new LeaseLeader(t, 1, becameMs);
  l.received(2, { stamp: at, seq: 0, index: 0, released: 0 }, at);
  l.received(3, { stamp: at, seq: 0, index: 0, released: 0 }, at);
  return l;
}

test('a follower holds a lease from when it sent the ask the grant answers, once it applied the grant index', () => {
  const f = new LeaseFollower(t);
  assert.equal(f.outgoing(5, 1, 0, 3), undefined, 'a leader that stamps nothing (an older build) is never asked');
  f.received(5, 1, { stamp: 100, seq: 0, index: 0, released: 0 }, 10);
  assert.deepEqual(f.outgoing(5, 1, 20, 3), { stamp: 100, seq: 0, index: 3, released: 0 }, 'not wanting: echo and applied only');
  f.want(30);
  const ask = f.outgoing(5, 1, 40, 3)!;
  assert.ok(ask.seq > 0);
  assert.equal(f.lease(5, 1, 50), undefined);
  f.received(5, 1, { stamp: 200, seq: ask.seq + 7, index: 9, released: 0 }, 60);
  assert.equal(f.lease(5, 1, 61), undefined, 'a grant of an ask never sent gives nothing');
  f.received(5, 1, { stamp: 200, seq: ask.seq, index: 9, released: 0 }, 900);
  assert.equal(f.lease(5, 1, 901), 9);
  assert.equal(f.lease(5, 1, 40 + t.leaseMs - 1), 9);
  assert.equal(f.lease(5, 1, 40 + t.leaseMs), undefined, 'counted from the ask (40), not the grant (900)');
  assert.equal(f.lease(6, 1, 950), undefined, 'another term');
  assert.equal(f.lease(5, 2, 950), undefined, 'another leader');
});

test('a grant of an ask an earlier process of the node sent is not taken by the next one', () => {
  const before = new LeaseFollower(t, 1000);
  before.received(5, 1, { stamp: 1, seq: 0, index: 0, released: 0 }, 0);
  before.want(0);
  const old = before.outgoing(5, 1, 0, 0)!;
  // The node restarts; its new process asks too, from another random start.
  const after = new LeaseFollower(t, 7_000_000);
  after.received(5, 1, { stamp: 2, seq: 0, index: 0, released: 0 }, 0);
  after.want(0);
  for (let i = 0; i < 5; i++) after.outgoing(5, 1, i, 0);
  after.received(5, 1, { stamp: 3, seq: old.seq, index: 4, released: 0 }, 10);
  assert.equal(after.lease(5, 1, 11), undefined);
});

test('rolling upgrade: no grant while a member answers without a lease field (a build without leases); reads under such a leader wait for no release', () => {
  const l = freshLeader(1000);
  l.received(2, { stamp: 1000, seq: 4, index: 0, released: 0 }, 1010);
  l.plainAnswer(4);
  assert.equal(l.outgoing(2, 1020, 7, true, voters, 7).seq, 0, 'member 4 answered without a lease field');
  l.received(4, { stamp: 1000, seq: 0, index: 0, released: 0 }, 1015);
  assert.equal(l.outgoing(2, 1020, 7, true, voters, 7).seq, 4, 'it echoes now (upgraded)');
  const f = new LeaseFollower(t);
  assert.equal(f.releases(5, 1), true, 'not known yet: wait (the first heartbeat tells)');
  f.plain(5, 1);
  assert.equal(f.releases(5, 1), false);
  assert.equal(f.releases(6, 2), true);
});

test('a follower that saw a new term or leader drops its lease', () => {
  const f = new LeaseFollower(t);
  f.received(5, 1, { stamp: 1, seq: 0, index: 0, released: 0 }, 0);
  f.want(0);
  const ask = f.outgoing(5, 1, 0, 0)!;
  f.received(5, 1, { stamp: 2, seq: ask.seq, index: 4, released: 0 }, 5);
  assert.equal(f.lease(5, 1, 6), 4);
  f.received(6, 2, { stamp: 1, seq: 0, index: 0, released: 0 }, 7);
  assert.equal(f.lease(5, 1, 8), undefined);
  assert.equal(f.lease(6, 2, 8), undefined);
});

test('grant rules one at a time', () => {
  // Fresh and committed: granted.
  let l = freshLeader(1000);
  l.received(2, { stamp: 1000, seq: 4, index: 0, released: 0 }, 1010);
  assert.deepEqual(l.outgoing(2, 1020, 7, true, voters, 7), { stamp: 1020, seq: 4, index: 7, released: 7 });
  assert.equal(l.outgoing(2, 1030, 7, true, voters, 7).seq, 0, 'one grant per ask');
  // Not committed in its term: no grant (its commit index may miss writes acknowledged by the previous leader).
  l = freshLeader(1000);
  l.received(2, { stamp: 1000, seq: 4, index: 0, released: 0 }, 1010);
  assert.equal(l.outgoing(2, 1020, 7, false, voters, 7).seq, 0);
  // Stale: the latest stamp a quorum echoed is older than freshMs (a deposed leader cannot tell it is).
  l = freshLeader(1000);
  l.received(2, { stamp: 1000, seq: 4, index: 0, released: 0 }, 1010);
  assert.equal(l.outgoing(2, 1000 + t.freshMs + 1, 7, true, voters, 7).seq, 0);
  // A quorum needs two of three: with only follower 3 fresh, and follower 2 stale, still a quorum.
  l = new LeaseLeader(t, 1, -1e9);
  l.received(3, { stamp: 1000, seq: 0, index: 0, released: 0 }, 1000);
  l.received(2, { stamp: 0, seq: 4, index: 0, released: 0 }, 1010);
  assert.equal(l.outgoing(2, 1020, 7, true, voters, 7).seq, 4);
  // Five voters, only one echo fresh: no quorum.
  l = new LeaseLeader(t, 1, -1e9);
  l.received(3, { stamp: 1000, seq: 0, index: 0, released: 0 }, 1000);
  l.received(2, { stamp: 0, seq: 4, index: 0, released: 0 }, 1010);
  assert.equal(l.outgoing(2, 1020, 7, true, [1, 2, 3, 4, 5], 7).seq, 0);
});

test('a write is acknowledged only once every member that may hold a lease applied it, or its lease expired', () => {
  const l = freshLeader(1000);
  l.received(2, { stamp: 1000, seq: 4, index: 5, released: 0 }, 1010);
  l.outgoing(2, 1020, 5, true, voters, 5);
  assert.equal(l.mayAcknowledge(5, 1030), true, 'it applied 5');
  assert.equal(l.mayAcknowledge(6, 1030), false, 'it holds a lease and has not applied 6');
  assert.equal(l.holding(1030), true);
  l.received(2, { stamp: 1000, seq: 0, index: 6, released: 0 }, 1040);
  assert.equal(l.mayAcknowledge(6, 1040), true);
  assert.equal(l.mayAcknowledge(7, 1040), false);
  const until = 1010 + holdMs(t);
  assert.equal(l.mayAcknowledge(7, until - 1), false);
  assert.equal(l.mayAcknowledge(7, until), true, 'held from the ask received at 1010 for holdMs');
  assert.equal(l.holding(until), false);
  // Follower 3 never asked (an older build, or it reads nothing): never waited for.
  assert.equal(l.mayAcknowledge(100, until), true);
});

test('released: what every member that may hold a lease applied, nothing while a new leader waits', () => {
  const w = newLeaderWaitMs(t);
  const l = freshLeader(w, 0);
  assert.equal(l.released(w - 1, 9), 0, 'a new leader releases nothing before its wait is over');
  assert.equal(l.released(w, 9), 9, 'no lease holder: all it applied');
  l.received(2, { stamp: 1000, seq: 4, index: 5, released: 0 }, w);
  l.outgoing(2, w, 9, true, voters, 9);
  assert.equal(l.released(w + 1, 9), 5, 'follower 2 holds a lease and applied 5');
  l.received(2, { stamp: 1000, seq: 0, index: 9, released: 0 }, w + 2);
  assert.equal(l.released(w + 3, 9), 9);
  assert.equal(l.released(w + 3, 12), 9);
  assert.equal(l.released(w + holdMs(t), 12), 12, 'its lease ran out');
});

test('a new leader acknowledges nothing until the leases an earlier leader may have granted ran out', () => {
  const l = freshLeader(0, 0);
  const w = newLeaderWaitMs(t);
  assert.ok(w >= t.freshMs + t.leaseMs);
  assert.equal(l.mayAcknowledge(1, w - 1), false);
  assert.equal(l.mayAcknowledge(1, w), true);
});

test('the leader reads itself only while fresh and once it applied its term-start commit', () => {
  const l = freshLeader(1000);
  assert.equal(l.selfRead(voters, 1010, 8, false, 8), false);
  assert.equal(l.selfRead(voters, 1010, 8, true, 7), false);
  assert.equal(l.selfRead(voters, 1020, 9, true, 8), true, 'the index is the one of its first committed read (8)');
  assert.equal(l.selfRead(voters, 1000 + t.freshMs + 1, 9, true, 9), false);
});

/**
 * The arithmetic under drift: clocks whose rates are anywhere within the bound, messages delayed at
 * random. The follower's lease must end (in real time) before the leader stops holding it, and
 * before a leader elected after the stamp a quorum echoed acknowledges its first write.
 */
test('under any clock rates within the drift bound, the leader outlasts every lease it granted', () => {
  let x = 7;
  const r = { next: () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648) };
  for (let i = 0; i < 2000; i++) {
    const rate = () => 1 - t.drift + r.next() * 2 * t.drift;
    const lr = rate(); // leader clock rate
    const fr = rate(); // follower clock rate
    const nr = rate(); // a new leader's
    const lClock = (real: number) => 5000 + real * lr;
    const fClock = (real: number) => 70 + real * fr;
    // Real times: the quorum echoed a stamp sent at sReal; a new leader is elected after it.
    const sReal = r.next() * 1000;
    const askReal = sReal + r.next() * 2000;
    const recvReal = askReal + r.next() * 300;
    const grantReal = recvReal + r.next() * 300;
    const electedReal = sReal + r.next() * 3000;
    const leader = new LeaseLeader(t, 1, -1e12);
    leader.received(2, { stamp: lClock(sReal), seq: 0, index: 0, released: 0 }, lClock(sReal + 1));
    leader.received(3, { stamp: lClock(sReal), seq: 0, index: 0, released: 0 }, lClock(sReal + 1));
    const f = new LeaseFollower(t);
    f.received(9, 1, { stamp: lClock(sReal), seq: 0, index: 0, released: 0 }, fClock(sReal + 1));
    f.want(fClock(askReal));
    const ask = f.outgoing(9, 1, fClock(askReal), 0)!;
    leader.received(2, ask, lClock(recvReal));
    const g = leader.outgoing(2, lClock(grantReal), 1, true, voters, 1);
    if (g.seq === 0) {
      assert.ok(lClock(grantReal) - lClock(sReal) > t.freshMs);
      continue;
    }
    f.received(9, 1, g, fClock(grantReal + r.next() * 100));
    // The follower's lease ends at real time fEnd.
    const fEnd = (fClock(askReal) + t.leaseMs - 70) / fr;
    if (fEnd <= grantReal) continue;
    // The leader holds it until (its clock) recv + holdMs: in real time,
    const lHoldEnd = (lClock(recvReal) + holdMs(t) - 5000) / lr;
    assert.ok(lHoldEnd >= fEnd, `leader stops holding at ${lHoldEnd}, lease ends at ${fEnd}`);
    assert.equal(leader.mayAcknowledge(5, lClock(fEnd) - 0.001), false);
    // A new leader, elected after sReal, acknowledges only after its clock ran newLeaderWaitMs.
    const newAckReal = electedReal + newLeaderWaitMs(t) / nr;
    assert.ok(newAckReal >= fEnd, `a new leader acknowledges at ${newAckReal}, the old lease ends at ${fEnd}`);
  }
});
