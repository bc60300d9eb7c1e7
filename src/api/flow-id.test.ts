// Goal: generated flow ids are 24 alphanumerics and never repeat, also across refills of the pool of
// random bytes they are drawn from; a client's printable flow id is kept, a bad one replaced.
// Method: many ids (several pool refills) checked for shape and uniqueness; examples for flowIdFrom.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flowIdFrom, flowIdLengthMax, generateFlowId } from './flow-id.js';

test('generated flow ids: 24 alphanumerics, all different over several refills of the random pool', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const id = generateFlowId();
    assert.match(id, /^[A-Za-z0-9]{24}$/);
    assert.ok(!seen.has(id), `flow id ${id} repeated after ${i} ids`);
    seen.add(id);
  }
});

test('a printable flow id is kept; a missing, over-long or non-printable one is replaced', () => {
  assert.equal(flowIdFrom('abc-123'), 'abc-123');
  assert.equal(flowIdFrom(['first', 'second']), 'first');
  for (const bad of [undefined, '', 'x'.repeat(flowIdLengthMax + 1), 'a b', 'a\nb']) assert.match(flowIdFrom(bad), /^[A-Za-z0-9]{24}$/);
});
