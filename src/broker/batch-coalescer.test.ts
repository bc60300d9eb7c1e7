// Goal (issue 9, batching): a replicated group proposes one entry at a time, and the batches that
// arrive meanwhile wait for it in the coalescer. A batch whose deadline passes while it waits must be
// answered then, with a failure that says it was not stored, and never be proposed afterwards: its
// producer has been told it failed (a forwarding node answers at its own deadline) and sends it again,
// so storing it later would store it twice. A batch proposed before its deadline keeps its usual fate.
// Method: the coalescer over a stand-in group whose proposals settle when the test says, and a clock
// the test moves. Before the fix the held batch was proposed once the entry in flight settled, with a
// deadline already past, and answered only then (both seen failing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchCoalescer, type Coalesced } from './batch-coalescer.js';
import { ProposalFailedError, type RaftGroup } from './raft-host/raft-group.js';
import type { ReplicaOutcome } from './partition-replica.js';

interface Proposal {
  deadlineMs: number;
  resolve: (outcomes: number) => void;
  reject: (err: Error) => void;
}

function stand(opts: { singleton?: boolean } = {}) {
  let now = 1000;
  const proposals: Proposal[] = [];
  const raw = { term: 2, commitIndex: 0, lastIndex: 0 };
  const group = {
    id: 7,
    self: 1,
    leader: 1,
    term: 2,
    raw,
    isLeader: () => true,
    isSingleton: () => opts.singleton === true,
    propose: (_data: Uint8Array, deadlineMs: number) => {
      raw.lastIndex++;
      const index = raw.lastIndex;
      return new Promise((resolve, reject) => {
        proposals.push({
          deadlineMs,
          // Applied: one outcome per batch in the entry.
          resolve: (n) => {
            raw.commitIndex = index;
            resolve({ index, term: 2, outcome: Array.from({ length: n }, (_, i) => ({ kind: 'appended', first: i, last: i })) });
          },
          reject,
        });
      });
    },
  } as unknown as RaftGroup<ReplicaOutcome>;
  const clock = { nowMs: () => now, monotonicMs: () => now };
  let kicks = 0;
  const coalescer = new BatchCoalescer(group, clock, () => kicks++);
  return {
    coalescer,
    proposals,
    advance: (ms: number) => (now += ms),
    now: () => now,
    kicks: () => kicks,
  };
}

type Fate = { c?: Coalesced; err?: unknown };

function add(s: ReturnType<typeof stand>, id: string, deadlineMs: number): Fate {
  const fate: Fate = {};
  const refused = s.coalescer.enqueue(id, [Buffer.from(`{"id":"${id}"}`)], deadlineMs, 0, (c, err) => {
    assert.equal(Object.keys(fate).length, 0, `batch ${id} told its fate twice`);
    if (c !== undefined) fate.c = c;
    else fate.err = err;
  });
  assert.equal(refused, undefined);
  return fate;
}

const flushTurns = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};

test('a batch held behind the entry in flight whose deadline passes is failed then, as not stored, and never proposed', async () => {
  const s = stand();
  const a = add(s, 'a', s.now() + 3000);
  s.coalescer.flush();
  assert.equal(s.proposals.length, 1, 'a is proposed');
  const b = add(s, 'b', s.now() + 200); // e.g. forwarded by a node with 200 ms of its deadline left
  const c = add(s, 'c', s.now() + 3000);
  s.coalescer.flush();
  assert.equal(s.proposals.length, 1, 'b and c wait for a');
  s.advance(250);
  // The group's next turn (a heartbeat's) flushes again: b's deadline passed while it waited.
  s.coalescer.flush();
  assert.ok(b.err instanceof ProposalFailedError, `b is failed at its turn past its deadline, before a settles: ${String(b.err)}`);
  assert.equal((b.err as ProposalFailedError).reason, 'expired');
  assert.match((b.err as ProposalFailedError).message, /not stored/);
  assert.equal(c.err, undefined, 'c, within its deadline, still waits');
  // a is applied: c goes in the next entry, b never does.
  s.proposals[0]!.resolve(1);
  await flushTurns();
  assert.ok(a.c !== undefined, 'a keeps its usual fate');
  s.coalescer.flush();
  assert.equal(s.proposals.length, 2, 'one more entry, for c');
  s.proposals[1]!.resolve(1);
  await flushTurns();
  assert.ok(c.c !== undefined, 'c is stored');
});

test('a batch whose deadline passed before its turn came is not proposed, in a group of one too; one proposed in time keeps its fate past its deadline', async () => {
  for (const singleton of [false, true]) {
    const s = stand({ singleton });
    const late = add(s, 'late', s.now() + 50);
    const fine = add(s, 'fine', s.now() + 500);
    s.advance(100); // the host's turn came late (a busy event loop)
    s.coalescer.flush();
    assert.equal((late.err as ProposalFailedError | undefined)?.reason, 'expired', `singleton ${singleton}: ${String(late.err)}`);
    assert.equal(s.proposals.length, 1, `singleton ${singleton}: one entry, fine's alone`);
    // Proposed in time: past its deadline it is the group's to settle (it may still commit), not dropped.
    s.advance(1000);
    s.coalescer.flush();
    assert.equal(fine.err, undefined);
    s.proposals[0]!.resolve(1);
    await flushTurns();
    assert.ok(fine.c !== undefined, `singleton ${singleton}: the proposed batch is stored and answered as stored`);
  }
});

test('an entry in flight that fails leaves the held batches within their deadline to the next entry, and drops those past it', async () => {
  const s = stand();
  add(s, 'a', s.now() + 1000);
  s.coalescer.flush();
  const b = add(s, 'b', s.now() + 1000);
  const c = add(s, 'c', s.now() + 5000);
  s.advance(1200);
  s.proposals[0]!.reject(new ProposalFailedError('timeout', 'did not commit in time'));
  await flushTurns();
  assert.ok(s.kicks() > 0, 'the failure asks for a turn');
  s.coalescer.flush();
  assert.equal((b.err as ProposalFailedError | undefined)?.reason, 'expired');
  assert.equal(c.err, undefined);
  assert.equal(s.proposals.length, 2, 'c is proposed, b is not');
});
