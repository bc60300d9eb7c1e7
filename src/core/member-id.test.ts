// Goal: a member id names its node and incarnation exactly, incarnation 0 being the node id itself,
// over the whole range of node ids and incarnations, and stays a safe integer.
// Method: fast-check over node ids and incarnations; the bounds checked at both ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { currentMembers, incarnationOfMember, memberIdOf, memberIncarnationMax, memberLabel, nodeIdMax, nodeOfMember } from './member-id.js';

test('a member id gives back its node and incarnation; incarnation 0 is the node id', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: nodeIdMax }), fc.integer({ min: 0, max: memberIncarnationMax }), (node, inc) => {
      const id = memberIdOf(node, inc);
      assert.ok(Number.isSafeInteger(id) && id > 0);
      assert.equal(nodeOfMember(id), node);
      assert.equal(incarnationOfMember(id), inc);
      if (inc === 0) assert.equal(id, node);
    }),
    { numRuns: 2000 },
  );
  assert.equal(memberIdOf(nodeIdMax, memberIncarnationMax), Number.MAX_SAFE_INTEGER);
  assert.equal(memberLabel(3), '3');
  assert.equal(memberLabel(memberIdOf(3, 17)), '3.17');
});

test('ids out of range are refused', () => {
  assert.throws(() => memberIdOf(0, 1), RangeError);
  assert.throws(() => memberIdOf(nodeIdMax + 1, 0), RangeError);
  assert.throws(() => memberIdOf(1, memberIncarnationMax + 1), RangeError);
  assert.throws(() => memberIdOf(1, -1), RangeError);
});

test('currentMembers keeps the latest incarnation of each node, whatever the order', () => {
  // Node 2 was wiped: its former member (2) is still configured beside its new one (2.1).
  assert.deepEqual(currentMembers([1, memberIdOf(2, 1), 2, 3]), [1, 3, memberIdOf(2, 1)]);
  assert.deepEqual(currentMembers([memberIdOf(3, 2), memberIdOf(3, 5), memberIdOf(3, 4)]), [memberIdOf(3, 5)]);
  assert.deepEqual(currentMembers([]), []);
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 4 })), { maxLength: 12 }), (pairs) => {
      const got = currentMembers(pairs.map(([n, i]) => memberIdOf(n, i)));
      assert.deepEqual(got.map(nodeOfMember).sort(), [...new Set(pairs.map(([n]) => n))].sort(), 'one member per node');
      for (const m of got) assert.equal(incarnationOfMember(m), Math.max(...pairs.filter(([n]) => n === nodeOfMember(m)).map(([, i]) => i)));
    }),
  );
});
