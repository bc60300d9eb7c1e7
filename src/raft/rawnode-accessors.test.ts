// Goal: RawNode.term and RawNode.commitIndex, which hosts read per proposal instead of building a
// status() (a Map of progress and a ConfState each time), say exactly what status() says, through an
// election, a term change from a message, and commits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '../sim/prng.js';
import { bootstrapState } from './confchange.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import { makeMessage } from './types.js';

test('term and commitIndex follow status() through an election, proposals and a higher term', () => {
  const storage = new MemoryStorage();
  const { entries } = bootstrapState([1]);
  storage.append(entries);
  storage.setHardState({ term: 1, vote: 0, commit: entries.length });
  const raw = new RawNode({ id: 1, storage, applied: 0, electionTicks: 10, heartbeatTicks: 1, random: new Prng(7), preVote: true, checkQuorum: true, damaged: null });
  const same = (when: string) => {
    const st = raw.status();
    assert.equal(raw.term, st.term, `term ${when}`);
    assert.equal(raw.commitIndex, st.commit, `commit ${when}`);
  };
  const run = () => {
    while (raw.hasReady()) {
      const rd = raw.ready();
      storage.append(rd.entries);
      if (rd.hardState) storage.setHardState(rd.hardState);
      for (const e of rd.committedEntries) if (e.type === 'confChange') raw.applyConfChange(e);
      raw.advance(rd);
      same('after a Ready');
    }
  };
  run();
  same('at start');
  for (let i = 0; i < 30 && !raw.isLeader(); i++) {
    raw.tick();
    run();
  }
  assert.ok(raw.isLeader(), 'a lone voter elects itself');
  const termBefore = raw.term;
  assert.ok(termBefore > 1);
  const commitBefore = raw.commitIndex;
  for (let i = 0; i < 3; i++) assert.ok(raw.propose(new Uint8Array([i])).ok);
  run();
  assert.equal(raw.commitIndex, commitBefore + 3, 'three proposals committed');
  raw.step(makeMessage({ type: 'heartbeat', from: 2, to: 1, term: termBefore + 5, commit: 0 }));
  same('after a message of a higher term');
  assert.equal(raw.term, termBefore + 5);
});
