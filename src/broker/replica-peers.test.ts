// Goal: the nodes a replica asks are the other nodes of the members it is given, each once, in the
// order given (the leader named first stays first), never itself, never noNode (a wiped node's new
// member counts as that node); a read goes first to the replica that answered last, a forwarded batch
// to the leader a replica named. Method: the pure rules on chosen lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noNode } from '../raft/index.js';
import { answeredLastFirst, hintFirst, otherNodes } from './replica-peers.js';
import { memberIdOf } from '../core/member-id.js';

test('the other nodes of a member list, each once, in order', () => {
  assert.deepEqual(otherNodes([3, 1, 2, 3], 1), [3, 2]);
  assert.deepEqual(otherNodes([noNode, 2, 3], 1), [2, 3]);
  assert.deepEqual(otherNodes([1], 1), []);
  // A member id of a wiped node's new incarnation names that node.
  assert.deepEqual(otherNodes([memberIdOf(2, 1), 2, memberIdOf(1, 3)], 1), [2]);
});

test('a read goes to the replica that answered last first, while it is still a replica', () => {
  assert.deepEqual(answeredLastFirst([2, 3, 4], 3), [3, 2, 4]);
  assert.deepEqual(answeredLastFirst([2, 3, 4], 2), [2, 3, 4]);
  assert.deepEqual(answeredLastFirst([2, 3, 4], 5), [2, 3, 4], 'moved away since it answered');
  assert.deepEqual(answeredLastFirst([2, 3, 4], undefined), [2, 3, 4]);
});

test('a forwarded batch goes to the leader a replica named first, listed or not', () => {
  assert.deepEqual(hintFirst([2, 3, 4], 4), [4, 2, 3]);
  assert.deepEqual(hintFirst([2, 3], 5), [5, 2, 3], 'a leader the placement does not list yet (a move)');
  assert.deepEqual(hintFirst([2, 3], noNode), [2, 3]);
});
