// Goal: a leader tells its followers a new commit index with the next Ready, in the append that carries
// the entries proposed since (if any), not in an empty append of its own followed by that append: on a
// busy group that empty append and its acknowledgement were half of the Raft messages per entry.
// Method: three RawNodes over MemoryStorage, messages delivered by hand between Readies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '../sim/prng.js';
import { bootstrapState } from './confchange.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import type { Ready } from './rawnode.js';
import type { Message, NodeId } from './types.js';

const ids: NodeId[] = [1, 2, 3];

class Group {
  readonly nodes = new Map<NodeId, { raw: RawNode; storage: MemoryStorage }>();

  constructor() {
    const rng = new Prng(11);
    for (const id of ids) {
      const storage = new MemoryStorage();
      const { entries, hardState } = bootstrapState(ids);
      storage.append(entries);
      storage.setHardState(hardState);
      const raw = new RawNode({ id, storage, applied: 0, electionTicks: 10, heartbeatTicks: 1, random: rng.fork(), preVote: true, checkQuorum: true, damaged: null });
      this.nodes.set(id, { raw, storage });
    }
  }

  raw(id: NodeId): RawNode {
    return this.nodes.get(id)!.raw;
  }

  /** One Ready of `id`, persisted and advanced; its messages. */
  ready(id: NodeId): Message[] {
    const n = this.nodes.get(id)!;
    if (!n.raw.hasReady()) return [];
    const rd: Ready = n.raw.ready();
    if (rd.snapshot) n.storage.applySnapshot(rd.snapshot);
    n.storage.append(rd.entries);
    if (rd.hardState) n.storage.setHardState(rd.hardState);
    for (const e of rd.committedEntries) if (e.type === 'confChange') n.raw.applyConfChange(e);
    n.raw.advance(rd);
    return [...rd.messages];
  }

  /** Runs every Ready and delivers every message until nothing moves. */
  settle(): void {
    for (let round = 0; round < 1000; round++) {
      const inFlight: Message[] = [];
      for (const id of ids) while (this.raw(id).hasReady()) inFlight.push(...this.ready(id));
      if (inFlight.length === 0) return;
      for (const m of inFlight) this.raw(m.to).step(m);
    }
    throw new Error('the group does not settle');
  }
}

function elected(): Group {
  const g = new Group();
  g.settle();
  g.raw(1).campaign();
  g.settle();
  assert.equal(g.raw(1).isLeader(), true);
  return g;
}

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
  assert.deepEqual(next.map((m) => ({ to: m.to, entries: m.entries.length, commit: m.commit })), [
    { to: 2, entries: 0, commit: aIndex },
    { to: 3, entries: 0, commit: aIndex },
  ]);
  for (const m of next) g.raw(m.to).step(m);
  g.ready(2);
  g.ready(3);
  for (const id of [2, 3]) assert.equal(g.raw(id).status().commit, aIndex, `follower ${id} knows the commit`);
});
