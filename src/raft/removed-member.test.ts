/**
 * Goal: a member outside the configuration counts for nothing: its votes and pre-votes elect nobody
 * and its append acknowledgements commit nothing. This is what makes replacing a wiped metadata
 * member by a new member id safe (docs/metadata-raft.md, "A wiped directory is a new member"): the
 * former member's messages still in flight (a vote its former self granted, an acknowledgement sent
 * just before the wipe) arrive from an id the configuration no longer holds.
 * Method: a lone RawNode of the group {1, 2, M} (M: incarnation 5 of node 3, core/member-id.ts) fed
 * hand-made answers from 3, the member M replaced, and then from a real member.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memberIdOf } from '../core/member-id.js';
import { Prng } from '../sim/prng.js';
import { applyConfChangeToState, bootstrapState, decodeConfChange, encodeConfChange } from './confchange.js';
import { RawNode } from './rawnode.js';
import { MemoryStorage } from './storage.js';
import type { ConfState, Entry, Message } from './types.js';
import { makeMessage } from './types.js';

const replaced = 3;
const member = memberIdOf(3, 5);

/**
 * Node 1 of a group founded as {1, 2, 3} in which 3 was then removed and M added, as the metadata
 * leader replaces a wiped member (entries 4 and 5, committed and applied).
 */
function node1(preVote: boolean): { raw: RawNode; storage: MemoryStorage } {
  const storage = new MemoryStorage();
  const { entries, hardState } = bootstrapState([1, 2, replaced]);
  const changes: Entry[] = [
    { term: 1, index: 4, type: 'confChange', data: encodeConfChange({ type: 'removeNode', nodeId: replaced }) },
    { term: 1, index: 5, type: 'confChange', data: encodeConfChange({ type: 'addVoter', nodeId: member }) },
  ];
  storage.append([...entries, ...changes]);
  storage.setHardState({ ...hardState, commit: 5 });
  const raw = new RawNode({ id: 1, storage, electionTicks: 10, heartbeatTicks: 1, random: new Prng(7), preVote, checkQuorum: false });
  let conf: ConfState = { voters: [], learners: [] };
  drain(raw, storage);
  for (const e of [...entries, ...changes]) conf = applyConfChangeToState(conf, decodeConfChange(e.data));
  assert.deepEqual(conf, { voters: [1, 2, member].sort((a, b) => a - b), learners: [] });
  assert.ok(raw.hasConfState(conf), "the node applied the replacement");
  return { raw, storage };
}

function drain(raw: RawNode, storage: MemoryStorage): Message[] {
  const out: Message[] = [];
  while (raw.hasReady()) {
    const rd = raw.ready();
    storage.append(rd.entries);
    if (rd.hardState) storage.setHardState(rd.hardState);
    for (const e of rd.committedEntries) if (e.type === 'confChange') raw.applyConfChange(e);
    out.push(...rd.messages);
    raw.advance(rd);
  }
  return out;
}

function answer(type: Message['type'], from: number, term: number, extra: Partial<Message> = {}): Message {
  return makeMessage({ type, from, to: 1, term, ...extra });
}

test('a vote granted by a removed member elects nobody; one from the member that replaced it does', () => {
  const { raw, storage } = node1(false);
  raw.campaign();
  drain(raw, storage);
  const term = raw.status().term;
  assert.equal(raw.status().state, 'candidate');
  raw.step(answer('voteResp', replaced, term));
  drain(raw, storage);
  assert.equal(raw.status().state, 'candidate', 'the removed member\'s vote made a majority with the candidate\'s own');
  raw.step(answer('voteResp', member, term));
  drain(raw, storage);
  assert.equal(raw.status().state, 'leader');
});

test('a pre-vote granted by a removed member starts no election', () => {
  const { raw, storage } = node1(true);
  raw.campaign();
  drain(raw, storage);
  const term = raw.status().term;
  assert.equal(raw.status().state, 'preCandidate');
  raw.step(answer('preVoteResp', replaced, term + 1));
  drain(raw, storage);
  assert.equal(raw.status().state, 'preCandidate', 'the removed member\'s pre-vote made a majority');
  raw.step(answer('preVoteResp', 2, term + 1));
  drain(raw, storage);
  assert.equal(raw.status().state, 'candidate');
});

test('an append acknowledgement from a removed member commits nothing; one from a voter does', () => {
  const { raw, storage } = node1(false);
  raw.campaign();
  drain(raw, storage);
  const term = raw.status().term;
  raw.step(answer('voteResp', 2, term));
  drain(raw, storage);
  assert.equal(raw.status().state, 'leader');
  const r = raw.propose(new TextEncoder().encode('x'));
  assert.ok(r.ok);
  drain(raw, storage);
  const last = storage.lastIndex();
  const before = raw.status().commit;
  assert.ok(before < last);
  raw.step(answer('appResp', replaced, term, { index: last }));
  raw.step(answer('heartbeatResp', replaced, term));
  drain(raw, storage);
  assert.equal(raw.status().commit, before, 'the removed member\'s acknowledgement committed an entry');
  raw.step(answer('appResp', member, term, { index: last }));
  drain(raw, storage);
  assert.equal(raw.status().commit, last);
});
