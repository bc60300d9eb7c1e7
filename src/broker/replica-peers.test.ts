// Goal: the nodes a replica asks are the other nodes of the members it is given, each once, in the
// order given (the leader named first stays first), never itself, never noNode; a wiped node's
// members (another incarnation, same node) count as that node. Method: the pure rule on chosen lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noNode } from '../raft/index.js';
import { otherNodes } from './replica-peers.js';
import { memberIdOf } from '../core/member-id.js';

test('the other nodes of a member list, each once, in order', () => {
  assert.deepEqual(otherNodes([3, 1, 2, 3], 1), [3, 2]);
  assert.deepEqual(otherNodes([noNode, 2, 3], 1), [2, 3]);
  assert.deepEqual(otherNodes([1], 1), []);
  // A member id of a wiped node's new incarnation names that node.
  assert.deepEqual(otherNodes([memberIdOf(2, 1), 2, memberIdOf(1, 3)], 1), [2]);
});
